#include "rerank.h"

#include <algorithm>
#include <cstdio>
#include <shared_mutex>
#include <span>

#include "divergence/pair_evidence.h"
#include "open_graph.h"

namespace graph_ascend::service {
namespace {

std::vector<int32_t> MatchedOf(const SideGraph& g) {
  std::vector<int32_t> out(g.size());
  for (uint32_t n = 0; n < g.size(); ++n) out[n] = g.matched(n);
  return out;
}

divergence::HierarchyView HierarchyOf(const SideGraph& g) {
  divergence::HierarchyView h;
  h.size = g.size();
  h.name = [&g](uint32_t n) { return g.name(n); };
  h.node_type = [&g](uint32_t n) { return static_cast<uint8_t>(g.node_type(n)); };
  h.children = [&g](uint32_t n) { return std::span<const uint32_t>(g.children(n), g.child_count(n)); };
  return h;
}

}  // namespace

Reranking::Reranking(const SideGraph& npu, std::shared_ptr<const vis::DivergenceRanking> stored)
    : stored_(std::move(stored)), build_matched_(MatchedOf(npu)) {}

Status Reranking::Measure(const OpenGraph& f) {
  const SideGraph& npu = *f.side(vis::SIDE_NPU);
  evidence_.resize(npu.size());
  measured_with_.resize(npu.size(), -1);
  std::vector<uint32_t> todo, peers;
  // The root has no pair of its own (the builder compares no root).
  for (uint32_t n = 1; n < npu.size(); ++n) {
    if (npu.matched(n) < 0 || measured_with_[n] == npu.matched(n)) continue;
    todo.push_back(n);
    peers.push_back(static_cast<uint32_t>(npu.matched(n)));
  }
  // Each detail block read once per slice; the slice's details dropped after it.
  auto read = [&f](vis::Side side, const std::vector<uint32_t>& nodes, std::vector<vis::NodeDetail>* out) -> Status {
    OpenGraph::DetailCache cache;
    f.Prefetch(side, nodes, &cache);
    for (uint32_t n : nodes) {
      // The edited copy where a manual match computed the pair's metrics.
      auto d = f.Detail(side, n, &cache);
      if (!d.ok()) return d.error();
      out->push_back(std::move(*d));
    }
    return Status::Ok();
  };
  GA_RETURN_IF_ERROR(divergence::MeasurePairs(f.meta().mode(), todo, peers, read, &evidence_));
  for (size_t i = 0; i < todo.size(); ++i) measured_with_[todo[i]] = static_cast<int32_t>(peers[i]);
  return Status::Ok();
}

Result<std::shared_ptr<const vis::DivergenceRanking>> Reranking::Rank(const OpenGraph& f) {
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

Result<vis::DivergenceRanking> Reranking::RankAnew(const OpenGraph& f) {
  std::lock_guard<std::mutex> l(mu_);
  return RankLocked(f);
}

Result<vis::DivergenceRanking> Reranking::RankLocked(const OpenGraph& f) {
  const SideGraph& npu = *f.side(vis::SIDE_NPU);
  if (!graph_) graph_ = divergence::GraphOf(HierarchyOf(npu), &pool_);
  for (uint32_t n = 0; n < npu.size(); ++n) graph_->matched[n] = npu.matched(n);
  GA_RETURN_IF_ERROR(Measure(f));
  return divergence::Rank(*graph_, evidence_, f.meta().mode());
}

void Reranking::SetStored(std::shared_ptr<const vis::DivergenceRanking> stored) {
  std::lock_guard<std::mutex> l(mu_);
  stored_ = std::move(stored);
  last_.reset();
  generation_ = UINT64_MAX;
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

Status RerankDivergence(OpenGraph* f) {
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
