// JsonReader's structure (objects, lists, keys), its checked and fast value
// reads, and its errors; strings are read in json_reader_strings.cc and the
// one-pass member reads of json.dump's layout in json_reader_members.cc.
#include "json/json_reader.h"

#include <cstdio>
#include <cstring>

#include "json/byte_scan.h"
#include "json/number_scan.h"

namespace graph_ascend::json {

using namespace scan;

namespace {

std::string Describe(std::string_view text, size_t pos) {
  if (pos >= text.size()) return "end of input";
  unsigned char c = static_cast<unsigned char>(text[pos]);
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char buf[16];
  snprintf(buf, sizeof(buf), "byte 0x%02x", c);
  return buf;
}

}  // namespace

JsonReader::JsonReader(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {
  // A UTF-8 byte order mark is allowed before the value.
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
  stack_.reserve(64);
}

Error JsonReader::ErrorAt(size_t offset, std::string message) const {
  if (offset > text_.size()) offset = text_.size();
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text_[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  std::string where = "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1) +
                      " (byte " + std::to_string(offset) + ")";
  return Error{file_, std::move(where), std::move(message)};
}

bool JsonReader::Fail(size_t offset, std::string message) {
  error_ = ErrorAt(offset, std::move(message));
  return false;
}

void JsonReader::SkipSpaceRun() {
  const char* data = text_.data();
  size_t n = text_.size();
  size_t i = pos_;
  while (i < n && IsSpace(data[i])) i = SpaceRun(data, i + 1, n);
  pos_ = i;
}

bool JsonReader::Expect(char c, const char* what) {
  SkipSpace();
  if (pos_ >= text_.size()) {
    return Fail(pos_, std::string("unexpected end of input (truncated file?), expected ") + what);
  }
  if (text_[pos_] != c) return Fail(pos_, std::string("expected ") + what + ", found " + Describe(text_, pos_));
  ++pos_;
  return true;
}

bool JsonReader::CheckDepth() {
  if (stack_.size() >= kMaxDepth) return Fail(pos_, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  return true;
}

bool JsonReader::ValueError() {
  if (pos_ >= text_.size()) return Fail(pos_, "unexpected end of input (truncated file?), expected a value");
  return Fail(pos_, "expected a value, found " + Describe(text_, pos_));
}

bool JsonReader::BeginSlow(char c, const char* what) {
  if (!CheckDepth() || !Expect(c, what)) return false;
  stack_.push_back(1);
  return true;
}

JsonReader::Step JsonReader::NextKey(std::string_view* key) {
  // json.dump's layout, `, "plain key": ` or a closing brace after white
  // space, in one pass that changes nothing until it succeeds; anything
  // else is read (or reported) by NextKeySlow from the start.
  const char* data = text_.data();
  size_t n = text_.size();
  size_t i = pos_;
  while (i < n && IsSpace(data[i])) i = SpaceRun(data, i + 1, n);
  if (i >= n || stack_.empty()) return NextKeySlow(key);
  if (data[i] == '}') {
    pos_ = i + 1;
    stack_.pop_back();
    return kEnd;
  }
  if (!stack_.back()) {
    if (data[i] != ',') return NextKeySlow(key);
    ++i;
    while (i < n && IsSpace(data[i])) i = SpaceRun(data, i + 1, n);
  }
  if (i >= n || data[i] != '"') return NextKeySlow(key);
  size_t end = PlainRun(data, i + 1, n);
  if (end + 2 >= n || data[end] != '"' || data[end + 1] != ':' || data[end + 2] != ' ') return NextKeySlow(key);
  *key = std::string_view(data + i + 1, end - i - 1);
  stack_.back() = 0;
  pos_ = end + 3;
  return kMore;
}

JsonReader::Step JsonReader::NextKeySlow(std::string_view* key) {
  SkipSpace();
  if (pos_ >= text_.size()) return Fail(pos_, "unexpected end of input (truncated file?) inside an object"), kFailed;
  char c = text_[pos_];
  if (c == '}') {
    ++pos_;
    stack_.pop_back();
    return kEnd;
  }
  if (!stack_.back()) {
    if (c != ',') return Fail(pos_, "expected ',' or '}' in an object, found " + Describe(text_, pos_)), kFailed;
    ++pos_;
    SkipSpace();
    if (pos_ >= text_.size()) return Fail(pos_, "unexpected end of input (truncated file?) inside an object"), kFailed;
    c = text_[pos_];
  }
  stack_.back() = 0;
  if (c != '"') return Fail(pos_, "expected a key string, found " + Describe(text_, pos_)), kFailed;
  if (!ParseString(&key_scratch_, key)) return kFailed;
  // The usual `": "` after a key, without the general white-space skip.
  if (pos_ + 1 < text_.size() && text_[pos_] == ':' && text_[pos_ + 1] == ' ') {
    pos_ += 2;
    return kMore;
  }
  return Expect(':', "':' after a key") ? kMore : kFailed;
}

JsonReader::Step JsonReader::NextItemSlow() {
  // Inline: this is every list's first element and end.
  const char* data = text_.data();
  size_t n = text_.size();
  while (pos_ < n && IsSpace(data[pos_])) pos_ = SpaceRun(data, pos_ + 1, n);
  if (pos_ >= text_.size()) return Fail(pos_, "unexpected end of input (truncated file?) inside a list"), kFailed;
  char c = text_[pos_];
  if (c == ']') {
    ++pos_;
    stack_.pop_back();
    return kEnd;
  }
  if (!stack_.back()) {
    if (c != ',') return Fail(pos_, "expected ',' or ']' in a list, found " + Describe(text_, pos_)), kFailed;
    ++pos_;
  }
  stack_.back() = 0;
  return kMore;
}

bool JsonReader::GetString(std::string_view* s) {
  SkipSpace();
  if (pos_ >= text_.size() || text_[pos_] != '"') {
    return Fail(pos_, "expected a string, found " + Describe(text_, pos_));
  }
  return ParseString(&value_scratch_, s);
}

bool JsonReader::GetNumber(JsonNumber* n) {
  SkipSpace();
  *n = JsonNumber();
  size_t end;
  switch (ScanNumber(text_.data(), text_.size(), pos_, n, &end)) {
    case NumberFault::kNone: pos_ = end; return true;
    case NumberFault::kNotANumber: break;
    case NumberFault::kNoFraction: return Fail(end, "expected digits after the decimal point");
    case NumberFault::kNoExponent: return Fail(end, "expected digits in the exponent");
    case NumberFault::kBad: return Fail(pos_, "bad number");
  }
  return Fail(pos_, "expected a number, found " + Describe(text_, pos_));
}

bool JsonReader::GetBool(bool* b) {
  SkipSpace();
  std::string_view rest = text_.substr(pos_);
  if (rest.substr(0, 4) == "true") {
    pos_ += 4;
    *b = true;
    return true;
  }
  if (rest.substr(0, 5) == "false") {
    pos_ += 5;
    *b = false;
    return true;
  }
  return Fail(pos_, "expected true or false, found " + Describe(text_, pos_));
}

bool JsonReader::GetNull() {
  SkipSpace();
  if (text_.substr(pos_, 4) == "null") {
    pos_ += 4;
    return true;
  }
  return Fail(pos_, "expected null, found " + Describe(text_, pos_));
}

bool JsonReader::SkipValue() {
  JsonType type;
  if (!PeekType(&type)) return false;
  switch (type) {
    case JsonType::kObject: {
      if (!BeginObject()) return false;
      std::string_view key;
      Scalar value;
      for (;;) {
        // A scalar member in one pass (numbers through the cache).
        Member member = NextScalar(&key, &value);
        if (member == Member::kEnd) return true;
        if (member == Member::kMore) continue;
        Step more = NextKey(&key);
        if (more != kMore) return more == kEnd;
        if (!SkipValue()) return false;
      }
    }
    case JsonType::kArray: {
      if (!BeginArray()) return false;
      for (;;) {
        Step more = NextItem();
        if (more != kMore) return more == kEnd;
        if (!SkipValue()) return false;
      }
    }
    case JsonType::kString: {
      std::string_view s;
      return ParseString(&value_scratch_, &s);
    }
    case JsonType::kNumber: {
      JsonNumber n;
      return GetNumber(&n);
    }
    case JsonType::kBool: {
      bool b;
      return GetBool(&b);
    }
    case JsonType::kNull: return GetNull();
  }
  return true;
}

bool JsonReader::GetCompact(std::string* out) {
  JsonType type;
  if (!PeekType(&type)) return false;
  switch (type) {
    case JsonType::kObject: {
      if (!BeginObject()) return false;
      out->push_back('{');
      std::string_view key;
      Scalar value;
      for (bool first = true;; first = false) {
        // A plain key needs no escape, and a scalar's compact text is at hand.
        Member member = NextScalar(&key, &value);
        if (member == Member::kEnd) break;
        if (member == Member::kMore) {
          if (!first) out->append(", ");
          out->push_back('"');
          out->append(key);
          out->append("\": ");
          out->append(value.compact);
          continue;
        }
        Step more = NextKey(&key);
        if (more == kFailed) return false;
        if (more == kEnd) break;
        if (!first) out->append(", ");
        AppendQuoted(key, out);
        out->append(": ");
        if (!GetCompact(out)) return false;
      }
      out->push_back('}');
      return true;
    }
    case JsonType::kArray: {
      if (CompactIntegers(out)) return true;
      if (!BeginArray()) return false;
      out->push_back('[');
      for (bool first = true;; first = false) {
        Step more = NextItem();
        if (more == kFailed) return false;
        if (more == kEnd) break;
        if (!first) out->append(", ");
        if (!GetCompact(out)) return false;
      }
      out->push_back(']');
      return true;
    }
    case JsonType::kString: {
      std::string_view s;
      if (!ParseString(&value_scratch_, &s)) return false;
      AppendQuoted(s, out);
      return true;
    }
    default: {
      size_t start = pos_;  // PeekType skipped the white space
      if (!SkipValue()) return false;
      out->append(text_.data() + start, pos_ - start);
      return true;
    }
  }
}

Status JsonReader::ExpectEnd() {
  SkipSpace();
  if (pos_ != text_.size())
    return ErrorHere("unexpected " + Describe(text_, pos_) + " after the end of the JSON value");
  return Status::Ok();
}

}  // namespace graph_ascend::json
