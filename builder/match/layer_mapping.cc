#include "match/layer_mapping.h"
#include "base/strings.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>
#include <sys/stat.h>

#include "base/mapped_file.h"
#include "match/matcher.h"

namespace graph_ascend::match {
namespace {

// One dump name placed in the scope tree.
struct DataItem {
  uint32_t entry;      // dump entry index
  std::string state;   // forward / backward / parameters_grad
  std::string type;    // class or API name
  std::vector<std::string> scope;  // full scope segments, the first (Module/Cell/TopLayer) included
};

// The function of the framework that called an API, from an old-format
// stack (§6.3.3 step 1).
std::string FrameStackScope(const std::vector<std::string_view>& lines, bool mindspore) {
  // The lines after the last "Template" line that comes before the first
  // forward/construct line below a "Template" line: a wrapper further down
  // the stack (a nested call) does not move the window.
  int last_template = -1;
  size_t end = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("Template") != std::string_view::npos) {
      last_template = static_cast<int>(i);
      continue;
    }
    bool stop = mindspore ? lines[i].find("construct") != std::string_view::npos
                          : (lines[i].find("in forward,") != std::string_view::npos ||
                             lines[i].find("in backward,") != std::string_view::npos);
    if (last_template >= 0 && stop) {
      end = i;
      break;
    }
  }
  if (last_template < 0) return "";
  std::string_view chosen;
  for (size_t i = static_cast<size_t>(last_template) + 1; i < end; ++i) {
    std::string_view line = lines[i];
    std::string_view file = line.substr(0, line.find(", line "));
    bool framework = file.find("site-packages/torch") != std::string_view::npos ||
                     file.find("package/torch") != std::string_view::npos ||
                     file.find("site-packages/mindspore") != std::string_view::npos ||
                     file.find("package/mindspore") != std::string_view::npos;
    if (!framework) break;
    chosen = line;
  }
  if (chosen.empty()) return "";
  std::string_view file = chosen.substr(0, chosen.find(", line "));
  if (file.find("msprobe") != std::string_view::npos || file.find("MindSpeed") != std::string_view::npos) return "";
  size_t in = chosen.find(", in ");
  if (in == std::string_view::npos) return "";
  std::string_view func = chosen.substr(in + 5);
  func = func.substr(0, func.find_first_of(", \n"));
  // Any function whose name contains these is skipped, as in the reference.
  if (func.find("construct") != std::string_view::npos || func.find("__call__") != std::string_view::npos) return "";
  return std::string(func);
}

std::vector<DataItem> DataItems(const graph::Side& side) {
  std::vector<DataItem> items;
  const StringPool& pool = *side.pool;
  bool mindspore = side.dump.detected_framework == "mindspore";
  std::vector<std::string_view> lines;
  for (uint32_t e = 0; e < side.dump.entries.size(); ++e) {
    uint32_t name_id = side.dump.entries[e].name;
    std::vector<std::string> seg = SplitDotsCopy(pool.Get(name_id));
    if (seg.size() < 4) continue;  // the reference gives up the whole mapping here
    DataItem item;
    item.entry = e;
    std::string name(pool.Get(name_id));
    if (seg.back() == "parameters_grad") {
      item.type = seg[seg.size() - 2];
      item.state = "parameters_grad";
      item.scope.assign(seg.begin(), seg.end() - 3);
      item.scope.push_back(seg[seg.size() - 3]);
    } else if (graph::IsModuleName(name)) {
      item.type = seg[seg.size() - 3];
      item.state = seg[seg.size() - 2];
      item.scope.assign(seg.begin(), seg.end() - 4);
      item.scope.push_back(seg[seg.size() - 4]);
    } else {
      item.type = seg[seg.size() - 3];
      item.state = seg.back();
      uint32_t edge = side.construct.edge_of.Get(name_id);
      uint32_t parent = edge == IdIndex::kNone ? 0 : side.construct.edges[edge].parent;
      if (parent == 0) {
        item.scope = {"TopLayer"};
      } else {
        std::vector<std::string> p = SplitDotsCopy(pool.Get(parent));
        item.scope.assign(p.begin(), p.end() - std::min<size_t>(3, p.size()));
        if (item.scope.empty()) item.scope = {"TopLayer"};
      }
      bool prefixed = seg[0] == "Primitive" || seg[0] == "Jit";
      const dump::StackData::Range* stack = side.stacks.grouped ? nullptr : side.stacks.Find(name_id);
      if (stack != nullptr && !prefixed) {
        lines.clear();
        for (uint32_t i = 0; i < stack->count; ++i) lines.push_back(pool.Get(side.stacks.lines[stack->first + i]));
        std::string frame = FrameStackScope(lines, mindspore);
        if (!frame.empty()) item.scope.push_back(frame);
      }
      item.scope.push_back(seg[seg.size() - 3]);
    }
    items.push_back(std::move(item));
  }
  // Backward calls take the scope of their forward twin.
  std::unordered_map<std::string, size_t> by_name;
  for (size_t i = 0; i < items.size(); ++i) by_name[std::string(pool.Get(side.dump.entries[items[i].entry].name))] = i;
  for (DataItem& item : items) {
    if (item.state != "backward") continue;
    std::vector<std::string> seg = SplitDotsCopy(pool.Get(side.dump.entries[item.entry].name));
    for (size_t k = seg.size() - 2; k < seg.size(); ++k) {
      if (seg[k] == "backward") seg[k] = "forward";
    }
    auto twin = by_name.find(JoinDots(seg));
    if (twin != by_name.end()) item.scope = items[twin->second].scope;
  }
  // ParallelTransformer layers are renumbered from the smallest index
  // (pipeline stages number their layers globally).
  for (const DataItem& pt : items) {
    if (pt.type != "ParallelTransformer") continue;
    size_t n = pt.scope.size();
    long min_layer = -1;
    for (const DataItem& item : items) {
      if (item.scope.size() > n + 1 && std::equal(pt.scope.begin(), pt.scope.end(), item.scope.begin()) &&
          item.scope[n] == "layers" && IsDigits(item.scope[n + 1])) {
        long v = std::stol(item.scope[n + 1]);
        if (min_layer < 0 || v < min_layer) min_layer = v;
      }
    }
    if (min_layer <= 0) continue;
    for (DataItem& item : items) {
      if (item.scope.size() > n + 1 && std::equal(pt.scope.begin(), pt.scope.end(), item.scope.begin()) &&
          item.scope[n] == "layers" && IsDigits(item.scope[n + 1])) {
        item.scope[n + 1] = std::to_string(std::stol(item.scope[n + 1]) - min_layer);
      }
    }
  }
  return items;
}

// The scope tree of one side.
class ScopeTrie {
 public:
  ScopeTrie() { nodes_.push_back(Node{"TopLayer", {}, {}}); }

  void Insert(const DataItem& item, size_t index) {
    size_t at = 0;
    for (size_t i = 1; i < item.scope.size(); ++i) at = Child(at, item.scope[i], true);
    nodes_[at].type = item.type;
    nodes_[at].items[item.state].push_back(index);
  }
  // The node at `path` (segments after the first), or -1.
  long Find(const std::vector<std::string>& path, size_t from) const {
    size_t at = 0;
    for (size_t i = from; i < path.size(); ++i) {
      auto it = nodes_[at].children.find(path[i]);
      if (it == nodes_[at].children.end()) return -1;
      at = it->second;
    }
    return static_cast<long>(at);
  }
  size_t Child(size_t at, const std::string& seg, bool create) {
    auto it = nodes_[at].children.find(seg);
    if (it != nodes_[at].children.end()) return it->second;
    if (!create) return SIZE_MAX;
    // A level no dump name ends at (a ModuleList) is typed by its own name,
    // as in the reference, so the yaml can key renames by it.
    nodes_.push_back(Node{seg, {}, {}});
    nodes_[at].children[seg] = nodes_.size() - 1;
    return nodes_.size() - 1;
  }
  const std::string& Type(size_t at) const { return nodes_[at].type; }
  const std::vector<size_t>* Items(size_t at, const std::string& state) const {
    auto it = nodes_[at].items.find(state);
    return it == nodes_[at].items.end() ? nullptr : &it->second;
  }
  size_t size() const { return nodes_.size(); }
  const std::map<std::string, size_t>& Children(size_t at) const { return nodes_[at].children; }

 private:
  struct Node {
    std::string type;
    std::map<std::string, size_t> children;
    std::map<std::string, std::vector<size_t>> items;
  };
  std::vector<Node> nodes_;
};

struct Rename {
  std::vector<std::string> src;
  std::vector<std::string> dst;
};
// class -> first src segment -> renames, longest src first.
using RenameTable = std::map<std::string, std::map<std::string, std::vector<Rename>>>;

std::string MarkWhere(const YAML::Mark& mark) {
  if (mark.is_null()) return "";
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

// A scalar's text, or an error naming where the non-scalar is.
Result<std::string> ScalarText(const std::string& path, const YAML::Node& node, const std::string& what) {
  if (!node.IsScalar()) return Error{path, MarkWhere(node.Mark()), what + " must be a plain name, not a list or map"};
  return node.Scalar();
}

Result<RenameTable> RenameTableFromYaml(const std::string& path, const YAML::Node& root) {
  RenameTable table;
  if (root.IsNull()) return table;
  if (!root.IsMap()) return Error{path, "", "the layer mapping must be a map of class name -> {name: mapped name}"};
  for (const auto& cls : root) {
    auto key = ScalarText(path, cls.first, "a class name");
    if (!key.ok()) return key.error();
    std::string name = *key;
    std::string where = MarkWhere(cls.first.Mark()) + ", key " + name;
    if (name == "Cell") name = "TopLayer";
    if (cls.second.IsNull()) continue;
    if (!cls.second.IsMap()) return Error{path, where, "expected a map of {name: mapped name}"};
    for (const auto& kv : cls.second) {
      if (!kv.first.IsScalar() || !kv.second.IsScalar()) {
        return Error{path, MarkWhere(kv.first.Mark()) + ", key " + name, "expected name: mapped name"};
      }
      Rename r;
      r.src = SplitDotsCopy(kv.first.Scalar());
      std::string dst = kv.second.Scalar();
      dst = dst.substr(0, dst.find('('));
      r.dst = SplitDotsCopy(dst);
      table[name][r.src[0]].push_back(std::move(r));
    }
  }
  for (auto& [cls, by_first] : table) {
    for (auto& [first, list] : by_first) {
      std::stable_sort(list.begin(), list.end(),
                       [](const Rename& a, const Rename& b) { return a.src.size() > b.src.size(); });
    }
  }
  return table;
}

// Every yaml-cpp call is inside the try: yaml-cpp reports bad input (and bad
// conversions) by exceptions, which become an Error with the line and column.
Result<RenameTable> ParseYaml(const std::string& path, const std::string& text) {
  try {
    return RenameTableFromYaml(path, YAML::Load(text));
  } catch (const YAML::ParserException& e) {
    return Error{path, MarkWhere(e.mark), "cannot parse the layer mapping yaml: " + e.msg};
  } catch (const YAML::Exception& e) {
    return Error{path, MarkWhere(e.mark), "cannot read the layer mapping yaml: " + e.msg};
  } catch (const std::exception& e) {
    return Error{path, "", std::string("cannot read the layer mapping yaml: ") + e.what()};
  }
}

Result<RenameTable> ReadYaml(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return Error{path, "", "layer mapping file not found"};
  if (S_ISDIR(st.st_mode)) return Error{path, "", "layer mapping file is a directory"};
  auto text = ReadFileToString(path);
  if (!text.ok()) return text.error();
  return ParseYaml(path, *text);
}

}  // namespace

Result<NameMapping> NameMapping::Build(const graph::Side& npu, const graph::Side& bench, const std::string& yaml) {
  NameMapping m;
  RenameTable table;
  if (!yaml.empty()) {
    auto t = ReadYaml(yaml);
    if (!t.ok()) return t.error();
    table = std::move(*t);
  }
  std::vector<DataItem> a = DataItems(npu), b = DataItems(bench);
  ScopeTrie ta, tb;
  for (size_t i = 0; i < a.size(); ++i) ta.Insert(a[i], i);
  for (size_t i = 0; i < b.size(); ++i) tb.Insert(b[i], i);

  std::set<const Rename*> used;
  for (size_t i = 0; i < a.size(); ++i) {
    const DataItem& item = a[i];
    std::vector<std::string> translated{"TopLayer"};
    size_t at = 0;
    size_t k = 1;
    while (k < item.scope.size()) {
      const Rename* chosen = nullptr;
      auto cls = table.find(ta.Type(at));
      if (cls != table.end()) {
        auto first = cls->second.find(item.scope[k]);
        if (first != cls->second.end()) {
          for (const Rename& r : first->second) {
            if (k + r.src.size() <= item.scope.size() &&
                std::equal(r.src.begin(), r.src.end(), item.scope.begin() + static_cast<long>(k))) {
              chosen = &r;
              break;
            }
          }
        }
      }
      size_t step = chosen ? chosen->src.size() : 1;
      if (chosen) {
        used.insert(chosen);
        translated.insert(translated.end(), chosen->dst.begin(), chosen->dst.end());
      } else {
        translated.push_back(item.scope[k]);
      }
      for (size_t s = 0; s < step; ++s) at = ta.Child(at, item.scope[k + s], false);
      k += step;
    }
    const std::vector<size_t>* mine = ta.Items(at, item.state);
    size_t index = mine ? static_cast<size_t>(std::find(mine->begin(), mine->end(), i) - mine->begin()) : 0;
    long target = tb.Find(translated, 1);
    const std::vector<size_t>* theirs = target >= 0 ? tb.Items(static_cast<size_t>(target), item.state) : nullptr;
    uint32_t npu_name = npu.dump.entries[item.entry].name;
    if (theirs != nullptr && index < theirs->size()) {
      m.map_[npu_name] = bench.dump.entries[b[(*theirs)[index]].entry].name;
      ++m.mapped_;
    } else {
      m.map_[npu_name] = -1;
      ++m.unmapped_;
    }
  }
  m.yaml_used_ = used.size();
  size_t entries = 0;
  for (auto& [cls, by_first] : table) {
    for (auto& [first, list] : by_first) entries += list.size();
  }
  if (entries > 0 && used.empty()) {
    return Error{yaml, "", "none of the " + std::to_string(entries) +
                               " entries of the layer mapping names a module present in the npu dump (keys are "
                               "the npu parent's class name, e.g. GPTModel: {decoder: encoder})"};
  }
  return m;
}

Status CheckLayerMappingYaml(const std::string& path, const std::string& text) {
  auto table = ParseYaml(path, text);
  return table.ok() ? Status::Ok() : Status(table.error());
}

NameMapping::Kind NameMapping::Lookup(uint32_t npu_name, uint32_t* bench_name) const {
  auto it = map_.find(npu_name);
  if (it == map_.end()) return Kind::kSameName;
  if (it->second < 0) return Kind::kNoCounterpart;
  *bench_name = static_cast<uint32_t>(it->second);
  return Kind::kMapped;
}

uint32_t MatchMapped(graph::Side* npu, graph::Side* bench, const NameMapping& mapping) {
  graph::Graph& a = *npu->graph;
  graph::Graph& b = *bench->graph;
  uint32_t matched = 0;
  for (uint32_t n : BreadthFirst(a)) {
    uint32_t target_name = a.name[n];
    NameMapping::Kind kind = mapping.Lookup(a.name[n], &target_name);
    if (kind == NameMapping::Kind::kNoCounterpart) continue;
    int32_t t = b.Find(target_name);
    if (t == graph::kNoNode) continue;
    a.matched[n] = t;
    b.matched[t] = static_cast<int32_t>(n);
    ++matched;
  }
  return matched;
}

}  // namespace graph_ascend::match
