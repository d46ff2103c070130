// RFC 4180 CSV text, as msprobe's and MindSpore's tools write it (pandas,
// Python's csv module): comma-separated fields, double quotes around a field
// that holds a comma, a quote ("" inside) or a line break; LF or CRLF.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace graph_ascend {

struct CsvRecord {
  size_t line = 0;  // 1-based line where the record starts
  std::vector<std::string> fields;
};

// Calls `record` for each record of `text` in order (the record may be
// moved from); stops at the first error, or when `record` returns one.
Status ForEachCsvRecord(std::string_view text, const std::string& file,
                        const std::function<Status(CsvRecord&)>& record);

// Every record of `text` (a UTF-8 byte order mark first is skipped; a
// blank line is a record of one empty field). Errors name `file` and the
// line: an unterminated quoted field, text after a closing quote.
Result<std::vector<CsvRecord>> ParseCsv(std::string_view text, const std::string& file);

// Appends one record, quoting only the fields that need it, and "\n".
void AppendCsvRow(const std::vector<std::string>& fields, std::string* out);

}  // namespace graph_ascend
