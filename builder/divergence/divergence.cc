// The ranking of a graph's divergences (Rank, ExecutionOrder): which NPU
// nodes diverge by themselves, in execution order, from each pair's evidence
// (evidence.cc).
#include "divergence/divergence.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <string_view>

#include "divergence/noise_rule.h"

namespace graph_ascend::divergence {
namespace {

// Running median of the output errors of agreeing operators (two heaps).
class Median {
 public:
  void Add(double x) {
    if (low_.empty() || x <= low_.top()) low_.push(x);
    else high_.push(x);
    if (low_.size() > high_.size() + 1) {
      high_.push(low_.top());
      low_.pop();
    } else if (high_.size() > low_.size()) {
      low_.push(high_.top());
      high_.pop();
    }
  }
  double Get() const { return low_.empty() ? 0 : low_.top(); }

 private:
  std::priority_queue<double> low_;
  std::priority_queue<double, std::vector<double>, std::greater<double>> high_;
};

// Phase of a node: 0 forward, 1 backward, 2 optimizer: whether its name holds
// "optimizer" or ".backward" in any case, read in one pass (ExecutionOrder
// reads every name).
int PhaseOf(std::string_view name) {
  auto low = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  auto at = [&](size_t i, std::string_view lower) {
    if (i + lower.size() > name.size()) return false;
    for (size_t k = 1; k < lower.size(); ++k)
      if (low(name[i + k]) != lower[k]) return false;
    return true;
  };
  bool backward = false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = low(name[i]);
    if (c == 'o' && at(i, "optimizer")) return 2;
    if (c == '.' && !backward && at(i, ".backward")) backward = true;
  }
  return backward ? 1 : 0;
}

bool IsLeaf(const graph::Graph& g, uint32_t n) { return g.first_child[n] == graph::kNoNode; }

}  // namespace


std::vector<uint32_t> ExecutionOrder(const graph::Graph& g) {
  std::vector<uint32_t> pre;
  pre.reserve(g.size());
  std::vector<uint32_t> stack = {0};
  std::vector<uint8_t> phase(g.size(), 0);
  while (!stack.empty()) {
    uint32_t n = stack.back();
    stack.pop_back();
    pre.push_back(n);
    int p = g.parent[n] >= 0 ? phase[g.parent[n]] : 0;
    // Under the optimizer a name cannot raise the phase: no need to read it.
    phase[n] = static_cast<uint8_t>(p == 2 || n == 0 ? p : std::max(p, PhaseOf(g.Name(n))));
    // The children, the first on top.
    size_t first = stack.size();
    for (int32_t c = g.first_child[n]; c != graph::kNoNode; c = g.next_sibling[c]) {
      stack.push_back(static_cast<uint32_t>(c));
    }
    std::reverse(stack.begin() + first, stack.end());
  }
  // Phase by phase, the pre-order kept (a counting sort of three phases: linear).
  std::vector<uint32_t> out;
  out.reserve(pre.size());
  for (uint8_t ph = 0; ph <= 2; ++ph) {
    for (uint32_t n : pre)
      if (phase[n] == ph) out.push_back(n);
  }
  return out;
}

vis::DivergenceRanking Rank(const graph::Graph& g, const std::vector<Evidence>& evidence, vis::CompareMode mode) {
  vis::DivergenceRanking out;
  if (mode == vis::MODE_NONE || mode == vis::MODE_STRUCTURE || evidence.size() < g.size()) return out;
  std::vector<uint32_t> order = ExecutionOrder(g);
  std::vector<uint32_t> pos(g.size());
  for (uint32_t i = 0; i < order.size(); ++i) pos[order[i]] = i;

  std::vector<uint8_t> is_compared(g.size(), 0);
  for (uint32_t n = 1; n < g.size(); ++n) {
    is_compared[n] = g.matched[n] != graph::kNoNode && g.op[n] != graph::NodeOp::kApiCollection && evidence[n].compared;
  }
  auto compared = [&](uint32_t n) { return is_compared[n] != 0; };
  Verdicts v;
  v.reason.assign(g.size(), vis::DIVERGENCE_NONE);
  v.threshold.assign(g.size(), 0);
  v.inputs_agree.assign(g.size(), 1);
  v.outputs_agree.assign(g.size(), 1);
  bool noise_rule = mode == vis::MODE_STATISTICS;
  if (noise_rule) {
    // 1. Statistics: each op's change beyond the noise of its kind.
    NoiseVerdicts(g, evidence, order, is_compared, &v);
  } else {
    // 1. Each compared node's own verdict, against the floor of its dtype
    // and ten times the median output error of the agreeing operators
    // before it.
    Median noise;
    for (uint32_t n : order) {
      if (!compared(n)) continue;
      const Evidence& e = evidence[n];
      double thr = std::max(e.floor, 10 * noise.Get());
      v.threshold[n] = thr;
      // Without compared inputs (a parameter gradient, a call without
      // tensor arguments) the outputs follow from work done elsewhere: not
      // ranked.
      bool in_ok = e.has_input && !e.input_changed && !e.input_nonfinite && e.input_error <= thr;
      bool out_ok = !e.output_changed && !e.output_nonfinite && (!e.has_output || e.output_error <= thr);
      v.inputs_agree[n] = in_ok;
      v.outputs_agree[n] = out_ok;
      if (e.output_nonfinite && !e.input_nonfinite) {
        v.reason[n] = vis::DIVERGENCE_OVERFLOW;
      } else if (in_ok && e.output_changed) {
        v.reason[n] = vis::DIVERGENCE_DTYPE_SHAPE;
      } else if (in_ok && e.has_output && e.output_error > thr) {
        v.reason[n] = mode == vis::MODE_MD5 ? vis::DIVERGENCE_MD5 : vis::DIVERGENCE_OUTPUTS;
      } else if (in_ok && out_ok && e.has_output && IsLeaf(g, n)) {
        noise.Add(e.output_error);
      }
    }
  }
  std::vector<vis::DivergenceReason>& reason = v.reason;
  const std::vector<double>& threshold = v.threshold;
  const std::vector<uint8_t>& inputs_agree = v.inputs_agree;
  const std::vector<uint8_t>& outputs_agree = v.outputs_agree;

  // 2. Unmatched nodes between matched neighbours: the outermost unmatched
  // node with a matched sibling, where the last compared operator before it
  // agrees and the first one after it has inputs that do not (under the noise
  // rule: that stand out beyond every change made before them).
  auto matched_parent = [&](uint32_t n) {
    int32_t p = g.parent[n];
    while (p > 0 && g.op[p] == graph::NodeOp::kApiCollection) p = g.parent[p];
    return p == 0 || (p > 0 && g.matched[p] != graph::kNoNode);
  };
  // All of it in one pass over precomputed arrays: a wide parent, a long
  // unmatched run or a deep chain must not make it quadratic.
  std::vector<uint32_t> matched_children(g.size(), 0);
  for (uint32_t c = 1; c < g.size(); ++c) {
    if (g.matched[c] != graph::kNoNode && g.parent[c] >= 0) ++matched_children[g.parent[c]];
  }
  // A node's descendants by its pre-order interval in the graph.
  std::vector<uint32_t> pre(g.size()), subtree(g.size(), 1);
  {
    std::vector<uint32_t> walk, stack = {0};
    walk.reserve(g.size());
    while (!stack.empty()) {
      uint32_t n = stack.back();
      stack.pop_back();
      pre[n] = static_cast<uint32_t>(walk.size());
      walk.push_back(n);
      for (int32_t c = g.first_child[n]; c != graph::kNoNode; c = g.next_sibling[c]) {
        stack.push_back(static_cast<uint32_t>(c));
      }
    }
    for (auto it = walk.rbegin(); it != walk.rend(); ++it) {
      if (g.parent[*it] >= 0) subtree[g.parent[*it]] += subtree[*it];
    }
  }
  auto descends = [&](uint32_t m, uint32_t n) { return pre[n] < pre[m] && pre[m] < pre[n] + subtree[n]; };
  // end[i]: the first position after order[i]'s subtree, read from the end:
  // a descendant's own end is skipped whole (all of it descends too).
  size_t count = order.size();
  std::vector<uint32_t> end(count + 1, static_cast<uint32_t>(count));
  for (size_t i = count; i-- > 0;) {
    size_t j = i + 1;
    while (j < count && descends(order[j], order[i])) j = end[j];
    end[i] = static_cast<uint32_t>(j);
  }
  // The last compared leaf before a position, the first compared node with
  // inputs at or after one.
  std::vector<int64_t> leaf_before(count + 1, -1);
  for (size_t i = 0; i < count; ++i) {
    uint32_t m = order[i];
    leaf_before[i + 1] = compared(m) && IsLeaf(g, m) ? m : leaf_before[i];
  }
  std::vector<int64_t> input_from(count + 1, -1);
  for (size_t i = count; i-- > 0;) {
    uint32_t m = order[i];
    input_from[i] = compared(m) && evidence[m].has_input ? m : input_from[i + 1];
  }
  for (uint32_t n : order) {
    if (n == 0 || g.matched[n] != graph::kNoNode || g.op[n] == graph::NodeOp::kApiCollection) continue;
    if (!matched_parent(n)) continue;
    int32_t p = g.parent[n];
    if (p < 0 || matched_children[p] == 0) continue;  // no matched neighbour (n itself is unmatched)
    int64_t before = leaf_before[pos[n]];
    if (before >= 0 && (!outputs_agree[before] || reason[before] != vis::DIVERGENCE_NONE)) continue;
    int64_t after = input_from[end[pos[n]]];
    bool entered = noise_rule ? !v.inputs_within_seen[after] : !inputs_agree[after];
    if (after >= 0 && entered) reason[n] = vis::DIVERGENCE_UNMATCHED;
  }

  // 3. A module counts only when nothing inside it diverges by itself.
  std::vector<uint8_t> inside(g.size(), 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    uint32_t n = *it;
    bool kept = reason[n] != vis::DIVERGENCE_NONE && !inside[n];
    if (reason[n] != vis::DIVERGENCE_NONE && !kept) reason[n] = vis::DIVERGENCE_NONE;
    if ((kept || inside[n]) && g.parent[n] >= 0) inside[g.parent[n]] = 1;
  }
  for (uint32_t n : order) {
    if (reason[n] == vis::DIVERGENCE_NONE) continue;
    vis::DivergenceEntry* e = out.add_entry();
    e->set_node(n);
    e->set_reason(reason[n]);
    if (g.matched[n] != graph::kNoNode) {
      e->set_input_error(evidence[n].input_error);
      e->set_output_error(evidence[n].output_error);
      e->set_floor(threshold[n]);
      e->set_note(evidence[n].note);
      if (noise_rule) e->set_margin(v.margin[n]);
    }
  }
  if (noise_rule) {
    out.set_rule(vis::DIVERGENCE_RULE_NOISE);
    out.set_threshold(kNoiseMargin);
    if (v.largest_node >= 0) {
      out.set_has_largest(true);
      out.set_largest_margin(v.largest_margin);
      out.set_largest_margin_node(static_cast<uint32_t>(v.largest_node));
    }
  }
  return out;
}

const char* ReasonName(vis::DivergenceReason reason) {
  switch (reason) {
    case vis::DIVERGENCE_OUTPUTS: return "outputs differ, inputs agree";
    case vis::DIVERGENCE_MD5: return "md5 differs, inputs equal";
    case vis::DIVERGENCE_DTYPE_SHAPE: return "dtype/shape changed";
    case vis::DIVERGENCE_OVERFLOW: return "overflow appeared";
    case vis::DIVERGENCE_UNMATCHED: return "unmatched between matched neighbours";
    default: return "none";
  }
}

}  // namespace graph_ascend::divergence
