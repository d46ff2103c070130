#include "profile/layer_profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <unordered_map>

#include "divergence/divergence.h"
#include "dump/dump_data.h"

namespace graph_ascend::profile {
namespace {

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::string_view WithoutPrefix(std::string_view name) {
  for (std::string_view prefix : {std::string_view("Module."), std::string_view("Cell.")}) {
    if (name.substr(0, prefix.size()) == prefix) return name.substr(prefix.size());
  }
  return {};
}

// The path without its class: "model.layers.0.mlp.MLP" -> "model.layers.0.mlp"; "" for a class alone.
std::string_view WithoutClass(std::string_view s) {
  size_t dot = s.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : s.substr(0, dot);
}

// Detail blocks kept per side by BlockDetails.
constexpr size_t kKeptBlocks = 16;

// The noise rule's view (docs/DIVERGENCE.md) with the points as the instances of one kind: a point's
// noise is the median of the series at the other points (left out: it never sets its own noise),
// at least one ulp of its outputs; its floor is kNoiseMargin times that, the margin an op must pass.
void SetNoiseFloors(Profile* p) {
  for (int s = 0; s < kSeriesCount; ++s) {
    std::vector<double> values;
    for (const Point& point : p->points) {
      // An Inf/NaN output is no noise: it never sets another point's floor.
      if (point.value[s].has && std::isfinite(point.value[s].error)) values.push_back(point.value[s].error);
    }
    std::vector<double> others;
    for (Point& point : p->points) {
      Value& v = point.value[s];
      if (!v.has) continue;
      others = values;
      auto self = std::find(others.begin(), others.end(), v.error);
      if (self != others.end()) others.erase(self);
      double noise = 0;
      if (!others.empty()) {
        auto mid = others.begin() + static_cast<ptrdiff_t>((others.size() - 1) / 2);
        std::nth_element(others.begin(), mid, others.end());
        noise = *mid;
      }
      v.floor = divergence::kNoiseMargin * std::max(v.floor, noise);
    }
  }
}

}  // namespace

const char* SeriesName(int series) {
  switch (series) {
    case kForward: return "forward";
    case kBackward: return "backward";
    default: return "parameter gradients";
  }
}

std::string_view ModulePath(std::string_view name, Series* series) {
  std::string_view module = dump::ParametersGradModule(name);
  if (!module.empty()) {
    *series = kParamGrad;
    return WithoutClass(WithoutPrefix(module));
  }
  std::string_view rest = WithoutPrefix(name);
  size_t dot = rest.rfind('.');
  if (rest.empty() || dot == std::string_view::npos || !IsDigits(rest.substr(dot + 1))) return {};
  rest = rest.substr(0, dot);
  dot = rest.rfind('.');
  if (dot == std::string_view::npos) return {};
  std::string_view direction = rest.substr(dot + 1);
  if (direction == "forward") {
    *series = kForward;
  } else if (direction == "backward") {
    *series = kBackward;
  } else {
    return {};
  }
  return WithoutClass(rest.substr(0, dot));
}

Result<Profile> MakeProfile(const Hierarchy& npu, const DetailFn& detail, vis::CompareMode mode, int depth,
                            const std::vector<uint32_t>& ranked) {
  Profile p;
  p.mode = mode;
  std::vector<uint32_t> order = npu.pre_order();
  // Each module node's path and series, once.
  std::vector<std::string_view> path(npu.size);
  std::vector<int8_t> series(npu.size, -1);
  for (uint32_t n : order) {
    Series s;
    path[n] = ModulePath(npu.name(n), &s);
    if (!path[n].empty()) series[n] = static_cast<int8_t>(s);
  }

  // The points' paths, in forward execution order.
  std::vector<std::string_view> points;
  std::unordered_map<std::string_view, size_t> point_of;
  auto add_point = [&](std::string_view label) {
    if (point_of.emplace(label, points.size()).second) points.push_back(label);
  };
  if (depth > 0) {
    std::vector<int32_t> level(npu.size, 0);
    for (uint32_t n : order) {
      int32_t parent = npu.parent(n);
      if (parent >= 0 && static_cast<uint32_t>(parent) < npu.size) level[n] = level[parent] + 1;
      if (series[n] == kForward && level[n] == depth) add_point(path[n]);
    }
    if (points.empty()) return Error{"", "--depth " + std::to_string(depth), "no forward module lies at that depth"};
    p.grouping = "depth " + std::to_string(depth);
  } else {
    // The repeated layers: module paths ending in an index ("model.layers.3"); the container of the
    // fewest dots with two indices or more wins (decoder layers before the experts inside them), then
    // the one with more indices, then the first met.
    struct Container {
      size_t indices = 0;
      size_t first = 0;
    };
    std::unordered_map<std::string_view, Container> containers;
    std::unordered_map<std::string_view, bool> seen;
    for (uint32_t n : order) {
      if (series[n] != kForward) continue;
      std::string_view s = path[n];
      size_t dot = s.rfind('.');
      if (dot == std::string_view::npos || !IsDigits(s.substr(dot + 1)) || !seen.emplace(s, true).second) continue;
      Container& c = containers[s.substr(0, dot)];
      if (c.indices++ == 0) c.first = seen.size();
    }
    std::string_view best;
    const Container* chosen = nullptr;
    auto dots = [](std::string_view s) { return std::count(s.begin(), s.end(), '.'); };
    for (const auto& [name, c] : containers) {
      if (c.indices < 2) continue;
      if (chosen == nullptr || dots(name) < dots(best) ||
          (dots(name) == dots(best) && (c.indices > chosen->indices ||
                                        (c.indices == chosen->indices && c.first < chosen->first)))) {
        best = name;
        chosen = &c;
      }
    }
    if (chosen == nullptr) {
      return Error{"", "layer profile", "no repeated layer modules (such as Module.model.layers.N): give --depth N"};
    }
    for (uint32_t n : order) {
      std::string_view s = path[n];
      if (series[n] == kForward && s.size() > best.size() + 1 && s.substr(0, best.size()) == best &&
          s[best.size()] == '.' && IsDigits(s.substr(best.size() + 1))) {
        add_point(s);
      }
    }
    p.grouping = std::string(best) + ".N";
  }

  // The nodes of each point: its forward and backward calls, and the parameter gradients of it
  // and of the modules inside it.
  auto point_holding = [&](uint32_t n) -> int64_t {
    std::string_view s = path[n];
    if (series[n] != kParamGrad) {
      auto it = point_of.find(s);
      return it == point_of.end() ? -1 : static_cast<int64_t>(it->second);
    }
    for (;;) {
      auto it = point_of.find(s);
      if (it != point_of.end()) return static_cast<int64_t>(it->second);
      size_t dot = s.rfind('.');
      if (dot == std::string_view::npos) return -1;
      s = s.substr(0, dot);
    }
  };
  p.points.resize(points.size());
  for (size_t i = 0; i < points.size(); ++i) p.points[i].label = std::string(points[i]);
  std::vector<int64_t> holder(npu.size, -1);
  for (uint32_t n : order) {
    if (series[n] < 0) continue;
    int64_t at = point_holding(n);
    if (at < 0) continue;
    holder[n] = at;
    Point& point = p.points[at];
    if (point.node < 0 || (series[n] == kForward && series[point.node] != kForward)) point.node = static_cast<int32_t>(n);
    int32_t peer = npu.matched(n);
    if (peer < 0) continue;
    auto a = detail(vis::SIDE_NPU, n);
    if (!a.ok()) return a.error();
    auto b = detail(vis::SIDE_BENCH, static_cast<uint32_t>(peer));
    if (!b.ok()) return b.error();
    divergence::Evidence e = divergence::EvidenceOf(mode, *a, *b);
    if (!e.compared || !(e.has_output || e.output_nonfinite)) continue;
    Value& v = point.value[series[n]];
    bool statistics = mode == vis::MODE_STATISTICS;
    // An Inf/NaN output (the overflow reason) has no change against its scale: it is the largest error.
    double error = statistics ? (e.output_nonfinite ? INFINITY : e.output_change) : e.output_error;
    if (statistics && error < 0) continue;
    if (!v.has || error > v.error) {
      v.error = error;
      v.node = static_cast<int32_t>(n);
    }
    // Statistics: one ulp for now, the layers' noise below; else the dtype floor.
    double floor = statistics ? e.ulp : e.floor;
    v.floor = v.has ? std::max(v.floor, floor) : floor;
    v.has = true;
  }
  if (mode == vis::MODE_STATISTICS) SetNoiseFloors(&p);

  // The ranking's entries: each in the point of its nearest ancestor that belongs to one.
  for (size_t i = 0; i < ranked.size(); ++i) {
    int64_t n = ranked[i];
    for (size_t steps = 0; n >= 0 && static_cast<uint32_t>(n) < npu.size && steps <= npu.size; ++steps) {
      if (holder[n] >= 0) {
        Point& point = p.points[holder[n]];
        ++point.ranked;
        if (i == 0) point.first = true;
        break;
      }
      n = npu.parent(static_cast<uint32_t>(n));
    }
  }
  return p;
}

Hierarchy HierarchyOf(const vis::SideIndex& npu, const vis::SideIndex& bench) {
  Hierarchy h;
  h.size = npu.size();
  h.name = [&npu](uint32_t n) { return npu.Name(n); };
  h.parent = [&npu](uint32_t n) { return npu.parent[n]; };
  h.matched = [&npu, &bench](uint32_t n) {
    int32_t m = npu.matched[n];
    return m >= 0 && static_cast<uint32_t>(m) < bench.size() ? m : -1;
  };
  h.pre_order = [&npu] { return npu.PreOrder(); };
  return h;
}

DetailFn BlockDetails(const vis::VisReader& reader, const vis::SideIndex& npu, const vis::SideIndex& bench) {
  // The blocks read last, per side: the profile reads a node's block and the next nodes' from it.
  auto blocks = std::make_shared<std::map<uint32_t, vis::NodeDetailBlock>[]>(2);
  return [&reader, &npu, &bench, blocks](vis::Side side, uint32_t node) -> Result<vis::NodeDetail> {
    const vis::SideIndex& index = side == vis::SIDE_NPU ? npu : bench;
    std::map<uint32_t, vis::NodeDetailBlock>& cache = blocks[side == vis::SIDE_NPU ? 0 : 1];
    auto it = cache.upper_bound(node);
    if (it != cache.begin()) {
      --it;
      if (node - it->first < static_cast<uint32_t>(it->second.detail_size())) return it->second.detail(node - it->first);
    }
    if (node >= index.size()) return Error{reader.path(), "node " + std::to_string(node), "no such node"};
    auto block = reader.ReadDetailBlock(side, node, [&index](uint32_t n) { return index.Name(n); });
    if (!block.ok()) return block.error();
    if (node < block->first() || node - block->first() >= static_cast<uint32_t>(block->detail_size())) {
      return Error{reader.path(), "node " + std::to_string(node), "its detail block does not hold it"};
    }
    // Bounded: a 10^5-node compare's layers touch thousands of blocks, read mostly in node order.
    if (cache.size() >= kKeptBlocks) cache.clear();
    uint32_t first = block->first();
    const vis::NodeDetailBlock& stored = cache.emplace(first, std::move(*block)).first->second;
    return stored.detail(node - first);
  };
}

Result<Profile> ReadProfile(const vis::VisReader& reader, const vis::SideIndex& npu, const vis::SideIndex& bench,
                            const verdict::Verdict& v, int depth) {
  std::vector<uint32_t> ranked;
  for (const verdict::Entry& e : v.entries) ranked.push_back(e.node);
  auto p = MakeProfile(HierarchyOf(npu, bench), BlockDetails(reader, npu, bench), reader.meta().mode(), depth, ranked);
  if (!p.ok()) {
    Error e = p.error();
    if (e.file.empty()) e.file = reader.path();
    return e;
  }
  return p;
}

std::string ProfileText(const Profile& p) {
  std::string out = "layer profile by " + p.grouping + " (" + std::to_string(p.points.size()) +
                    " points): the largest output error (its noise floor), * above the floor\n";
  char buf[1024];
  snprintf(buf, sizeof buf, "  %-28s %-24s %-24s %-24s %s\n", "module", "forward", "backward", "parameter gradients",
           "divergence ranking");
  out += buf;
  auto cell = [](const Value& v) -> std::string {
    if (!v.has) return "-";
    char c[64];
    snprintf(c, sizeof c, "%.3g (%.3g)%s", v.error, v.floor, v.error > v.floor ? "*" : "");
    return c;
  };
  for (const Point& point : p.points) {
    std::string ranked = point.ranked == 0 ? "" : std::to_string(point.ranked) + (point.ranked == 1 ? " entry" : " entries");
    if (point.first) ranked += ", the first divergence";
    snprintf(buf, sizeof buf, "  %-28s %-24s %-24s %-24s %s", point.label.c_str(), cell(point.value[kForward]).c_str(),
             cell(point.value[kBackward]).c_str(), cell(point.value[kParamGrad]).c_str(), ranked.c_str());
    std::string line = buf;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace graph_ascend::profile
