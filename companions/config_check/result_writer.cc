// result.xlsx (libxlsxwriter) and result.json of a pack compare.
#include <unistd.h>
#include <xlsxwriter.h>

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

Status Commit(const std::string& tmp, const std::string& path) {
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = strerror(errno);
    unlink(tmp.c_str());
    return Error{path, "", "cannot write: " + why};
  }
  return Status::Ok();
}

Status WriteXlsx(const std::vector<Sheet>& sheets, const std::string& path) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  lxw_workbook* wb = workbook_new(tmp.c_str());
  if (!wb) return Error{path, "", "cannot create the workbook"};
  lxw_format* bold = workbook_add_format(wb);
  format_set_bold(bold);
  format_set_border(bold, LXW_BORDER_THIN);
  for (const Sheet& s : sheets) {
    lxw_worksheet* ws = workbook_add_worksheet(wb, s.name.c_str());
    for (size_t c = 0; c < s.header.size(); ++c) {
      worksheet_write_string(ws, 0, static_cast<lxw_col_t>(c), s.header[c].c_str(), bold);
    }
    for (size_t r = 0; r < s.rows.size(); ++r) {
      auto row = static_cast<lxw_row_t>(r + 1);
      for (size_t c = 0; c < s.rows[r].size(); ++c) {
        auto col = static_cast<lxw_col_t>(c);
        const Cell& cell = s.rows[r][c];
        if (auto t = std::get_if<std::string>(&cell)) {
          // msprobe (pandas) leaves empty strings as empty cells too.
          if (!t->empty()) worksheet_write_string(ws, row, col, t->c_str(), nullptr);
        } else if (auto d = std::get_if<double>(&cell)) {
          worksheet_write_number(ws, row, col, *d, nullptr);
        } else if (auto i = std::get_if<int64_t>(&cell)) {
          worksheet_write_number(ws, row, col, static_cast<double>(*i), nullptr);
        } else if (auto b = std::get_if<bool>(&cell)) {
          worksheet_write_boolean(ws, row, col, *b, nullptr);
        }
      }
    }
  }
  lxw_error err = workbook_close(wb);
  if (err != LXW_NO_ERROR) {
    unlink(tmp.c_str());
    return Error{path, "", std::string("cannot write the workbook: ") + lxw_strerror(err)};
  }
  return Commit(tmp, path);
}

Status WriteJson(const std::vector<Sheet>& sheets, const std::string& path) {
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
  return output::WriteFileAtomically(path, out.dump(1) + "\n", true);
}

}  // namespace

Status WriteResult(const std::vector<Sheet>& sheets, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) return Error{dir, "", "cannot create the output folder"};
  GA_RETURN_IF_ERROR(WriteXlsx(sheets, dir + "/result.xlsx"));
  return WriteJson(sheets, dir + "/result.json");
}

}  // namespace graph_ascend::config_check
