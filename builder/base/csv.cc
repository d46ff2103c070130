#include "base/csv.h"

namespace graph_ascend {

Status ForEachCsvRecord(std::string_view text, const std::string& file, const std::function<Status(CsvRecord&)>& emit) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  CsvRecord record;
  std::string field;
  size_t line = 1;
  record.line = 1;
  bool quoted = false, closed = false, any = false;
  auto end_field = [&] {
    record.fields.push_back(std::move(field));
    field.clear();
    closed = false;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
        closed = true;
      } else {
        if (c == '\n') ++line;
        field.push_back(c);
      }
      continue;
    }
    any = true;
    if (c == ',') {
      end_field();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      end_field();
      GA_RETURN_IF_ERROR(emit(record));
      record = CsvRecord();
      record.line = ++line;
      any = false;
    } else if (closed) {
      return MakeError(file, "line " + std::to_string(line), "text after the closing quote of a field");
    } else if (c == '"' && field.empty()) {
      quoted = true;
    } else {
      field.push_back(c);  // a quote inside an unquoted field is kept, as Python's csv does
    }
  }
  if (quoted) return MakeError(file, "line " + std::to_string(record.line), "unterminated quoted field");
  if (any) {
    end_field();
    GA_RETURN_IF_ERROR(emit(record));
  }
  return Status::Ok();
}

Result<std::vector<CsvRecord>> ParseCsv(std::string_view text, const std::string& file) {
  std::vector<CsvRecord> records;
  GA_RETURN_IF_ERROR(ForEachCsvRecord(text, file, [&records](CsvRecord& r) {
    records.push_back(std::move(r));
    return Status::Ok();
  }));
  return records;
}

namespace {

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

}  // namespace

void AppendCsvRow(const std::vector<std::string>& fields, std::string* out) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendCsvField(fields[i], out);
  }
  out->push_back('\n');
}

}  // namespace graph_ascend
