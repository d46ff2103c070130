// Writes a small Office Open XML workbook (.xlsx): one worksheet per sheet,
// a bold bordered header row, strings inline, numbers and booleans typed.
//
// Hand-written on the project's zip writer instead of linking libxlsxwriter:
// Debian ships no static archive of libxlsxwriter, and the wheel's executables
// link every dependency statically (docs/ARCHITECTURE.md, "Packaging").
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "base/status.h"

namespace graph_ascend::xlsx {

// An empty string is left as an empty cell (as pandas writes it).
using Cell = std::variant<std::monostate, std::string, double, int64_t, bool>;

struct Sheet {
  std::string name;  // at most 31 characters, none of []:*?/\ (Excel's rule)
  std::vector<std::string> header;
  std::vector<std::vector<Cell>> rows;
};

// Writes `sheets` to `path` through a temporary file renamed into place.
Status WriteWorkbook(const std::vector<Sheet>& sheets, const std::string& path);
// The bytes of that file (`path` only names it in errors).
Result<std::string> WorkbookBytes(const std::vector<Sheet>& sheets, const std::string& path);

// The column letters of a 0-based column: 0 -> "A", 26 -> "AA".
std::string ColumnName(size_t column);

}  // namespace graph_ascend::xlsx
