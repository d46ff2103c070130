// The hierarchy index of one side of a .vis, loaded into flat arrays.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
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
