// result.xlsx and result.json of a pack compare.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/py_format.h"
#include "config_check/config_check.h"
#include "output/output_file.h"

namespace graph_ascend::config_check {
namespace {

std::string ResultJson(const std::vector<Sheet>& sheets) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const Sheet& s : sheets) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    rows.push_back(s.header);
    for (const auto& r : s.rows) {
      nlohmann::ordered_json row = nlohmann::ordered_json::array();
      for (const Cell& c : r) {
        if (auto t = std::get_if<std::string>(&c)) row.push_back(*t);
        else if (auto d = std::get_if<double>(&c)) row.push_back(*d);
        else if (auto i = std::get_if<int64_t>(&c)) row.push_back(*i);
        else if (auto b = std::get_if<bool>(&c)) row.push_back(*b);
        else row.push_back(nullptr);
      }
      rows.push_back(std::move(row));
    }
    out[s.name] = std::move(rows);
  }
  // Cells come from the packs as they are (a pip list is not JSON): bytes that are not UTF-8 become U+FFFD.
  return out.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

Status WriteResult(const std::vector<Sheet>& sheets, const std::string& dir) {
  std::string xlsx_path = dir + "/result.xlsx";
  auto workbook = xlsx::WorkbookBytes(sheets, xlsx_path);
  if (!workbook.ok()) return workbook.error();
  std::error_code ec;
  bool existed = std::filesystem::exists(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) return Error{dir, "", "cannot create the output folder"};
  // Both files or neither: a result.json beside a result.xlsx of another run would mislead.
  Status st = output::WriteFilesAtomically({{xlsx_path, *workbook}, {dir + "/result.json", ResultJson(sheets)}});
  if (!st.ok() && !existed) std::filesystem::remove(dir, ec);  // only if empty: a folder this run made
  return st;
}

}  // namespace graph_ascend::config_check
