#include "xlsx/xlsx_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "output/output_file.h"
#include "zip/zip_writer.h"

namespace graph_ascend::xlsx {
namespace {

// The length of the well-formed UTF-8 sequence at s[i] (1-4) that XML 1.0
// can hold, or 0 (a stray byte, an overlong form, a surrogate, U+FFFE/FFFF).
size_t Utf8Length(const std::string& s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, cp = c & 0x1f;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, cp = c & 0x0f;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, cp = c & 0x07;
  } else {
    return 0;
  }
  if (n > s.size() - i) return 0;
  for (size_t k = 1; k < n; ++k) {
    auto d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (d & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff))) return 0;
  if ((cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff) return 0;
  return n;
}

// Text as XML character data: markup escaped, the control characters XML 1.0
// cannot hold dropped, bytes that are not UTF-8 as U+FFFD (a pack's values
// are arbitrary strings).
void AppendEscaped(const std::string& s, std::string* out) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = Utf8Length(s, i);
    if (n == 0) {
      *out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if (n > 1) {
      out->append(s, i, n);
      i += n;
      continue;
    }
    switch (c) {
      case '&': *out += "&amp;"; break;
      case '<': *out += "&lt;"; break;
      case '>': *out += "&gt;"; break;
      case '"': *out += "&quot;"; break;
      default:
        if (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') out->push_back(static_cast<char>(c));
    }
    ++i;
  }
}

void AppendInlineString(const std::string& ref, const std::string& text, int style, std::string* out) {
  *out += "<c r=\"" + ref + "\" t=\"inlineStr\"";
  if (style) *out += " s=\"" + std::to_string(style) + "\"";
  *out += "><is><t xml:space=\"preserve\">";
  AppendEscaped(text, out);
  *out += "</t></is></c>";
}

void AppendCell(const std::string& ref, const Cell& cell, std::string* out) {
  if (auto t = std::get_if<std::string>(&cell)) {
    if (!t->empty()) AppendInlineString(ref, *t, 0, out);
  } else if (auto d = std::get_if<double>(&cell)) {
    // A cell value cannot be NaN or infinite: those are written as text.
    if (!std::isfinite(*d)) {
      AppendInlineString(ref, std::isnan(*d) ? "nan" : (*d > 0 ? "inf" : "-inf"), 0, out);
      return;
    }
    char buf[32];
    snprintf(buf, sizeof(buf), "%.17g", *d);
    *out += "<c r=\"" + ref + "\"><v>" + buf + "</v></c>";
  } else if (auto i = std::get_if<int64_t>(&cell)) {
    *out += "<c r=\"" + ref + "\"><v>" + std::to_string(*i) + "</v></c>";
  } else if (auto b = std::get_if<bool>(&cell)) {
    *out += "<c r=\"" + ref + "\" t=\"b\"><v>" + (*b ? "1" : "0") + "</v></c>";
  }
}

std::string WorksheetXml(const Sheet& sheet) {
  std::string out =
      "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
      "<worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\"><sheetData>";
  out += "<row r=\"1\">";
  for (size_t c = 0; c < sheet.header.size(); ++c) AppendInlineString(ColumnName(c) + "1", sheet.header[c], 1, &out);
  out += "</row>";
  for (size_t r = 0; r < sheet.rows.size(); ++r) {
    std::string row = std::to_string(r + 2);
    out += "<row r=\"" + row + "\">";
    for (size_t c = 0; c < sheet.rows[r].size(); ++c) AppendCell(ColumnName(c) + row, sheet.rows[r][c], &out);
    out += "</row>";
  }
  return out + "</sheetData></worksheet>";
}

Status CheckName(const std::string& path, const std::string& name) {
  if (name.empty() || name.size() > 31 || name.find_first_of("[]:*?/\\") != std::string::npos) {
    return Error{path, "sheet '" + name + "'", "not a valid sheet name (1-31 characters, none of []:*?/\\)"};
  }
  return Status::Ok();
}

constexpr char kStyles[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<styleSheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\">"
    "<fonts count=\"2\"><font><sz val=\"11\"/><name val=\"Calibri\"/></font>"
    "<font><b/><sz val=\"11\"/><name val=\"Calibri\"/></font></fonts>"
    "<fills count=\"2\"><fill><patternFill patternType=\"none\"/></fill>"
    "<fill><patternFill patternType=\"gray125\"/></fill></fills>"
    "<borders count=\"2\"><border><left/><right/><top/><bottom/><diagonal/></border>"
    "<border><left style=\"thin\"/><right style=\"thin\"/><top style=\"thin\"/><bottom style=\"thin\"/><diagonal/>"
    "</border></borders>"
    "<cellStyleXfs count=\"1\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\"/></cellStyleXfs>"
    "<cellXfs count=\"2\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\"/>"
    "<xf numFmtId=\"0\" fontId=\"1\" fillId=\"0\" borderId=\"1\" xfId=\"0\" applyFont=\"1\" applyBorder=\"1\"/>"
    "</cellXfs><cellStyles count=\"1\"><cellStyle name=\"Normal\" xfId=\"0\" builtinId=\"0\"/></cellStyles>"
    "</styleSheet>";

}  // namespace

std::string ColumnName(size_t column) {
  std::string name;
  for (size_t c = column + 1; c > 0; c = (c - 1) / 26) name.insert(name.begin(), static_cast<char>('A' + (c - 1) % 26));
  return name;
}

Result<std::string> WorkbookBytes(const std::vector<Sheet>& sheets, const std::string& path) {
  std::string types =
      "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
      "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
      "<Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
      "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
      "<Override PartName=\"/xl/workbook.xml\" "
      "ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/>"
      "<Override PartName=\"/xl/styles.xml\" "
      "ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml\"/>";
  std::string workbook =
      "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
      "<workbook xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" "
      "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\"><sheets>";
  std::string rels =
      "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
      "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">";
  std::vector<std::pair<std::string, std::string>> members;
  for (size_t i = 0; i < sheets.size(); ++i) {
    GA_RETURN_IF_ERROR(CheckName(path, sheets[i].name));
    std::string n = std::to_string(i + 1);
    types += "<Override PartName=\"/xl/worksheets/sheet" + n +
             ".xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml\"/>";
    workbook += "<sheet name=\"";
    AppendEscaped(sheets[i].name, &workbook);
    workbook += "\" sheetId=\"" + n + "\" r:id=\"rId" + n + "\"/>";
    rels += "<Relationship Id=\"rId" + n +
            "\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet\" "
            "Target=\"worksheets/sheet" + n + ".xml\"/>";
    members.emplace_back("xl/worksheets/sheet" + n + ".xml", WorksheetXml(sheets[i]));
  }
  rels += "<Relationship Id=\"rIdStyles\" "
          "Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles\" "
          "Target=\"styles.xml\"/></Relationships>";
  members.emplace_back("[Content_Types].xml", types + "</Types>");
  members.emplace_back("_rels/.rels",
                       "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
                       "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
                       "<Relationship Id=\"rId1\" "
                       "Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" "
                       "Target=\"xl/workbook.xml\"/></Relationships>");
  members.emplace_back("xl/workbook.xml", workbook + "</sheets></workbook>");
  members.emplace_back("xl/_rels/workbook.xml.rels", rels);
  members.emplace_back("xl/styles.xml", kStyles);
  // The package parts first, as Excel writes them (readers do not depend on it).
  std::rotate(members.begin(), members.end() - 5, members.end());
  return zip::ZipBytes(path, members);
}

Status WriteWorkbook(const std::vector<Sheet>& sheets, const std::string& path) {
  auto bytes = WorkbookBytes(sheets, path);
  if (!bytes.ok()) return bytes.error();
  return output::WriteFileAtomically(path, *bytes, true);
}

}  // namespace graph_ascend::xlsx
