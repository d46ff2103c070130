#include "graph/dump_export.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "base/py_format.h"
#include "base/strings.h"
#include "base/temp_files.h"
#include "json/json_writer.h"

namespace graph_ascend::graph {
namespace {

using dump::DumpItem;
using dump::ItemState;
using dump::Value;
using dump::ValueKind;

bool IsIndex(std::string_view s) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Python's json.dump of a float: repr, with NaN / Infinity.
std::string NumberText(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  return PyRepr(x);
}

// The nested place of the items of one entry: a leaf item, a list or an
// object, rebuilt from the flattened keys (".input.0.1" is input_args[0][1]).
struct Slot {
  const DumpItem* item = nullptr;
  bool list = false;
  std::vector<std::pair<std::string_view, Slot>> members;  // first-seen order
  std::vector<Slot> elements;
  bool used = false;
  // A batch_isend_irecv operation: its fields besides the tensor (a P2POp object).
  const dump::P2POp* p2p = nullptr;

  void Put(const std::vector<std::string_view>& path, size_t at, const DumpItem* leaf) {
    used = true;
    if (at == path.size()) {
      item = leaf;
      return;
    }
    std::string_view seg = path[at];
    if (IsIndex(seg) && (list || (members.empty() && elements.empty()))) {
      list = true;
      size_t i = std::stoul(std::string(seg));
      if (elements.size() <= i) elements.resize(i + 1);
      elements[i].Put(path, at + 1, leaf);
      return;
    }
    for (auto& [name, child] : members) {
      if (name == seg) return child.Put(path, at + 1, leaf);
    }
    members.emplace_back(seg, Slot());
    members.back().second.Put(path, at + 1, leaf);
  }
};

class DumpWriter {
 public:
  DumpWriter(const Side& side, std::string* out) : side_(side), pool_(*side.pool), w_(out, 2) {}

  void Write() {
    const dump::DumpData& d = side_.dump;
    w_.BeginObject();
    w_.Key("task");
    w_.String(d.task);
    w_.Key("level");
    w_.String(d.level);
    w_.Key("framework");
    w_.String(d.framework.empty() ? d.detected_framework : d.framework);
    w_.Key("dump_data_dir");
    if (d.has_dump_data_dir) {
      w_.String(d.dump_data_dir);
    } else {
      w_.Null();
    }
    w_.Key("is_merged");
    w_.Bool(true);
    w_.Key("data");
    w_.BeginObject();
    const Graph& g = *side_.graph;
    for (uint32_t n = 1; n < g.size(); ++n) {
      if (g.entry[n] < 0) continue;
      const dump::DumpEntry& e = d.entries[static_cast<size_t>(g.entry[n])];
      if (e.input_count + e.output_count == 0) continue;
      w_.Key(g.Name(n));
      WriteEntry(n, e);
    }
    w_.EndObject();
    w_.EndObject();
  }

 private:
  // The key of an item after its node's name, without the leading dot.
  std::string_view Suffix(const DumpItem& it, std::string_view entry_name) const {
    std::string_view key = pool_.Get(it.key);
    if (!(it.flags & dump::kItemFullKey)) return key.substr(key.empty() ? 0 : 1);
    if (key.size() > entry_name.size() && key.substr(0, entry_name.size()) == entry_name &&
        key[entry_name.size()] == '.') {
      return key.substr(entry_name.size() + 1);
    }
    for (std::string_view marker : {".input.", ".output.", ".parameters."}) {
      size_t at = key.find(marker);
      if (at != std::string_view::npos) return key.substr(at + 1);
    }
    return key;
  }

  void WriteEntry(uint32_t node, const dump::DumpEntry& e) {
    const dump::DumpData& d = side_.dump;
    std::string_view entry_name = pool_.Get(e.name);
    long call = -1;
    bool pgrad = !dump::ParametersGradModule(entry_name, &call).empty();
    Slot args, kwargs, output, parameters, grads;
    args.list = output.list = true;
    for (uint32_t i = e.first_item; i < e.first_item + e.input_count + e.output_count; ++i) {
      const DumpItem& it = d.items[i];
      std::vector<std::string_view> segs = SplitDots(Suffix(it, entry_name));
      if (pgrad || it.state == ItemState::kParametersGrad) {
        grads.Put(segs, 0, &it);
      } else if (segs[0] == "output") {
        output.Put(segs, 1, &it);
      } else if (segs[0] == "parameters") {
        parameters.Put(segs, 1, &it);
      } else if (segs.size() < 2 || IsIndex(segs[1])) {
        args.Put(segs, 1, &it);
      } else {
        kwargs.Put(segs, 1, &it);
      }
    }
    // The operations of a batch_isend_irecv, in the order of its list of P2POp objects.
    for (Slot* list : {&args, &output}) {
      if (e.p2p_count == 0 || list->elements.empty() || !list->elements[0].list) continue;
      uint32_t k = 0;
      for (Slot& op : list->elements[0].elements) {
        if (op.item == nullptr && !op.list && k < e.p2p_count) op.p2p = &d.p2p[e.first_p2p + k++];
      }
    }
    w_.BeginObject();
    if (pgrad) {
      // msprobe 26 writes each gradient as a one-element list, 8.x as the item.
      for (auto& [name, slot] : grads.members) {
        w_.Key(name);
        if (call >= 0) w_.BeginArray();
        WriteSlot(slot);
        if (call >= 0) w_.EndArray();
      }
    } else if (entry_name.find(".backward") != std::string_view::npos && kwargs.members.empty()) {
      // msprobe dumps a backward call's gradients as "input" / "output".
      w_.Key("input");
      WriteSlot(args);
      w_.Key("output");
      WriteSlot(output);
    } else {
      w_.Key("input_args");
      WriteSlot(args);
      w_.Key("input_kwargs");
      kwargs.list = false;
      WriteSlot(kwargs);
      w_.Key("output");
      WriteSlot(output);
      if (parameters.used) {
        w_.Key("parameters");
        WriteSlot(parameters);
      }
    }
    auto info = side_.parallel_merge_info.find(node);
    if (info != side_.parallel_merge_info.end()) {
      w_.Key("parallel_merge_info");
      w_.BeginArray();
      for (const std::string& line : info->second) w_.String(line);
      w_.EndArray();
    }
    w_.EndObject();
  }

  void WriteSlot(const Slot& s) {
    if (s.item != nullptr) return WriteItem(*s.item);
    if (s.list) {
      w_.BeginArray();
      for (const Slot& el : s.elements) {
        if (el.used) {
          WriteSlot(el);
        } else {
          w_.Null();
        }
      }
      w_.EndArray();
      return;
    }
    if (!s.used && s.members.empty()) {
      w_.BeginObject();
      w_.EndObject();
      return;
    }
    w_.BeginObject();
    if (s.p2p != nullptr) {
      w_.Key("class_type");
      w_.String("torch.distributed.P2POp");
    }
    for (const auto& [name, child] : s.members) {
      w_.Key(name);
      WriteSlot(child);
    }
    if (s.p2p != nullptr) {
      w_.Key("op");
      w_.String(pool_.Get(s.p2p->op));
      w_.Key("peer");
      w_.Raw(std::to_string(s.p2p->peer));
      w_.Key("group_id");
      w_.String(pool_.Get(s.p2p->group_id));
    }
    w_.EndObject();
  }

  void WriteItem(const DumpItem& it) {
    if (it.flags & dump::kItemNull) return w_.Null();
    w_.BeginObject();
    const dump::DumpData& d = side_.dump;
    for (uint32_t f = it.first_field; f < it.first_field + it.field_count; ++f) {
      w_.Key(pool_.Get(d.fields[f].name));
      WriteValue(d.fields[f].value);
    }
    w_.EndObject();
  }

  void WriteValue(const Value& v) {
    switch (v.kind) {
      case ValueKind::kNull: return w_.Null();
      case ValueKind::kBool: return w_.Bool(v.boolean);
      case ValueKind::kInteger: return w_.Raw(std::to_string(v.integer));
      case ValueKind::kNumber: return w_.Raw(NumberText(v.number));
      case ValueKind::kString: return w_.String(pool_.Get(v.string));
      case ValueKind::kJson: return w_.Raw(pool_.Get(v.string));
    }
  }

  const Side& side_;
  const StringPool& pool_;
  json::JsonWriter w_;
};

// construct.json: each node's parent, null at the top. API collections are
// kept: read back, their names make them collections again.
std::string ConstructText(const Side& side) {
  const Graph& g = *side.graph;
  std::string out;
  json::JsonWriter w(&out, 2);
  w.BeginObject();
  for (uint32_t n = 1; n < g.size(); ++n) {
    int32_t p = g.parent[n];
    w.Key(g.Name(n));
    if (p <= 0) {
      w.Null();
    } else {
      w.String(g.Name(static_cast<uint32_t>(p)));
    }
  }
  w.EndObject();
  out += '\n';
  return out;
}

// stack.json in msprobe's grouped form: {"0": [[names], [lines]], ...}, one
// group per distinct stack, in node order.
std::string StackText(const Side& side) {
  const Graph& g = *side.graph;
  std::vector<std::vector<uint32_t>> members(g.stacks.stacks.size());
  std::vector<int32_t> order;
  for (uint32_t n = 1; n < g.size(); ++n) {
    int32_t s = g.stack[n];
    if (s < 0 || static_cast<size_t>(s) >= members.size() || g.stacks.stacks[static_cast<size_t>(s)].count == 0) {
      continue;
    }
    if (members[static_cast<size_t>(s)].empty()) order.push_back(s);
    members[static_cast<size_t>(s)].push_back(n);
  }
  std::string out;
  json::JsonWriter w(&out, 2);
  w.BeginObject();
  for (size_t i = 0; i < order.size(); ++i) {
    const StackTable::Range& r = g.stacks.stacks[static_cast<size_t>(order[i])];
    w.Key(std::to_string(i));
    w.BeginArray();
    w.BeginArray();
    for (uint32_t n : members[static_cast<size_t>(order[i])]) w.String(g.Name(n));
    w.EndArray();
    w.BeginArray();
    for (uint32_t l = r.first; l < r.first + r.count; ++l) w.String(side.pool->Get(g.stacks.lines[l]));
    w.EndArray();
    w.EndArray();
  }
  w.EndObject();
  out += '\n';
  return out;
}

}  // namespace

Status WriteDumpDirectory(const Side& side, const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Error{dir, "", std::string("cannot make the folder: ") + strerror(errno)};
  }
  std::string dump_text;
  DumpWriter(side, &dump_text).Write();
  dump_text += '\n';
  const std::pair<const char*, std::string> files[] = {
      {"construct.json", ConstructText(side)}, {"dump.json", std::move(dump_text)}, {"stack.json", StackText(side)}};
  for (size_t i = 0; i < 3; ++i) {
    Status st = WriteFileReplacing(dir + "/" + files[i].first, files[i].second);
    if (!st.ok()) {
      for (size_t j = 0; j < i; ++j) unlink((dir + "/" + files[j].first).c_str());
      return st;
    }
  }
  return Status::Ok();
}

}  // namespace graph_ascend::graph
