// The JSON reader (builder/json/json_reader.h): Python's json.dump dialect
// with NaN / Infinity literals (reference §3.2), escapes, and errors that
// name the file, line, column and byte offset.
#include "json/json_reader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "test_files.h"

namespace graph_ascend::json {
namespace {

using graph_ascend::testing::Ok;

// Reads the only member of a one-member object as a number.
JsonNumber OnlyNumber(const std::string& text) {
  JsonReader r(text, "t.json");
  EXPECT_TRUE(r.EnterObject().ok());
  std::string_view key;
  auto more = r.NextMember(&key);
  EXPECT_TRUE(more.ok() && *more);
  auto n = r.ReadNumber();
  EXPECT_TRUE(n.ok()) << (n.ok() ? "" : n.error().ToString());
  return n.ok() ? *n : JsonNumber{};
}

// Skips the whole document and returns the error (which must exist).
Error SkipError(const std::string& text) {
  JsonReader r(text, "bad.json");
  Status st = r.Skip();
  if (st.ok()) st = r.ExpectEnd();
  EXPECT_FALSE(st.ok()) << "accepted: " << text;
  return st.ok() ? Error{} : st.error();
}

TEST(JsonReaderTest, PythonNonFiniteLiterals) {
  JsonReader r(R"({"a": NaN, "b": Infinity, "c": -Infinity, "d": [NaN]})", "t.json");
  ASSERT_TRUE(r.EnterObject().ok());
  std::string_view key;
  ASSERT_TRUE(Ok(r.NextMember(&key)));
  EXPECT_EQ(key, "a");
  EXPECT_EQ(Ok(r.Peek()), JsonType::kNumber);
  auto a = r.ReadNumber();
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(std::isnan(a->number));
  EXPECT_FALSE(a->is_integer);
  ASSERT_TRUE(Ok(r.NextMember(&key)));
  auto b = r.ReadNumber();
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(std::isinf(b->number) && b->number > 0);
  ASSERT_TRUE(Ok(r.NextMember(&key)));
  EXPECT_EQ(Ok(r.Peek()), JsonType::kNumber);
  auto c = r.ReadNumber();
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(std::isinf(c->number) && c->number < 0);
  ASSERT_TRUE(Ok(r.NextMember(&key)));
  EXPECT_TRUE(r.Skip().ok());
  EXPECT_FALSE(Ok(r.NextMember(&key)));
  EXPECT_TRUE(r.ExpectEnd().ok());
}

TEST(JsonReaderTest, IntegersAndFloats) {
  JsonNumber i = OnlyNumber(R"({"x": 42})");
  EXPECT_TRUE(i.is_integer);
  EXPECT_EQ(i.integer, 42);
  EXPECT_EQ(i.number, 42.0);

  JsonNumber neg = OnlyNumber(R"({"x": -7})");
  EXPECT_TRUE(neg.is_integer);
  EXPECT_EQ(neg.integer, -7);

  JsonNumber f = OnlyNumber(R"({"x": 1.5})");
  EXPECT_FALSE(f.is_integer);
  EXPECT_EQ(f.number, 1.5);

  JsonNumber whole = OnlyNumber(R"({"x": 2.0})");
  EXPECT_FALSE(whole.is_integer) << "2.0 is a Python float, not an int";

  JsonNumber e = OnlyNumber(R"({"x": 1e3})");
  EXPECT_FALSE(e.is_integer);
  EXPECT_EQ(e.number, 1000.0);

  JsonNumber small = OnlyNumber(R"({"x": 2.3283064365386963e-10})");
  EXPECT_EQ(small.number, 2.3283064365386963e-10);

  // Beyond int64: still read, as a float.
  JsonNumber big = OnlyNumber(R"({"x": 9223372036854775808})");
  EXPECT_FALSE(big.is_integer);
  EXPECT_EQ(big.number, 9223372036854775808.0);

  // Python reads 1e999 as inf and 1e-999 as 0.0.
  EXPECT_TRUE(std::isinf(OnlyNumber(R"({"x": 1e999})").number));
  EXPECT_LT(OnlyNumber(R"({"x": -1e999})").number, 0);
  EXPECT_EQ(OnlyNumber(R"({"x": 1e-999})").number, 0.0);
}

TEST(JsonReaderTest, StringEscapes) {
  JsonReader r(R"(["a\nb", "q\"\\\/", "\u00e9t\u00e9", "\ud83d\ude00", "tab\there", "plain"])", "t.json");
  ASSERT_TRUE(r.EnterArray().ok());
  std::vector<std::string> got;
  for (;;) {
    auto more = r.NextElement();
    ASSERT_TRUE(more.ok());
    if (!*more) break;
    auto s = r.ReadString();
    ASSERT_TRUE(s.ok());
    got.emplace_back(*s);
  }
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[0], "a\nb");
  EXPECT_EQ(got[1], "q\"\\/");
  EXPECT_EQ(got[2], "\xC3\xA9t\xC3\xA9");  // été
  EXPECT_EQ(got[3], "\xF0\x9F\x98\x80");   // U+1F600 from a surrogate pair
  EXPECT_EQ(got[4], "tab\there");
  EXPECT_EQ(got[5], "plain");
}

TEST(JsonReaderTest, KeysWithEscapesAndValuesOfEveryType) {
  JsonReader r(R"({"k\u0041": true, "n": null, "f": false, "s": "v", "o": {}, "l": []})", "t.json");
  ASSERT_TRUE(r.EnterObject().ok());
  std::string_view key;
  ASSERT_TRUE(Ok(r.NextMember(&key)));
  EXPECT_EQ(key, "kA");
  EXPECT_EQ(Ok(r.Peek()), JsonType::kBool);
  EXPECT_TRUE(Ok(r.ReadBool()));
  ASSERT_TRUE(Ok(r.NextMember(&key)));
  EXPECT_EQ(Ok(r.Peek()), JsonType::kNull);
  EXPECT_TRUE(r.ReadNull().ok());
  ASSERT_TRUE(Ok(r.NextMember(&key)));
  EXPECT_FALSE(Ok(r.ReadBool()));
  ASSERT_TRUE(Ok(r.NextMember(&key)));
  EXPECT_EQ(Ok(r.Peek()), JsonType::kString);
  EXPECT_EQ(Ok(r.ReadString()), "v");
  ASSERT_TRUE(Ok(r.NextMember(&key)));
  EXPECT_EQ(Ok(r.Peek()), JsonType::kObject);
  ASSERT_TRUE(r.EnterObject().ok());
  EXPECT_FALSE(Ok(r.NextMember(&key)));
  ASSERT_TRUE(Ok(r.NextMember(&key)));
  EXPECT_EQ(key, "l");
  EXPECT_EQ(Ok(r.Peek()), JsonType::kArray);
  ASSERT_TRUE(r.EnterArray().ok());
  EXPECT_FALSE(Ok(r.NextElement()));
  EXPECT_FALSE(Ok(r.NextMember(&key)));
  EXPECT_EQ(r.depth(), 0u);
  EXPECT_TRUE(r.ExpectEnd().ok());
}

TEST(JsonReaderTest, ByteOrderMarkIsSkipped) {
  JsonReader r("\xEF\xBB\xBF{\"a\": 1}", "bom.json");
  EXPECT_TRUE(r.Skip().ok());
  EXPECT_TRUE(r.ExpectEnd().ok());
}

TEST(JsonReaderTest, ReadCompactNormalisesSpacingAndKeepsNumbersVerbatim) {
  JsonReader r(R"({ "a" :[1,2.50 ,"x\"y", NaN],"b":{"c" : null , "d":true} })", "t.json");
  std::string out;
  ASSERT_TRUE(r.ReadCompact(&out).ok());
  EXPECT_EQ(out, R"({"a": [1, 2.50, "x\"y", NaN], "b": {"c": null, "d": true}})");
}

TEST(JsonReaderTest, RewindReadsAValueAgain) {
  JsonReader r(R"([{"a": 1}, 2])", "t.json");
  ASSERT_TRUE(r.EnterArray().ok());
  ASSERT_TRUE(Ok(r.NextElement()));
  size_t at = r.offset(), depth = r.depth();
  ASSERT_TRUE(r.Skip().ok());
  r.Rewind(at, depth);
  std::string out;
  ASSERT_TRUE(r.ReadCompact(&out).ok());
  EXPECT_EQ(out, R"({"a": 1})");
  ASSERT_TRUE(Ok(r.NextElement()));
  EXPECT_EQ(Ok(r.ReadNumber()).integer, 2);
  EXPECT_FALSE(Ok(r.NextElement()));
}

// Errors: the file, "line L, column C (byte B)" and what was expected.

TEST(JsonReaderErrorTest, TrailingCommaInObject) {
  Error e = SkipError(R"({"a": 1,})");
  EXPECT_EQ(e.file, "bad.json");
  EXPECT_EQ(e.where, "line 1, column 9 (byte 8)");
  EXPECT_NE(e.message.find("expected a key string"), std::string::npos) << e.message;
}

TEST(JsonReaderErrorTest, PlaceOnALaterLine) {
  Error e = SkipError("{\n  \"a\": [1, 2\n}");
  EXPECT_EQ(e.where, "line 3, column 1 (byte 15)");
  EXPECT_NE(e.message.find("expected ',' or ']'"), std::string::npos) << e.message;
  EXPECT_EQ(e.ToString(), "bad.json: line 3, column 1 (byte 15): " + e.message);
}

TEST(JsonReaderErrorTest, TruncatedInsideAList) {
  Error e = SkipError(R"({"a": [1, 2)");
  EXPECT_EQ(e.where, "line 1, column 12 (byte 11)");
  EXPECT_NE(e.message.find("truncated"), std::string::npos) << e.message;
}

TEST(JsonReaderErrorTest, TruncatedInsideAnObject) {
  Error e = SkipError("{\"a\": {\"b\": 1,\n");
  EXPECT_EQ(e.where, "line 2, column 1 (byte 15)");
  EXPECT_NE(e.message.find("truncated"), std::string::npos) << e.message;
}

TEST(JsonReaderErrorTest, UnterminatedStringPointsAtItsQuote) {
  Error e = SkipError(R"({"a": "abc)");
  EXPECT_EQ(e.where, "line 1, column 7 (byte 6)");
  EXPECT_NE(e.message.find("unterminated string"), std::string::npos) << e.message;
}

TEST(JsonReaderErrorTest, BadEscape) {
  Error e = SkipError(R"(["ok", "a\qb"])");
  EXPECT_EQ(e.where, "line 1, column 10 (byte 9)");
  EXPECT_NE(e.message.find("bad escape '\\q'"), std::string::npos) << e.message;
}

TEST(JsonReaderErrorTest, BadUnicodeEscape) {
  Error e = SkipError(R"(["\u12G4"])");
  EXPECT_EQ(e.where, "line 1, column 3 (byte 2)");
  EXPECT_NE(e.message.find("\\u escape"), std::string::npos) << e.message;
}

TEST(JsonReaderErrorTest, ControlCharacterInsideAString) {
  Error e = SkipError("[\"a\nb\"]");
  EXPECT_EQ(e.where, "line 1, column 4 (byte 3)");
  EXPECT_NE(e.message.find("control character"), std::string::npos) << e.message;
}

TEST(JsonReaderErrorTest, GarbageAfterTheValue) {
  Error e = SkipError("{}\n x");
  EXPECT_EQ(e.where, "line 2, column 2 (byte 4)");
  EXPECT_NE(e.message.find("after the end of the JSON value"), std::string::npos) << e.message;
}

TEST(JsonReaderErrorTest, MissingColon) {
  Error e = SkipError(R"({"a" 1})");
  EXPECT_EQ(e.where, "line 1, column 6 (byte 5)");
  EXPECT_NE(e.message.find("':'"), std::string::npos) << e.message;
}

TEST(JsonReaderErrorTest, MisspelledLiterals) {
  EXPECT_NE(SkipError(R"([nul])").message.find("expected null"), std::string::npos);
  EXPECT_NE(SkipError(R"([tru])").message.find("expected true or false"), std::string::npos);
  EXPECT_NE(SkipError(R"([Nan])").message.find("expected a number"), std::string::npos);
  EXPECT_NE(SkipError(R"([inf])").message.find("expected a value"), std::string::npos);
}

TEST(JsonReaderErrorTest, MalformedNumbers) {
  EXPECT_NE(SkipError("[1.]").message.find("after the decimal point"), std::string::npos);
  EXPECT_NE(SkipError("[1e]").message.find("exponent"), std::string::npos);
  EXPECT_NE(SkipError("[-]").message.find("expected a number"), std::string::npos);
  Error e = SkipError("[1, .5]");
  EXPECT_EQ(e.where, "line 1, column 5 (byte 4)");
}

TEST(JsonReaderErrorTest, EmptyInput) {
  Error e = SkipError("   ");
  EXPECT_EQ(e.where, "line 1, column 4 (byte 3)");
  EXPECT_NE(e.message.find("end of input"), std::string::npos) << e.message;
}

TEST(JsonReaderErrorTest, NestingTooDeepIsAnErrorNotACrash) {
  std::string deep(5000, '[');
  deep += std::string(5000, ']');
  Error e = SkipError(deep);
  EXPECT_NE(e.message.find("nesting deeper than"), std::string::npos) << e.message;
}

TEST(JsonReaderErrorTest, WrongContainerType) {
  JsonReader r("[1]", "t.json");
  Status st = r.EnterObject();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().where, "line 1, column 1 (byte 0)");
  EXPECT_NE(st.error().message.find("expected '{'"), std::string::npos) << st.error().message;
}

TEST(AppendQuotedTest, EscapesAsPythonJsonDumpsDoes) {
  std::string out;
  AppendQuoted("a\"b\\c\n\t\x01", &out);
  EXPECT_EQ(out, R"("a\"b\\c\n\t\u0001")");

  out.clear();
  AppendQuoted("\xE6\xAF\x94", &out, true);  // 比
  EXPECT_EQ(out, R"("\u6bd4")");

  out.clear();
  AppendQuoted("\xF0\x9F\x98\x80", &out, true);  // U+1F600 as a surrogate pair
  EXPECT_EQ(out, R"("\ud83d\ude00")");

  out.clear();
  AppendQuoted("\xE6\xAF\x94", &out, false);
  EXPECT_EQ(out, "\"\xE6\xAF\x94\"");
}

TEST(AppendQuotedTest, RoundTripsThroughTheReader) {
  std::string original = "x\"\\/\b\f\n\r\t\x7f \xC3\xA9 \xF0\x9F\x98\x80";
  std::string quoted;
  AppendQuoted(original, &quoted, true);
  JsonReader r(quoted, "t.json");
  auto s = r.ReadString();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, original);
}

}  // namespace
}  // namespace graph_ascend::json
