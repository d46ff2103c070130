#include "manual_match.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>

#include "base/strings.h"
#include "compare/grading.h"
#include "compare/pair_compare.h"
#include "config_files.h"

namespace graph_ascend::service {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// §6.9: an API collection under the root shows the worst of its children.
// Refreshed once per collection after a batch (per pair it would cost the
// square of the collection's size).
void RefreshCollection(OpenGraph* f, uint32_t p) {
  SideGraph* g = f->mutable_side(vis::SIDE_NPU);
  if (p == 0 || g->parent(p) != 0 || g->node_type(p) != vis::NODE_API_COLLECTION) return;
  bool md5 = f->meta().mode() == vis::MODE_MD5;
  double agg = md5 ? 1.0 : 0.0;
  const uint32_t* kids = g->children(p);
  for (uint32_t k = 0; k < g->child_count(p); ++k) {
    double v = g->has_precision(kids[k]) ? g->precision(kids[k]) : (md5 ? 1.0 : 0.0);
    agg = md5 ? std::min(agg, v) : std::max(agg, v);
  }
  g->set_precision(p, agg);
  if (f->meta().grade_legend_size() > 0) {  // msprobe 26: the worst grade, from pass
    double grade = 0;
    for (uint32_t k = 0; k < g->child_count(p); ++k) {
      if (g->has_grade(kids[k])) grade = std::max(grade, g->grade(kids[k]));
    }
    g->set_grade(p, grade);
  }
  f->RefreshBucket(vis::SIDE_NPU, p);
}

// One (un)matching request: the details read ahead and the collections to refresh at the end.
struct Batch {
  const OpenGraph::DetailCache* cache = nullptr;
  std::set<uint32_t> parents;  // NPU parents of changed nodes
};

void Finish(OpenGraph* f, const Batch& batch) {
  for (uint32_t p : batch.parents) RefreshCollection(f, p);
}

PairOutcome MatchOne(OpenGraph* f, uint32_t npu, uint32_t bench, bool check_type, Batch* batch) {
  SideGraph* n = f->mutable_side(vis::SIDE_NPU);
  SideGraph* b = f->mutable_side(vis::SIDE_BENCH);
  PairOutcome out;
  out.npu = std::string(n->name(npu));
  out.bench = std::string(b->name(bench));
  if (n->matched(npu) == static_cast<int32_t>(bench) && b->matched(bench) == static_cast<int32_t>(npu)) {
    out.ok = true;
    out.has_precision = n->has_precision(npu);
    out.precision = out.has_precision ? n->precision(npu) : 0;
    return out;
  }
  if (n->matched(npu) >= 0) {
    out.error = "NPU node is already matched with " + std::string(b->name(static_cast<uint32_t>(n->matched(npu)))) +
                "; unmatch it first";
    return out;
  }
  if (b->matched(bench) >= 0) {
    out.error = "Bench node is already matched with " + std::string(n->name(static_cast<uint32_t>(b->matched(bench)))) +
                "; unmatch it first";
    return out;
  }
  if (check_type && n->node_type(npu) != b->node_type(bench)) {
    out.error =
        "node types differ (" + std::to_string(n->node_type(npu)) + " and " + std::to_string(b->node_type(bench)) + ")";
    return out;
  }
  auto npu_detail = f->Detail(vis::SIDE_NPU, npu, batch->cache);
  if (!npu_detail.ok()) {
    out.error = npu_detail.error().ToString();
    return out;
  }
  auto bench_detail = f->Detail(vis::SIDE_BENCH, bench, batch->cache);
  if (!bench_detail.ok()) {
    out.error = bench_detail.error().ToString();
    return out;
  }
  // The builder's compare, on views of the stored details.
  compare::NodeItems npu_items, bench_items;
  compare::ItemsOf(*npu_detail, &npu_items);
  compare::ItemsOf(*bench_detail, &bench_items);
  compare::ItemPairing pairing;
  compare::PairItems(npu_items, bench_items, &pairing);
  compare::PairMetrics metrics;
  compare::PairVerdict v = compare::ComparePair(f->meta().mode(), out.npu, pairing, nullptr, &metrics);
  n->set_precision(npu, v.has_precision ? v.precision_index : kNaN);
  if (f->meta().grade_legend_size() > 0) {
    n->set_grade(npu, compare::Grade26(f->meta().mode(), out.npu, pairing, metrics, false));
  }
  compare::StoreMetrics(metrics, &*npu_detail);
  n->set_matched(npu, static_cast<int32_t>(bench));
  b->set_matched(bench, static_cast<int32_t>(npu));
  f->SetDetail(vis::SIDE_NPU, npu, std::move(*npu_detail));
  f->AddManualMatch(out.npu, out.bench);
  if (n->built_matched(npu) == static_cast<int32_t>(bench)) f->NoteAutomaticRestored(out.npu);
  f->RefreshBucket(vis::SIDE_NPU, npu);
  if (n->parent(npu) > 0) batch->parents.insert(static_cast<uint32_t>(n->parent(npu)));
  f->MarkEdited();
  out.ok = true;
  out.has_precision = v.has_precision;
  out.precision = v.has_precision ? v.precision_index : 0;
  return out;
}

// The unmatched children of a matched pair, paired by ChildKey in order (§7.4).
std::vector<std::pair<uint32_t, uint32_t>> ChildPairs(const OpenGraph& f, uint32_t npu, uint32_t bench) {
  const SideGraph& n = *f.side(vis::SIDE_NPU);
  const SideGraph& b = *f.side(vis::SIDE_BENCH);
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  if (n.child_count(npu) == 0 || b.child_count(bench) == 0) return pairs;
  std::unordered_map<std::string, std::vector<uint32_t>> bench_groups;
  for (uint32_t k = 0; k < b.child_count(bench); ++k) {
    uint32_t c = b.children(bench)[k];
    if (b.matched(c) < 0) bench_groups[ChildKey(std::string(b.name(c)), b.node_type(c))].push_back(c);
  }
  std::unordered_map<std::string, size_t> taken;
  for (uint32_t k = 0; k < n.child_count(npu); ++k) {
    uint32_t c = n.children(npu)[k];
    if (n.matched(c) >= 0) continue;
    std::string key = ChildKey(std::string(n.name(c)), n.node_type(c));
    auto it = bench_groups.find(key);
    if (it == bench_groups.end()) continue;
    size_t& i = taken[key];
    if (i < it->second.size()) pairs.emplace_back(c, it->second[i++]);
  }
  return pairs;
}

// Matches the children of a matched pair, depth first in child order, with
// an explicit stack: a chain of any depth costs no call stack.
void MatchChildren(OpenGraph* f, uint32_t npu, uint32_t bench, Batch* batch, std::vector<PairOutcome>* out) {
  std::vector<std::pair<uint32_t, uint32_t>> todo;
  auto push_children = [&](uint32_t x, uint32_t y) {
    auto pairs = ChildPairs(*f, x, y);
    todo.insert(todo.end(), pairs.rbegin(), pairs.rend());
  };
  push_children(npu, bench);
  while (!todo.empty()) {
    auto [c, d] = todo.back();
    todo.pop_back();
    out->push_back(MatchOne(f, c, d, true, batch));
    if (out->back().ok) push_children(c, d);
  }
}

PairOutcome UnmatchOne(OpenGraph* f, uint32_t npu, uint32_t bench, Batch* batch) {
  SideGraph* n = f->mutable_side(vis::SIDE_NPU);
  SideGraph* b = f->mutable_side(vis::SIDE_BENCH);
  PairOutcome out;
  out.npu = std::string(n->name(npu));
  out.bench = std::string(b->name(bench));
  if (n->matched(npu) != static_cast<int32_t>(bench) || b->matched(bench) != static_cast<int32_t>(npu)) {
    out.error = "the nodes are not matched with each other";
    return out;
  }
  auto detail = f->Detail(vis::SIDE_NPU, npu, batch->cache);
  if (!detail.ok()) {
    out.error = detail.error().ToString();
    return out;
  }
  compare::ClearMetrics(&*detail);
  detail->clear_md5_result();
  n->set_precision(npu, kNaN);
  n->set_grade(npu, kNaN);
  n->set_matched(npu, -1);
  b->set_matched(bench, -1);
  f->SetDetail(vis::SIDE_NPU, npu, std::move(*detail));
  if (n->built_matched(npu) == static_cast<int32_t>(bench)) f->NoteAutomaticRemoved(out.npu, out.bench);
  f->RemoveManualMatch(out.npu);
  f->RefreshBucket(vis::SIDE_NPU, npu);
  f->RefreshBucket(vis::SIDE_BENCH, bench);
  if (n->parent(npu) > 0) batch->parents.insert(static_cast<uint32_t>(n->parent(npu)));
  f->MarkEdited();
  out.ok = true;
  return out;
}

// Unmatches every matched NPU descendant, in pre-order, with an explicit stack.
void UnmatchChildren(OpenGraph* f, uint32_t npu, Batch* batch, std::vector<PairOutcome>* out) {
  const SideGraph& n = *f->side(vis::SIDE_NPU);
  std::vector<uint32_t> todo(n.children(npu), n.children(npu) + n.child_count(npu));
  std::reverse(todo.begin(), todo.end());
  while (!todo.empty()) {
    uint32_t c = todo.back();
    todo.pop_back();
    int32_t m = n.matched(c);
    if (m >= 0) out->push_back(UnmatchOne(f, c, static_cast<uint32_t>(m), batch));
    for (uint32_t k = n.child_count(c); k > 0; --k) todo.push_back(n.children(c)[k - 1]);
  }
}

// Node `root` and, when `subtree`, its descendants, at most `limit` of them.
std::vector<uint32_t> Subtree(const SideGraph& g, uint32_t root, bool subtree, size_t limit) {
  std::vector<uint32_t> out = {root};
  for (size_t i = 0; subtree && i < out.size() && out.size() < limit; ++i) {
    const uint32_t* kids = g.children(out[i]);
    for (uint32_t k = 0; k < g.child_count(out[i]) && out.size() < limit; ++k) out.push_back(kids[k]);
  }
  return out;
}

}  // namespace

std::string MatchingUnsupported(const OpenGraph& f) {
  if (!f.is_compare()) return "manual matching needs a compare file; this is a build";
  if (f.meta().mode() == vis::MODE_TENSOR) {
    return "manual matching of a tensor-mode compare needs the dumped tensors, which a .vis does not hold";
  }
  return "";
}

std::string ChildKey(const std::string& name, uint32_t node_type) {
  std::vector<std::string> p = SplitDotsCopy(name);
  size_t n = p.size();
  std::string s;
  if (node_type == vis::NODE_MODULE) {
    if (n >= 4 && !IsDigits(p[n - 4])) {
      s = p[n - 4];
    } else if (n > 5) {
      s = p[n - 5];
    }
  } else {
    if (n >= 2 && !IsDigits(p[n - 2])) {
      s = p[n - 2];
    } else if (n >= 3) {
      s = p[n - 3];
    }
  }
  return s + "." + std::to_string(node_type);
}

std::string OppositeName(const std::string& name) {
  if (name.find("forward") != std::string::npos) return ReplaceAll(name, "forward", "backward");
  return ReplaceAll(name, "backward", "forward");
}

void PrefetchForMatch(const OpenGraph& f, uint32_t npu, uint32_t bench, bool with_children, bool match,
                      OpenGraph::DetailCache* cache) {
  const uint32_t roots[2] = {npu, bench};
  for (vis::Side s : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
    if (s == vis::SIDE_BENCH && !match) break;  // unmatching reads only NPU details
    f.Prefetch(s, Subtree(*f.side(s), roots[s], with_children, kMaxPrefetchNodes), cache);
  }
}

std::vector<PairOutcome> MatchNodes(OpenGraph* f, uint32_t npu, uint32_t bench, bool with_children,
                                    const OpenGraph::DetailCache* cache) {
  std::vector<PairOutcome> out;
  Batch batch{cache, {}};
  out.push_back(MatchOne(f, npu, bench, true, &batch));
  if (out.back().ok && with_children) MatchChildren(f, npu, bench, &batch, &out);
  Finish(f, batch);
  return out;
}

std::vector<PairOutcome> UnmatchNodes(OpenGraph* f, uint32_t npu, uint32_t bench, bool with_children,
                                      const OpenGraph::DetailCache* cache) {
  std::vector<PairOutcome> out;
  Batch batch{cache, {}};
  out.push_back(UnmatchOne(f, npu, bench, &batch));
  if (out.back().ok && with_children) UnmatchChildren(f, npu, &batch, &out);
  Finish(f, batch);
  return out;
}

Result<std::vector<PairOutcome>> ApplyMatchConfig(OpenGraph* f, const std::string& abs_path,
                                                  const std::string& display_path) {
  auto read = ReadConfigJson(abs_path, display_path, 64u << 20, "config file");
  if (!read.ok()) return read.error();
  nlohmann::ordered_json doc = std::move(*read);
  if (!doc.is_object()) return MakeError(display_path, "", "a match config is a JSON object {NPU node: Bench node}");
  std::vector<std::pair<std::string, std::string>> pairs;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (!it.value().is_string()) return MakeError(display_path, "key \"" + it.key() + "\"", "value is not a string");
    pairs.emplace_back(it.key(), it.value().get<std::string>());
  }
  std::vector<PairOutcome> out;
  Batch batch;
  const SideGraph& n = *f->side(vis::SIDE_NPU);
  const SideGraph& b = *f->side(vis::SIDE_BENCH);
  for (const auto& [npu, bench] : pairs) {
    int32_t x = n.Find(npu), y = b.Find(bench);
    if (x < 0 || y < 0) {
      PairOutcome o;
      o.npu = npu;
      o.bench = bench;
      o.error = x < 0 ? "no NPU node of that name" : "no Bench node of that name";
      out.push_back(std::move(o));
      continue;
    }
    out.push_back(MatchOne(f, static_cast<uint32_t>(x), static_cast<uint32_t>(y), false, &batch));
  }
  Finish(f, batch);
  return out;
}

std::vector<PairOutcome> ReplayEdits(OpenGraph* f, const std::vector<PairEdit>& edits) {
  std::vector<PairOutcome> out;
  Batch batch;
  const SideGraph& n = *f->side(vis::SIDE_NPU);
  const SideGraph& b = *f->side(vis::SIDE_BENCH);
  for (const PairEdit& e : edits) {
    int32_t x = n.Find(e.npu), y = b.Find(e.bench);
    if (x < 0 || y < 0) {
      PairOutcome o;
      o.npu = e.npu;
      o.bench = e.bench;
      o.error = x < 0 ? "no NPU node of that name" : "no Bench node of that name";
      out.push_back(std::move(o));
      continue;
    }
    uint32_t npu = static_cast<uint32_t>(x), bench = static_cast<uint32_t>(y);
    out.push_back(e.match ? MatchOne(f, npu, bench, false, &batch) : UnmatchOne(f, npu, bench, &batch));
  }
  Finish(f, batch);
  return out;
}

Status WriteMatchConfig(const OpenGraph& f, const std::string& abs_path, const std::string& display_path) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  for (const auto& [npu, bench] : f.manual_matches()) doc[npu] = bench;
  // Python's json.dump(indent=4, ensure_ascii=False), as tb_graph_ascend
  // writes it: UTF-8 as is, no newline at the end.
  return WriteAtomically(abs_path, display_path, doc.dump(4, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace graph_ascend::service
