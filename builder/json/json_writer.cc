#include "json/json_writer.h"

#include "json/json_reader.h"

namespace graph_ascend::json {

void JsonWriter::Newline() {
  out_->push_back('\n');
  out_->append(levels_.size() * static_cast<size_t>(indent_), ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  if (!levels_.back().empty) out_->push_back(',');
  levels_.back().empty = false;
  Newline();
}

void JsonWriter::Open(char c) {
  BeforeValue();
  out_->push_back(c);
  levels_.push_back(Level{});
}

void JsonWriter::Close(char c) {
  bool empty = levels_.back().empty;
  levels_.pop_back();
  if (!empty) Newline();
  out_->push_back(c);
}

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  AppendQuoted(key, out_, true);
  out_->append(": ");
  after_key_ = true;
}

void JsonWriter::String(std::string_view s) {
  BeforeValue();
  AppendQuoted(s, out_, true);
}

void JsonWriter::Raw(std::string_view text) {
  BeforeValue();
  out_->append(text);
}

}  // namespace graph_ascend::json
