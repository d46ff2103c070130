// The divergence ranking after manual matches (docs/DIVERGENCE.md, "Limits"):
// the builder's own rule (divergence::Rank over each pair's evidence read from
// its details, divergence/pair_evidence.h, as for a converted msprobe file)
// over the build's matches plus the manual ones minus the unmatched ones, so
// that the first divergence, the margins and the "no divergence beyond noise"
// verdict follow what the user matched.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "base/status.h"
#include "base/string_pool.h"
#include "divergence/divergence.h"
#include "graph/graph.h"
#include "side_graph.h"
#include "vis.pb.h"

namespace graph_ascend::service {

class OpenGraph;

// What one open file keeps between re-rankings: the build's matches (to know
// when the edits have come back to them), the NPU hierarchy as the ranking
// reads it, and each pair's evidence, measured once per pair.
class Reranking {
 public:
  // `npu` as the file stores it, before any edit; `stored` the file's ranking.
  Reranking(const SideGraph& npu, std::shared_ptr<const vis::DivergenceRanking> stored);

  // Under the file's shared (or exclusive) lock: the ranking of the matches
  // now; the stored one itself while they are the build's. Linear in the
  // node count, plus the details of the pairs not measured before (every
  // matched pair the first time; afterwards those matched since).
  Result<std::shared_ptr<const vis::DivergenceRanking>> Rank(const OpenGraph& f);

  // The same ranked again whatever the matches (no shortcut to the stored
  // one): over the build's matches it is the stored ranking, which the tests
  // check on every sample.
  Result<vis::DivergenceRanking> RankAnew(const OpenGraph& f);

  size_t MemoryBytes() const;

  // The file's ranking is `stored` from now on (the whole file's, taken after
  // an index-only open: OpenGraph::TakeDetailsRanking).
  void SetStored(std::shared_ptr<const vis::DivergenceRanking> stored);

 private:
  Result<vis::DivergenceRanking> RankLocked(const OpenGraph& f);  // under mu_
  // Measures the pairs whose evidence is missing or of another partner.
  Status Measure(const OpenGraph& f);

  std::shared_ptr<const vis::DivergenceRanking> stored_;  // under mu_
  const std::vector<int32_t> build_matched_;

  mutable std::mutex mu_;  // two re-rankings under shared locks at once share the caches
  StringPool pool_;
  std::unique_ptr<graph::Graph> graph_;         // built on the first re-ranking
  std::vector<divergence::Evidence> evidence_;  // by NPU node
  std::vector<int32_t> measured_with_;          // the Bench node evidence_[n] is of; -1 none
  uint64_t generation_ = UINT64_MAX;            // of the edits `last_` ranks
  std::shared_ptr<const vis::DivergenceRanking> last_;
};

// After the matches changed (Match, Unmatch, LoadMatches, a journal replay):
// re-ranks under the shared lock, so that readers go on and the edit's
// exclusive section is what it was, and shows the result (GetDivergence, the
// views' divergence marks). On error the ranking shown stays as it was.
Status RerankDivergence(OpenGraph* f);

}  // namespace graph_ascend::service
