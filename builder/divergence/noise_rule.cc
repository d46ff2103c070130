#include "divergence/noise_rule.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <string_view>
#include <unordered_map>

namespace graph_ascend::divergence {
namespace {

// Fewer other instances than this and a kind's noise is one instance: it
// takes the run's noise instead.
constexpr size_t kMinOthers = 3;

// The median (index n/2 of n, as the prototype's) of `sorted` without the
// element at `removed` (-1: none removed); 0 when nothing is left.
double MedianWithout(const std::vector<double>& sorted, int64_t removed) {
  size_t n = sorted.size() - (removed >= 0 ? 1 : 0);
  if (n == 0) return 0;
  size_t i = n / 2;
  if (removed >= 0 && i >= static_cast<size_t>(removed)) ++i;
  return sorted[i];
}

double MaxWithout(const std::vector<double>& sorted, int64_t removed) {
  size_t n = sorted.size();
  if (removed >= 0 && static_cast<size_t>(removed) == n - 1) return n >= 2 ? sorted[n - 2] : 0;
  return n == 0 ? 0 : sorted[n - 1];
}

bool IsDigits(std::string_view t) {
  return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// What flows into an instance: its own inputs (the gradient, in backward)
// and, in backward, its forward call's inputs (the saved activations a
// weight gradient is made of).
struct Instance {
  double in[2] = {0, 0};
  double out = 0;
};

// Sorted values with each member's rank in them (-1: not among them).
struct Ranked {
  std::vector<double> sorted;
  std::vector<int64_t> rank;  // by member position in the kind
};

Ranked RankValues(const std::vector<double>& values, const std::vector<uint8_t>& present) {
  Ranked r;
  std::vector<uint32_t> idx;
  for (uint32_t i = 0; i < values.size(); ++i)
    if (present[i]) idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) { return values[a] < values[b]; });
  r.rank.assign(values.size(), -1);
  r.sorted.reserve(idx.size());
  for (uint32_t k = 0; k < idx.size(); ++k) {
    r.rank[idx[k]] = k;
    r.sorted.push_back(values[idx[k]]);
  }
  return r;
}

}  // namespace

std::string KindOf(std::string_view name) {
  std::vector<std::string_view> tokens;
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    std::string_view t = name.substr(start, dot - start);
    if (!IsDigits(t)) tokens.push_back(t);
    start = dot + 1;
  }
  std::string kind;
  size_t first = 0;
  if (!tokens.empty() && (tokens[0] == "Module" || tokens[0] == "Cell") && tokens.size() > 3) {
    kind = std::string(tokens[0]);
    first = tokens.size() - 2;  // the class and the direction
  }
  for (size_t i = first; i < tokens.size(); ++i) {
    if (!kind.empty()) kind += '.';
    kind += tokens[i];
  }
  return kind;
}

void NoiseVerdicts(const graph::Graph& g, const std::vector<Evidence>& ev, const std::vector<uint32_t>& order,
                   const std::vector<uint8_t>& compared, Verdicts* v) {
  size_t size = g.size();
  v->margin.assign(size, 0);

  // Each compared node's instance: a backward node also takes in what its
  // forward call took in.
  std::unordered_map<std::string_view, uint32_t> forward;
  for (uint32_t n : order)
    if (compared[n] && g.Name(n).find(".forward") != std::string_view::npos) forward.emplace(g.Name(n), n);
  std::vector<Instance> inst(size);
  std::vector<uint8_t> backward(size, 0);
  std::string scratch;
  for (uint32_t n : order) {
    if (!compared[n]) continue;
    inst[n].in[0] = ev[n].input_change;
    inst[n].out = std::max(0.0, ev[n].output_change);
    std::string_view name = g.Name(n);
    size_t p = name.find(".backward");
    if (p == std::string_view::npos) continue;
    backward[n] = 1;
    scratch.assign(name.substr(0, p)).append(".forward").append(name.substr(p + 9));
    auto it = forward.find(scratch);
    if (it != forward.end()) inst[n].in[1] = ev[it->second].input_change;
  }

  // The kinds: op kind and compute precision. Every compared node with a
  // measured output is an instance of its kind.
  std::unordered_map<std::string, uint32_t> kind_index;
  std::vector<std::vector<uint32_t>> kinds;
  std::vector<int32_t> kind_of(size, -1);
  for (uint32_t n : order) {
    if (!compared[n] || ev[n].output_change < 0) continue;
    std::string key = KindOf(g.Name(n));
    key += '#';
    key += static_cast<char>('0' + ev[n].precision % 64);
    key += static_cast<char>('0' + ev[n].precision / 64);
    auto [it, added] = kind_index.emplace(std::move(key), static_cast<uint32_t>(kinds.size()));
    if (added) kinds.emplace_back();
    kind_of[n] = static_cast<int32_t>(it->second);
    kinds[it->second].push_back(n);
  }

  // The noise of a group of instances, each from the OTHER members (left
  // out by rank, so that an outlier does not set its own noise): the
  // median output change of their quieter half (by input change), the
  // median gain of each input.
  auto quietness = [&](uint32_t n) { return inst[n].in[0] + inst[n].in[1]; };
  struct Noise {
    double noise = 0, gain[2] = {0, 0};
    size_t others = 0, gain_others[2] = {0, 0};
  };
  std::vector<Noise> of_kind(size), of_run(size);
  auto leave_one_out = [&](const std::vector<uint32_t>& members, const std::vector<uint32_t>& outsiders,
                           std::vector<Noise>* out) {
    size_t m = members.size();
    std::vector<uint32_t> by_in(m);
    std::iota(by_in.begin(), by_in.end(), 0);
    std::stable_sort(by_in.begin(), by_in.end(),
                     [&](uint32_t a, uint32_t b) { return quietness(members[a]) < quietness(members[b]); });
    std::vector<uint32_t> pos(m);
    for (uint32_t k = 0; k < m; ++k) pos[by_in[k]] = k;
    size_t h = m / 2;  // the quieter half of the m - 1 others
    std::vector<double> outs(m);
    std::vector<uint8_t> in_a(m, 0), in_b(m, 0);
    for (uint32_t k = 0; k < m; ++k) {
      outs[k] = inst[members[k]].out;
      in_a[k] = pos[k] < h;
      in_b[k] = pos[k] < h + 1;
    }
    Ranked quiet_a = RankValues(outs, in_a), quiet_b = RankValues(outs, in_b);
    Ranked ratio[2];
    for (int j = 0; j < 2; ++j) {
      std::vector<double> r(m, 0);
      std::vector<uint8_t> has(m, 0);
      for (uint32_t k = 0; k < m; ++k) {
        const Instance& x = inst[members[k]];
        if (x.in[j] > 0) {
          r[k] = x.out / x.in[j];
          has[k] = 1;
        }
      }
      ratio[j] = RankValues(r, has);
    }
    for (uint32_t k = 0; k < m; ++k) {
      Noise& z = (*out)[members[k]];
      z.others = m - 1;
      z.noise = pos[k] >= h ? MedianWithout(quiet_a.sorted, -1) : MedianWithout(quiet_b.sorted, quiet_b.rank[k]);
      for (int j = 0; j < 2; ++j) {
        z.gain_others[j] = ratio[j].sorted.size() - (ratio[j].rank[k] >= 0 ? 1 : 0);
        z.gain[j] = z.gain_others[j] >= kMinOthers ? MedianWithout(ratio[j].sorted, ratio[j].rank[k])
                                                   : MaxWithout(ratio[j].sorted, ratio[j].rank[k]);
      }
    }
    // Nodes outside the group get its noise whole.
    for (uint32_t n : outsiders) {
      Noise& z = (*out)[n];
      z.others = m;
      z.noise = MedianWithout(quiet_a.sorted, -1);
      for (int j = 0; j < 2; ++j) {
        z.gain_others[j] = ratio[j].sorted.size();
        z.gain[j] = z.gain_others[j] >= kMinOthers ? MedianWithout(ratio[j].sorted, -1) : MaxWithout(ratio[j].sorted, -1);
      }
    }
  };
  // The run's noise comes from its ops (leaves): a module's change repeats
  // theirs.
  std::vector<uint32_t> all, ops, modules;
  for (const auto& k : kinds) all.insert(all.end(), k.begin(), k.end());
  for (uint32_t n : all) (g.first_child[n] == graph::kNoNode ? ops : modules).push_back(n);
  if (ops.empty()) std::swap(ops, modules);
  leave_one_out(ops, modules, &of_run);
  for (const auto& members : kinds) leave_one_out(members, {}, &of_kind);
  // A kind with fewer than kMinOthers other instances takes the run's
  // noise and gains (itself left out): two casts of one bug must not be
  // each other's noise.
  std::vector<double> noise(size, 0), gain0(size, 1), gain1(size, 1);
  for (uint32_t n : all) {
    const Noise &k = of_kind[n], &r = of_run[n];
    // A collective's result is made on other ranks too: every instance
    // carries their differences, so its noise is the run's, not its kind's.
    bool collective = g.Name(n).starts_with("Distributed.");
    bool own = k.others >= kMinOthers && !collective;
    noise[n] = own ? k.noise : r.noise;
    double run_gain[2];
    for (int j = 0; j < 2; ++j) {
      run_gain[j] = r.gain_others[j] >= kMinOthers ? r.gain[j] : (r.gain[j] > 0 ? r.gain[j] : 1);
    }
    gain0[n] = k.gain_others[0] >= kMinOthers && !collective ? k.gain[0] : run_gain[0];
    gain1[n] = k.gain_others[1] >= kMinOthers && !collective ? k.gain[1] : run_gain[1];
  }
  // Modules whose work is dumped op by op are explained by their ops; one
  // counts itself only when no op inside it is compared, or in forward
  // when it holds parameters (the weights are its own, not an input).
  std::vector<uint8_t> covered(size, 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    uint32_t n = *it;
    bool leaf_compared = compared[n] && g.first_child[n] == graph::kNoNode && ev[n].output_change >= 0;
    if ((covered[n] || leaf_compared) && g.parent[n] >= 0) covered[g.parent[n]] = 1;
  }

  // A change under one unit in the last place of the op's output dtype is
  // rounding (where both sides have that dtype; a cast's rounding is the
  // change itself).
  bool seed_seen = false;
  double seen = 0;  // the largest output change of the ops so far, forward
  for (uint32_t n : order) {
    if (!compared[n]) continue;
    const Evidence& e = ev[n];
    const Instance& x = inst[n];
    double ulp = e.ulp;
    double in_noise = std::max({noise[n], ulp, 1e-300});
    double explained = std::max({noise[n], gain0[n] * x.in[0], gain1[n] * x.in[1], ulp, 1e-300});
    double margin = x.out / explained;
    bool candidate = e.has_input && e.output_change >= 0 &&
                     (!covered[n] || (!backward[n] && e.has_parameters));
    // The first backward op takes in the seed (the loss's gradient): a
    // seed beyond noise diverges there.
    if (candidate && backward[n] && g.first_child[n] == graph::kNoNode && !seed_seen) {
      seed_seen = true;
      margin = std::max(margin, x.in[0] / in_noise);
    }
    // A forward op whose input changed beyond everything computed before
    // it (a buffer or constant that no dumped op made: rope's inv_freq)
    // is where the change enters.
    if (candidate && !backward[n] && g.first_child[n] == graph::kNoNode) {
      margin = std::max(margin, e.input_change_max / std::max(seen, in_noise));
    }
    // Ops only: a module's output, met before its ops in pre-order, is made
    // by them.
    if (!backward[n] && g.first_child[n] == graph::kNoNode) seen = std::max(seen, x.out);
    v->threshold[n] = explained;
    v->margin[n] = margin;
    bool in_ok = !e.input_nonfinite && !e.input_shape_changed && x.in[0] <= kNoiseMargin * in_noise;
    v->inputs_agree[n] = e.has_input && in_ok;
    v->outputs_agree[n] = !e.output_nonfinite && !e.output_shape_changed && margin <= kNoiseMargin;
    if (e.output_nonfinite && !e.input_nonfinite) {
      v->reason[n] = vis::DIVERGENCE_OVERFLOW;
    } else if (candidate && in_ok && e.output_shape_changed) {
      v->reason[n] = vis::DIVERGENCE_DTYPE_SHAPE;
    } else if (candidate && margin > kNoiseMargin) {
      // A dtype change counts only with values beyond that dtype's noise.
      v->reason[n] = e.output_changed ? vis::DIVERGENCE_DTYPE_SHAPE : vis::DIVERGENCE_OUTPUTS;
    }
    if (candidate && margin > v->largest_margin) {
      v->largest_margin = margin;
      v->largest_node = n;
    }
  }
}

}  // namespace graph_ascend::divergence
