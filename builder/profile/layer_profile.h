// The layer profile (issue 32): a compare's error along the model's depth.
// For each decoder layer (the repeated modules `Module.model.layers.N`, found
// by themselves) or each module at a chosen depth of the NPU hierarchy, the
// largest output error of its forward calls, of its backward calls and of the
// parameter gradients inside it, each against its dtype's noise floor, with
// the divergence ranking's entries inside it. Read from a .vis (ReadProfile)
// or from any holder of the hierarchy and the details (MakeProfile: the
// graph service), so `info --profile`, the report and the page agree.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "verdict/verdict.h"
#include "vis/vis_file.h"
#include "vis/vis_index.h"

namespace graph_ascend::profile {

enum Series : int { kForward = 0, kBackward = 1, kParamGrad = 2 };
inline constexpr int kSeriesCount = 3;
// "forward", "backward", "parameter gradients".
const char* SeriesName(int series);

// One series at one point.
struct Value {
  bool has = false;   // a compared node of the point gave an output error
  // The largest output error. Statistics: the noise rule's change against the tensor's scale (infinite
  // where an NPU output statistic is Inf/NaN); tensor and md5: the floor rule's item error
  // (docs/DIVERGENCE.md, "What is measured").
  double error = 0;
  // The noise floor it is held against. Statistics: kNoiseMargin times the larger of one ulp of its
  // outputs and the median of the series at the other points (the points as instances of one kind,
  // the noise rule's view); tensor and md5: the dtype floor of its outputs (the largest).
  double floor = 0;
  int32_t node = -1;  // the NPU node of the largest error
};

struct Point {
  std::string label;  // the module path, "model.layers.3"
  int32_t node = -1;  // its first forward module node (the page opens it), else the first node of a series
  Value value[kSeriesCount];
  uint32_t ranked = 0;  // entries of the divergence ranking inside it
  bool first = false;   // it holds the first divergence
};

struct Profile {
  // How the points were chosen: "model.layers.N" (the repeated layer modules) or "depth 2".
  std::string grouping;
  vis::CompareMode mode = vis::MODE_NONE;
  std::vector<Point> points;  // in forward execution order
};

// One side's hierarchy as the profile reads it.
struct Hierarchy {
  uint32_t size = 0;
  std::function<std::string_view(uint32_t)> name;
  std::function<int32_t(uint32_t)> parent;
  std::function<int32_t(uint32_t)> matched;  // the node's match on the other side, -1
  std::function<std::vector<uint32_t>()> pre_order;
};
// A node's details (side, node).
using DetailFn = std::function<Result<vis::NodeDetail>(vis::Side, uint32_t)>;

// `depth` 0: the repeated layer modules, else the modules at that depth of
// the NPU hierarchy (the root's children are depth 1). `ranked`: the ranking's
// NPU nodes in order (entry 0 the first divergence). An Error when no layer is
// found (depth 0) or no module lies at `depth`.
Result<Profile> MakeProfile(const Hierarchy& npu, const DetailFn& detail, vis::CompareMode mode, int depth,
                            const std::vector<uint32_t>& ranked);

// The NPU side of a compare's index as the profile reads it (a match out of `bench`'s range is none).
Hierarchy HierarchyOf(const vis::SideIndex& npu, const vis::SideIndex& bench);
// Details read from `reader` one block at a time (the returned function keeps the last few blocks).
DetailFn BlockDetails(const vis::VisReader& reader, const vis::SideIndex& npu, const vis::SideIndex& bench);

// The same from a compare's .vis: `npu` its NPU index, `v` its verdict.
Result<Profile> ReadProfile(const vis::VisReader& reader, const vis::SideIndex& npu, const vis::SideIndex& bench,
                            const verdict::Verdict& v, int depth);

// The profile as text lines (info --profile): one line per point.
std::string ProfileText(const Profile& p);

// The module path of a module node's name ("Module.model.layers.0.mlp.MLP.forward.0" -> "model.layers.0.mlp"),
// its direction in `series` (kForward, kBackward, kParamGrad); "" when the name is no module's.
std::string_view ModulePath(std::string_view name, Series* series);

}  // namespace graph_ascend::profile
