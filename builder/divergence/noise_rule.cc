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

// The order statistics a leave-one-out median needs, found by selection
// (linear: no sort). The medians are those of the sorted values at index
// n/2 of the n left (as the prototype's), and depend only on the values: a
// member left out is known by its value.
struct Spread {
  size_t n = 0;
  double lo = 0, hi = 0;       // the values at ranks (n-1)/2 and (n-1)/2 + 1 (hi: n >= 2)
  double top = 0, second = 0;  // the largest and the second largest (n >= 2)
};

// Reorders `v`.
Spread SpreadOf(std::vector<double>& v) {
  Spread s;
  s.n = v.size();
  if (s.n == 0) return s;
  size_t i = (s.n - 1) / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  s.lo = v[i];
  if (s.n >= 2) s.hi = *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(i) + 1, v.end());
  auto top = std::max_element(v.begin(), v.end());
  s.top = *top;
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it == top) continue;
    if (first || *it > s.second) s.second = *it;
    first = false;
  }
  return s;
}

// The median of all the values; 0 when there are none.
double Median(const Spread& s) {
  if (s.n == 0) return 0;
  return s.n % 2 ? s.lo : s.hi;
}

// The median of the values without one member whose value is `x`.
double MedianWithout(const Spread& s, double x) {
  if (s.n <= 1) return 0;
  return x <= s.lo ? s.hi : s.lo;
}

double MaxWithout(const Spread& s, bool present, double x) {
  if (s.n == 0) return 0;
  if (present && x >= s.top) return s.n >= 2 ? s.second : 0;
  return s.top;
}

// KindOf into `kind`, reusing its buffer: one pass over the name's words,
// each appended unless it is a call counter.
void KindInto(std::string_view name, std::string* kind) {
  kind->clear();
  size_t words = 0, first_len = 0;
  size_t word[2] = {0, 0};  // where the last two words kept start in `kind`
  // One pass over the characters: a word is copied as it is read and dropped again when it was all
  // digits (the ranking reads every compared name: 1.4 % of a 10^5 compare with a find and a second scan).
  kind->resize(name.size() + 1);
  char* out = kind->data();
  size_t len = 0;
  const char* p = name.data();
  const char* end = p + name.size();
  while (true) {
    size_t mark = len;
    if (len > 0) out[len++] = '.';
    size_t at = len;
    bool digits = p != end && *p != '.';
    for (; p != end && *p != '.'; ++p) {
      digits &= static_cast<unsigned char>(*p - '0') < 10;
      out[len++] = *p;
    }
    if (digits) {
      len = mark;
    } else {
      if (words++ == 0) first_len = len - at;
      word[0] = word[1];
      word[1] = at;
    }
    if (p == end) break;
    ++p;
  }
  kind->resize(len);
  std::string_view first(kind->data(), first_len);
  if ((first == "Module" || first == "Cell") && words > 3) {
    // The class and the direction: the last two words, which end `kind`.
    kind->erase(first_len + 1, word[0] - first_len - 1);
  }
}

// What flows into an instance: its own inputs (the gradient, in backward)
// and, in backward, its forward call's inputs (the saved activations a
// weight gradient is made of).
struct Instance {
  double in[2] = {0, 0};
  double out = 0;
};

}  // namespace

std::string KindOf(std::string_view name) {
  std::string kind;
  KindInto(name, &kind);
  return kind;
}

void NoiseVerdicts(const graph::Graph& g, const std::vector<Evidence>& ev, const std::vector<uint32_t>& order,
                   const std::vector<uint8_t>& compared, Verdicts* v) {
  size_t size = g.size();
  v->margin.assign(size, 0);

  // Each compared node's instance: a backward node also takes in what its
  // forward call took in.
  std::vector<Instance> inst(size);
  std::vector<uint8_t> backward(size, 0), collective(size, 0);
  double collective_input = 0;  // the largest input change this rank brings to a collective
  std::string scratch;
  for (uint32_t n : order) {
    if (!compared[n]) continue;
    inst[n].in[0] = ev[n].input_change;
    inst[n].out = std::max(0.0, ev[n].output_change);
    std::string_view name = g.Name(n);
    if (name.starts_with("Distributed.")) {
      collective[n] = 1;
      collective_input = std::max(collective_input, inst[n].in[0]);
    }
    size_t p = name.find(".backward");
    if (p == std::string_view::npos) continue;
    backward[n] = 1;
    scratch.assign(name.substr(0, p)).append(".forward").append(name.substr(p + 9));
    // The graph's own name index: no map of the forward names to build.
    int32_t f = g.Find(scratch);
    if (f >= 0 && compared[f]) inst[n].in[1] = ev[f].input_change;
  }

  // The kinds: op kind and compute precision. Every compared node with a
  // measured output is an instance of its kind.
  std::unordered_map<std::string, uint32_t> kind_index;
  std::vector<std::vector<uint32_t>> kinds;
  std::string key;
  for (uint32_t n : order) {
    if (!compared[n] || ev[n].output_change < 0) continue;
    KindInto(g.Name(n), &key);
    key += '#';
    key += static_cast<char>('0' + ev[n].precision % 64);
    key += static_cast<char>('0' + ev[n].precision / 64);
    auto it = kind_index.find(key);
    if (it == kind_index.end()) {
      it = kind_index.emplace(key, static_cast<uint32_t>(kinds.size())).first;
      kinds.emplace_back();
    }
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
    if (m == 0) {
      for (uint32_t n : outsiders) (*out)[n] = Noise{};
      return;
    }
    // The quieter half of the m - 1 others: the h quietest by (input change,
    // position), found by selection; `quiet` marks them, `next` is the
    // (h+1)-th, which joins when a member of the half is left out.
    size_t h = m / 2;
    std::vector<uint32_t> by_in(m);
    std::iota(by_in.begin(), by_in.end(), 0);
    auto quieter = [&](uint32_t a, uint32_t b) {
      double qa = quietness(members[a]), qb = quietness(members[b]);
      return qa < qb || (!(qb < qa) && a < b);
    };
    if (h < m) std::nth_element(by_in.begin(), by_in.begin() + static_cast<std::ptrdiff_t>(h), by_in.end(), quieter);
    std::vector<uint8_t> quiet(m, 0);
    std::vector<double> quiet_a, quiet_b;
    for (size_t k = 0; k < h; ++k) {
      quiet[by_in[k]] = 1;
      quiet_a.push_back(inst[members[by_in[k]]].out);
    }
    quiet_b = quiet_a;
    if (h < m) quiet_b.push_back(inst[members[by_in[h]]].out);
    Spread a = SpreadOf(quiet_a), b = SpreadOf(quiet_b);
    Spread ratio[2];
    for (int j = 0; j < 2; ++j) {
      std::vector<double> r;
      for (uint32_t n : members)
        if (inst[n].in[j] > 0) r.push_back(inst[n].out / inst[n].in[j]);
      ratio[j] = SpreadOf(r);
    }
    for (uint32_t k = 0; k < m; ++k) {
      const Instance& x = inst[members[k]];
      Noise& z = (*out)[members[k]];
      z.others = m - 1;
      z.noise = quiet[k] ? MedianWithout(b, x.out) : Median(a);
      for (int j = 0; j < 2; ++j) {
        bool has = x.in[j] > 0;
        double r = has ? x.out / x.in[j] : 0;
        z.gain_others[j] = ratio[j].n - (has ? 1 : 0);
        z.gain[j] = z.gain_others[j] >= kMinOthers ? (has ? MedianWithout(ratio[j], r) : Median(ratio[j]))
                                                   : MaxWithout(ratio[j], has, r);
      }
    }
    // Nodes outside the group get its noise whole.
    for (uint32_t n : outsiders) {
      Noise& z = (*out)[n];
      z.others = m;
      z.noise = Median(a);
      for (int j = 0; j < 2; ++j) {
        z.gain_others[j] = ratio[j].n;
        z.gain[j] = z.gain_others[j] >= kMinOthers ? Median(ratio[j]) : MaxWithout(ratio[j], false, 0);
      }
    }
  };
  // The run's noise comes from its ops (leaves): a module's change repeats
  // theirs.
  std::vector<uint32_t> all, ops, modules;
  for (const auto& k : kinds) all.insert(all.end(), k.begin(), k.end());
  for (uint32_t n : all) (g.first_child[n] == graph::kNoNode ? ops : modules).push_back(n);
  if (ops.empty()) std::swap(ops, modules);
  // A compared node with no measured output (its output lists are laid out
  // differently on the two sides) is of no kind; its inputs are judged
  // against the run's noise, not against one ulp.
  std::vector<uint32_t> unmeasured;
  for (uint32_t n : order)
    if (compared[n] && ev[n].output_change < 0) unmeasured.push_back(n);
  modules.insert(modules.end(), unmeasured.begin(), unmeasured.end());
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
    bool own = k.others >= kMinOthers && !collective[n];
    noise[n] = own ? k.noise : r.noise;
    double run_gain[2];
    for (int j = 0; j < 2; ++j) {
      // The run's median gain mixes kinds that damp a change (norms, the
      // optimizer's steps) with kinds that carry it: as a stand-in for a
      // kind whose own gain is unknown it would call a change carried
      // through unchanged the op's own, so it is taken as at least 1.
      run_gain[j] = std::max(1.0, r.gain[j]);
    }
    // With one or two other instances whose inputs changed, the kind's
    // largest gain among them (k.gain) is known if not robust: an op that
    // magnifies small values (rsqrt of a variance) keeps its own gain.
    double few0 = k.gain_others[0] > 0 && !collective[n] ? std::max(run_gain[0], k.gain[0]) : run_gain[0];
    double few1 = k.gain_others[1] > 0 && !collective[n] ? std::max(run_gain[1], k.gain[1]) : run_gain[1];
    gain0[n] = k.gain_others[0] >= kMinOthers && !collective[n] ? k.gain[0] : few0;
    gain1[n] = k.gain_others[1] >= kMinOthers && !collective[n] ? k.gain[1] : few1;
  }
  for (uint32_t n : unmeasured) noise[n] = of_run[n].noise;
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
  v->inputs_within_seen.assign(size, 1);
  bool seed_seen = false;
  double seen = 0;      // the largest output change of the ops so far, forward
  double seen_all = 0;  // the same over both phases
  for (uint32_t n : order) {
    if (!compared[n]) continue;
    const Evidence& e = ev[n];
    const Instance& x = inst[n];
    double ulp = e.ulp;
    double in_noise = std::max({noise[n], ulp, 1e-300});
    double explained = std::max({noise[n], gain0[n] * x.in[0], gain1[n] * x.in[1], ulp, 1e-300});
    // A collective's result carries the other ranks' inputs, made by the same model under the same noise:
    // their changes are as large as those this rank brings to its collectives. Beyond those a peer diverged.
    if (collective[n]) explained = std::max(explained, collective_input);
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
    // What enters across an unmatched region (MindSpore dumps the backward of its reshape, PyTorch does
    // not) is held as an op's: against the largest change made before it, by the same margin.
    bool in_finite = !e.input_nonfinite && !e.input_shape_changed;
    v->inputs_within_seen[n] = e.has_input && in_finite && x.in[0] <= kNoiseMargin * std::max(in_noise, seen_all);
    if (g.first_child[n] == graph::kNoNode && e.output_change >= 0) seen_all = std::max(seen_all, x.out);
    v->threshold[n] = explained;
    v->margin[n] = margin;
    bool in_ok = in_finite && x.in[0] <= kNoiseMargin * in_noise;
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
