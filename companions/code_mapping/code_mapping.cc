#include "code_mapping/code_mapping.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "base/mapped_file.h"
#include "base/strings.h"
#include "base/time_stamp.h"
#include "output/output_file.h"

namespace graph_ascend::code_mapping {

namespace fs = std::filesystem;

struct ScopeIndex::TrieNode {
  std::map<char, std::unique_ptr<TrieNode>> children;
  int node = -1;  // index into nodes_ where a key ends
};

ScopeIndex::ScopeIndex(const std::vector<IrNode>& nodes) : root_(std::make_unique<TrieNode>()), nodes_(nodes) {
  // One key per normalised scope; a later node with the same scope wins, as in msprobe.
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].scope.empty()) continue;
    std::string key = ReplaceAll(nodes_[i].scope, "/", "_");
    TrieNode* t = root_.get();
    for (char c : key) {
      auto& child = t->children[c];
      if (!child) child = std::make_unique<TrieNode>();
      t = child.get();
    }
    t->node = static_cast<int>(i);
  }
}

ScopeIndex::~ScopeIndex() = default;

ScopeIndex::Match ScopeIndex::Find(const std::string& name) const {
  Match m;
  auto append = [](std::string* out, const std::string& s) {
    if (!out->empty()) out->push_back('\n');
    out->append(s);
  };
  bool any = false;
  for (size_t i = 0; i < name.size(); ++i) {
    const TrieNode* t = root_.get();
    for (size_t j = i; j < name.size(); ++j) {
      auto it = t->children.find(name[j]);
      if (it == t->children.end()) break;
      t = it->second.get();
      if (t->node < 0) continue;
      const IrNode& n = nodes_[static_cast<size_t>(t->node)];
      std::string code;
      for (const std::string& line : n.code) append(&code, line);
      if (any) {
        m.code_stack.push_back('\n');
        m.scope_name.push_back('\n');
      }
      m.code_stack += code;
      m.scope_name += n.scope;
      any = true;
    }
  }
  return m;
}

namespace {

// One CSV field, quoted when it holds a comma, a quote or a line break.
void AppendCsvField(const std::string& s, std::string* out) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) {
    out->append(s);
    return;
  }
  out->push_back('"');
  for (char c : s) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

void AppendCsvRow(const std::vector<std::string>& fields, std::string* out) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendCsvField(fields[i], out);
  }
  out->push_back('\n');
}

// RFC 4180 records; `where` names the line of an error.
Result<std::vector<std::vector<std::string>>> ParseCsv(std::string_view text, const std::string& file) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  size_t line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field.push_back(c);
      }
      continue;
    }
    any = true;
    if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      row.push_back(std::move(field));
      field.clear();
      rows.push_back(std::move(row));
      row.clear();
      any = false;
      ++line;
    } else {
      field.push_back(c);
    }
  }
  if (quoted) return MakeError(file, "line " + std::to_string(line), "unterminated quoted field");
  if (any) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

void FindFiles(const fs::path& dir, int depth, bool npy, std::vector<fs::path>* out) {
  std::error_code ec;
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir, ec)) entries.push_back(e.path());
  std::sort(entries.begin(), entries.end());
  for (const fs::path& p : entries) {
    if (fs::is_directory(p, ec)) {
      if (depth < 9) FindFiles(p, depth + 1, npy, out);
    } else if (npy ? p.extension() == ".npy" : p.filename() == "statistic.csv") {
      out->push_back(p);
    }
  }
}

// mapping.csv beside numbered .npy files gives the name a long one was saved under.
Result<std::string> OriginalName(const fs::path& npy) {
  fs::path csv = npy.parent_path() / "mapping.csv";
  auto text = ReadFileToString(csv.string());
  if (!text.ok()) {
    return MakeError(csv.string(), "", "missing: it names the numbered file " + npy.filename().string());
  }
  auto rows = ParseCsv(*text, csv.string());
  if (!rows.ok()) return rows.error();
  for (const auto& row : *rows) {
    if (row.size() >= 2 && row[0] == npy.filename().string()) return row[1];
  }
  return MakeError(csv.string(), "", "has no row for " + npy.filename().string());
}

struct Output {
  std::string path, text;
};

// Every output staged first, then renamed into place together; a temporary
// file never outlives the command (output/output_file.h).
Status WriteAll(const std::vector<Output>& outputs) {
  std::vector<std::unique_ptr<output::StagedFile>> staged;
  for (const Output& o : outputs) {
    auto s = output::StagedFile::Write(o.path, o.text);
    if (!s.ok()) return s.error();
    staged.push_back(std::move(*s));
  }
  for (auto& s : staged) GA_RETURN_IF_ERROR(s->Commit());
  return Status::Ok();
}

// statistic.csv with the two columns added (or refreshed on a second run).
Result<std::string> MapStatistic(const fs::path& path, const ScopeIndex& index, MappingResult* result) {
  auto text = ReadFileToString(path.string());
  if (!text.ok()) return text.error();
  auto rows = ParseCsv(*text, path.string());
  if (!rows.ok()) return rows.error();
  if (rows->empty()) return MakeError(path.string(), "line 1", "empty: no header");
  std::vector<std::string> header = (*rows)[0];
  // MindSpore ends every line with a comma: an empty last field, not a column.
  bool trailing = !header.empty() && header.back().empty();
  if (trailing) header.pop_back();
  auto column = [&header](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  size_t op = column("Op Name");
  if (op == header.size()) return MakeError(path.string(), "line 1", "no \"Op Name\" column");
  for (const char* added : {"Code Stack", "Scope Name"}) {
    if (column(added) == header.size()) header.push_back(added);
  }
  size_t code_col = column("Code Stack"), scope_col = column("Scope Name");
  std::string out;
  AppendCsvRow(header, &out);
  for (size_t r = 1; r < rows->size(); ++r) {
    std::vector<std::string> row = (*rows)[r];
    if (row.size() == 1 && row[0].empty()) continue;  // a blank line
    if (trailing && !row.empty() && row.back().empty() && row.size() > header.size() - 2) row.pop_back();
    if (row.size() <= op) {
      return MakeError(path.string(), "line " + std::to_string(r + 1), "has no Op Name field");
    }
    row.resize(std::max(row.size(), header.size()));
    ScopeIndex::Match m = index.Find(ReplaceAll(row[op], "/", "_"));
    row[code_col] = m.code_stack;
    row[scope_col] = m.scope_name;
    ++result->rows;
    result->matched += m.scope_name.empty() ? 0 : 1;
    AppendCsvRow(row, &out);
  }
  return out;
}

}  // namespace

Result<MappingResult> MapDumpToCode(const MappingOptions& options) {
  std::error_code ec;
  if (!fs::is_regular_file(options.ir_path, ec)) return MakeError(options.ir_path, "", "no such IR file");
  auto nodes = ReadIr(options.ir_path);
  if (!nodes.ok()) return nodes.error();
  ScopeIndex index(*nodes);
  fs::path dump(options.dump_path);
  if (!fs::exists(dump, ec)) return MakeError(options.dump_path, "", "no such file or folder");

  std::vector<fs::path> npy, statistic;
  if (fs::is_directory(dump, ec)) {
    FindFiles(dump, 0, true, &npy);
    if (npy.empty()) FindFiles(dump, 0, false, &statistic);
  } else if (dump.extension() == ".npy") {
    npy.push_back(dump);
  } else if (dump.filename() == "statistic.csv") {
    statistic.push_back(dump);
  }
  if (npy.empty() && statistic.empty()) {
    return MakeError(options.dump_path, "", "nothing to map: no .npy file and no statistic.csv");
  }

  MappingResult result;
  std::vector<Output> outputs;
  if (!npy.empty()) {
    std::string csv;
    AppendCsvRow({"File Path", "Code Stack", "Scope Name"}, &csv);
    for (const fs::path& file : npy) {
      std::string name = file.stem().string();
      if (IsDigits(name)) {
        auto original = OriginalName(file);
        if (!original.ok()) return original.error();
        name = fs::path(*original).stem().string();
      }
      std::vector<std::string> parts = SplitDotsCopy(name);
      if (parts.size() < 2) {
        return MakeError(file.string(), "", "not a MindSpore dump name {op_type}.{op_name}....npy (no '.')");
      }
      ScopeIndex::Match m = index.Find(parts[1]);
      ++result.rows;
      result.matched += m.scope_name.empty() ? 0 : 1;
      AppendCsvRow({fs::weakly_canonical(file, ec).string(), m.code_stack, m.scope_name}, &csv);
    }
    fs::create_directories(options.output_dir, ec);
    if (!fs::is_directory(options.output_dir, ec)) {
      return MakeError(options.output_dir, "", "cannot create the output folder");
    }
    result.csv_path = (fs::path(options.output_dir) / ("code_mapping_" + LocalTimeStamp() + ".csv")).string();
    outputs.push_back({result.csv_path, csv});
  } else {
    for (const fs::path& file : statistic) {
      auto text = MapStatistic(file, index, &result);
      if (!text.ok()) return text.error();
      if (options.keep_original && !fs::exists(file.string() + ".orig", ec)) {  // a second run keeps the first copy
        auto original = ReadFileToString(file.string());
        if (!original.ok()) return original.error();
        outputs.push_back({file.string() + ".orig", *original});
      }
      outputs.push_back({file.string(), *text});
      result.statistic_files.push_back(file.string());
    }
  }
  GA_RETURN_IF_ERROR(WriteAll(outputs));
  return result;
}

}  // namespace graph_ascend::code_mapping
