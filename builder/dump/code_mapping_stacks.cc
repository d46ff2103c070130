#include "dump/code_mapping_stacks.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "base/csv.h"
#include "base/mapped_file.h"
#include "base/strings.h"

namespace graph_ascend::dump {

namespace {

constexpr size_t kNoColumn = static_cast<size_t>(-1);

size_t ColumnOf(const std::vector<std::string>& header, std::string_view name) {
  auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? kNoColumn : static_cast<size_t>(it - header.begin());
}

// The "In file ..." lines of a Code Stack field (code_mapping's markers such as
// "Corresponding forward node candidate:" are left out).
std::vector<std::string> CodeLines(std::string_view field) {
  std::vector<std::string> lines;
  for (std::string_view line : Split(field, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (StartsWith(line, "In file ")) lines.emplace_back(line);
  }
  return lines;
}

// "Cell.{path}.{Class}.{forward|backward}.{n}" -> "{path}|{Class}|f" (or "|b").
bool CellKey(std::string_view name, std::string* key) {
  if (!StartsWith(name, "Cell.")) return false;
  std::vector<std::string_view> seg = SplitDots(name);
  size_t n = seg.size();
  if (n < 5 || !IsDigits(seg[n - 1])) return false;
  bool backward = seg[n - 2] == "backward";
  if (!backward && seg[n - 2] != "forward") return false;
  key->clear();
  for (size_t i = 1; i + 3 < n; ++i) {
    if (i > 1) key->push_back('.');
    key->append(seg[i]);
  }
  key->append("|").append(seg[n - 3]).append(backward ? "|b" : "|f");
  return true;
}

// The cells of a scope: its "{attribute}-{Class}" segments before the kernel's own.
struct CellChain {
  std::vector<std::string_view> attr, cls;
  bool backward = false;
};

CellChain ChainOf(std::string_view scope) {
  CellChain c;
  std::vector<std::string_view> seg = Split(scope, '/');
  c.backward = !seg.empty() && seg[0] == "Gradients";
  for (size_t i = 0; i + 1 < seg.size(); ++i) {
    size_t dash = seg[i].find('-');
    if (dash == std::string_view::npos || dash == 0 || dash + 1 == seg[i].size()) continue;
    c.attr.push_back(seg[i].substr(0, dash));
    c.cls.push_back(seg[i].substr(dash + 1));
  }
  return c;
}

}  // namespace

Result<CodeMapping> ReadCodeMapping(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  CodeMapping out;
  out.path = path;
  size_t code_col = kNoColumn, scope_col = kNoColumn;
  bool header = true;
  std::unordered_map<std::string, size_t> scope_index;
  Status read = ForEachCsvRecord(file->text(), path, [&](CsvRecord& r) -> Status {
    if (header) {
      header = false;
      code_col = ColumnOf(r.fields, "Code Stack");
      scope_col = ColumnOf(r.fields, "Scope Name");
      if (code_col == kNoColumn || scope_col == kNoColumn) {
        return MakeError(path, "line " + std::to_string(r.line),
                         "no \"Code Stack\" and \"Scope Name\" columns: not a code_mapping result "
                         "(code_mapping_<time>.csv, or a statistic.csv that code_mapping added them to)");
      }
      return Status::Ok();
    }
    if (r.fields.size() == 1 && r.fields[0].empty()) return Status::Ok();  // a blank line
    if (r.fields.size() <= std::max(code_col, scope_col)) {
      return MakeError(path, "line " + std::to_string(r.line),
                       "has " + std::to_string(r.fields.size()) + " fields: no \"Code Stack\" / \"Scope Name\" field");
    }
    ++out.rows;
    // Several scopes found in one dump name are '\n'-joined; the last is the longest match.
    std::vector<std::string_view> scopes = Split(r.fields[scope_col], '\n');
    while (!scopes.empty() && scopes.back().empty()) scopes.pop_back();
    if (scopes.empty()) {
      ++out.rows_without_scope;
      return Status::Ok();
    }
    std::string scope(scopes.back());
    if (!scope.empty() && scope.back() == '\r') scope.pop_back();
    if (scope_index.emplace(scope, out.scopes.size()).second) {
      out.scopes.push_back({std::move(scope), CodeLines(r.fields[code_col])});
    }
    return Status::Ok();
  });
  GA_RETURN_IF_ERROR(read);
  if (header) return MakeError(path, "line 1", "empty: no header");
  if (out.rows == 0) return MakeError(path, "", "no data rows");
  if (out.scopes.empty()) {
    return MakeError(path, "",
                     "none of its " + std::to_string(out.rows) +
                         " rows has a scope (the IR given to code_mapping did not match that dump)");
  }
  return out;
}

size_t AddCodeMappingStacks(const CodeMapping& mapping, const ConstructData& construct, const DumpData& dump,
                            StringPool* pool, StackData* stacks) {
  // The Cell nodes by "{path}|{Class}|{f|b}".
  struct Target {
    std::vector<uint32_t> names;
    std::vector<std::string> common;  // the code lines shared by its kernels so far
    bool seen = false;
  };
  std::vector<Target> targets;
  std::unordered_map<std::string, size_t> target_of;
  std::unordered_set<uint32_t> named;
  std::string key;
  auto add = [&](uint32_t name) {
    if (!named.insert(name).second || !CellKey(pool->Get(name), &key)) return;
    auto [it, inserted] = target_of.emplace(key, targets.size());
    if (inserted) targets.emplace_back();
    targets[it->second].names.push_back(name);
  };
  for (const ConstructData::Edge& e : construct.edges) {
    add(e.child);
    if (e.parent != 0) add(e.parent);
  }
  for (const DumpEntry& e : dump.entries) add(e.name);
  if (targets.empty()) return 0;

  // Every (scope, cell) pair where the cell's path is a run of the scope's cells; the cells above
  // the run are the prefix, which is voted on.
  struct Hit {
    size_t prefix, scope, target;
  };
  std::vector<Hit> hits;
  std::unordered_map<std::string, size_t> prefix_id;
  std::vector<std::unordered_set<size_t>> prefix_targets;
  std::string prefix, probe;
  for (size_t s = 0; s < mapping.scopes.size(); ++s) {
    CellChain c = ChainOf(mapping.scopes[s].scope);
    prefix.clear();
    for (size_t i = 0; i < c.attr.size(); ++i) {
      if (i > 0) prefix.append("/").append(c.attr[i - 1]).append("-").append(c.cls[i - 1]);
      key.clear();
      for (size_t j = i; j < c.attr.size(); ++j) {
        if (j > i) key.push_back('.');
        key.append(c.attr[j]);
        probe.assign(key).append("|").append(c.cls[j]).append(c.backward ? "|b" : "|f");
        auto t = target_of.find(probe);
        if (t == target_of.end()) continue;
        auto [p, inserted] = prefix_id.emplace(prefix, prefix_targets.size());
        if (inserted) prefix_targets.emplace_back();
        prefix_targets[p->second].insert(t->second);
        hits.push_back({p->second, s, t->second});
      }
    }
  }
  if (hits.empty()) return 0;
  size_t best = 0;
  for (size_t p = 1; p < prefix_targets.size(); ++p) {
    if (prefix_targets[p].size() > prefix_targets[best].size()) best = p;
  }

  for (const Hit& h : hits) {
    if (h.prefix != best) continue;
    Target& t = targets[h.target];
    const std::vector<std::string>& lines = mapping.scopes[h.scope].lines;
    if (!t.seen) {
      t.common = lines;
      t.seen = true;
      continue;
    }
    size_t n = 0;
    while (n < t.common.size() && n < lines.size() && t.common[n] == lines[n]) ++n;
    if (n > 0) t.common.resize(n);  // no line in common: the first kernel's stack stays
  }
  size_t given = 0;
  for (const Target& t : targets) {
    if (!t.seen || t.common.empty()) continue;
    StackData::Range range{static_cast<uint32_t>(stacks->lines.size()), static_cast<uint32_t>(t.common.size())};
    for (const std::string& line : t.common) stacks->lines.push_back(pool->Intern(line));
    uint32_t id = static_cast<uint32_t>(stacks->stacks.size());
    stacks->stacks.push_back(range);
    for (uint32_t name : t.names) {
      const StackData::Range* old = stacks->Find(name);
      if (old != nullptr && old->count > 0) continue;  // stack.json's own stack wins
      stacks->stack_of.Set(name, id);
      ++given;
    }
  }
  return given;
}

}  // namespace graph_ascend::dump
