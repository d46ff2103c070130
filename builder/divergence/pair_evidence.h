// Each matched pair's evidence read back from the details a compare stored
// (the metrics on the NPU detail, the fields of both), and the ranking over
// it: one implementation for every ranking made after the build's own, that
// of a converted msprobe file (.vis.db, JSON .vis: metrics but no ranking)
// and the service's after manual matches (docs/DIVERGENCE.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/string_pool.h"
#include "divergence/divergence.h"
#include "graph/graph.h"
#include "vis.pb.h"

namespace graph_ascend::divergence {

// The details of `nodes` of `side`, in their order, into `out` (one slice of
// pairs at a time, so that a million-node file's details are never all in memory).
using ReadDetails =
    std::function<Status(vis::Side side, const std::vector<uint32_t>& nodes, std::vector<vis::NodeDetail>* out)>;

// Pairs whose details are read at once (per side).
inline constexpr size_t kEvidenceSlice = 4096;

// evidence[npu[i]] from the details of the pair (npu[i], bench[i]), read in
// slices through `read`; `evidence` is sized by the caller (by NPU node).
Status MeasurePairs(vis::CompareMode mode, const std::vector<uint32_t>& npu, const std::vector<uint32_t>& bench,
                    const ReadDetails& read, std::vector<Evidence>* evidence);

// One side's hierarchy as a file or the service holds it.
struct HierarchyView {
  uint32_t size = 0;
  std::function<std::string_view(uint32_t)> name;
  std::function<uint8_t(uint32_t)> node_type;
  std::function<std::span<const uint32_t>(uint32_t)> children;
};

// The builder's graph of that hierarchy (names interned in `pool`): the same
// node numbers, names, types and children in the same order, so that Rank
// walks it in the builder's execution order. matched is kNoNode throughout.
std::unique_ptr<graph::Graph> GraphOf(const HierarchyView& side, StringPool* pool);

// Why nothing can be ranked over `npu`'s matches, or "" when something can:
// no node but the root is matched.
const char* UnrankableReason(const graph::Graph& npu);

// The ranking over the matches `npu.matched` holds, each matched pair (the
// root aside: the builder compares no root) measured from its details.
Result<vis::DivergenceRanking> RankFromDetails(const graph::Graph& npu, vis::CompareMode mode,
                                               const ReadDetails& read);

}  // namespace graph_ascend::divergence
