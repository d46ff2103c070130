#include "rerank.h"

#include <algorithm>
#include <cstdio>
#include <shared_mutex>

#include "graph_file.h"

namespace graph_ascend::service {
namespace {

std::vector<int32_t> MatchedOf(const SideGraph& g) {
  std::vector<int32_t> out(g.size());
  for (uint32_t n = 0; n < g.size(); ++n) out[n] = g.matched(n);
  return out;
}

// The NPU hierarchy as the builder's graph holds it: the same node numbers,
// names and children in the same order, so that divergence::Rank walks it in
// the builder's execution order.
std::unique_ptr<graph::Graph> GraphOf(const SideGraph& g, StringPool* pool) {
  auto out = std::make_unique<graph::Graph>(pool);
  out->Reserve(g.size());
  for (uint32_t n = 0; n < g.size(); ++n) out->AddNode(pool->Intern(g.name(n)), static_cast<graph::NodeOp>(g.node_type(n)));
  for (uint32_t n = 0; n < g.size(); ++n) {
    const uint32_t* kids = g.children(n);
    for (uint32_t k = 0; k < g.child_count(n); ++k) out->AppendChild(n, kids[k]);
  }
  return out;
}

}  // namespace

Reranking::Reranking(const SideGraph& npu, std::shared_ptr<const vis::DivergenceRanking> stored)
    : stored_(std::move(stored)), build_matched_(MatchedOf(npu)) {}

Status Reranking::Measure(const GraphFile& f) {
  const SideGraph& npu = *f.side(vis::SIDE_NPU);
  evidence_.resize(npu.size());
  measured_with_.resize(npu.size(), -1);
  std::vector<uint32_t> todo;
  // The root has no pair of its own (the builder compares no root).
  for (uint32_t n = 1; n < npu.size(); ++n) {
    if (npu.matched(n) >= 0 && measured_with_[n] != npu.matched(n)) todo.push_back(n);
  }
  const vis::CompareMode mode = f.meta().mode();
  for (size_t begin = 0; begin < todo.size(); begin += kRerankSlice) {
    size_t end = std::min(todo.size(), begin + kRerankSlice);
    // Each detail block read once per slice; the slice's details dropped after it.
    GraphFile::DetailCache cache;
    std::vector<uint32_t> npu_nodes(todo.begin() + static_cast<std::ptrdiff_t>(begin),
                                    todo.begin() + static_cast<std::ptrdiff_t>(end));
    std::vector<uint32_t> bench_nodes;
    for (uint32_t n : npu_nodes) bench_nodes.push_back(static_cast<uint32_t>(npu.matched(n)));
    f.Prefetch(vis::SIDE_NPU, npu_nodes, &cache);
    f.Prefetch(vis::SIDE_BENCH, bench_nodes, &cache);
    for (size_t i = 0; i < npu_nodes.size(); ++i) {
      uint32_t n = npu_nodes[i], m = bench_nodes[i];
      // The NPU detail holds the pair's metrics: the build's, or those the manual match computed.
      auto a = f.Detail(vis::SIDE_NPU, n, &cache);
      if (!a.ok()) return a.error();
      auto b = f.Detail(vis::SIDE_BENCH, m, &cache);
      if (!b.ok()) return b.error();
      evidence_[n] = divergence::EvidenceOf(mode, *a, *b);
      measured_with_[n] = static_cast<int32_t>(m);
    }
  }
  return Status::Ok();
}

Result<std::shared_ptr<const vis::DivergenceRanking>> Reranking::Rank(const GraphFile& f) {
  std::lock_guard<std::mutex> l(mu_);
  if (last_ && generation_ == f.generation()) return last_;
  const SideGraph& npu = *f.side(vis::SIDE_NPU);
  bool as_built = npu.size() == build_matched_.size();
  for (uint32_t n = 0; as_built && n < npu.size(); ++n) as_built = npu.matched(n) == build_matched_[n];
  // A file without a ranking (written before rankings) gets none from its edits either.
  if (as_built || !f.meta().divergence_ranked() || !f.is_compare()) {
    last_ = stored_;
  } else {
    auto ranking = RankLocked(f);
    if (!ranking.ok()) return ranking.error();
    last_ = std::make_shared<const vis::DivergenceRanking>(std::move(*ranking));
  }
  generation_ = f.generation();
  return last_;
}

Result<vis::DivergenceRanking> Reranking::RankAnew(const GraphFile& f) {
  std::lock_guard<std::mutex> l(mu_);
  return RankLocked(f);
}

Result<vis::DivergenceRanking> Reranking::RankLocked(const GraphFile& f) {
  const SideGraph& npu = *f.side(vis::SIDE_NPU);
  if (!graph_) graph_ = GraphOf(npu, &pool_);
  for (uint32_t n = 0; n < npu.size(); ++n) graph_->matched[n] = npu.matched(n);
  GA_RETURN_IF_ERROR(Measure(f));
  return divergence::Rank(*graph_, evidence_, f.meta().mode());
}

size_t Reranking::MemoryBytes() const {
  std::lock_guard<std::mutex> l(mu_);
  size_t bytes = sizeof(*this) + build_matched_.capacity() * sizeof(int32_t) +
                 evidence_.capacity() * sizeof(divergence::Evidence) + measured_with_.capacity() * sizeof(int32_t) +
                 pool_.bytes();
  if (graph_) bytes += graph_->size() * 64;  // its columns
  if (last_ && last_ != stored_) bytes += last_->SpaceUsedLong();
  return bytes;
}

Status RerankDivergence(GraphFile* f) {
  Result<std::shared_ptr<const vis::DivergenceRanking>> ranking = Error{};
  {
    std::shared_lock<std::shared_mutex> l(f->mutex());
    ranking = f->reranking().Rank(*f);
    // Shown under the lock: a later edit's ranking, made after this one's, is shown after it.
    if (ranking.ok()) f->ShowDivergence(*ranking);
  }
  return ranking.status();
}

}  // namespace graph_ascend::service
