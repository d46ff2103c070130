#include "graph/graph_builder.h"
#include "base/mapped_file.h"
#include "base/parallel.h"
#include "base/strings.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <charconv>
#include <optional>
#include <string>

namespace graph_ascend::graph {
namespace {

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// If `s` ends with ".<word>.<digits>", returns the position of that dot and
// the digits; used for ".forward.N" / ".backward.N".
bool SplitTrailing(std::string_view s, std::string_view word, size_t* dot, std::string_view* digits) {
  size_t last = s.rfind('.');
  if (last == std::string_view::npos || last + 1 >= s.size()) return false;
  std::string_view d = s.substr(last + 1);
  for (char c : d) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  // s[0, last) ends with "." + word.
  if (last < word.size() + 1 || s[last - word.size() - 1] != '.' || s.substr(last - word.size(), word.size()) != word) {
    return false;
  }
  *dot = last - word.size() - 1;
  *digits = d;
  return true;
}

// True if `line` has "<Word>Template(" (with a word boundary before the
// capital), "api_template(" or "api_instance(" (§5.6).
bool HasTemplateCall(std::string_view line) {
  for (size_t at = line.find("Template("); at != std::string_view::npos; at = line.find("Template(", at + 1)) {
    size_t s = at;
    while (s > 0 && std::isalpha(static_cast<unsigned char>(line[s - 1]))) --s;
    if (s < at && std::isupper(static_cast<unsigned char>(line[s])) && (s == 0 || !IsWordChar(line[s - 1]))) {
      return true;
    }
  }
  for (std::string_view word : {std::string_view("api_template("), std::string_view("api_instance(")}) {
    for (size_t at = line.find(word); at != std::string_view::npos; at = line.find(word, at + 1)) {
      if (at == 0 || !IsWordChar(line[at - 1])) return true;
    }
  }
  return false;
}

// Present unless certainly absent: an unreadable file or a dangling symlink is
// read and fails with its own error.
bool Exists(const std::string& p) {
  struct stat st;
  return lstat(p.c_str(), &st) == 0 || errno != ENOENT;
}


class SideBuilder {
 public:
  SideBuilder(Side* side, const BuildOptions& options) : side_(side), options_(options) {}

  Status Build();

 private:
  uint32_t GetOrCreate(uint32_t name_id);
  uint32_t RepairBackwardParent(uint32_t child, uint32_t parent);
  // BuildOptions::backward_inplace for a child with a parent.
  uint32_t InplaceBackwardParent(uint32_t child, uint32_t parent);
  void AttachStack(uint32_t node);
  void GroupApiCollections();
  void AddParametersGrad();
  void BreakCycles();
  void AttachOrphans();

  Side* side_;
  BuildOptions options_;
  Graph* g_ = nullptr;
  // Order in which nodes became (or would have become) children of the root.
  std::vector<uint64_t> root_seq_;
  uint64_t seq_ = 0;
  // When each node got its construct.json parent (0: never), to find the
  // edge that closed a cycle.
  std::vector<uint64_t> attached_at_;
  std::vector<std::string_view> scratch_lines_;
  std::unordered_map<uint64_t, int32_t> simplified_;  // (raw stack, module name) -> stack id
  std::string twin_name_;                             // AttachStack's, kept for its storage
};

uint32_t SideBuilder::GetOrCreate(uint32_t name_id) {
  int32_t found = g_->Find(name_id);
  if (found != kNoNode) return static_cast<uint32_t>(found);
  std::string_view name = side_->pool->Get(name_id);
  uint32_t n = g_->AddNode(name_id, ClassifyNode(name));
  root_seq_.push_back(seq_++);
  uint32_t entry = side_->dump.entry_of.Get(name_id);
  if (entry != IdIndex::kNone) g_->entry[n] = static_cast<int32_t>(entry);
  AttachStack(n);
  return n;
}

void SideBuilder::AttachStack(uint32_t node) {
  std::string_view name = g_->Name(node);
  uint32_t stack_index = side_->stacks.stack_of.Get(g_->name[node]);
  if (stack_index != IdIndex::kNone && side_->stacks.stacks[stack_index].count > 0) {
    const dump::StackData::Range& raw = side_->stacks.stacks[stack_index];
    const uint32_t* lines = side_->stacks.lines.data() + raw.first;
    if (options_.complete_stack) {
      g_->stack[node] = g_->stacks.Intern(lines, raw.count);
      return;
    }
    // The simplified stack depends only on the raw stack and, for modules,
    // on the module's attribute name: computed once per such pair (stacks
    // are shared by thousands of nodes).
    uint64_t key = static_cast<uint64_t>(stack_index) << 32;
    std::string_view attribute;
    if (IsModuleName(name) && DotSegmentFromEnd(name, 3, &attribute)) key |= side_->pool->InternShort(attribute);
    auto cached = simplified_.find(key);
    if (cached == simplified_.end()) {
      scratch_lines_.clear();
      for (uint32_t i = 0; i < raw.count; ++i) scratch_lines_.push_back(side_->pool->Get(lines[i]));
      auto [first, count] = SimplifyStack(name, scratch_lines_);
      cached = simplified_.emplace(key, g_->stacks.Intern(lines + first, count)).first;
    }
    g_->stack[node] = cached->second;
    return;
  }
  // A backward node without a stack borrows its forward twin's (§5.6):
  // "X.backward.N" -> "X.forward.0", "X.backward" -> replace all.
  size_t dot;
  std::string_view digits;
  if (SplitTrailing(name, "backward", &dot, &digits)) {
    twin_name_.assign(name.substr(0, dot)).append(".forward.0");
  } else if (EndsWith(name, ".backward")) {
    ReplaceAll(name, "backward", "forward", &twin_name_);
  } else {
    return;
  }
  int32_t twin = g_->Find(std::string_view(twin_name_));
  if (twin == kNoNode) {
    uint32_t line = side_->pool->Intern(
        "This backward node cannot find the forward node and cannot retrieve stack information.");
    g_->stack[node] = g_->stacks.Intern(&line, 1);
  } else {
    g_->stack[node] = g_->stack[twin];
  }
}

uint32_t SideBuilder::RepairBackwardParent(uint32_t child_id, uint32_t parent_id) {
  if (parent_id != 0) return options_.backward_inplace ? InplaceBackwardParent(child_id, parent_id) : parent_id;
  const dump::ConstructData& c = side_->construct;
  std::string_view child = side_->pool->Get(child_id);
  size_t dot;
  std::string_view digits;
  auto parent_of = [&](std::string_view name) -> int64_t {
    int64_t id = side_->pool->Find(name);
    if (id < 0) return -1;
    uint32_t edge = c.edge_of.Get(static_cast<uint32_t>(id));
    // Not "cond ? -1 : parent": the uint32_t parent would make -1 4294967295.
    if (edge == IdIndex::kNone) return -1;
    return c.edges[edge].parent;
  };
  std::string candidate;
  if (SplitTrailing(child, "backward", &dot, &digits)) {
    std::string forward = std::string(child.substr(0, dot)) + ".forward." + std::string(digits);
    int64_t fp = parent_of(forward);
    if (fp <= 0) return 0;
    std::string_view fparent = side_->pool->Get(static_cast<uint32_t>(fp));
    size_t fdot;
    std::string_view fdigits;
    if (SplitTrailing(fparent, "forward", &fdot, &fdigits)) {
      candidate = std::string(fparent.substr(0, fdot)) + ".backward." + std::string(fdigits);
    } else {
      candidate = std::string(fparent);
    }
  } else if (EndsWith(child, ".backward")) {
    int64_t fp = parent_of(ReplaceAll(child, "backward", "forward"));
    if (fp <= 0) return 0;
    candidate = ReplaceAll(side_->pool->Get(static_cast<uint32_t>(fp)), "forward", "backward");
  } else {
    return 0;
  }
  int64_t id = side_->pool->Find(candidate);
  if (id > 0 && c.IsKey(static_cast<uint32_t>(id))) return static_cast<uint32_t>(id);
  return 0;
}

uint32_t SideBuilder::InplaceBackwardParent(uint32_t child_id, uint32_t parent_id) {
  const dump::ConstructData& c = side_->construct;
  std::string_view child = side_->pool->Get(child_id), parent = side_->pool->Get(parent_id);
  size_t dot;
  std::string_view digits;
  if (!SplitTrailing(child, "backward", &dot, &digits)) return parent_id;
  // The module path of the child ("M.sub" of "M.sub.Linear.backward.0") and
  // of the parent ("M" of "M.Block.backward.0").
  auto prefix = [](std::string_view name, size_t drop) -> std::optional<std::string_view> {
    size_t parts = static_cast<size_t>(std::count(name.begin(), name.end(), '.')) + 1;
    if (parts < drop + 1) return std::nullopt;
    size_t end = name.size();
    for (size_t k = 0; k < drop; ++k) end = name.rfind('.', end - 1);
    return name.substr(0, end);
  };
  auto sub = prefix(child, 4), up = prefix(parent, 3);
  if (!sub || !up || *sub == *up) return parent_id;
  int64_t forward = side_->pool->Find(std::string(child.substr(0, dot)) + ".forward." + std::string(digits));
  if (forward < 0 || !c.IsKey(static_cast<uint32_t>(forward))) return parent_id;
  uint32_t fp = c.edges[c.edge_of.Get(static_cast<uint32_t>(forward))].parent;
  if (fp == 0) return 0;  // the forward node is top-level: so is its backward twin
  std::string_view fparent = side_->pool->Get(fp);
  size_t fdot;
  std::string_view fdigits;
  std::string candidate = SplitTrailing(fparent, "forward", &fdot, &fdigits)
                              ? std::string(fparent.substr(0, fdot)) + ".backward." + std::string(fdigits)
                              : std::string(fparent);
  int64_t id = side_->pool->Find(candidate);
  if (id > 0 && c.IsKey(static_cast<uint32_t>(id))) return static_cast<uint32_t>(id);
  return parent_id;
}

void SideBuilder::BreakCycles() {
  // construct.json parents that go round (A's parent B, B's parent A) leave
  // the cycle and all below it unreachable from the root. The edge that
  // closed each cycle is dropped, which makes its node an orphan parent
  // (attached below like any other), and the cycle is reported.
  attached_at_.resize(g_->size(), 0);
  std::vector<uint8_t> state(g_->size(), 0);  // 0 unseen, 1 on the current chain, 2 done
  std::vector<uint32_t> chain;
  for (uint32_t n = 1; n < g_->size(); ++n) {
    chain.clear();
    int32_t at = static_cast<int32_t>(n);
    while (at != kNoNode && at != 0 && state[at] == 0) {
      state[at] = 1;
      chain.push_back(static_cast<uint32_t>(at));
      at = g_->parent[at];
    }
    if (at != kNoNode && at != 0 && state[at] == 1) {
      std::vector<uint32_t> cycle(std::find(chain.begin(), chain.end(), static_cast<uint32_t>(at)), chain.end());
      uint32_t last = *std::max_element(cycle.begin(), cycle.end(),
                                        [&](uint32_t a, uint32_t b) { return attached_at_[a] < attached_at_[b]; });
      // Named from the node put under the root, each followed by its parent.
      std::rotate(cycle.begin(), std::find(cycle.begin(), cycle.end(), last), cycle.end());
      std::string names;
      for (uint32_t c : cycle) names += std::string(g_->Name(c)) + " -> ";
      names += g_->Name(last);
      uint32_t p = static_cast<uint32_t>(g_->parent[last]);
      std::vector<uint32_t> siblings = g_->Children(p);
      siblings.erase(std::find(siblings.begin(), siblings.end(), last));
      g_->SetChildren(p, siblings);
      g_->parent[last] = kNoNode;
      side_->warnings.push_back(Error{side_->dir + "/construct.json", "key " + std::string(g_->Name(last)),
                                      "the parents form a cycle (" + names + "); " + std::string(g_->Name(last)) +
                                          " is put under the root"});
    }
    for (uint32_t c : chain) state[c] = 2;
  }
}

void SideBuilder::AttachOrphans() {
  // Parents that are never keys of construct.json are put under the root
  // at the place they were first referenced (the reference leaves them
  // unreachable; docs/COMPATIBILITY.md).
  std::vector<uint32_t> top;
  for (uint32_t n = 1; n < g_->size(); ++n) {
    if (g_->parent[n] == kNoNode) top.push_back(n);
  }
  if (top.empty()) return;
  std::vector<uint32_t> children = g_->Children(0);
  children.insert(children.end(), top.begin(), top.end());
  std::stable_sort(children.begin(), children.end(),
                   [&](uint32_t a, uint32_t b) { return root_seq_[a] < root_seq_[b]; });
  g_->SetChildren(0, children);
}

void SideBuilder::GroupApiCollections() {
  std::vector<uint32_t> children = g_->Children(0);
  std::vector<uint32_t> grouped;
  uint32_t k = 0;
  for (size_t i = 0; i < children.size();) {
    size_t j = i;
    while (j < children.size() && g_->op[children[j]] == NodeOp::kApi) ++j;
    if (j - i >= 2) {
      uint32_t name = side_->pool->Intern("Apis_Between_Modules." + std::to_string(k++));
      uint32_t coll = g_->AddNode(name, NodeOp::kApiCollection);
      root_seq_.push_back(seq_++);
      std::vector<uint32_t> members(children.begin() + static_cast<long>(i), children.begin() + static_cast<long>(j));
      g_->SetChildren(coll, members);
      g_->parent[coll] = 0;
      grouped.push_back(coll);
      i = j;
    } else if (j > i) {
      grouped.push_back(children[i]);
      ++i;
    } else {
      grouped.push_back(children[i]);
      ++i;
    }
  }
  g_->SetChildren(0, grouped);
}

void SideBuilder::AddParametersGrad() {
  // For "P.parameters_grad" in dump.json: the last child of P.backward.N
  // with the largest N (§5.9). msprobe 26 writes "P.parameters_grad.N" per
  // gradient call: it goes under P.backward.N when that exists.
  // The entries without a node first: most dumps have none, and then no
  // node name needs a look.
  struct Gradient {
    uint32_t entry;
    std::string_view module;
    long call;
  };
  std::vector<Gradient> gradients;
  for (uint32_t e = 0; e < side_->dump.entries.size(); ++e) {
    uint32_t name_id = side_->dump.entries[e].name;
    long call;
    std::string_view module = dump::ParametersGradModule(side_->pool->Get(name_id), &call);
    if (!module.empty() && g_->Find(name_id) == kNoNode) gradients.push_back(Gradient{e, module, call});
  }
  if (gradients.empty()) return;
  // Per module, its backward node with the largest N (the first of equals).
  struct LastBackward {
    long long count = -1;  // -1: none
    uint32_t node = 0;
  };
  std::unordered_map<std::string_view, LastBackward> last_backward;
  for (const Gradient& gr : gradients) last_backward.emplace(gr.module, LastBackward());
  for (uint32_t n = 0; n < g_->size(); ++n) {
    std::string_view name = g_->Name(n);
    size_t dot;
    std::string_view digits;
    if (!SplitTrailing(name, "backward", &dot, &digits) || digits.size() > 18) continue;
    auto it = last_backward.find(name.substr(0, dot));
    if (it == last_backward.end()) continue;
    long long count = 0;
    std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (count > it->second.count) it->second = LastBackward{count, n};
  }
  for (const Gradient& gr : gradients) {
    const LastBackward& last = last_backward.at(gr.module);
    if (last.count < 0) continue;
    uint32_t parent = last.node;
    if (gr.call >= 0) {
      int32_t same_call = g_->Find(std::string_view(std::string(gr.module) + ".backward." + std::to_string(gr.call)));
      if (same_call != kNoNode) parent = static_cast<uint32_t>(same_call);
    }
    uint32_t n = g_->AddNode(side_->dump.entries[gr.entry].name, NodeOp::kModule);
    root_seq_.push_back(seq_++);
    g_->entry[n] = static_cast<int32_t>(gr.entry);
    g_->AppendChild(parent, n);
  }
}

Status SideBuilder::Build() {
  side_->graph = std::make_unique<Graph>(side_->pool);
  g_ = side_->graph.get();
  // Nodes are construct.json's keys (their parents are keys too but for a
  // few orphans), or dump.json's entries when it has none; then parameter
  // gradients and API collections, a few per thousand.
  const dump::ConstructData& c = side_->construct;
  size_t nodes = c.edges.empty() ? side_->dump.entries.size() : c.edges.size();
  g_->Reserve(nodes + nodes / 16 + 64);
  uint32_t root = g_->AddNode(side_->pool->Intern("DefaultModel"), NodeOp::kModule);
  root_seq_.push_back(seq_++);
  (void)root;
  if (c.edges.empty()) {
    // Level L1 dumps have no construct.json content: every dumped API is a
    // top-level node in dump order (the reference refuses such dumps).
    for (const dump::DumpEntry& e : side_->dump.entries) {
      if (!dump::ParametersGradModule(side_->pool->Get(e.name)).empty()) continue;
      uint32_t n = GetOrCreate(e.name);
      if (g_->parent[n] == kNoNode && n != 0) g_->AppendChild(0, n);
    }
  }
  for (const dump::ConstructData::Edge& edge : c.edges) {
    uint32_t parent_id = RepairBackwardParent(edge.child, edge.parent);
    uint32_t parent = 0;
    if (parent_id != 0) parent = GetOrCreate(parent_id);
    uint32_t child = GetOrCreate(edge.child);
    // add_upnode: ignored for itself or when the node already has a parent.
    if (child == parent || child == 0 || g_->parent[child] != kNoNode) continue;
    g_->AppendChild(parent, child);
    if (attached_at_.size() <= child) attached_at_.resize(g_->size(), 0);
    attached_at_[child] = ++seq_;
    if (parent == 0) root_seq_[child] = seq_++;
  }
  BreakCycles();
  AttachOrphans();
  GroupApiCollections();
  AddParametersGrad();
  return Status::Ok();
}

}  // namespace

std::pair<size_t, size_t> SimplifyStack(std::string_view name, const std::vector<std::string_view>& lines) {
  if (IsModuleName(name)) {
    std::vector<std::string_view> seg = SplitDots(name);
    if (seg.size() < 4) return {0, lines.size()};
    std::string call = std::string(seg[seg.size() - 4]) + "(";
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].find(call) != std::string_view::npos) return {i, 1};
    }
    return {0, lines.size()};
  }
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (HasTemplateCall(lines[i])) return {i + 1, 1};
  }
  return {0, lines.size()};
}

uint32_t AssignMicroSteps(Graph* g) {
  uint32_t step = 0;
  bool backward = false;
  for (int32_t c = g->first_child[0]; c != kNoNode; c = g->next_sibling[c]) {
    if (g->op[c] == NodeOp::kModule) {
      if (g->Name(c).find(".forward.") != std::string_view::npos) {
        if (backward) {
          ++step;
          backward = false;
        }
      } else {
        backward = true;
      }
    }
    g->micro_step[c] = static_cast<int32_t>(step);
  }
  g->micro_steps = step + 1;
  return step + 1;
}

namespace {

// Reads the three files of a dump directory (no graph yet).
Result<std::unique_ptr<Side>> ReadSideFiles(const std::string& dir, StringPool* pool, const BuildOptions& options) {
  auto side = std::make_unique<Side>();
  side->dir = dir;
  side->pool = pool;
  if (!IsDirectory(dir)) return Error{dir, "", "not a directory"};
  std::string base = dir.back() == '/' ? dir : dir + "/";
  dump::DumpOptions dump_options;
  dump_options.overflow_check = options.overflow_check;
  dump_options.threads = options.threads;
  if (options.progress) {
    struct stat st;
    size_t total = stat((base + "dump.json").c_str(), &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
    dump_options.progress = [&options, total](size_t done) { options.progress(done, total); };
  }
  auto dump = dump::ReadDumpJson(base + "dump.json", side->pool, dump_options);
  if (!dump.ok()) return dump.error();
  side->dump = std::move(*dump);
  // Serving frameworks (vLLM-Ascend, SGLang) dump at level L1 and may write
  // dump.json alone: no construct.json is an L1 dump (no hierarchy), no
  // stack.json is no stacks. Anything else wrong with either file is an error.
  bool has_construct = Exists(base + "construct.json");
  // With a code mapping as the stack source, stack.json may be absent.
  bool stack_file = Exists(base + "stack.json");
  bool has_stack = stack_file || options.code_mapping;
  if (has_construct) {
    auto construct = dump::ReadConstructJson(base + "construct.json", side->pool, &side->dump);
    if (!construct.ok()) return construct.error();
    side->construct = std::move(*construct);
  } else {
    side->construct.path = base + "construct.json";
  }
  if (!has_construct || !has_stack) {
    std::string missing = !has_construct && !has_stack ? "no construct.json or stack.json"
                          : !has_construct             ? "no construct.json"
                                                       : "no stack.json";
    std::string means = !has_construct ? "no module hierarchy: its APIs are laid out in dump order, as a level L1 dump's"
                                       : "no call stacks";
    if (!has_construct && !has_stack) means += ", and no call stacks";
    side->warnings.push_back(Error{base + "dump.json", "", missing + " beside it: " + means});
  }
  if (stack_file) {
    auto stacks = dump::ReadStackJson(base + "stack.json", side->pool);
    if (!stacks.ok()) return stacks.error();
    side->stacks = std::move(*stacks);
  }
  if (options.code_mapping) {
    const dump::CodeMapping& m = *options.code_mapping;
    side->code_mapping_path = m.path;
    side->code_mapping_nodes = dump::AddCodeMappingStacks(m, side->construct, side->dump, side->pool, &side->stacks);
    if (side->code_mapping_nodes == 0) {
      return Error{m.path, "",
                   "names no Cell node of " + dir + " that lacks a stack (" + std::to_string(m.scopes.size()) +
                       " scopes; a static-graph cell dump names its nodes Cell.{path}.{Class}.{forward|backward}.{n})"};
    }
  }
  if (side->construct.edges.empty() && side->dump.entries.empty()) {
    return Error{base + "dump.json", "", "empty dump: no nodes in construct.json and no entries in dump.json"};
  }
  return side;
}

// Re-interns every string id of a side's parsed files and graph into `to`.
void MovePool(Side* side, StringPool* to) {
  const StringPool& from = *side->pool;
  std::vector<uint32_t> id(from.size());
  for (uint32_t i = 0; i < from.size(); ++i) id[i] = to->Intern(from.Get(i));
  dump::DumpData& d = side->dump;
  for (dump::DumpEntry& e : d.entries) e.name = id[e.name];
  for (dump::DumpItem& it : d.items) it.key = id[it.key];
  for (dump::Field& f : d.fields) {
    f.name = id[f.name];
    if (f.value.kind == dump::ValueKind::kString || f.value.kind == dump::ValueKind::kJson) {
      f.value.string = id[f.value.string];
    }
  }
  for (dump::P2POp& op : d.p2p) {
    op.op = id[op.op];
    op.group_id = id[op.group_id];
  }
  d.entry_of.Clear();
  for (uint32_t e = 0; e < d.entries.size(); ++e) d.entry_of.Set(d.entries[e].name, e);
  dump::ConstructData& c = side->construct;
  c.edge_of.Clear();
  for (uint32_t e = 0; e < c.edges.size(); ++e) {
    c.edges[e].child = id[c.edges[e].child];
    c.edges[e].parent = id[c.edges[e].parent];
    c.edge_of.Set(c.edges[e].child, e);
  }
  dump::StackData& st = side->stacks;
  for (uint32_t& line : st.lines) line = id[line];
  IdIndex stack_of;
  st.stack_of.ForEach([&](uint32_t name, uint32_t stack) { stack_of.Set(id[name], stack); });
  st.stack_of = std::move(stack_of);
  if (side->graph) side->graph->Reintern(id, to);
  side->pool = to;
}

}  // namespace

Result<std::unique_ptr<Side>> BuildSide(const std::string& dir, StringPool* pool, const BuildOptions& options) {
  auto side = ReadSideFiles(dir, pool, options);
  if (!side.ok()) return side.error();
  SideBuilder builder(side->get(), options);
  GA_RETURN_IF_ERROR(builder.Build());
  return std::move(*side);
}

Result<SidePair> BuildSidePair(const std::string& npu_dir, const std::string& bench_dir, StringPool* pool,
                               const BuildOptions& options) {
  // The two sides are read and built on two threads, the Bench side into
  // its own pool, whose strings then move to the shared one (cheap: one
  // lookup per distinct string).
  StringPool bench_pool;
  BuildOptions bench_options = options;
  bench_options.progress = nullptr;  // progress is reported from the calling thread only
  bench_options.code_mapping = options.bench_code_mapping;
  bench_options.bench_code_mapping = nullptr;
  BuildOptions npu_options = options;
  npu_options.threads = std::max(1, options.threads / 2);
  bench_options.threads = std::max(1, options.threads - npu_options.threads);
  Result<std::unique_ptr<Side>> bench = Error{bench_dir, "", "not read"};
  BackgroundWork reader([&] { bench = BuildSide(bench_dir, &bench_pool, bench_options); });
  auto npu = BuildSide(npu_dir, pool, npu_options);
  Status thrown = reader.Join(bench_dir);  // an exception of the Bench side's thread (std::bad_alloc)
  if (!npu.ok()) return npu.error();
  GA_RETURN_IF_ERROR(thrown);
  if (!bench.ok()) return bench.error();
  SidePair pair{std::move(*npu), std::move(*bench)};
  MovePool(pair.bench.get(), pool);
  return pair;
}

}  // namespace graph_ascend::graph
