// An open .vis file: its meta, both sides' hierarchy index, and the edits
// made through the service (manual matches, legend), shared by every client.
//
// Opening reads only the meta and the node index sections; node details and
// stacks are read from the file on demand. Readers take shared(); edits take
// exclusive(). Details of manually (un)matched nodes live in memory.
// open_graph.cc opens and reads the file; open_graph_colours.cc colours its
// nodes (legend buckets, divergence marks, the thresholds' metric).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "graph_service.pb.h"
#include "node_query.h"
#include "rerank.h"
#include "side_graph.h"
#include "vis/vis_file.h"
#include "vis/vis_index.h"

namespace graph_ascend::service {

using ProgressFn = std::function<void(double fraction, const std::string& stage)>;
// For a file without node details (an index-only file, foreign_files.h):
// blocks until the file holding them (the same nodes in the same order) is
// written, and returns its path.
using DetailsFileFn = std::function<Result<std::string>()>;
// For the same file: one node's details (by side and name) while that file
// is being written, read from its source; nullopt once it is written (or has
// failed): they are read from it then.
using NodeDetailFn =
    std::function<std::optional<Result<vis::NodeDetail>>(vis::Side side, const std::string& name)>;
// Both sides' node index held in memory (a .vis.db graph's opening screen,
// foreign_files.h): they replace the index of the file opened, which then
// holds its meta and stacks (and an index of the root alone).
struct SideIndexes {
  vis::PartialSideIndex npu;
  vis::PartialSideIndex bench;  // size 0 for a build
};

class OpenGraph {
 public:
  // `abs_path` is the resolved file; `relative` its name under the log
  // directory. With `details_file`, node details are read from the file it
  // gives (on the first detail read), the rest from `abs_path`; until it is
  // written, Detail() asks `node_detail` (when given) instead. With `index`,
  // the sides are those, not the file's.
  static Result<std::shared_ptr<OpenGraph>> Open(const std::string& abs_path, const std::string& relative,
                                                 const ProgressFn& progress, DetailsFileFn details_file = {},
                                                 NodeDetailFn node_detail = {},
                                                 std::shared_ptr<const SideIndexes> index = nullptr);

  const std::string& relative() const { return relative_; }
  const std::string& abs_path() const { return reader_->path(); }
  uint64_t id() const { return id_; }
  bool is_compare() const { return meta_.kind() == vis::GRAPH_COMPARE && bench_ != nullptr; }
  uint64_t file_size() const { return reader_->file_size(); }
  int64_t mtime_ns() const { return mtime_ns_; }

  std::shared_mutex& mutex() const { return mu_; }

  // --- under shared() or exclusive()
  const vis::FileMeta& meta() const { return meta_; }
  // The grading a view shows: its own choice, else the file's; the index
  // when the file stores no grades (older files, builds).
  vis::Grading GradingOf(const ViewKey& key) const {
    vis::Grading g = key.has_grading() ? key.grading() : meta_.grading();
    return meta_.grade_legend_size() == 0 ? vis::GRADING_INDEX : g;
  }
  const google::protobuf::RepeatedPtrField<vis::ColorBucket>& Legend(vis::Grading g) const {
    return g == vis::GRADING_26 ? meta_.grade_legend() : meta_.legend();
  }
  // Null for the Bench side of a build.
  const SideGraph* side(vis::Side s) const { return s == vis::SIDE_NPU ? npu_.get() : bench_.get(); }
  SideGraph* mutable_side(vis::Side s) { return s == vis::SIDE_NPU ? npu_.get() : bench_.get(); }
  const SideGraph& other(vis::Side s) const { return s == vis::SIDE_NPU ? *bench_ : *npu_; }

  // Details read ahead under shared() for an edit to come, so that the edit's
  // exclusive section reads nothing from the file.
  struct DetailCache {
    std::unordered_map<uint32_t, vis::NodeDetail> side[2];
  };
  // The node's details: the edited copy if matching changed it, else the
  // cached one (`cache` may be null), else read from the file.
  Result<vis::NodeDetail> Detail(vis::Side side, uint32_t node, const DetailCache* cache = nullptr) const;
  // Reads the details of `nodes` into `cache`, each detail block once. Nodes
  // whose block cannot be read are left out (Detail() then reports the error).
  void Prefetch(vis::Side side, std::vector<uint32_t> nodes, DetailCache* cache) const;
  Result<std::vector<std::string>> Stack(vis::Side side, int32_t stack_id) const;

  // The file info as the service answers it (summaries cached per edit).
  FileInfo Info() const;

  // A side's searches with their recent results (node_query.h); only for a side the file has.
  const SideSearch& search(vis::Side s) const { return *search_[s == vis::SIDE_NPU ? 0 : 1]; }

  // The file's checkpoint similarity (SECTION_CKPT), read on request; empty when it has none.
  Result<vis::CkptSimilarity> Ckpt() const { return reader_->ReadCkpt(); }
  // The divergence ranking shown: the one read on open (empty for builds and
  // older files) until manual matches re-rank it (rerank.h). Thread-safe.
  std::shared_ptr<const vis::DivergenceRanking> divergence() const;
  // Shows `ranking` instead; the divergence marks follow. Thread-safe.
  void ShowDivergence(std::shared_ptr<const vis::DivergenceRanking> ranking);
  Reranking& reranking() const { return *reranking_; }
  // A file opened from its index-only conversion (details_file) is ranked with
  // its details: once the whole file is written (this waits for it, outside
  // any lock), its ranking and FileMeta's summary of it become this file's.
  // Nothing for other files, and only once.
  Status TakeDetailsRanking();
  // Per node of a side: kDivergent when it is in the ranking (a Bench node:
  // matched with one), kContains when a descendant is; and the worst legend
  // bucket below it (-1 none). Recomputed after colours change. Thread-safe.
  static constexpr uint8_t kDivergent = 1, kContains = 2;
  struct Marks {
    std::vector<uint8_t> mark;
    std::vector<int8_t> worst;
  };
  std::shared_ptr<const Marks> DivergenceMarks(vis::Side side) const;

  // --- thresholds and metric (legend_choice.h)
  // The relative errors colouring statistics nodes; 0: the file's own index.
  uint32_t metrics() const { return metrics_; }
  // Under shared(): the index every NPU node gets under `mask` (NaN: it
  // keeps its own), from the details (one pass over the detail blocks).
  Result<std::vector<double>> MetricIndexes(uint32_t mask) const;
  // Edits so far; a value computed under shared() is stale when it changed.
  uint64_t generation() const { return generation_.load(); }
  const google::protobuf::RepeatedPtrField<vis::ColorBucket>& stored_legend() const { return reader_->meta().legend(); }
  // Why the saved choice beside the file was not applied ("" when it was or there is none).
  const std::string& legend_error() const { return legend_error_; }
  // True the first time only: whether the saved choice is still to be looked for.
  bool TakeSavedChoiceCheck() { return !saved_choice_checked_.exchange(true); }

  // Manual matches in the order they were made (npu name -> bench name).
  const std::list<std::pair<std::string, std::string>>& manual_matches() const { return manual_; }
  // The builder's matches unmatched in this session and not matched again (npu name -> bench name):
  // a match config lists pairs to match and cannot record them, so SaveMatches refuses while any stands.
  const std::map<std::string, std::string>& removed_automatic() const { return removed_automatic_; }
  bool dirty() const { return dirty_.load(); }
  size_t MemoryBytes() const;

  // --- under exclusive()
  void SetDetail(vis::Side side, uint32_t node, vis::NodeDetail detail);
  void AddManualMatch(const std::string& npu, const std::string& bench);
  void RemoveManualMatch(const std::string& npu);
  void NoteAutomaticRemoved(const std::string& npu, const std::string& bench) { removed_automatic_[npu] = bench; }
  void NoteAutomaticRestored(const std::string& npu) { removed_automatic_.erase(npu); }
  void SetLegend(const google::protobuf::RepeatedPtrField<vis::ColorBucket>& legend);
  // Shows `values` (from MetricIndexes(mask)) instead of the nodes' own
  // indices, API collections under the root the worst of their children;
  // mask 0 brings the own indices back. Recolours.
  void ApplyMetrics(uint32_t mask, const std::vector<double>& values);
  void set_legend_error(std::string e) { legend_error_ = std::move(e); }
  // Recomputes the colour bucket of `node` on `side` (and of its partner).
  void RefreshBucket(vis::Side side, uint32_t node);
  void RefreshAllBuckets();
  void MarkEdited() {
    ++generation_;
    dirty_ = true;
    summary_valid_ = false;
    ForgetMarks();
  }
  void MarkSaved() { dirty_ = false; }

 private:
  OpenGraph() = default;
  // The bucket of a node in meta.legend (GRADING_INDEX) or meta.grade_legend.
  int32_t BucketFor(vis::Side side, uint32_t node, vis::Grading grading) const;
  void ForgetMarks();
  SideSummary Summarize(vis::Side side) const;

  std::string relative_;
  uint64_t id_ = 0;
  int64_t mtime_ns_ = 0;
  // The reader of node details: reader_, or the file details_file_ gives
  // (opened once; an error is kept and returned to every reader).
  Result<const vis::VisReader*> DetailReader() const;
  // The detail block of `details` holding `node`; an error names this file.
  Result<vis::NodeDetailBlock> DetailBlock(const vis::VisReader& details, vis::Side side, uint32_t node) const;

  std::unique_ptr<vis::VisReader> reader_;
  DetailsFileFn details_file_;
  NodeDetailFn node_detail_;
  mutable std::once_flag details_once_;
  mutable std::unique_ptr<vis::VisReader> details_reader_;
  mutable Error details_error_;
  vis::FileMeta meta_;
  std::unique_ptr<SideGraph> npu_;
  std::unique_ptr<SideGraph> bench_;
  int32_t unmatched_bucket_ = -1;
  int32_t unmatched_grade_bucket_ = -1;
  std::shared_ptr<const vis::DivergenceRanking> divergence_;  // under marks_mu_
  std::unique_ptr<Reranking> reranking_;
  std::atomic<bool> details_ranking_taken_{false};
  mutable std::mutex marks_mu_;
  mutable std::shared_ptr<const Marks> marks_[2];  // null: to compute

  mutable std::shared_mutex mu_;
  std::unordered_map<uint32_t, vis::NodeDetail> edited_[2];
  std::list<std::pair<std::string, std::string>> manual_;
  // npu name -> its entry in manual_: adding and removing a match cost O(1),
  // so matching a subtree of n nodes is linear.
  std::unordered_map<std::string, std::list<std::pair<std::string, std::string>>::iterator> manual_at_;
  std::map<std::string, std::string> removed_automatic_;
  std::atomic<bool> dirty_{false};
  std::atomic<uint64_t> generation_{0};
  uint32_t metrics_ = 0;
  std::vector<double> own_precision_;  // the NPU indices while metrics_ != 0
  std::string legend_error_;
  std::atomic<bool> saved_choice_checked_{false};
  std::unique_ptr<SideSearch> search_[2];  // NPU, Bench (null for a build's)
  mutable std::mutex summary_mu_;
  mutable bool summary_valid_ = false;
  mutable SideSummary summary_[2];
};

}  // namespace graph_ascend::service
