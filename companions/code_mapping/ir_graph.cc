#include "code_mapping/ir_graph.h"

#include <map>
#include <regex>

#include "base/mapped_file.h"
#include "base/strings.h"

namespace graph_ascend::code_mapping {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// "%12(name) = Op(" at the start of a (trimmed) line.
bool ParseNodeLine(std::string_view line, IrNode* node) {
  if (line.size() < 2 || line[0] != '%' || line[1] < '0' || line[1] > '9') return false;
  size_t open = line.find('(');
  if (open == std::string_view::npos) return false;
  for (size_t i = 1; i < open; ++i) {
    if (line[i] < '0' || line[i] > '9') return false;
  }
  size_t close = line.find(')', open);
  if (close == std::string_view::npos) return false;
  std::string_view rest = Trim(line.substr(close + 1));
  if (rest.empty() || rest[0] != '=') return false;
  rest = Trim(rest.substr(1));
  size_t call = rest.find('(');
  if (call == std::string_view::npos || call == 0) return false;
  node->variable = std::string(line.substr(open + 1, close - open - 1));
  node->op = std::string(rest.substr(0, call));
  return true;
}

// The value of "# ... scope ...: (VALUE)" comment lines.
bool ParseScopeLine(std::string_view comment, std::string* scope) {
  std::string_view body = Trim(comment.substr(1));
  size_t key = body.find("scope");
  size_t colon = body.find(':');
  if (key == std::string_view::npos || colon == std::string_view::npos || colon < key) return false;
  std::string_view value = Trim(body.substr(colon + 1));
  if (value.size() < 2 || value.front() != '(' || value.back() != ')') return false;
  *scope = std::string(value.substr(1, value.size() - 2));
  return true;
}

std::string UniqueId(std::string_view line) {
  static const std::regex kId("(?:forward_unique_id|unique_id):\\s*\"(\\d+)\"");
  std::match_results<std::string_view::const_iterator> m;
  if (line.find("cnode_primal_attrs") == std::string_view::npos) return "";
  if (std::regex_search(line.begin(), line.end(), m, kId)) return m[1].str();
  return "";
}

}  // namespace

Result<std::vector<IrNode>> ParseIr(std::string_view text, const std::string& file) {
  std::vector<IrNode> nodes;
  bool header = false;
  IrNode* current = nullptr;
  bool in_code = false;  // inside the comment lines right after the current node's scope
  size_t line_no = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_no;
    std::string_view t = Trim(line);
    if (StartsWith(t, "# IR entry: @")) header = true;
    IrNode node;
    if (ParseNodeLine(t, &node)) {
      node.unique_id = UniqueId(t);
      nodes.push_back(std::move(node));
      current = &nodes.back();
      in_code = false;
      continue;
    }
    if (current == nullptr) continue;
    if (!t.empty() && t[0] == '#') {
      if (in_code) {
        std::string_view code = t.substr(1);
        while (!code.empty() && (code.front() == ' ' || code.front() == '#')) code.remove_prefix(1);
        while (!code.empty() && code.back() == '/') code.remove_suffix(1);
        current->code.emplace_back(code);
      } else if (current->scope.empty() && ParseScopeLine(t, &current->scope)) {
        in_code = true;
      }
      continue;
    }
    in_code = false;
    // Attributes may continue on the lines below the node ("cnode_primal_attrs: {...}").
    if (current->unique_id.empty()) current->unique_id = UniqueId(t);
    if (t == "}") current = nullptr;
  }
  if (!header && nodes.empty()) {
    return MakeError(file, "line 1", "not a MindSpore IR file: no '# IR entry' line and no '%N(name) = Op(' node");
  }
  std::map<std::string, const IrNode*> forward;
  for (const IrNode& n : nodes) {
    if (!n.unique_id.empty() && !n.scope.empty() && !StartsWith(n.scope, "Gradients")) forward[n.unique_id] = &n;
  }
  for (IrNode& n : nodes) {
    if (!StartsWith(n.scope, "Gradients") || n.unique_id.empty()) continue;
    auto it = forward.find(n.unique_id);
    if (it != forward.end()) n.code = it->second->code;
  }
  return nodes;
}

Result<std::vector<IrNode>> ReadIr(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  return ParseIr(file->text(), path);
}

}  // namespace graph_ascend::code_mapping
