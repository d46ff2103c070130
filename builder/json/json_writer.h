// A streaming JSON writer with Python's json.dump(indent=4) layout:
// "key": value, 4-space indentation, ASCII escapes, empty containers as
// {} and [].
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace graph_ascend::json {

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out, int indent = 4) : out_(out), indent_(indent) {}

  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  void Key(std::string_view key);
  void String(std::string_view s);
  // A number already in JSON form ("0.2", "NaN", "3").
  void Raw(std::string_view text);
  void Bool(bool b) { Raw(b ? "true" : "false"); }
  void Null() { Raw("null"); }

 private:
  void Open(char c);
  void Close(char c);
  void BeforeValue();
  void Newline();

  std::string* out_;
  int indent_;
  struct Level {
    bool empty = true;
  };
  std::vector<Level> levels_;
  bool after_key_ = false;
};

}  // namespace graph_ascend::json
