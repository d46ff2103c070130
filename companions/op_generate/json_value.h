// A small JSON document for the one API entry op_generate handles.
//
// Numbers keep the text they were written with, so an entry read from a
// dump.json and written back (JsonValue::Write) is what Python's
// json.dump(indent=4) writes for the same data; NaN and Infinity survive.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "json/json_reader.h"

namespace graph_ascend::op_generate {

struct JsonValue {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  std::string text;  // the number as written, the unescaped string, "true"/"false"
  std::vector<JsonValue> items;                            // kArray
  std::vector<std::pair<std::string, JsonValue>> members;  // kObject, in file order

  bool is_object() const { return type == Type::kObject; }
  bool is_array() const { return type == Type::kArray; }
  bool is_string() const { return type == Type::kString; }
  bool is_null() const { return type == Type::kNull; }
  // The member named `key` of an object, or nullptr.
  const JsonValue* Find(const std::string& key) const;
  JsonValue* Find(const std::string& key);
  // The member's string, or "" when it is absent or not a string.
  std::string StringOr(const std::string& key, const std::string& fallback = "") const;

  static JsonValue String(std::string s);

  // Reads the next value of `reader`.
  static Result<JsonValue> Read(json::JsonReader* reader);
  // Appends the value in json.dump(indent=4) layout.
  void Write(std::string* out) const;
  // Appends the value as a Python literal (None, True, math.nan ...), one
  // line per container element below `indent` levels.
  void WritePython(std::string* out, int indent = 0) const;
};

}  // namespace graph_ascend::op_generate
