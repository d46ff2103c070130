// A pull parser for the JSON that msprobe writes.
//
// Reads in place over a contiguous buffer (usually a MappedFile) without
// building a document, so multi-gigabyte dump.json files parse in one pass
// with bounded memory. Accepts Python's json.dump dialect: the bare literals
// NaN, Infinity and -Infinity. Every error names the file and the line,
// column and byte offset.
//
// Two interfaces over one tokenizer:
//  * the checked one (Peek, EnterObject, NextMember, ReadString, ...) returns
//    a Status or Result per call;
//  * the fast one (PeekByte, BeginObject, NextKey, GetString, ...) returns a
//    bool (or a Step) and on failure records the error, which error() then
//    holds: hot loops (dump.json) pay no Result per token. After a failure
//    the caller stops; the reader is not meant to continue.
// Both give the same errors at the same offsets.
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

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace graph_ascend::json {

enum class JsonType { kObject, kArray, kString, kNumber, kBool, kNull };

struct JsonNumber {
  bool is_integer = false;  // written without fraction or exponent and fits int64
  int64_t integer = 0;
  double number = 0;  // always set (NaN / +-Inf for the literals)
};

class JsonReader {
 public:
  JsonReader(std::string_view text, std::string file);

  // ---- The fast interface ----

  // What NextKey / NextItem found.
  enum Step : int8_t { kFailed = -1, kEnd = 0, kMore = 1 };

  // Skips white space and returns the next byte without consuming it; '\0'
  // at the end of input (and for a NUL byte: PeekType tells them apart).
  char PeekByte() {
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  // The type of the next value; false where no value can start (`type` is
  // then kNull: set on every path, so callers' variables are never read unset).
  bool PeekType(JsonType* type) {
    switch (PeekByte()) {
      case '{': *type = JsonType::kObject; return true;
      case '[': *type = JsonType::kArray; return true;
      case '"': *type = JsonType::kString; return true;
      case 't':
      case 'f': *type = JsonType::kBool; return true;
      case 'n': *type = JsonType::kNull; return true;
      case 'N':
      case 'I':
      case '-':
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9': *type = JsonType::kNumber; return true;
      default: *type = JsonType::kNull; return ValueError();
    }
  }
  bool BeginObject() {
    // The usual case: the brace at once (the caller peeked at it).
    if (pos_ < text_.size() && text_[pos_] == '{' && stack_.size() < kMaxDepth) {
      ++pos_;
      stack_.push_back(1);
      return true;
    }
    return BeginSlow('{', "'{' (an object)");
  }
  // kMore with the next member's key (valid until the next NextKey), kEnd
  // after consuming the closing brace.
  Step NextKey(std::string_view* key);
  // A scalar member value, as NextScalar reads it.
  struct Scalar {
    JsonType type = JsonType::kNull;  // kNull, kBool, kNumber, kString, or kArray (a list of integers)
    bool boolean = false;
    // kArray: the same for two lists of the same text read in a row by
    // the functions that give a Scalar (a list is often the one before it
    // again: consecutive tensors of one shape), so that what a caller
    // made of the one it can keep for the other.
    uint64_t list_serial = 0;
    JsonNumber number;
    // kString: its characters (a view into the input); kArray: the list's
    // compact text (as GetCompact writes it), valid until the next call.
    std::string_view text;
    // The value as GetCompact writes it (its bytes in the input, but for a
    // list), valid until the next call.
    std::string_view compact;
  };
  enum class Member : int8_t { kOther = -1, kEnd = 0, kMore = 1 };
  // The bytes of a member before its value (the comma, line break and
  // indent, the key and `": `) as NextScalar read them, so that NextKnownRun
  // can recognise the same member again in one compare: json.dump repeats
  // them for every leaf of a dump.
  class MemberHead {
   public:
    bool empty() const { return size_ == 0; }

   private:
    friend class JsonReader;
    char bytes_[32] = {};
    uint8_t size_ = 0;    // 0 when none (or longer than bytes_)
    bool comma_ = false;  // read after a member (not first in its object)
  };
  // The next member of an object when json.dump's layout makes it cheap to
  // read in one pass: a key without escapes, `": ` and a value that is null,
  // a boolean, a number (NaN, Infinity and -Infinity included), a string
  // without escapes or non-ASCII bytes, or a list of integers. kMore with
  // the key (a view into the input) and the value, kEnd after consuming the
  // closing brace, kOther when the member is anything else, damaged
  // included: nothing is consumed, and NextKey and the Get functions read
  // it (or report its error) as usual. With `head`, kMore also sets it to
  // this member's head.
  Member NextScalar(std::string_view* key, Scalar* value, MemberHead* head = nullptr);
  // Reads members while the next one starts with exactly the bytes of
  // heads[k] (k = 0, 1, ... below `count`; its key is then head's) and has
  // a value NextScalar reads, into values[k]; sets *read to how many. kEnd
  // when the object's closing brace follows them (consumed), kOther when
  // not (the next member is left unread).
  Member NextKnownRun(const MemberHead* heads, size_t count, Scalar* values, size_t* read);
  // The bytes from the '{' at the reader's position through the first '}'
  // after it when that is within `limit` bytes (all of an object with no
  // object inside, if it is one); empty otherwise.
  std::string_view FlatObjectAhead(size_t limit) const {
    if (pos_ >= text_.size() || text_[pos_] != '{') return {};
    const char* at = text_.data() + pos_;
    const void* close = memchr(at, '}', std::min(limit, text_.size() - pos_));
    return close == nullptr ? std::string_view() : std::string_view(at, static_cast<const char*>(close) - at + 1);
  }
  // Where the object or list at the reader's position ends (the offset
  // past its closing bracket) as a scan of brackets and quotes sees it, or
  // 0 when the scan gives up (an escape, nesting deeper than `max_depth`,
  // the end of input). Nothing is checked: a caller that skips the value so
  // must read it properly later, or read it again when what follows fails.
  size_t ContainerEndAhead(size_t max_depth) const;
  // Consumes the next `size` bytes, which the caller has recognised as a
  // whole value this reader read before, byte for byte, at the same depth
  // (or as ContainerEndAhead saw it).
  void SkipKnown(size_t size) { pos_ += size; }
  bool BeginArray() {
    if (pos_ < text_.size() && text_[pos_] == '[' && stack_.size() < kMaxDepth) {
      ++pos_;
      stack_.push_back(1);
      return true;
    }
    return BeginSlow('[', "'[' (a list)");
  }
  // kMore when another element follows, kEnd after consuming ']'.
  Step NextItem() {
    // The usual case: the comma right after the element before.
    if (pos_ < text_.size() && text_[pos_] == ',' && !stack_.empty() && !stack_.back()) {
      ++pos_;
      return kMore;
    }
    return NextItemSlow();
  }
  // A string value, unescaped: a view into the input when it has no escapes,
  // else into scratch storage valid until the next string value.
  bool GetString(std::string_view* s);
  bool GetNumber(JsonNumber* n);
  bool GetBool(bool* b);
  bool GetNull();
  bool SkipValue();
  // Appends one value as compact JSON text (strings re-escaped minimally).
  bool GetCompact(std::string* out);
  // Records an error of the caller's (at `offset`) and returns false.
  bool Fail(size_t offset, std::string message);
  // The error of the last failed call.
  const Error& error() const { return error_; }

  // ---- The checked interface ----

  // The type of the next value; an error at the end of input or on a
  // character that cannot start a value.
  Result<JsonType> Peek() {
    JsonType t;
    if (PeekType(&t)) return t;
    return error_;
  }

  Status EnterObject() { return Checked(BeginObject()); }
  // Moves to the next member of the innermost object: true with its key, or
  // false after consuming the closing brace. `key` stays valid until the
  // next NextMember call.
  Result<bool> NextMember(std::string_view* key) { return Checked(NextKey(key)); }

  Status EnterArray() { return Checked(BeginArray()); }
  // True when another element follows, false after consuming ']'.
  Result<bool> NextElement() { return Checked(NextItem()); }

  // The string's unescaped text; valid until the next ReadString.
  Result<std::string_view> ReadString() {
    std::string_view s;
    if (GetString(&s)) return s;
    return error_;
  }
  Result<JsonNumber> ReadNumber() {
    JsonNumber n;
    if (GetNumber(&n)) return n;
    return error_;
  }
  Result<bool> ReadBool() {
    bool b;
    if (GetBool(&b)) return b;
    return error_;
  }
  Status ReadNull() { return Checked(GetNull()); }
  // Skips one value of any type.
  Status Skip() { return Checked(SkipValue()); }
  // Reads one value as compact JSON text (strings re-escaped minimally).
  Status ReadCompact(std::string* out) { return Checked(GetCompact(out)); }
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
  static constexpr size_t kMaxDepth = 1000;

  Status Checked(bool ok) const { return ok ? Status::Ok() : Status(error_); }
  Result<bool> Checked(Step step) const {
    if (step == kFailed) return error_;
    return step == kMore;
  }

  // White space is mostly a newline and an indent of spaces (json.dump's
  // indent=1): the common cases return at once, runs of spaces go by words.
  void SkipSpace() {
    if (pos_ < text_.size() && static_cast<unsigned char>(text_[pos_]) > ' ') return;
    SkipSpaceRun();
  }
  void SkipSpaceRun();
  bool Expect(char c, const char* what);
  // BeginObject / BeginArray in general, with every error.
  bool BeginSlow(char c, const char* what);
  Step NextItemSlow();
  // NextKey in general, with every error.
  Step NextKeySlow(std::string_view* key);
  bool CheckDepth();
  // pos_ at the opening quote.
  bool ParseString(std::string* scratch, std::string_view* out);
  bool ParseEscaped(size_t start, size_t i, std::string* scratch, std::string_view* out);
  bool ValueError();
  // GetCompact of a list of plain integers (a tensor shape, the commonest
  // compact value) in one scan, pos_ at '['. Anything else (fractions,
  // literals, nesting, damage) returns false with pos_ and `out` unchanged,
  // for the general path to read or report.
  bool CompactIntegers(std::string* out);
  // The value of a member for NextScalar and NextKnownRun at text_[v]: true
  // with *end past it, false (pos_ and the stack unchanged) when it is not
  // one they read.
  bool ScalarAt(size_t v, Scalar* value, size_t* end);
  // Whether the input at `p` (32 bytes readable) starts with head's bytes.
  static bool HeadMatches(const char* p, const MemberHead& head);

  std::string_view text_;
  std::string file_;
  size_t pos_ = 0;
  // Per open container: whether its first element is still to come.
  std::vector<uint8_t> stack_;
  std::string key_scratch_;
  std::string value_scratch_;
  std::string compact_scratch_;  // the last list of integers NextScalar read, compacted
  std::string_view last_list_;   // its text in the input
  uint64_t list_serial_ = 0;     // Scalar::list_serial of that list
  // Numbers NextScalar and NextKnownRun read, by their text (up to 24 bytes).
  struct CachedNumber {
    uint64_t text[3] = {};  // zero-padded
    uint32_t size = 0;      // 0: an empty slot
    JsonNumber number;
  };
  static constexpr int kCachedNumberBits = 10;
  static constexpr size_t kCachedNumbers = size_t{1} << kCachedNumberBits;
  std::unique_ptr<CachedNumber[]> numbers_;  // made on first use
  Error error_;
};

// Writes `s` as a JSON string literal (with quotes) to `out`.
void AppendQuoted(std::string_view s, std::string* out, bool ascii_only = false);

}  // namespace graph_ascend::json
