// Writing built (and compared) graphs into a .vis file.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"
#include "compare/kept_metrics.h"
#include "compare/pair_metrics.h"
#include "graph/graph_builder.h"
#include "vis.pb.h"

namespace graph_ascend::vis {

struct WriteRequest {
  FileMeta meta;                   // node counts are filled in by WriteVis
  graph::Side* npu = nullptr;
  graph::Side* bench = nullptr;    // null for a build
  // Called for every matched NPU node while its details are written: puts
  // the metrics of the node's items into `metrics` (which it resets) and
  // sets the node's precision. Called on several threads at once (unless
  // serial_compare), for distinct nodes.
  std::function<void(uint32_t npu_node, compare::PairMetrics* metrics)> compare_pair;
  // Called after all NPU details are written, before the index (API
  // collection aggregation needs every node's precision).
  std::function<void()> after_compare;
  // Called after after_compare; what it returns is written as the file's
  // divergence ranking (compares only).
  std::function<DivergenceRanking()> rank_divergence;
  // Called with that ranking before the meta is written: adds what readers
  // need without opening the graph (the rank overview's counts).
  std::function<void(const DivergenceRanking&, FileMeta*)> summarize;
  std::function<void(double)> progress;  // 0..1
  // Called as each stage of the write ends (`graph -v`: its wall and CPU time).
  std::function<void(const std::string&)> stage_done;
  // Written as the file's SECTION_CKPT when not null (graph --ckpt / --ckpt-json); the meta's
  // ckpt_* summary is the caller's.
  const CkptSimilarity* ckpt = nullptr;
  // Threads that fill, compare, serialize and compress details (0: the
  // machine's cores). The file does not depend on it.
  int threads = 0;
  // When not null: each compared NPU node's metrics are kept there (reset to
  // the NPU nodes by WriteVis), so that its details can be made again after
  // the write (KeptDetail) without comparing twice.
  compare::KeptMetrics* kept_metrics = nullptr;
  // False: the compare runs (its metrics kept) but no node details are
  // written, only the index, stacks, ranking and meta: a scratch file whose
  // details the caller makes again from memory (KeptDetail), as the .vis.db
  // path does. Such a file is not a whole .vis: never hand it to a user.
  bool details = true;
  // compare_pair must run on the calling thread, in node order (tensor
  // compares read .pt files through one source and log in order).
  bool serial_compare = false;
};

// Writes the .vis atomically (temporary file + rename).
Status WriteVis(const std::string& path, WriteRequest& request);

// The stored details of one node: its dump items and stack reference, the
// items' keys as stored (a suffix after the node's name; ResolveKeys makes
// them whole). Replaces what `out` held, reusing its messages (a detail
// refilled node after node allocates little).
void FillDetail(const graph::Side& side, uint32_t node, NodeDetail* out);

// The details of `node` as the .vis that WriteVis wrote holds them, read back
// and resolved (ResolveKeys): FillDetail, with the metrics kept for a
// compared NPU node (`kept`: WriteRequest::kept_metrics, null for the bench
// side or a build).
void KeptDetail(const graph::Side& side, const compare::KeptMetrics* kept, uint32_t node, NodeDetail* out);

}  // namespace graph_ascend::vis
