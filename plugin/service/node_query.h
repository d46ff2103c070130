// Finding nodes of one side: name search and the precision / match /
// overflow filters. Results are node indices in node order.
//
// Search scans the side's names buffer once: memmem for a substring (over the
// lowercase copy when case-insensitive), one RE2 scan in multi-line mode for
// a regular expression (linear time, no backtracking).
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "side_graph.h"
#include "vis.pb.h"

namespace graph_ascend::service {

struct SearchSpec {
  std::string query;
  bool regex = false;
  bool case_insensitive = false;
  int32_t micro_step = -1;  // -1: all
  bool operator==(const SearchSpec&) const = default;
};

// Nodes under the root whose name matches. An empty query matches nothing.
Result<std::vector<uint32_t>> SearchNodes(const SideGraph& g, const SearchSpec& spec);

// Whether one name matches `spec` as SearchNodes has it (the micro step
// aside): for names read elsewhere than a side (a .vis.db's rows).
using NameMatch = std::function<bool(std::string_view)>;
Result<NameMatch> NameMatcher(const SearchSpec& spec);

// The searches of one side of an open file with its recent results: names
// never change while the file is open, so a result stays valid and paging
// through it does not search again. Thread-safe; at most kKept results are
// kept, the least recently used out first.
class SideSearch {
 public:
  using Hits = std::shared_ptr<const std::vector<uint32_t>>;
  static constexpr size_t kKept = 16;

  explicit SideSearch(const SideGraph& g) : g_(g) {}
  SideSearch(const SideSearch&) = delete;
  SideSearch& operator=(const SideSearch&) = delete;

  // SearchNodes' hits, the same object for the same spec while it is kept.
  Result<Hits> Find(const SearchSpec& spec) const;

 private:
  const SideGraph& g_;
  mutable std::mutex mu_;
  mutable std::list<std::pair<SearchSpec, Hits>> recent_;  // most recent first
};

struct FilterSpec {
  std::vector<int32_t> buckets;    // legend indices (a node's colour bucket, see OpenGraph)
  vis::Grading grading = vis::GRADING_INDEX;  // which legend `buckets` index
  bool unmatched = false;          // nodes without a match
  std::vector<uint32_t> overflow;  // OverflowLevel values
  bool leaves_only = false;
  int32_t micro_step = -1;
};

// Nodes under the root (the root excluded) that satisfy any of the chosen
// criteria (bucket, unmatched, overflow), restricted to leaves and to the
// micro step when asked. `compare` tells whether "unmatched" applies.
std::vector<uint32_t> FilterNodes(const SideGraph& g, bool compare, const FilterSpec& spec);

}  // namespace graph_ascend::service
