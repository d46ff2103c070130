// One side (NPU or Bench) of an open .vis file: the hierarchy index held as
// flat columns indexed by node, so a side of 10^6 nodes costs a few dozen
// bytes a node and no per-node heap allocation.
//
// Names live in one buffer, '\n'-separated, plus a lowercase copy, so that a
// substring search is a memmem over one block and a regular expression is
// one RE2 scan (node_query.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "vis/vis_file.h"
#include "vis/vis_index.h"

namespace graph_ascend::service {

class SideGraph {
 public:
  // Reads every NodeIndexChunk of `side` and checks the hierarchy (indices in
  // range, parent and children agree, no cycle). `progress` gets 0..1.
  static Result<std::unique_ptr<SideGraph>> Load(const vis::VisReader& reader, vis::Side side,
                                                 const std::function<void(double)>& progress);

  // The same from an index held in memory of which only some nodes are
  // known (a .vis.db graph's opening screen); `path` and `side` name it in
  // errors.
  static Result<std::unique_ptr<SideGraph>> FromPartial(const vis::PartialSideIndex& index, const std::string& path,
                                                        vis::Side side);

  SideGraph(const SideGraph&) = delete;
  SideGraph& operator=(const SideGraph&) = delete;

  uint32_t size() const { return static_cast<uint32_t>(parent_.size()); }
  bool valid(int64_t node) const { return node >= 0 && node < static_cast<int64_t>(size()); }

  std::string_view name(uint32_t n) const;
  uint32_t node_type(uint32_t n) const { return node_type_[n]; }
  int32_t parent(uint32_t n) const { return parent_[n]; }
  uint32_t child_count(uint32_t n) const { return child_begin_[n + 1] - child_begin_[n]; }
  const uint32_t* children(uint32_t n) const { return children_.data() + child_begin_[n]; }
  int32_t micro_step(uint32_t n) const { return micro_step_[n]; }
  // The micro step of the node's first-level ancestor (itself if first level); -1 none.
  int32_t effective_micro_step(uint32_t n) const { return top_micro_step_[n]; }
  // Depth below the root (root 0); -1 for nodes unreachable from the root.
  int32_t depth(uint32_t n) const { return depth_[n]; }
  bool reachable(uint32_t n) const { return depth_[n] >= 0; }
  double precision(uint32_t n) const { return precision_[n]; }
  bool has_precision(uint32_t n) const { return !std::isnan(precision_[n]); }
  uint32_t overflow(uint32_t n) const { return overflow_[n]; }
  int32_t matched(uint32_t n) const { return matched_[n]; }
  uint32_t flags(uint32_t n) const { return flags_[n]; }
  int32_t bucket(uint32_t n) const { return bucket_[n]; }
  // msprobe 26's grade (0 / 0.5 / 1; NaN none) and its bucket in meta.grade_legend.
  double grade(uint32_t n) const { return grade_[n]; }
  bool has_grade(uint32_t n) const { return !std::isnan(grade_[n]); }
  int32_t grade_bucket(uint32_t n) const { return grade_bucket_[n]; }
  // The bucket of the view's grading.
  int32_t bucket(uint32_t n, vis::Grading grading) const {
    return grading == vis::GRADING_26 ? grade_bucket_[n] : bucket_[n];
  }

  // Mutations by manual matching and legend changes (caller holds the file's writer lock).
  void set_precision(uint32_t n, double p) { precision_[n] = p; }
  void set_matched(uint32_t n, int32_t m) {
    built_matched_.try_emplace(n, matched_[n]);
    matched_[n] = m;
  }
  // The match the file was built with, whatever matching did since; -1 none.
  int32_t built_matched(uint32_t n) const {
    auto it = built_matched_.find(n);
    return it == built_matched_.end() ? matched_[n] : it->second;
  }
  void set_bucket(uint32_t n, int32_t b) { bucket_[n] = static_cast<int8_t>(b); }
  void set_grade(uint32_t n, double g) { grade_[n] = g; }
  void set_grade_bucket(uint32_t n, int32_t b) { grade_bucket_[n] = static_cast<int8_t>(b); }

  // Names joined by '\n' (a '\n' or '\r' inside a name is searched as ' ').
  std::string_view names_buffer() const { return names_; }
  std::string_view folded_names_buffer() const { return folded_; }
  uint32_t name_offset(uint32_t n) const { return name_offset_[n]; }
  // The node whose name holds byte `offset` of the names buffer.
  uint32_t NodeAtOffset(size_t offset) const;

  // The node of an exact name, -1. Builds the name table on first use.
  int32_t Find(std::string_view name) const;

  // Ancestors of `n`, root first, excluding `n`: the `limit` nearest ones
  // (depth(n) - limit nearer the root are left out), so that a node at
  // depth 10^5 costs `limit` steps.
  std::vector<uint32_t> Ancestors(uint32_t n, size_t limit = SIZE_MAX) const;

  size_t MemoryBytes() const;

 private:
  SideGraph() = default;
  // Load's and FromPartial's end: the hierarchy checked, depths, micro steps, folded names, buckets.
  Status Derive(const std::string& path, vis::Side side);
  // Appends node i's name to the '\n'-separated name buffer; a name holding '\n' or '\r' is kept
  // verbatim in odd_names_ and written flattened (breaks as spaces), so the buffer's lines stay nodes.
  void AppendName(uint32_t i, std::string_view name);

  std::string names_;
  std::string folded_;
  std::vector<uint32_t> name_offset_;                    // size() + 1
  std::unordered_map<uint32_t, std::string> odd_names_;  // names holding '\n' or '\r', verbatim
  std::vector<uint8_t> node_type_;
  std::vector<int32_t> parent_;
  std::vector<uint32_t> child_begin_;  // size() + 1
  std::vector<uint32_t> children_;
  std::vector<int32_t> micro_step_;
  std::vector<int32_t> top_micro_step_;
  std::vector<int32_t> depth_;
  std::vector<double> precision_;
  std::vector<uint8_t> overflow_;
  std::vector<int32_t> matched_;
  std::unordered_map<uint32_t, int32_t> built_matched_;  // the nodes matching changed: their match as built
  std::vector<uint8_t> flags_;
  std::vector<int8_t> bucket_;
  std::vector<double> grade_;
  std::vector<int8_t> grade_bucket_;

  mutable std::once_flag by_name_once_;
  mutable std::unordered_map<std::string_view, uint32_t> by_name_;
};

}  // namespace graph_ascend::service
