// A pull parser for the JSON that msprobe writes.
//
// Reads in place over a contiguous buffer (usually a MappedFile) without
// building a document, so multi-gigabyte dump.json files parse in one pass
// with bounded memory. Accepts Python's json.dump dialect: the bare literals
// NaN, Infinity and -Infinity. Every error names the file and the line,
// column and byte offset.
//
// Usage:
//   JsonReader r(text, path);
//   GA_RETURN_IF_ERROR(r.EnterObject());
//   std::string_view key;
//   for (;;) {
//     auto more = r.NextMember(&key);
//     if (!more.ok()) return more.error();
//     if (!*more) break;
//     ... read or Skip() the value ...
//   }
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace graph_ascend::json {

enum class JsonType { kObject, kArray, kString, kNumber, kBool, kNull };

struct JsonNumber {
  bool is_integer = false;  // written without fraction or exponent and fits int64
  int64_t integer = 0;
  double number = 0;        // always set (NaN / +-Inf for the literals)
};

class JsonReader {
 public:
  JsonReader(std::string_view text, std::string file);

  // The type of the next value; an error at the end of input or on a
  // character that cannot start a value.
  Result<JsonType> Peek();

  Status EnterObject();
  // Moves to the next member of the innermost object: true with its key, or
  // false after consuming the closing brace. `key` stays valid until the
  // next NextMember call.
  Result<bool> NextMember(std::string_view* key);

  Status EnterArray();
  // True when another element follows, false after consuming ']'.
  Result<bool> NextElement();

  // The string's unescaped text; valid until the next ReadString.
  Result<std::string_view> ReadString();
  Result<JsonNumber> ReadNumber();
  Result<bool> ReadBool();
  Status ReadNull();
  // Skips one value of any type.
  Status Skip();
  // Reads one value as compact JSON text (strings re-escaped minimally).
  Status ReadCompact(std::string* out);
  // Requires that only white space remains.
  Status ExpectEnd();

  // Returns to an earlier position; `depth` is depth() at that position.
  void Rewind(size_t offset, size_t depth) {
    pos_ = offset;
    stack_.resize(depth);
  }

  size_t offset() const { return pos_; }
  size_t depth() const { return stack_.size(); }
  const std::string& file() const { return file_; }

  // An error at `offset`: "line L, column C (byte B)".
  Error ErrorAt(size_t offset, std::string message) const;
  Error ErrorHere(std::string message) const { return ErrorAt(pos_, std::move(message)); }

 private:
  void SkipSpace();
  Status Expect(char c, const char* what);
  Result<std::string_view> ParseString(std::string* scratch);
  Status CheckDepth();

  std::string_view text_;
  std::string file_;
  size_t pos_ = 0;
  // Per open container: whether its first element is still to come.
  std::vector<bool> stack_;
  std::string key_scratch_;
  std::string value_scratch_;
};

// Writes `s` as a JSON string literal (with quotes) to `out`.
void AppendQuoted(std::string_view s, std::string* out, bool ascii_only = false);

}  // namespace graph_ascend::json
