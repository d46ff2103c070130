#include "merge/graph_merger.h"
#include "base/strings.h"

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "merge/statistics.h"

namespace graph_ascend::merge {
namespace {

using dump::DumpData;
using dump::DumpEntry;
using dump::DumpItem;
using dump::Value;
using dump::ValueKind;
using graph::Graph;
using graph::kNoNode;
using graph::NodeOp;
using graph::Side;

constexpr int32_t kNoPpIndex = INT32_MIN;
constexpr int kMaxDepth = 1000;  // msprobe's recursion limit of the PP merge

bool Contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

// One match of (layers\.|layer\.)(\d+)(\.) in a name.
struct LayersMatch {
  size_t start = 0;   // of "layers." / "layer."
  size_t digits = 0;  // first digit
  size_t end = 0;     // one past the closing dot
};

bool FindLayers(std::string_view s, size_t from, LayersMatch* m) {
  for (size_t i = from; i < s.size(); ++i) {
    size_t j;
    if (s.compare(i, 7, "layers.") == 0) {
      j = i + 7;
    } else if (s.compare(i, 6, "layer.") == 0) {
      j = i + 6;
    } else {
      continue;
    }
    size_t k = j;
    while (k < s.size() && s[k] >= '0' && s[k] <= '9') ++k;
    if (k > j && k < s.size() && s[k] == '.') {
      *m = LayersMatch{i, j, k + 1};
      return true;
    }
  }
  return false;
}

bool HasLayers(std::string_view s) {
  LayersMatch m;
  return FindLayers(s, 0, &m);
}

// msprobe's \.forward\.\d+$.
bool EndsWithForwardCall(std::string_view s) {
  size_t dot = s.rfind('.');
  return dot != std::string_view::npos && IsDigits(s.substr(dot + 1)) && EndsWith(s.substr(0, dot), ".forward");
}

// _replace_vpp_id: the second segment, when it is a number, set to `chunk`.
std::string ReplaceChunk(std::string_view name, std::string_view chunk) {
  std::vector<std::string_view> seg = SplitDots(name);
  if (seg.size() < 2 || !IsDigits(seg[1])) return std::string(name);
  std::vector<std::string> parts(seg.begin(), seg.end());
  parts[1] = std::string(chunk);
  return JoinDots(parts);
}

// Every "_rank<digits>." in `name` replaced by "_rank<rank>." (§9.6 TP rank mapping).
std::string ReplaceRankTags(std::string_view name, int rank) {
  std::string out;
  size_t i = 0;
  while (i < name.size()) {
    if (name.compare(i, 5, "_rank") == 0) {
      size_t j = i + 5;
      while (j < name.size() && name[j] >= '0' && name[j] <= '9') ++j;
      if (j > i + 5 && j < name.size() && name[j] == '.') {
        out += "_rank" + std::to_string(rank) + ".";
        i = j + 1;
        continue;
      }
    }
    out.push_back(name[i++]);
  }
  return out;
}

// The rank of the first "_rank<digits>." in `name`, or -1.
int FirstRankTag(std::string_view name) {
  for (size_t i = name.find("_rank"); i != std::string_view::npos; i = name.find("_rank", i + 1)) {
    size_t j = i + 5;
    while (j < name.size() && name[j] >= '0' && name[j] <= '9') ++j;
    if (j > i + 5 && j < name.size() && name[j] == '.' && j - i - 5 < 9) {
      return std::atoi(std::string(name.substr(i + 5, j - i - 5)).c_str());
    }
  }
  return -1;
}

// The integers of a compact JSON list ("[0, 1]"); empty if it is not one.
std::vector<int> ParseIntList(std::string_view s) {
  std::vector<int> out;
  size_t i = 0;
  auto skip = [&]() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t')) ++i;
  };
  skip();
  if (i >= s.size() || s[i] != '[') return {};
  ++i;
  for (;;) {
    skip();
    if (i < s.size() && s[i] == ']') return out;
    size_t start = i;
    if (i < s.size() && s[i] == '-') ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start || i - start > 9) return {};
    out.push_back(std::atoi(std::string(s.substr(start, i - start)).c_str()));
    skip();
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    if (i < s.size() && s[i] == ']') return out;
    return {};
  }
}

const Value* FieldOf(const DumpData& d, const DumpItem& item, uint32_t name) {
  for (uint32_t f = item.first_field; f < item.first_field + item.field_count; ++f) {
    if (d.fields[f].name == name) return &d.fields[f].value;
  }
  return nullptr;
}

// An item of some rank's dump data.
struct ItemRef {
  uint16_t slot;
  uint32_t item;
};

// The items of a node that msprobe would merge, by key relative to the node
// ("input.0"); items[0] is the main node's.
struct ParamGroup {
  std::string key;
  std::vector<ItemRef> items;
};
using ParamGroups = std::vector<ParamGroup>;

void EraseKey(ParamGroups* groups, std::string_view key) {
  groups->erase(std::remove_if(groups->begin(), groups->end(), [&](const ParamGroup& g) { return g.key == key; }),
                groups->end());
}

// The merge's working forest: every node of every rank's graph, with
// msprobe's node semantics (a node has one parent but may be listed by
// several child lists, as Python's lists keep the nodes they lost; a node's
// name changes as it is renamed; each rank graph keeps its own name map).
class Forest {
 public:
  // `pp_data` and `tp_data`: the groups the ranks' data names (§9.3).
  Forest(std::vector<RankSide> ranks, const ParallelParams& params, const MergeLog& log, RankGroups pp_data,
         RankGroups tp_data);

  Result<std::vector<MergedSide>> Merge();

 private:
  // Nodes.
  std::string_view Name(uint32_t n) const { return pool_->Get(name_[n]); }
  int Rank(uint32_t n) const { return ranks_[slot_[n]].rank; }
  uint32_t AddNode(uint32_t name, NodeOp op, uint16_t slot);
  int32_t Lookup(uint16_t graph, uint32_t name) const;
  int32_t Lookup(uint16_t graph, std::string_view name) const;
  std::vector<uint32_t> Ancestors(uint32_t n) const;  // names, root first
  void Rename(uint32_t n, const std::string& name);
  void AddInfo(uint32_t n, std::string line) { infos_[n].push_back(std::move(line)); }
  bool HasInfo(uint32_t n) const { return !infos_[n].empty(); }

  // Data.
  DumpData& Data(uint32_t n) { return data_[data_slot_[n]]; }
  const DumpEntry* Entry(uint32_t n) const {
    return entry_[n] == kNoNode ? nullptr : &data_[data_slot_[n]].entries[entry_[n]];
  }
  // The items of a node: inputs (is_output false) or outputs.
  std::vector<ItemRef> Items(uint32_t n, bool is_output) const;
  std::string FullKey(uint32_t n, const ItemRef& ref) const;
  const DumpItem& Item(const ItemRef& r) const { return data_[r.slot].items[r.item]; }
  Value FieldValue(const ItemRef& r, uint32_t name) const;
  void SetField(const ItemRef& r, uint32_t name, const Value& v);
  bool NumericDtype(const ItemRef& r) const;
  // Replaces the inputs (or outputs) of `n` by copies of those of `from`,
  // with `from`'s name in full keys replaced by `n`'s when `rename_keys`.
  void ReplaceItems(uint32_t n, uint32_t from, bool outputs, bool rename_keys);
  // compare_param_same: Max/Min equal, Mean/Norm equal (within 1e-6 with `uncertainty`).
  bool SameParam(const ItemRef& a, const ItemRef& b, bool uncertainty) const;
  // compare_node_param_data.
  void CompareParams(uint32_t n, const std::vector<uint32_t>& others, bool compare_data, ParamGroups* in,
                     ParamGroups* out) const;
  // _merge_params: merges each group into its first item; returns the formulas.
  std::vector<std::string> MergeParams(const ParamGroups& groups);
  std::string MergedFromRanks(uint32_t n, const std::vector<uint32_t>& twins) const;

  // §9.4.
  void MergeApiCollections(const std::vector<uint16_t>& results);
  void SortMergedApiCollections(uint16_t graph);
  // §9.5.
  Result<RankGroups> PpGroups();
  Status MergePp(const std::vector<uint16_t>& group);
  Status MergeNodes(uint16_t main, uint32_t n, const std::vector<uint16_t>& others, int depth);
  void MarkPositionRank(uint32_t n, int rank);
  void MergeUniqueChildren(uint32_t n, const std::vector<uint32_t>& twins);
  void SortNodes(uint16_t main, uint32_t start);
  void UpdateNodeId(uint16_t main, uint32_t start);
  // §9.7.
  void MergeVppData(uint16_t main);
  void MergeVppChunks(uint16_t main);
  void SortLayers(uint16_t main, const std::vector<uint32_t>& list, bool forward);
  // §9.6.
  Result<RankGroups> TpGroups();
  void MergeTp(const std::vector<uint16_t>& results, const std::map<int, std::vector<int>>* mapping);
  std::vector<uint32_t> TpTwins(uint32_t n, const std::vector<uint16_t>& others,
                                const std::map<int, std::vector<int>>* mapping) const;
  void MergeMatmulReduce(uint32_t n, const std::vector<uint16_t>& others,
                         const std::map<int, std::vector<int>>* mapping);
  void MergeColumnRowParallel(uint32_t n, const std::vector<uint16_t>& others,
                              const std::map<int, std::vector<int>>* mapping);
  std::vector<uint32_t> PreOrder(uint16_t graph) const;

  // Every rank a group names must have a rank folder.
  Status CheckGroups(const RankGroups& groups, const char* what) const;
  std::unique_ptr<Side> Emit(uint16_t main);
  void Log(const std::string& s) const {
    if (log_) log_(params_.side + ": " + s);
  }

  std::vector<RankSide> ranks_;  // the slots
  ParallelParams params_;
  MergeLog log_;
  RankGroups pp_data_, tp_data_;
  StringPool* pool_;
  std::vector<DumpData> data_;  // per slot, taken from the sides

  // Per node.
  std::vector<uint32_t> name_;
  std::vector<NodeOp> op_;
  std::vector<int32_t> parent_;
  std::vector<std::vector<uint32_t>> children_;
  std::vector<uint16_t> slot_;       // the rank graph the node came from
  std::vector<int32_t> src_;         // its index there, kNoNode for nodes the merge made
  std::vector<uint16_t> data_slot_;  // where its entry is
  std::vector<int32_t> entry_;
  std::vector<int32_t> mark_;  // PP tag: position among its siblings, -1 untagged
  std::vector<int32_t> mark_rank_;
  std::vector<uint8_t> pp_merged_;
  std::vector<int32_t> pp_index_;
  std::vector<std::vector<std::string>> infos_;

  // Per rank graph.
  std::vector<uint32_t> root_;
  std::vector<std::unordered_map<uint32_t, uint32_t>> node_map_;
  std::vector<int> all_ranks_next_;  // Apis_Between_Modules_All_Ranks.<k> counter
  std::vector<uint8_t> root_reordered_;

  uint32_t k_dtype_, k_max_, k_min_, k_mean_, k_norm_, k_value_, k_group_ranks_, k_full_op_name_;
  std::unordered_set<uint32_t> numeric_dtypes_;
};

Forest::Forest(std::vector<RankSide> ranks, const ParallelParams& params, const MergeLog& log, RankGroups pp_data,
               RankGroups tp_data)
    : ranks_(std::move(ranks)),
      params_(params),
      log_(log),
      pp_data_(std::move(pp_data)),
      tp_data_(std::move(tp_data)),
      pool_(ranks_[0].side->pool) {
  k_dtype_ = pool_->Intern("dtype");
  k_max_ = pool_->Intern("Max");
  k_min_ = pool_->Intern("Min");
  k_mean_ = pool_->Intern("Mean");
  k_norm_ = pool_->Intern("Norm");
  k_value_ = pool_->Intern("value");
  k_group_ranks_ = pool_->Intern("group_ranks");
  k_full_op_name_ = pool_->Intern("full_op_name");
  for (const char* t : {"torch.int8", "torch.int32", "torch.int64", "torch.bfloat16", "torch.float16", "torch.float32",
                        "torch.float64", "Float16", "Float32", "BFloat16"}) {
    numeric_dtypes_.insert(pool_->Intern(t));
  }
  size_t total = 0;
  for (const RankSide& r : ranks_) total += r.side->graph->size();
  name_.reserve(total);
  op_.reserve(total);
  parent_.reserve(total);
  children_.reserve(total);
  for (uint16_t s = 0; s < ranks_.size(); ++s) {
    Side& side = *ranks_[s].side;
    const Graph& g = *side.graph;
    uint32_t base = static_cast<uint32_t>(name_.size());
    root_.push_back(base);
    node_map_.emplace_back();
    auto& map = node_map_.back();
    map.reserve(g.size());
    for (uint32_t n = 0; n < g.size(); ++n) {
      uint32_t w = AddNode(g.name[n], g.op[n], s);
      src_[w] = static_cast<int32_t>(n);
      entry_[w] = g.entry[n];
      parent_[w] = g.parent[n] == kNoNode ? kNoNode : static_cast<int32_t>(base + g.parent[n]);
      std::vector<uint32_t>& kids = children_[w];
      kids.reserve(g.child_count[n]);
      for (int32_t c = g.first_child[n]; c != kNoNode; c = g.next_sibling[c]) kids.push_back(base + c);
      map.emplace(g.name[n], w);
    }
    data_.push_back(std::move(side.dump));
    all_ranks_next_.push_back(0);
    root_reordered_.push_back(0);
  }
}

uint32_t Forest::AddNode(uint32_t name, NodeOp op, uint16_t slot) {
  uint32_t n = static_cast<uint32_t>(name_.size());
  name_.push_back(name);
  op_.push_back(op);
  parent_.push_back(kNoNode);
  children_.emplace_back();
  slot_.push_back(slot);
  src_.push_back(kNoNode);
  data_slot_.push_back(slot);
  entry_.push_back(kNoNode);
  mark_.push_back(-1);
  mark_rank_.push_back(0);
  pp_merged_.push_back(0);
  pp_index_.push_back(kNoPpIndex);
  infos_.emplace_back();
  return n;
}

int32_t Forest::Lookup(uint16_t graph, uint32_t name) const {
  auto it = node_map_[graph].find(name);
  return it == node_map_[graph].end() ? kNoNode : static_cast<int32_t>(it->second);
}

int32_t Forest::Lookup(uint16_t graph, std::string_view name) const {
  int64_t id = pool_->Find(name);
  return id < 0 ? kNoNode : Lookup(graph, static_cast<uint32_t>(id));
}

std::vector<uint32_t> Forest::Ancestors(uint32_t n) const {
  std::vector<uint32_t> out;
  for (int32_t p = parent_[n]; p != kNoNode; p = parent_[p]) {
    out.push_back(name_[p]);
    if (out.size() > name_.size()) return {};  // a cycle
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<ItemRef> Forest::Items(uint32_t n, bool is_output) const {
  std::vector<ItemRef> out;
  const DumpEntry* e = Entry(n);
  if (e == nullptr) return out;
  uint32_t first = e->first_item + (is_output ? e->input_count : 0);
  uint32_t count = is_output ? e->output_count : e->input_count;
  for (uint32_t i = 0; i < count; ++i) out.push_back(ItemRef{data_slot_[n], first + i});
  return out;
}

std::string Forest::FullKey(uint32_t n, const ItemRef& ref) const {
  const DumpItem& item = Item(ref);
  std::string_view key = pool_->Get(item.key);
  if (item.flags & dump::kItemFullKey) return std::string(key);
  std::string out(Name(n));
  return out.append(key);
}

Value Forest::FieldValue(const ItemRef& r, uint32_t name) const {
  const Value* v = FieldOf(data_[r.slot], Item(r), name);
  return v == nullptr ? Value() : *v;
}

void Forest::SetField(const ItemRef& r, uint32_t name, const Value& v) {
  DumpData& d = data_[r.slot];
  DumpItem& item = d.items[r.item];
  for (uint32_t f = item.first_field; f < item.first_field + item.field_count; ++f) {
    if (d.fields[f].name == name) {
      d.fields[f].value = v;
      return;
    }
  }
  // A new field: the item's fields move to the end, where there is room.
  uint32_t first = static_cast<uint32_t>(d.fields.size());
  for (uint32_t f = item.first_field; f < item.first_field + item.field_count; ++f) d.fields.push_back(d.fields[f]);
  dump::Field added;
  added.name = name;
  added.value = v;
  d.fields.push_back(added);
  item.first_field = first;
  ++item.field_count;
}

bool Forest::NumericDtype(const ItemRef& r) const {
  Value v = FieldValue(r, k_dtype_);
  return v.kind == ValueKind::kString && numeric_dtypes_.count(v.string) != 0;
}

bool Forest::SameParam(const ItemRef& a, const ItemRef& b, bool uncertainty) const {
  return SameValue(FieldValue(a, k_max_), FieldValue(b, k_max_), false) &&
         SameValue(FieldValue(a, k_min_), FieldValue(b, k_min_), false) &&
         SameValue(FieldValue(a, k_mean_), FieldValue(b, k_mean_), uncertainty) &&
         SameValue(FieldValue(a, k_norm_), FieldValue(b, k_norm_), uncertainty);
}

void Forest::Rename(uint32_t n, const std::string& name) {
  std::string old(Name(n));
  if (old == name) return;
  // Full keys (data_name-derived) and full_op_name carry the old name (msprobe's _update_node_data_key).
  if (entry_[n] != kNoNode) {
    DumpData& d = Data(n);
    const DumpEntry& e = d.entries[entry_[n]];
    for (uint32_t i = e.first_item; i < e.first_item + e.input_count + e.output_count; ++i) {
      DumpItem& item = d.items[i];
      if (item.flags & dump::kItemFullKey) {
        std::string_view key = pool_->Get(item.key);
        if (Contains(key, old)) item.key = pool_->Intern(ReplaceAll(key, old, name));
      }
      for (uint32_t f = item.first_field; f < item.first_field + item.field_count; ++f) {
        dump::Field& field = d.fields[f];
        if (field.name == k_full_op_name_ && field.value.kind == ValueKind::kString &&
            Contains(pool_->Get(field.value.string), old)) {
          field.value.string = pool_->Intern(ReplaceAll(pool_->Get(field.value.string), old, name));
        }
      }
    }
  }
  name_[n] = pool_->Intern(name);
}

void Forest::ReplaceItems(uint32_t n, uint32_t from, bool outputs, bool rename_keys) {
  DumpData& d = Data(n);
  DumpEntry e;
  if (entry_[n] != kNoNode) {
    e = d.entries[entry_[n]];
  } else {
    e.name = name_[n];
    e.first_p2p = 0;
    e.p2p_count = 0;
  }
  std::vector<ItemRef> in = outputs ? Items(n, false) : Items(from, false);
  std::vector<ItemRef> out = outputs ? Items(from, true) : Items(n, true);
  std::string from_name(Name(from)), to_name(Name(n));
  auto copy = [&](const std::vector<ItemRef>& refs, bool replaced) {
    for (const ItemRef& r : refs) {
      DumpItem item = data_[r.slot].items[r.item];
      uint32_t first = static_cast<uint32_t>(d.fields.size());
      for (uint32_t f = item.first_field; f < item.first_field + item.field_count; ++f) {
        d.fields.push_back(data_[r.slot].fields[f]);  // d may be data_[r.slot]: copy by index
      }
      item.first_field = first;
      if (replaced && rename_keys && (item.flags & dump::kItemFullKey)) {
        item.key = pool_->Intern(ReplaceAll(pool_->Get(item.key), from_name, to_name));
      }
      d.items.push_back(item);
    }
  };
  e.first_item = static_cast<uint32_t>(d.items.size());
  copy(in, !outputs);
  copy(out, outputs);
  e.input_count = static_cast<uint32_t>(in.size());
  e.output_count = static_cast<uint32_t>(out.size());
  entry_[n] = static_cast<int32_t>(d.entries.size());
  d.entries.push_back(e);
}

void Forest::CompareParams(uint32_t n, const std::vector<uint32_t>& others, bool compare_data, ParamGroups* in,
                           ParamGroups* out) const {
  if (others.empty()) return;
  std::string main_name(Name(n));
  for (bool is_output : {false, true}) {
    ParamGroups* groups = is_output ? out : in;
    if (groups == nullptr) continue;
    std::vector<std::vector<ItemRef>> other_items;
    for (uint32_t o : others) other_items.push_back(Items(o, is_output));
    for (const ItemRef& main_item : Items(n, is_output)) {
      if (!NumericDtype(main_item)) continue;
      std::string key = FullKey(n, main_item);
      ParamGroup group;
      group.items.push_back(main_item);
      bool same = compare_data;
      for (size_t k = 0; k < others.size(); ++k) {
        uint32_t o = others[k];
        std::string other_key = Name(o) == main_name ? key : ReplaceAll(key, main_name, Name(o));
        std::optional<ItemRef> found;
        for (const ItemRef& r : other_items[k]) {
          if (FullKey(o, r) == other_key) found = r;  // a dict: the last of equal keys
        }
        if (!found || !NumericDtype(*found)) break;
        group.items.push_back(*found);
        if (compare_data && !SameParam(main_item, *found, true)) same = false;
      }
      if (same) continue;
      group.key = ReplaceAll(key, main_name + ".", "");
      auto existing =
          std::find_if(groups->begin(), groups->end(), [&](const ParamGroup& g) { return g.key == group.key; });
      if (existing != groups->end()) {
        existing->items = std::move(group.items);
      } else {
        groups->push_back(std::move(group));
      }
    }
  }
}

std::vector<std::string> Forest::MergeParams(const ParamGroups& groups) {
  std::vector<std::string> formulas;
  const std::pair<Stat, uint32_t> stats[] = {
      {Stat::kMax, k_max_}, {Stat::kMin, k_min_}, {Stat::kMean, k_mean_}, {Stat::kNorm, k_norm_}};
  std::vector<Value> values;
  for (const ParamGroup& g : groups) {
    if (g.items.size() < 2) continue;
    for (const auto& [stat, field] : stats) {
      values.clear();
      for (const ItemRef& r : g.items) values.push_back(FieldValue(r, field));
      Value merged;
      if (MergeStat(stat, g.key, values, &merged, &formulas)) SetField(g.items[0], field, merged);
    }
  }
  return formulas;
}

std::string Forest::MergedFromRanks(uint32_t n, const std::vector<uint32_t>& twins) const {
  std::vector<int> ranks = {Rank(n)};
  for (uint32_t t : twins) ranks.push_back(Rank(t));
  return "This data is the merged data after tensor parallelism(TP), and the data is merged from rank " +
         PyList(ranks) + ".";
}

// ------------------------------------------------------------------ §9.4

void Forest::MergeApiCollections(const std::vector<uint16_t>& results) {
  uint16_t main = results[0];
  uint32_t root = root_[main];
  std::vector<uint32_t> kept;
  for (uint32_t c : std::vector<uint32_t>(children_[root])) {
    std::string name(Name(c));
    if (StartsWith(name, "Apis_Between_Modules_All_Ranks")) {
      kept.push_back(c);
      for (size_t i = 1; i < results.size(); ++i) {
        int32_t o = Lookup(results[i], name_[c]);
        if (o == kNoNode) continue;
        for (uint32_t sub : children_[o]) {
          parent_[sub] = static_cast<int32_t>(c);
          node_map_[main][name_[sub]] = sub;
          for (uint32_t subsub : children_[sub]) {
            // The other result's own collection kept its APIs' names; msprobe
            // leaves them so and the merged graph names two nodes alike. They
            // are tagged with their rank like every other rank's API.
            if (FirstRankTag(Name(subsub)) < 0 && Rank(subsub) != ranks_[main].rank) {
              Rename(subsub, ApiRankName(Name(subsub), Rank(subsub)));
            }
            node_map_[main][name_[subsub]] = subsub;
          }
        }
        std::vector<uint32_t> moved = children_[o];
        children_[c].insert(children_[c].end(), moved.begin(), moved.end());
      }
    } else if (StartsWith(name, "Apis_Between_Modules")) {
      uint32_t all = AddNode(pool_->Intern("Apis_Between_Modules_All_Ranks." + std::to_string(all_ranks_next_[main]++)),
                             NodeOp::kApiCollection, main);
      parent_[all] = static_cast<int32_t>(root);
      node_map_[main][name_[all]] = all;
      kept.push_back(all);
      uint32_t original = name_[c];
      std::string k(SplitDots(name).back());
      Rename(c, "Apis_Between_Modules_Rank" + std::to_string(ranks_[main].rank) + "." + k);
      node_map_[main][name_[c]] = c;
      node_map_[main].erase(original);
      children_[all] = {c};
      parent_[c] = static_cast<int32_t>(all);
      for (size_t i = 1; i < results.size(); ++i) {
        int32_t o = Lookup(results[i], original);
        if (o == kNoNode) continue;
        int rank = ranks_[results[i]].rank;
        Rename(static_cast<uint32_t>(o), "Apis_Between_Modules_Rank" + std::to_string(rank) + "." + k);
        node_map_[main][name_[o]] = static_cast<uint32_t>(o);
        for (uint32_t api : children_[o]) {
          Rename(api, ApiRankName(Name(api), rank));
          node_map_[main][name_[api]] = api;
        }
        children_[all].push_back(static_cast<uint32_t>(o));
        parent_[o] = static_cast<int32_t>(all);
      }
    } else {
      kept.push_back(c);
    }
  }
  children_[root] = std::move(kept);
}

void Forest::SortMergedApiCollections(uint16_t graph) {
  for (uint32_t c : children_[root_[graph]]) {
    if (op_[c] != NodeOp::kApiCollection || !StartsWith(Name(c), "Apis_Between_Modules_All_Ranks")) continue;
    auto rank_of = [&](uint32_t n) {
      std::string_view name = Name(n);
      size_t at = name.find("_Rank");
      if (at == std::string_view::npos) return -1;
      size_t j = at + 5;
      while (j < name.size() && name[j] >= '0' && name[j] <= '9' && j - at - 5 < 9) ++j;
      return j > at + 5 ? std::atoi(std::string(name.substr(at + 5, j - at - 5)).c_str()) : -1;
    };
    std::stable_sort(children_[c].begin(), children_[c].end(),
                     [&](uint32_t a, uint32_t b) { return rank_of(a) < rank_of(b); });
  }
}

// ------------------------------------------------------------------ §9.5

Result<RankGroups> Forest::PpGroups() {
  const RankGroups& groups = pp_data_;
  if (groups.empty()) {
    auto d = MakeDefaultGroups(params_);
    if (!d.ok()) return d.error();
    Log("no pipeline send in the data (batch_isend_irecv, send, isend): default pp groups " + [&] {
      std::string s;
      for (const auto& g : d->pp) s += (s.empty() ? "" : ", ") + PyList(g);
      return "[" + s + "]";
    }());
    return d->pp;
  }
  if (static_cast<int>(groups[0].size()) != params_.pp) {
    auto d = MakeDefaultGroups(params_);
    if (!d.ok()) return d.error();
    Log("the pipeline chains of the data have " + std::to_string(groups[0].size()) +
        " ranks, not pp = " + std::to_string(params_.pp) + ": default pp groups used");
    return d->pp;
  }
  return groups;
}

Result<RankGroups> Forest::TpGroups() {
  const RankGroups& groups = tp_data_;
  if (groups.empty() || static_cast<int>(groups[0].size()) != params_.tp) {
    auto d = MakeDefaultGroups(params_);
    if (!d.ok()) return d.error();
    Log(groups.empty() ? "no reduce_scatter/all_reduce group in the data: default tp groups used"
                       : "the all_reduce groups of the data have " + std::to_string(groups[0].size()) +
                             " ranks, not tp = " + std::to_string(params_.tp) + ": default tp groups used");
    return d->tp;
  }
  return groups;
}

Status Forest::CheckGroups(const RankGroups& groups, const char* what) const {
  for (const auto& g : groups) {
    for (int rank : g) {
      auto it = std::find_if(ranks_.begin(), ranks_.end(), [&](const RankSide& r) { return r.rank == rank; });
      if (it == ranks_.end()) {
        return Error{params_.file, params_.Where("rank_size"),
                     std::string("the ") + what + " group " + PyList(g) + " names rank " + std::to_string(rank) +
                         ", which has no rank folder: check rank_size, tp, pp and order"};
      }
    }
    if (g.empty()) return Error{params_.file, params_.Where("rank_size"), std::string("an empty ") + what + " group"};
  }
  return Status::Ok();
}

Status Forest::MergePp(const std::vector<uint16_t>& group) {
  if (group.size() < 2) return Status::Ok();
  uint16_t main = group[0];
  std::vector<uint16_t> others(group.begin() + 1, group.end());
  uint32_t root = root_[main];
  // msprobe iterates the root's list while merging may append to it; once a
  // sort replaces that list, later appends are not seen.
  root_reordered_[main] = 0;
  std::vector<uint32_t> visit = children_[root];
  for (size_t i = 0; i < visit.size(); ++i) {
    uint32_t c = visit[i];
    if (op_[c] != NodeOp::kModule || Name(c) == "clip_grad" || Name(c) == "optimizer") continue;
    GA_RETURN_IF_ERROR(MergeNodes(main, c, others, 0));
    if (!root_reordered_[main]) visit = children_[root];
    SortNodes(main, c);
  }
  return Status::Ok();
}

Status Forest::MergeNodes(uint16_t main, uint32_t n, const std::vector<uint16_t>& others, int depth) {
  if (depth > kMaxDepth) {
    return Error{ranks_[main].side->dir, "",
                 "modules nested deeper than " + std::to_string(kMaxDepth) +
                     " levels: parallel merge stops (as msprobe's recursion limit)"};
  }
  if (mark_[n] >= 0) return Status::Ok();  // a tagged node's name is found in no other graph
  std::vector<uint32_t> twins;
  for (uint16_t o : others) {
    int32_t t = Lookup(o, name_[n]);
    if (t == kNoNode) return Status::Ok();
    twins.push_back(static_cast<uint32_t>(t));
  }
  if (!twins.empty()) {
    ParamGroups in, out;
    CompareParams(n, twins, true, &in, &out);
    std::string name(Name(n));
    bool split = !in.empty() && !out.empty() && HasLayers(name);
    if (Contains(name, ".backward.")) {
      int32_t f = Lookup(main, ReplaceAll(name, ".backward.", ".forward."));
      if (f != kNoNode && pp_merged_[f]) split = true;
    }
    if (split) {
      // A layer the pipeline split: every rank's copy becomes a sibling.
      pp_merged_[n] = 1;
      int32_t up = parent_[n];
      for (uint32_t t : twins) {
        MarkPositionRank(t, Rank(t));
        if (up == kNoNode) continue;
        parent_[t] = up;
        children_[up].push_back(t);
      }
      return Status::Ok();
    }
    if (in.empty() && !out.empty() && Contains(name, ".forward.")) {
      ReplaceItems(n, twins.back(), true, false);
    } else if (!in.empty() && out.empty() && Contains(name, ".backward.")) {
      ReplaceItems(n, twins.back(), false, false);
    }
    MergeUniqueChildren(n, twins);
  }
  for (size_t i = 0; i < children_[n].size(); ++i) {
    uint32_t c = children_[n][i];
    if (op_[c] == NodeOp::kModule) GA_RETURN_IF_ERROR(MergeNodes(main, c, others, depth + 1));
  }
  return Status::Ok();
}

void Forest::MarkPositionRank(uint32_t n, int rank) {
  int32_t position = 0;
  if (parent_[n] != kNoNode) {
    const std::vector<uint32_t>& siblings = children_[parent_[n]];
    for (size_t i = 0; i < siblings.size(); ++i) {
      uint32_t s = siblings[i];
      if (s == n || (mark_[s] < 0 && name_[s] == name_[n])) {
        position = static_cast<int32_t>(i);
        break;
      }
    }
  }
  mark_[n] = position;
  mark_rank_[n] = rank;
  for (uint32_t c : children_[n]) MarkPositionRank(c, rank);
}

void Forest::MergeUniqueChildren(uint32_t n, const std::vector<uint32_t>& twins) {
  // A tagged node's name never equals an untagged one's.
  auto key = [&](uint32_t x) -> uint64_t { return mark_[x] < 0 ? name_[x] : (uint64_t{1} << 40) + x; };
  std::vector<const std::vector<uint32_t>*> lists = {&children_[n]};
  for (uint32_t t : twins) lists.push_back(&children_[t]);
  std::vector<uint32_t> unique;
  for (size_t i = 1; i < lists.size(); ++i) {
    std::unordered_set<uint64_t> elsewhere;
    for (size_t j = 0; j < lists.size(); ++j) {
      if (j == i) continue;
      for (uint32_t x : *lists[j]) elsewhere.insert(key(x));
    }
    // A dict of the list: first place of a key, its last node.
    std::vector<uint64_t> order;
    std::unordered_map<uint64_t, uint32_t> last;
    for (uint32_t x : *lists[i]) {
      if (last.emplace(key(x), x).second) {
        order.push_back(key(x));
      } else {
        last[key(x)] = x;
      }
    }
    for (uint64_t k : order) {
      if (!elsewhere.count(k)) unique.push_back(last[k]);
    }
  }
  for (uint32_t u : unique) {
    MarkPositionRank(u, Rank(u));
    children_[n].push_back(u);
    parent_[u] = static_cast<int32_t>(n);
  }
}

void Forest::SortNodes(uint16_t main, uint32_t start) {
  std::vector<uint32_t> stack = {start};
  while (!stack.empty()) {
    uint32_t node = stack.back();
    stack.pop_back();
    if (mark_[node] >= 0 && parent_[node] != kNoNode) {
      uint32_t up = static_cast<uint32_t>(parent_[node]);
      std::string_view name = Name(node);
      bool forward = Contains(name, ".forward.") || EndsWith(name, ".forward");
      std::vector<uint32_t> untagged, tagged;
      for (uint32_t s : children_[up]) (mark_[s] >= 0 ? tagged : untagged).push_back(s);
      std::stable_sort(tagged.begin(), tagged.end(), [&](uint32_t a, uint32_t b) {
        int ra = forward ? mark_rank_[a] : -mark_rank_[a], rb = forward ? mark_rank_[b] : -mark_rank_[b];
        return ra != rb ? ra < rb : mark_[a] < mark_[b];
      });
      std::vector<uint32_t> sorted = forward ? untagged : tagged;
      const std::vector<uint32_t>& tail = forward ? tagged : untagged;
      sorted.insert(sorted.end(), tail.begin(), tail.end());
      int32_t index = -1;
      auto number = [&](uint32_t s) {
        if (HasLayers(Name(s))) ++index;
        if (mark_[s] >= 0) pp_index_[s] = index;
      };
      if (forward) {
        for (uint32_t s : sorted) number(s);
      } else {
        for (auto it = sorted.rbegin(); it != sorted.rend(); ++it) number(*it);
      }
      for (uint32_t s : tagged) UpdateNodeId(main, s);
      children_[up] = std::move(sorted);
      if (up == root_[main]) root_reordered_[main] = 1;
    }
    for (uint32_t c : children_[node]) stack.push_back(c);
  }
}

void Forest::UpdateNodeId(uint16_t main, uint32_t start) {
  std::vector<std::pair<uint32_t, std::string>> stack = {{start, ""}};
  while (!stack.empty()) {
    auto [node, index] = std::move(stack.back());
    stack.pop_back();
    std::string name(Name(node));
    std::string renamed = name;
    if (op_[node] == NodeOp::kModule) {
      if (HasLayers(name) && mark_[node] >= 0) {
        if (pp_index_[node] != kNoPpIndex) index = std::to_string(pp_index_[node]);
        renamed = RenumberLayers(name, index);
      }
    } else if (mark_[node] >= 0) {
      renamed = ApiRankName(name, mark_rank_[node]);
    }
    mark_[node] = -1;
    Rename(node, renamed);
    node_map_[main][name_[node]] = node;
    for (uint32_t c : children_[node]) stack.emplace_back(c, index);
  }
}

// ------------------------------------------------------------------ §9.7

void Forest::MergeVppData(uint16_t main) {
  std::string last_chunk = std::to_string(params_.vpp - 1);
  std::vector<uint32_t> stack;
  const std::vector<uint32_t>& top = children_[root_[main]];
  for (auto it = top.rbegin(); it != top.rend(); ++it) {
    std::vector<std::string_view> seg = SplitDots(Name(*it));
    if (seg.size() >= 2 && (seg[1] == "0" || seg[1] == last_chunk)) stack.push_back(*it);
  }
  while (!stack.empty()) {
    uint32_t cur = stack.back();
    stack.pop_back();
    if (pp_merged_[cur] || pp_index_[cur] != kNoPpIndex || op_[cur] != NodeOp::kModule) continue;
    bool forward = EndsWithForwardCall(Name(cur));
    for (auto it = children_[cur].rbegin(); it != children_[cur].rend(); ++it) stack.push_back(*it);
    int32_t target = Lookup(main, ReplaceChunk(Name(cur), last_chunk));
    if (target == kNoNode) continue;
    ReplaceItems(cur, static_cast<uint32_t>(target), forward, true);
  }
}

void Forest::MergeVppChunks(uint16_t main) {
  uint32_t root = root_[main];
  std::vector<uint32_t> stack;
  for (auto it = children_[root].rbegin(); it != children_[root].rend(); ++it) {
    std::vector<std::string_view> seg = SplitDots(Name(*it));
    if (seg.size() >= 2 && seg[1] == "0") stack.push_back(*it);
  }
  // The parents of merged layers, by name, in first-seen order.
  std::vector<uint32_t> parents;
  std::unordered_map<uint32_t, size_t> parent_at;
  while (!stack.empty()) {
    uint32_t cur = stack.back();
    stack.pop_back();
    int32_t up = parent_[cur];
    bool tagged_new = pp_index_[cur] != kNoPpIndex && up != kNoNode && !parent_at.count(name_[up]);
    if ((pp_merged_[cur] || tagged_new) && up != kNoNode) {
      auto [it, inserted] = parent_at.emplace(name_[up], parents.size());
      if (inserted) {
        parents.push_back(static_cast<uint32_t>(up));
      } else {
        parents[it->second] = static_cast<uint32_t>(up);
      }
      continue;
    }
    if (pp_merged_[cur] || tagged_new) continue;
    for (auto it = children_[cur].rbegin(); it != children_[cur].rend(); ++it) stack.push_back(*it);
  }
  for (uint32_t p : parents) {
    bool forward = EndsWithForwardCall(Name(p));
    for (int chunk = 1; chunk < params_.vpp; ++chunk) {
      int32_t target = Lookup(main, ReplaceChunk(Name(p), std::to_string(chunk)));
      if (target == kNoNode) continue;
      std::vector<uint32_t> moved = children_[target];
      if (forward) {
        children_[p].insert(children_[p].end(), moved.begin(), moved.end());
      } else {
        moved.insert(moved.end(), children_[p].begin(), children_[p].end());
        children_[p] = std::move(moved);
      }
      for (uint32_t s : children_[target]) parent_[s] = static_cast<int32_t>(p);
      // The other chunk's ancestors leave the graph.
      std::vector<uint32_t> chain;
      for (int32_t a = parent_[target]; a != kNoNode; a = parent_[a]) chain.push_back(static_cast<uint32_t>(a));
      std::reverse(chain.begin(), chain.end());
      if (chain.size() < 2) continue;
      for (size_t i = 1; i < chain.size(); ++i) node_map_[main].erase(name_[chain[i]]);
      uint32_t top_name = name_[chain[1]];
      std::vector<uint32_t>& top = children_[root];
      top.erase(std::remove_if(top.begin(), top.end(), [&](uint32_t x) { return name_[x] == top_name; }), top.end());
    }
    SortLayers(main, children_[p], forward);
  }
}

void Forest::SortLayers(uint16_t main, const std::vector<uint32_t>& list_in, bool forward) {
  std::vector<uint32_t> list = list_in;
  if (!forward) std::reverse(list.begin(), list.end());
  int index = -1;
  auto rename = [&](uint32_t n, const std::string& name) {
    node_map_[main].erase(name_[n]);
    Rename(n, name);
    node_map_[main][name_[n]] = n;
  };
  for (uint32_t node : list) {
    std::string name(Name(node));
    LayersMatch m;
    bool matched = FindLayers(name, 0, &m);
    if (matched) ++index;
    std::vector<std::string_view> seg = SplitDots(name);
    if (seg.size() < 2 || seg[1] == "0") continue;
    std::string prefix;
    std::string renamed;
    if (matched) {
      prefix = ReplaceChunk(name.substr(0, m.digits) + std::to_string(index) + ".", "0");
      renamed = prefix + name.substr(m.end);
    } else {
      renamed = ReplaceChunk(name, "0");
    }
    rename(node, renamed);
    std::vector<uint32_t> stack = children_[node];
    while (!stack.empty()) {
      uint32_t cur = stack.back();
      stack.pop_back();
      if (op_[cur] != NodeOp::kModule) continue;
      for (auto it = children_[cur].rbegin(); it != children_[cur].rend(); ++it) stack.push_back(*it);
      std::string cur_name(Name(cur));
      LayersMatch cm;
      rename(cur, FindLayers(cur_name, 0, &cm) ? prefix + cur_name.substr(cm.end) : ReplaceChunk(cur_name, "0"));
    }
  }
}

// ------------------------------------------------------------------ §9.6

std::vector<uint32_t> Forest::PreOrder(uint16_t graph) const {
  std::vector<uint32_t> order;
  std::vector<uint8_t> seen(name_.size(), 0);
  std::vector<uint32_t> stack = {root_[graph]};
  while (!stack.empty()) {
    uint32_t n = stack.back();
    stack.pop_back();
    if (seen[n]) continue;
    seen[n] = 1;
    order.push_back(n);
    for (auto it = children_[n].rbegin(); it != children_[n].rend(); ++it) stack.push_back(*it);
  }
  return order;
}

std::vector<uint32_t> Forest::TpTwins(uint32_t n, const std::vector<uint16_t>& others,
                                      const std::map<int, std::vector<int>>* mapping) const {
  std::vector<uint32_t> twins;
  std::vector<uint32_t> ancestors = Ancestors(n);
  int tagged_rank = FirstRankTag(Name(n));
  bool mapped = tagged_rank >= 0 && mapping != nullptr && !mapping->empty();
  const std::vector<int>* peers = nullptr;
  if (mapped) {
    auto it = mapping->find(tagged_rank);
    if (it == mapping->end() || it->second.empty() || it->second.size() != others.size()) return {};
    peers = &it->second;
  }
  for (size_t i = 0; i < others.size(); ++i) {
    int32_t t = mapped ? Lookup(others[i], ReplaceRankTags(Name(n), (*peers)[i])) : Lookup(others[i], name_[n]);
    if (t == kNoNode || Ancestors(static_cast<uint32_t>(t)) != ancestors) return {};
    twins.push_back(static_cast<uint32_t>(t));
  }
  return twins;
}

void Forest::MergeTp(const std::vector<uint16_t>& results, const std::map<int, std::vector<int>>* mapping) {
  if (results.size() < 2) return;
  uint16_t main = results[0];
  std::vector<uint16_t> others(results.begin() + 1, results.end());
  std::vector<uint32_t> order = PreOrder(main);
  for (uint32_t n : order) {
    int32_t up = parent_[n];
    if (up == kNoNode || op_[up] != NodeOp::kModule || Name(up) == "clip_grad" || Name(up) == "optimizer" ||
        StartsWith(Name(n), "Distributed") || HasInfo(n)) {
      continue;
    }
    MergeMatmulReduce(n, others, mapping);
    std::vector<uint32_t> twins = TpTwins(n, others, mapping);
    ParamGroups in, out;
    CompareParams(n, twins, true, &in, &out);
    if (in.empty() && out.empty()) continue;
    AddInfo(n, MergedFromRanks(n, twins));
    for (std::string& f : MergeParams(in)) AddInfo(n, std::move(f));
    for (std::string& f : MergeParams(out)) AddInfo(n, std::move(f));
  }
  for (uint32_t n : order) MergeColumnRowParallel(n, others, mapping);
}

void Forest::MergeMatmulReduce(uint32_t n, const std::vector<uint16_t>& others,
                               const std::map<int, std::vector<int>>* mapping) {
  if (op_[n] != NodeOp::kModule) return;
  std::vector<std::string_view> seg = SplitDots(Name(n));
  if (seg.size() < 4) return;
  std::string_view kind = seg[seg.size() - 3], pass = seg[seg.size() - 2];
  bool row_forward = pass == "forward" && Contains(kind, "RowParallelLinear");
  bool column_backward = pass == "backward" && Contains(kind, "ColumnParallelLinear");
  if (!row_forward && !column_backward) return;
  std::vector<uint32_t> matmuls, reduces;
  for (uint32_t c : children_[n]) {
    std::string_view name = Name(c);
    if (Contains(name, "matmul")) matmuls.push_back(c);
    if (Contains(name, "_reduce_scatter_base") || Contains(name, "reduce_scatter_tensor") ||
        Contains(name, "all_reduce")) {
      reduces.push_back(c);
    }
  }
  if (matmuls.empty() || reduces.empty()) return;
  for (uint32_t mm : matmuls) {
    std::vector<ItemRef> mm_out = Items(mm, true);
    if (mm_out.empty()) continue;
    for (size_t r = 0; r < reduces.size(); ++r) {
      uint32_t red = reduces[r];
      std::vector<ItemRef> red_out = Items(red, true), red_in = Items(red, false);
      if (red_out.empty()) continue;
      // The matmul's output is all_reduce's input 0 or reduce_scatter's input 1.
      bool all_reduce = Contains(Name(red), "all_reduce");
      if (red_in.size() < (all_reduce ? 1u : 2u)) continue;
      if (!SameParam(mm_out[0], red_in[all_reduce ? 0 : 1], false)) continue;
      std::vector<uint32_t> twins = TpTwins(mm, others, mapping);
      ParamGroups in;
      CompareParams(mm, twins, true, &in, nullptr);
      if (!in.empty()) {
        AddInfo(mm, MergedFromRanks(mm, twins));
        for (std::string& f : MergeParams(in)) AddInfo(mm, std::move(f));
      }
      for (uint32_t field : {k_max_, k_min_, k_mean_, k_norm_})
        SetField(mm_out[0], field, FieldValue(red_out[0], field));
      Value full_op_name = FieldValue(red_out[0], k_full_op_name_);
      std::string from = full_op_name.kind == ValueKind::kString && !pool_->Get(full_op_name.string).empty()
                             ? std::string(pool_->Get(full_op_name.string))
                             : std::string(Name(red));
      AddInfo(mm, "The output of this data is merged from " + from);
      reduces.erase(reduces.begin() + static_cast<long>(r));
      break;
    }
  }
}

void Forest::MergeColumnRowParallel(uint32_t n, const std::vector<uint16_t>& others,
                                    const std::map<int, std::vector<int>>* mapping) {
  if (op_[n] != NodeOp::kModule || HasInfo(n)) return;
  std::vector<std::string_view> seg = SplitDots(Name(n));
  if (seg.size() < 4) return;
  if (seg[seg.size() - 2] != "forward" || !Contains(seg[seg.size() - 3], "ColumnParallelLinear")) return;
  if (parent_[n] == kNoNode) return;
  // The siblings from this ColumnParallelLinear to the last RowParallelLinear.
  const std::vector<uint32_t>& siblings = children_[parent_[n]];
  long start = -1, end = -1;
  for (size_t i = 0; i < siblings.size(); ++i) {
    if (Contains(Name(siblings[i]), Name(n))) {
      start = static_cast<long>(i);
    } else if (Contains(Name(siblings[i]), "RowParallelLinear")) {
      end = static_cast<long>(i);
    }
  }
  if (start < 0 || end < 0 || end - start + 1 < 2) return;
  std::vector<uint32_t> span(siblings.begin() + start, siblings.begin() + end + 1);
  uint32_t column = span.front(), row = span.back();
  std::vector<uint32_t> stack = span;
  while (!stack.empty()) {
    uint32_t cur = stack.back();
    stack.pop_back();
    for (auto it = children_[cur].rbegin(); it != children_[cur].rend(); ++it) stack.push_back(*it);
    if (HasInfo(cur) || StartsWith(Name(cur), "Distributed")) continue;
    std::vector<uint32_t> twins = TpTwins(cur, others, mapping);
    ParamGroups in, out;
    CompareParams(cur, twins, false, &in, &out);
    if (in.empty() && out.empty()) continue;
    AddInfo(cur, MergedFromRanks(cur, twins));
    bool matmul = Contains(Name(cur), "matmul");
    if (cur == column || (matmul && parent_[cur] == static_cast<int32_t>(column))) {
      EraseKey(&in, "input.0");  // the column layer's input is not split
    } else if (cur == row || (matmul && parent_[cur] == static_cast<int32_t>(row))) {
      out.clear();  // the row layer's output is reduced already, its bias not split
      EraseKey(&in, "parameters.bias");
    }
    for (std::string& f : MergeParams(in)) AddInfo(cur, std::move(f));
    for (std::string& f : MergeParams(out)) AddInfo(cur, std::move(f));
  }
}

// ------------------------------------------------------------------ the strategies

Result<std::vector<MergedSide>> Forest::Merge() {
  Strategy strategy = SelectStrategy(params_);
  Log(std::string("merging ") + std::to_string(ranks_.size()) + " ranks (" + StrategyName(strategy) + ")");
  std::vector<uint16_t> all;
  for (uint16_t s = 0; s < ranks_.size(); ++s) all.push_back(s);
  auto slots_of = [&](const std::vector<int>& group) {
    std::vector<uint16_t> out;
    for (int rank : group) {
      for (uint16_t s = 0; s < ranks_.size(); ++s) {
        if (ranks_[s].rank == rank) out.push_back(s);
      }
    }
    return out;
  };
  auto groups_text = [](const RankGroups& groups) {
    std::string s;
    for (const auto& g : groups) s += (s.empty() ? "" : ", ") + PyList(g);
    return "[" + s + "]";
  };
  bool vpp = params_.vpp > 1;
  std::vector<uint16_t> results;
  auto merge_pp_group = [&](const std::vector<uint16_t>& group) -> Status {
    GA_RETURN_IF_ERROR(MergePp(group));
    if (vpp && group.size() >= 2) {
      MergeVppData(group[0]);
      MergeVppChunks(group[0]);
    }
    return Status::Ok();
  };
  switch (strategy) {
    case Strategy::kNoParallel:
      MergeApiCollections(all);
      results = all;
      break;
    case Strategy::kTp: {
      auto tp = TpGroups();
      if (!tp.ok()) return tp.error();
      GA_RETURN_IF_ERROR(CheckGroups(*tp, "tp"));
      Log("tp groups " + groups_text(*tp));
      for (const auto& g : *tp) {
        std::vector<uint16_t> slots = slots_of(g);
        MergeApiCollections(slots);
        MergeTp(slots, nullptr);
        results.push_back(slots[0]);
      }
      break;
    }
    case Strategy::kPp:
    case Strategy::kVpp: {
      auto pp = PpGroups();
      if (!pp.ok()) return pp.error();
      GA_RETURN_IF_ERROR(CheckGroups(*pp, "pp"));
      Log("pp groups " + groups_text(*pp));
      for (const auto& g : *pp) {
        std::vector<uint16_t> slots = slots_of(g);
        MergeApiCollections(slots);
        GA_RETURN_IF_ERROR(merge_pp_group(slots));
        results.push_back(slots[0]);
      }
      break;
    }
    case Strategy::kTpPp:
    case Strategy::kFull: {
      auto pp = PpGroups();
      if (!pp.ok()) return pp.error();
      auto tp = TpGroups();
      if (!tp.ok()) return tp.error();
      GA_RETURN_IF_ERROR(CheckGroups(*pp, "pp"));
      GA_RETURN_IF_ERROR(CheckGroups(*tp, "tp"));
      Log("pp groups " + groups_text(*pp) + ", tp groups " + groups_text(*tp));
      // A node tagged "_rank<a>." in the main TP rank's graph has its twin
      // tagged "_rank<b>." in the graph of the b-th rank of a's TP group.
      std::map<int, std::vector<int>> mapping;
      for (size_t i = 1; i < tp->size(); ++i) {
        const std::vector<int>& g = (*tp)[i];
        if (!g.empty()) mapping[g[0]] = std::vector<int>(g.begin() + 1, g.end());
      }
      if (strategy == Strategy::kTpPp) {
        MergeApiCollections(all);
        std::vector<uint16_t> pp_results;
        for (const auto& g : *pp) {
          std::vector<uint16_t> slots = slots_of(g);
          GA_RETURN_IF_ERROR(merge_pp_group(slots));
          if (!slots.empty()) pp_results.push_back(slots[0]);
        }
        if (pp_results.empty()) return Error{params_.file, params_.Where("pp"), "no pipeline group to merge"};
        MergeTp(pp_results, &mapping);
        SortMergedApiCollections(pp_results[0]);
        results.push_back(pp_results[0]);
      } else {
        std::map<int, uint16_t> pp_results;  // main rank -> its slot
        for (const auto& g : *pp) {
          std::vector<uint16_t> slots = slots_of(g);
          if (slots.empty()) continue;
          MergeApiCollections(slots);
          GA_RETURN_IF_ERROR(merge_pp_group(slots));
          pp_results[ranks_[slots[0]].rank] = slots[0];
        }
        for (const auto& g : *tp) {
          std::vector<uint16_t> list;
          for (int rank : g) {
            auto it = pp_results.find(rank);
            if (it != pp_results.end()) list.push_back(it->second);
          }
          if (list.empty()) continue;
          MergeApiCollections(list);
          MergeTp(list, &mapping);
          SortMergedApiCollections(list[0]);
          results.push_back(list[0]);
        }
      }
      break;
    }
  }
  std::vector<MergedSide> out;
  for (uint16_t r : results) out.push_back(MergedSide{ranks_[r].rank, Emit(r)});
  return out;
}

std::unique_ptr<Side> Forest::Emit(uint16_t main) {
  Side& from = *ranks_[main].side;
  auto side = std::make_unique<Side>();
  side->dir = from.dir;
  side->pool = pool_;
  side->construct = std::move(from.construct);
  side->stacks = std::move(from.stacks);
  DumpData& out = side->dump;
  const DumpData& meta = data_[main];
  out.path = meta.path;
  out.task = meta.task;
  out.level = meta.level;
  out.framework = meta.framework;
  out.detected_framework = meta.detected_framework;
  out.dump_data_dir = meta.dump_data_dir;
  out.has_dump_data_dir = meta.has_dump_data_dir;
  for (const DumpData& d : data_) out.summary_md5 |= d.summary_md5;

  side->graph = std::make_unique<Graph>(pool_);
  Graph& g = *side->graph;
  std::unordered_map<uint64_t, int32_t> stack_ids;  // (slot, stack) -> id in g
  std::vector<uint8_t> seen(name_.size(), 0);
  std::unordered_set<uint32_t> names;
  std::vector<std::pair<uint32_t, int32_t>> todo = {{root_[main], kNoNode}};
  while (!todo.empty()) {
    auto [w, up] = todo.back();
    todo.pop_back();
    // A node listed twice, or a second node of the same name, is written once.
    if (seen[w] || !names.insert(name_[w]).second) continue;
    seen[w] = 1;
    uint32_t n = g.AddNode(name_[w], op_[w]);
    if (up != kNoNode) g.AppendChild(static_cast<uint32_t>(up), n);
    if (const DumpEntry* e = Entry(w)) {
      const DumpData& d = data_[data_slot_[w]];
      DumpEntry copy = *e;
      copy.name = name_[w];
      copy.first_item = static_cast<uint32_t>(out.items.size());
      for (uint32_t i = e->first_item; i < e->first_item + e->input_count + e->output_count; ++i) {
        DumpItem item = d.items[i];
        uint32_t first = static_cast<uint32_t>(out.fields.size());
        out.fields.insert(out.fields.end(), d.fields.begin() + item.first_field,
                          d.fields.begin() + item.first_field + item.field_count);
        item.first_field = first;
        out.items.push_back(item);
      }
      copy.first_p2p = static_cast<uint32_t>(out.p2p.size());
      out.p2p.insert(out.p2p.end(), d.p2p.begin() + e->first_p2p, d.p2p.begin() + e->first_p2p + e->p2p_count);
      out.entry_of[name_[w]] = static_cast<uint32_t>(out.entries.size());
      g.entry[n] = static_cast<int32_t>(out.entries.size());
      out.entries.push_back(copy);
    }
    if (src_[w] != kNoNode) {
      const Graph& origin = *ranks_[slot_[w]].side->graph;
      int32_t stack = origin.stack[src_[w]];
      if (stack != kNoNode) {
        uint64_t key = (uint64_t{slot_[w]} << 32) | static_cast<uint32_t>(stack);
        auto it = stack_ids.find(key);
        if (it == stack_ids.end()) {
          const graph::StackTable::Range& r = origin.stacks.stacks[stack];
          it = stack_ids.emplace(key, g.stacks.Intern(origin.stacks.lines.data() + r.first, r.count)).first;
        }
        g.stack[n] = it->second;
      }
    }
    if (!infos_[w].empty()) side->parallel_merge_info[n] = std::move(infos_[w]);
    for (auto it = children_[w].rbegin(); it != children_[w].rend(); ++it) {
      todo.emplace_back(*it, static_cast<int32_t>(n));
    }
  }
  return side;
}

}  // namespace

std::string ApiRankName(std::string_view name, int rank) {
  std::vector<std::string_view> seg = SplitDots(name);
  if (seg.size() < 2) return std::string(name);
  std::vector<std::string> parts(seg.begin(), seg.end());
  parts[1] += "_rank" + std::to_string(rank);
  return JoinDots(parts);
}

std::string RenumberLayers(std::string_view name, std::string_view index) {
  std::string out;
  size_t from = 0;
  LayersMatch m;
  while (FindLayers(name, from, &m)) {
    out.append(name.substr(from, m.digits - from)).append(index).push_back('.');
    from = m.end;
  }
  return out.append(name.substr(from));
}

RankGroups PpGroupsFromData(const std::vector<RankSide>& ranks) {
  std::vector<std::pair<int, int>> sends;
  for (const RankSide& r : ranks) {
    const Side& side = *r.side;
    const Graph& g = *side.graph;
    const StringPool& pool = *side.pool;
    int64_t value_key = pool.Find("value"), isend = pool.Find("isend");
    std::optional<int64_t> peer;
    for (uint32_t n = 0; n < g.size() && !peer; ++n) {
      std::string_view name = g.Name(n);
      if (!StartsWith(name, "Distributed.") || g.entry[n] == kNoNode) continue;
      const DumpEntry& e = side.dump.entries[g.entry[n]];
      if (Contains(name, ".batch_isend_irecv.")) {
        for (uint32_t i = e.first_p2p; i < e.first_p2p + e.p2p_count; ++i) {
          const dump::P2POp& op = side.dump.p2p[i];
          if (op.peer >= 0 && op.peer != r.rank && static_cast<int64_t>(op.op) == isend) {
            peer = op.peer;
            break;
          }
        }
      } else if (Contains(name, ".send.") || Contains(name, ".isend.")) {
        for (uint32_t i = e.first_item; i < e.first_item + e.input_count; ++i) {
          const DumpItem& item = side.dump.items[i];
          if (item.flags & dump::kItemFullKey || pool.Get(item.key) != ".input.dst" || value_key < 0) continue;
          const Value* v = FieldOf(side.dump, item, static_cast<uint32_t>(value_key));
          if (v != nullptr && v->kind == ValueKind::kInteger) peer = v->integer;
        }
      }
    }
    if (peer && *peer <= INT_MAX) sends.emplace_back(r.rank, static_cast<int>(*peer));
  }
  return TraceP2PChains(sends);
}

RankGroups TpGroupsFromData(const std::vector<RankSide>& ranks) {
  RankGroups groups;
  for (const RankSide& r : ranks) {
    const Side& side = *r.side;
    const Graph& g = *side.graph;
    int64_t group_ranks = side.pool->Find("group_ranks");
    for (uint32_t n = 0; n < g.size(); ++n) {
      std::string_view name = g.Name(n);
      if (!Contains(name, "reduce_scatter") && !Contains(name, "all_reduce")) continue;
      std::vector<int> group;
      if (g.entry[n] != kNoNode && group_ranks >= 0) {
        const DumpEntry& e = side.dump.entries[g.entry[n]];
        for (uint32_t i = e.first_item; i < e.first_item + e.input_count; ++i) {
          const DumpItem& item = side.dump.items[i];
          if (item.flags & dump::kItemFullKey || side.pool->Get(item.key) != ".input.group") continue;
          const Value* v = FieldOf(side.dump, item, static_cast<uint32_t>(group_ranks));
          if (v != nullptr && v->kind == ValueKind::kJson) group = ParseIntList(side.pool->Get(v->string));
        }
      }
      if (!group.empty() && std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
      break;
    }
  }
  return groups;
}

Result<std::vector<MergedSide>> MergeRanks(std::vector<RankSide> ranks, const ParallelParams& params,
                                           const MergeLog& log) {
  if (ranks.empty()) return Error{params.file, params.Where("rank_size"), "no rank to merge"};
  std::stable_sort(ranks.begin(), ranks.end(), [](const RankSide& a, const RankSide& b) { return a.rank < b.rank; });
  for (size_t i = 1; i < ranks.size(); ++i) {
    if (ranks[i].side->pool != ranks[0].side->pool) {
      return Error{ranks[i].side->dir, "", "internal: the ranks of a merge must share one string pool"};
    }
    if (ranks[i].rank == ranks[i - 1].rank) {
      return Error{ranks[i].side->dir, "", "two rank folders have rank " + std::to_string(ranks[i].rank)};
    }
    if (ranks[i].side->dump.task != ranks[0].side->dump.task) {
      return Error{ranks[i].side->dump.path, "key task",
                   "'" + ranks[i].side->dump.task + "' but " + ranks[0].side->dump.path + " has '" +
                       ranks[0].side->dump.task + "': the ranks of a run must be dumped with the same task"};
    }
  }
  RankGroups pp = PpGroupsFromData(ranks), tp = TpGroupsFromData(ranks);
  Forest forest(std::move(ranks), params, log, std::move(pp), std::move(tp));
  return forest.Merge();
}

}  // namespace graph_ascend::merge
