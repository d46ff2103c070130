// The forest's nodes, items and statistics, and Emit (merge/forest.h).
#include "merge/forest.h"

#include <algorithm>
#include <climits>

#include "base/strings.h"
#include "merge/statistics.h"

namespace graph_ascend::merge::internal {

bool Contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }


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



void EraseKey(ParamGroups* groups, std::string_view key) {
  groups->erase(std::remove_if(groups->begin(), groups->end(), [&](const ParamGroup& g) { return g.key == key; }),
                groups->end());
}

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
      out.entry_of.Set(name_[w], static_cast<uint32_t>(out.entries.size()));
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

}  // namespace graph_ascend::merge::internal
