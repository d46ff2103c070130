#include "divergence/pair_evidence.h"

#include <algorithm>

namespace graph_ascend::divergence {

Status MeasurePairs(vis::CompareMode mode, const std::vector<uint32_t>& npu, const std::vector<uint32_t>& bench,
                    const ReadDetails& read, std::vector<Evidence>* evidence) {
  std::vector<uint32_t> a, b;
  std::vector<vis::NodeDetail> da, db;
  for (size_t begin = 0; begin < npu.size(); begin += kEvidenceSlice) {
    size_t end = std::min(npu.size(), begin + kEvidenceSlice);
    a.assign(npu.begin() + static_cast<std::ptrdiff_t>(begin), npu.begin() + static_cast<std::ptrdiff_t>(end));
    b.assign(bench.begin() + static_cast<std::ptrdiff_t>(begin), bench.begin() + static_cast<std::ptrdiff_t>(end));
    da.clear();
    db.clear();
    GA_RETURN_IF_ERROR(read(vis::SIDE_NPU, a, &da));
    GA_RETURN_IF_ERROR(read(vis::SIDE_BENCH, b, &db));
    if (da.size() != a.size() || db.size() != b.size()) {
      return Error{"", "node details", "read " + std::to_string(da.size()) + " and " + std::to_string(db.size()) +
                                           " details for " + std::to_string(a.size()) + " pairs"};
    }
    // The NPU detail holds the pair's metrics: the compare's, or those a manual match computed.
    for (size_t i = 0; i < a.size(); ++i) (*evidence)[a[i]] = EvidenceOf(mode, da[i], db[i]);
  }
  return Status::Ok();
}

std::unique_ptr<graph::Graph> GraphOf(const HierarchyView& side, StringPool* pool) {
  auto out = std::make_unique<graph::Graph>(pool);
  out->Reserve(side.size);
  for (uint32_t n = 0; n < side.size; ++n) {
    out->AddNode(pool->Intern(side.name(n)), static_cast<graph::NodeOp>(side.node_type(n)));
  }
  for (uint32_t n = 0; n < side.size; ++n) {
    for (uint32_t c : side.children(n)) out->AppendChild(n, c);
  }
  return out;
}

const char* UnrankableReason(const graph::Graph& npu) {
  for (uint32_t n = 1; n < npu.size(); ++n) {
    if (npu.matched[n] != graph::kNoNode) return "";
  }
  return "no node of the two runs is matched, so no pair's metrics say where they part";
}

Result<vis::DivergenceRanking> RankFromDetails(const graph::Graph& npu, vis::CompareMode mode,
                                               const ReadDetails& read) {
  std::vector<uint32_t> a, b;
  for (uint32_t n = 1; n < npu.size(); ++n) {
    if (npu.matched[n] == graph::kNoNode) continue;
    a.push_back(n);
    b.push_back(static_cast<uint32_t>(npu.matched[n]));
  }
  std::vector<Evidence> evidence(npu.size());
  GA_RETURN_IF_ERROR(MeasurePairs(mode, a, b, read, &evidence));
  return Rank(npu, evidence, mode);
}

}  // namespace graph_ascend::divergence
