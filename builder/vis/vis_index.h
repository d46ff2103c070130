// The hierarchy index of one side of a .vis, loaded into flat arrays.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "vis/vis_file.h"

namespace graph_ascend::vis {

struct SideIndex {
  // Names in one buffer: name n is names.substr(name_offset[n], name_offset[n+1] - name_offset[n]).
  std::string names;
  std::vector<uint64_t> name_offset;
  std::vector<uint8_t> node_type;
  std::vector<int32_t> parent;
  std::vector<uint32_t> child_offset;  // children of n: children[child_offset[n] .. child_offset[n+1])
  std::vector<uint32_t> children;
  std::vector<int32_t> micro_step;
  std::vector<double> precision;
  std::vector<double> grade;  // NaN for none (and for every node of an older file)
  std::vector<uint8_t> overflow;
  std::vector<int32_t> matched;
  std::vector<uint32_t> flags;

  uint32_t size() const { return static_cast<uint32_t>(parent.size()); }
  std::string_view Name(uint32_t n) const {
    return std::string_view(names).substr(name_offset[n], name_offset[n + 1] - name_offset[n]);
  }
  // Root first, parent last.
  std::vector<uint32_t> Ancestors(uint32_t n) const;
  // Pre-order from the root (execution order).
  std::vector<uint32_t> PreOrder() const;
};

// A side index of which only some nodes are known (a .vis.db graph's opening
// screen, formats::WriteVisDbOpening: a few dozen nodes among 10^5-10^6), so
// that no column of every node is written twice. `size` nodes; each known one
// at its index with its columns and children; every other node is nameless:
// a module with no children, colours or match, whose parent is the known node
// that lists it (none when no known node does).
struct PartialSideIndex {
  struct Known {
    uint32_t index = 0;
    std::string name;
    uint8_t node_type = NODE_MODULE;
    int32_t micro_step = -1;
    double precision = std::numeric_limits<double>::quiet_NaN();
    uint8_t overflow = 0;
    int32_t matched = -1;
    uint32_t flags = 0;
    std::vector<uint32_t> children;
  };
  uint32_t size = 0;
  std::vector<Known> known;  // by index, strictly increasing

  // The known node at `index`, or null.
  const Known* Find(uint32_t index) const;
  Known* Find(uint32_t index) { return const_cast<Known*>(std::as_const(*this).Find(index)); }
  // Every node's columns (10^5 and more): for checks and tests.
  SideIndex Dense() const;
};

// Where parents and children lists fail to describe one forest (a parent
// out of range, a child listed twice or by another node than its parent, a
// cycle of parents), or nothing. Every reader of an index checks it: a
// walk over a broken forest loops or reads out of bounds.
struct ForestFault {
  uint32_t node;
  std::string what;
};
std::optional<ForestFault> FindForestFault(const SideIndex& idx);

Result<SideIndex> LoadSideIndex(const VisReader& reader, Side side,
                                const std::function<void(double)>& progress = {});

}  // namespace graph_ascend::vis
