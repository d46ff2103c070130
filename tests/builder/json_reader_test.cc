// The JSON reader (builder/json/json_reader.h): Python's json.dump dialect
// with NaN / Infinity literals (reference §3.2), escapes, and errors that
// name the file, line, column and byte offset.
#include "json/json_reader.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

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

// Lists of plain integers (tensor shapes) take a one-scan path; whatever it
// declines goes the general way, so the text and the errors are the same.
TEST(JsonReaderTest, ReadCompactOfIntegerListsMatchesTheGeneralPath) {
  struct Case {
    const char* json;
    const char* compact;
  };
  for (const Case& c : std::vector<Case>{{"[]", "[]"},
                                         {"[\n ]", "[]"},
                                         {"[\n  2,\n  8,\n  32\n ]", "[2, 8, 32]"},
                                         {"[-1,007 , 12345678901234567890123]", "[-1, 007, 12345678901234567890123]"},
                                         {"[1, 2.5]", "[1, 2.5]"},
                                         {"[1, -Infinity, 3e2]", "[1, -Infinity, 3e2]"},
                                         {"[1, [2, 3], {}]", "[1, [2, 3], {}]"},
                                         {"[\t1\r\n]", "[1]"}}) {
    JsonReader r(c.json, "t.json");
    std::string out = "prefix ";
    ASSERT_TRUE(r.ReadCompact(&out).ok()) << c.json;
    EXPECT_EQ(out, std::string("prefix ") + c.compact) << c.json;
    EXPECT_TRUE(r.ExpectEnd().ok()) << c.json;
  }
  struct Bad {
    const char* json;
    const char* where;
    const char* message;
  };
  for (const Bad& b : std::vector<Bad>{{"[1, 2", "line 1, column 6 (byte 5)", "inside a list"},
                                       {"[1,]", "line 1, column 4 (byte 3)", "expected a value"},
                                       {"[1 2]", "line 1, column 4 (byte 3)", "expected ',' or ']'"},
                                       {"[-]", "line 1, column 2 (byte 1)", "expected a number"},
                                       {"[1\f]", "line 1, column 3 (byte 2)", "expected ',' or ']'"}}) {
    JsonReader r(b.json, "t.json");
    std::string out;
    Status s = r.ReadCompact(&out);
    ASSERT_FALSE(s.ok()) << b.json;
    EXPECT_EQ(s.error().where, b.where) << b.json;
    EXPECT_NE(s.error().message.find(b.message), std::string::npos) << b.json << ": " << s.error().message;
  }
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

// AppendQuoted as it was written first, one character at a time: the reference
// for the one that skips plain runs eight bytes at a time.
std::string QuotedOneByOne(std::string_view s, bool ascii_only) {
  static const char* kHex = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f') {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : c == '\b' ? "\\b" : "\\f";
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else if (c >= 0x80 && ascii_only) {
      int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
      uint32_t cp = c & (0x3F >> extra);
      for (int k = 0; k < extra && i + 1 < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[++i]) & 0x3F);
      auto put = [&](uint32_t u) {
        out += "\\u";
        for (int sh = 12; sh >= 0; sh -= 4) out += kHex[(u >> sh) & 15];
      };
      if (cp >= 0x10000) {
        cp -= 0x10000;
        put(0xD800 + (cp >> 10));
        put(0xDC00 + (cp & 0x3FF));
      } else {
        put(cp);
      }
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

TEST(AppendQuotedTest, SameAsOneCharacterAtATime) {
  std::mt19937_64 rng(29);
  const std::string alphabet = std::string("abc.,:[] 0123456789\"\\\n\t\x01\x1f\x7f", 26) + "\xE6\xAF\x94\xF0\x9F\x98\x80";
  for (int round = 0; round < 20000; ++round) {
    std::string s;
    size_t n = rng() % 40;
    for (size_t i = 0; i < n; ++i) {
      // Mostly plain runs, sometimes one byte of anything.
      s += rng() % 4 ? alphabet[rng() % 20] : static_cast<char>(rng() % 256);
    }
    for (bool ascii : {true, false}) {
      std::string out = "x";
      AppendQuoted(s, &out, ascii);
      ASSERT_EQ(out, "x" + QuotedOneByOne(s, ascii)) << s;
    }
  }
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

// The double fast paths (Clinger's, and x87 extended precision with its
// halfway check) must give from_chars' correctly rounded value bit for bit.
TEST(JsonReaderTest, DoublesEqualFromCharsBitForBit) {
  std::vector<std::string> texts = {"0.1",
                                    "1e22",
                                    "1e23",
                                    "9007199254740993.0",
                                    "9007199254740995.0",
                                    "1.2965433597564697",
                                    "0.0005709777469746768",
                                    "-0.07622766494750977",
                                    "123456789012345678.5",
                                    "1.7976931348623157e308",
                                    "4.9406564584124654e-324",
                                    "2.2250738585072011e-308",
                                    "0.30000000000000004",
                                    "-0.0",
                                    "1.00000000000000011102230246251565404236316680908203125"};
  std::mt19937_64 rng(7);
  for (int k = 0; k < 200000; ++k) {
    char buf[64];
    uint64_t bits = rng();
    double d;
    if (k % 2 == 0) {
      float f;
      uint32_t b32 = static_cast<uint32_t>(bits);
      memcpy(&f, &b32, 4);
      d = f;  // msprobe's statistics: float32 values printed as Python doubles
    } else {
      memcpy(&d, &bits, 8);
    }
    if (!std::isfinite(d)) continue;
    texts.emplace_back(buf, std::to_chars(buf, buf + sizeof(buf), d).ptr);
    // A 17-digit decimal that is not the shortest form of any double.
    texts.push_back(std::to_string(rng() % 100000000000000000ull) + "e-" + std::to_string(rng() % 22));
  }
  std::string doc = "[";
  for (size_t i = 0; i < texts.size(); ++i) doc += (i ? ", " : "") + texts[i];
  doc += "]";
  JsonReader r(doc, "t.json");
  ASSERT_TRUE(r.BeginArray());
  size_t mismatches = 0;
  for (const std::string& t : texts) {
    ASSERT_EQ(r.NextItem(), JsonReader::kMore);
    JsonNumber n;
    ASSERT_TRUE(r.GetNumber(&n)) << t;
    double want;
    std::from_chars(t.data(), t.data() + t.size(), want);
    if (memcmp(&want, &n.number, 8) != 0 && ++mismatches < 5) ADD_FAILURE() << t << " read as " << n.number;
  }
  EXPECT_EQ(r.NextItem(), JsonReader::kEnd);
  EXPECT_EQ(mismatches, 0u);
}

TEST(JsonReaderTest, LongIntegersAndLeadingZeros) {
  JsonNumber n = OnlyNumber(R"({"x": 123456789012345678})");  // 18 digits: the word-wise path
  EXPECT_TRUE(n.is_integer);
  EXPECT_EQ(n.integer, 123456789012345678);
  n = OnlyNumber(R"({"x": -9223372036854775808})");
  EXPECT_TRUE(n.is_integer);
  EXPECT_EQ(n.integer, std::numeric_limits<int64_t>::min());
  n = OnlyNumber(R"({"x": 0.000000000000000000001234})");  // 24 digits, 20 of them leading zeros
  EXPECT_EQ(n.number, 1.234e-21);
  n = OnlyNumber(R"({"x": 12345678901234567890123})");  // 23 digits: from_chars
  EXPECT_FALSE(n.is_integer);
  EXPECT_EQ(n.number, 12345678901234567890123.0);
}

// The fast interface: unescaped strings are views into the input, escaped
// ones are unescaped, and errors are recorded in the reader.
TEST(JsonReaderTest, FastInterfaceViewsAndErrors) {
  std::string text = R"({"plain": "torch.float32", "esc\u00e9": "a\nb", "n": null, "b": true})";
  JsonReader r(text, "t.json");
  ASSERT_EQ(r.PeekByte(), '{');
  ASSERT_TRUE(r.BeginObject());
  std::string_view key, value;
  ASSERT_EQ(r.NextKey(&key), JsonReader::kMore);
  ASSERT_TRUE(r.GetString(&value));
  EXPECT_EQ(value, "torch.float32");
  EXPECT_TRUE(value.data() > text.data() && value.data() < text.data() + text.size()) << "a view into the input";
  ASSERT_EQ(r.NextKey(&key), JsonReader::kMore);
  EXPECT_EQ(key, "esc\xC3\xA9");
  ASSERT_TRUE(r.GetString(&value));
  EXPECT_EQ(value, "a\nb");
  ASSERT_EQ(r.NextKey(&key), JsonReader::kMore);
  EXPECT_TRUE(r.GetNull());
  ASSERT_EQ(r.NextKey(&key), JsonReader::kMore);
  bool b = false;
  ASSERT_TRUE(r.GetBool(&b));
  EXPECT_TRUE(b);
  EXPECT_EQ(r.NextKey(&key), JsonReader::kEnd);
  EXPECT_TRUE(r.ExpectEnd().ok());

  JsonReader bad(R"({"a": 1 "b": 2})", "bad.json");
  ASSERT_TRUE(bad.BeginObject());
  ASSERT_EQ(bad.NextKey(&key), JsonReader::kMore);
  JsonNumber n;
  ASSERT_TRUE(bad.GetNumber(&n));
  EXPECT_EQ(bad.NextKey(&key), JsonReader::kFailed);
  EXPECT_EQ(bad.error().where, "line 1, column 9 (byte 8)");
  EXPECT_EQ(bad.error().message, "expected ',' or '}' in an object, found '\"'");
  EXPECT_FALSE(bad.Fail(2, "a caller's own error"));
  EXPECT_EQ(bad.error().ToString(), "bad.json: line 1, column 3 (byte 2): a caller's own error");
}

// Strings cut in the middle of the 8-byte scan keep their exact error places.
TEST(JsonReaderErrorTest, StringScanErrorsAtEveryOffset) {
  for (size_t pad = 0; pad < 20; ++pad) {
    std::string body(pad, 'x');
    std::string ctrl_text = "\"" + body + "\x01yyyyyyyy\"";
    std::string utf_text = "\"" + body + "\xC3yyyyyyyy\"";
    std::string cut_text = "\"" + body;
    std::string place = "line 1, column " + std::to_string(pad + 2) + " (byte " + std::to_string(pad + 1) + ")";
    JsonReader ctrl(ctrl_text, "t.json");
    auto s = ctrl.ReadString();
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().where, place);
    EXPECT_EQ(s.error().message, "control character inside a string");
    JsonReader utf(utf_text, "t.json");
    s = utf.ReadString();
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message, "a string that is not valid UTF-8");
    EXPECT_EQ(s.error().where, place);
    JsonReader cut(cut_text, "t.json");
    s = cut.ReadString();
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().where, "line 1, column 1 (byte 0)");
    EXPECT_EQ(s.error().message, "unterminated string (truncated file?)");
  }
}

// NextScalar reads json.dump's scalar members in one pass and leaves every
// other member, unread, to NextKey and the Get functions; NextKnownRun
// recognises a member whose bytes before the value are those of one read
// before.
TEST(JsonReaderTest, ScalarMembersAndKnownHeads) {
  std::string text =
      "{\n \"type\": \"torch.Tensor\",\n \"shape\": [\n  2,\n  -8\n ],\n \"Max\": 0.07235313206911087,"
      "\n \"n\": 3,\n \"rg\": false,\n \"m\": null,\n \"x\": -Infinity,\n \"e\": \"a\\nb\",\n"
      " \"o\": {},\n \"s\": [\n  2,\n  -8\n ],\n \"f\": [1.5]\n}";
  JsonReader r(text, "t.json");
  ASSERT_TRUE(r.BeginObject());
  std::string_view key;
  JsonReader::Scalar v;
  JsonReader::MemberHead head;
  ASSERT_EQ(r.NextScalar(&key, &v, &head), JsonReader::Member::kMore);
  EXPECT_EQ(key, "type");
  EXPECT_EQ(v.type, JsonType::kString);
  EXPECT_EQ(v.text, "torch.Tensor");
  EXPECT_FALSE(head.empty());
  ASSERT_EQ(r.NextScalar(&key, &v), JsonReader::Member::kMore);
  EXPECT_EQ(key, "shape");
  EXPECT_EQ(v.type, JsonType::kArray);
  EXPECT_EQ(v.text, "[2, -8]");
  uint64_t serial = v.list_serial;
  ASSERT_EQ(r.NextScalar(&key, &v), JsonReader::Member::kMore);
  EXPECT_EQ(v.type, JsonType::kNumber);
  EXPECT_FALSE(v.number.is_integer);
  EXPECT_EQ(v.number.number, 0.07235313206911087);
  ASSERT_EQ(r.NextScalar(&key, &v), JsonReader::Member::kMore);
  EXPECT_TRUE(v.number.is_integer);
  EXPECT_EQ(v.number.integer, 3);
  ASSERT_EQ(r.NextScalar(&key, &v), JsonReader::Member::kMore);
  EXPECT_EQ(v.type, JsonType::kBool);
  EXPECT_FALSE(v.boolean);
  ASSERT_EQ(r.NextScalar(&key, &v), JsonReader::Member::kMore);
  EXPECT_EQ(v.type, JsonType::kNull);
  ASSERT_EQ(r.NextScalar(&key, &v), JsonReader::Member::kMore);
  EXPECT_EQ(v.number.number, -std::numeric_limits<double>::infinity());
  // An escaped string, an object and a list of non-integers are left alone.
  auto left_alone = [&](const char* name) {
    size_t at = r.offset();
    EXPECT_EQ(r.NextScalar(&key, &v), JsonReader::Member::kOther) << name;
    EXPECT_EQ(r.offset(), at);
    ASSERT_EQ(r.NextKey(&key), JsonReader::kMore);
    EXPECT_EQ(key, name);
    ASSERT_TRUE(r.SkipValue());
  };
  left_alone("e");
  left_alone("o");
  ASSERT_EQ(r.NextScalar(&key, &v), JsonReader::Member::kMore);
  EXPECT_EQ(v.text, "[2, -8]");
  EXPECT_EQ(v.list_serial, serial) << "the same bytes as the list before";
  left_alone("f");
  EXPECT_EQ(r.NextScalar(&key, &v), JsonReader::Member::kEnd);
  EXPECT_TRUE(r.ExpectEnd().ok());

  // A head read first in its object is not taken after a member, and the
  // other way round; a different key is not taken at all.
  std::string two = "{\n \"a\": 1,\n \"a\": 2,\n \"b\": 3}";
  JsonReader t(two, "t.json");
  ASSERT_TRUE(t.BeginObject());
  JsonReader::MemberHead heads[4];
  JsonReader::Scalar values[4];
  size_t read = 9;
  ASSERT_EQ(t.NextScalar(&key, &v, &heads[0]), JsonReader::Member::kMore);
  EXPECT_EQ(t.NextKnownRun(heads, 1, values, &read), JsonReader::Member::kOther);
  EXPECT_EQ(read, 0u);
  ASSERT_EQ(t.NextScalar(&key, &v, &heads[1]), JsonReader::Member::kMore);
  EXPECT_EQ(v.number.integer, 2);
  EXPECT_EQ(t.NextKnownRun(heads + 1, 1, values, &read), JsonReader::Member::kOther);
  EXPECT_EQ(read, 0u);
  heads[2] = heads[3] = heads[1];
  std::string again = "{\n \"a\": 5,\n \"a\": 6,\n \"a\": 7,\n \"a\": 8                }";
  JsonReader u(again, "t.json");
  ASSERT_TRUE(u.BeginObject());
  EXPECT_EQ(u.NextKnownRun(heads + 1, 1, values, &read), JsonReader::Member::kOther) << "a first member has no comma";
  EXPECT_EQ(read, 0u);
  // The last member is too close to the end for the one compare: the
  // general path reads it.
  EXPECT_EQ(u.NextKnownRun(heads, 4, values, &read), JsonReader::Member::kOther);
  ASSERT_EQ(read, 3u);
  EXPECT_EQ(values[0].number.integer, 5);
  EXPECT_EQ(values[1].number.integer, 6);
  EXPECT_EQ(values[2].number.integer, 7);
  ASSERT_EQ(u.NextScalar(&key, &v), JsonReader::Member::kMore);
  EXPECT_EQ(v.number.integer, 8);
  EXPECT_EQ(u.NextKnownRun(heads, 4, values, &read), JsonReader::Member::kEnd);
  EXPECT_EQ(read, 0u);
  EXPECT_TRUE(u.ExpectEnd().ok());
}

// Damage is left to the general path, which reports it in its own words.
TEST(JsonReaderErrorTest, ScalarMembersLeaveDamageToTheGeneralPath) {
  for (const char* text :
       {R"({"a": 1., "b": 2})", R"({"a": 1e})", R"({"a": -})", R"({"a": tru})", R"({"a": "x)", R"({"a": [1, 2)",
        R"({"a" : 1})", R"({, "a": 1})", R"({"a": 1 "b": 2})", "{\"a\": \"\x01\"}", R"({"a": Nan})"}) {
    JsonReader r(text, "t.json");
    ASSERT_TRUE(r.BeginObject());
    std::string_view key;
    JsonReader::Scalar v;
    JsonReader::Member m = r.NextScalar(&key, &v);
    if (m == JsonReader::Member::kMore) m = r.NextScalar(&key, &v);
    EXPECT_EQ(m, JsonReader::Member::kOther) << text;
  }
}

// Numbers read by NextScalar are the ones GetNumber reads.
// ContainerEndAhead matches brackets outside strings only, gives up on an
// escape, deep nesting or the end of input, and checks nothing else.
TEST(JsonReaderTest, ContainerEndAhead) {
  auto end = [](const std::string& text, size_t max_depth = 64) {
    JsonReader r(text, "t.json");
    return r.ContainerEndAhead(max_depth);
  };
  EXPECT_EQ(end("{}"), 2u);
  EXPECT_EQ(end("[1, 2] tail"), 6u);
  EXPECT_EQ(end(R"({"a": {"b": [1, {"c": "]}"}]}, "d": "{["} ,)"), 41u);
  EXPECT_EQ(end("{\n \"a\": [\n  1\n ]\n}\n"), 18u);
  EXPECT_EQ(end(R"({"a": "\"}"})"), 0u);           // an escape
  EXPECT_EQ(end(R"({"a": [1, }, "b": 2})"), 20u);  // unchecked: a '}' ends the '['
  EXPECT_EQ(end(R"({"a": [1, 2)"), 0u);
  EXPECT_EQ(end(R"({"a": "})"), 0u);
  EXPECT_EQ(end("[[[]]]", 3), 6u);
  EXPECT_EQ(end("[[[[]]]]", 3), 0u);
  EXPECT_EQ(end("1"), 0u);
  EXPECT_EQ(end(" {}"), 0u);  // at the reader's position, no white space skipped
  // Every length around the 16-byte steps.
  for (size_t n = 0; n < 40; ++n) {
    std::string text = "[\"" + std::string(n, 'x') + "\"]";
    EXPECT_EQ(end(text + "]"), text.size()) << n;
    EXPECT_EQ(end(text.substr(0, text.size() - 1)), 0u) << n;
  }
}

// SkipValue reads scalar members in one pass where it can and reports
// damage as the general path does.
TEST(JsonReaderErrorTest, SkipValueOfObjects) {
  JsonReader r(R"({"a": 1, "b": "x", "c": [1, 2], "d": {"e": NaN, "f": "\u00e9"}, "g": true} 7)", "t.json");
  ASSERT_TRUE(r.SkipValue()) << r.error().ToString();
  EXPECT_EQ(r.PeekByte(), '7');
  EXPECT_EQ(SkipError(R"({"a": 1 "b": 2})").where, "line 1, column 9 (byte 8)");
  EXPECT_EQ(SkipError(R"({"a": 1.})").where, "line 1, column 9 (byte 8)");
  EXPECT_EQ(SkipError(R"({"a": "x)").where, "line 1, column 7 (byte 6)");
  EXPECT_EQ(SkipError(R"({"a": [1, 2], "b": {"c": tru}})").where, "line 1, column 26 (byte 25)");
}

TEST(JsonReaderTest, ScalarNumbersEqualGetNumber) {
  std::mt19937_64 rng(11);
  std::string doc = "{";
  std::vector<std::string> texts = {"0",
                                    "-0",
                                    "0.0",
                                    "-0.0",
                                    "1e5",
                                    "1E-5",
                                    "NaN",
                                    "Infinity",
                                    "-Infinity",
                                    "123456789012345678",
                                    "1234567890123456789",
                                    "0.000000000000000000001234",
                                    "18446744073709551616",
                                    "00000000000000000000.5",
                                    "7.0e+22",
                                    "5e-324"};
  for (int k = 0; k < 20000; ++k) {
    char buf[64];
    uint64_t bits = rng();
    double d;
    if (k % 2 == 0) {
      float f;
      uint32_t b32 = static_cast<uint32_t>(bits);
      memcpy(&f, &b32, 4);
      d = f;
    } else {
      memcpy(&d, &bits, 8);
    }
    if (!std::isfinite(d)) continue;
    texts.emplace_back(buf, std::to_chars(buf, buf + sizeof(buf), d).ptr);
  }
  for (size_t i = 0; i < texts.size(); ++i) doc += std::string(i ? ",\n " : "\n ") + "\"k\": " + texts[i];
  doc += "\n}";
  JsonReader fast(doc, "t.json");
  JsonReader slow(doc, "t.json");
  ASSERT_TRUE(fast.BeginObject());
  ASSERT_TRUE(slow.BeginObject());
  std::string_view key;
  JsonReader::Scalar v;
  for (const std::string& t : texts) {
    ASSERT_EQ(fast.NextScalar(&key, &v), JsonReader::Member::kMore) << t;
    ASSERT_EQ(slow.NextKey(&key), JsonReader::kMore);
    JsonNumber n;
    ASSERT_TRUE(slow.GetNumber(&n)) << t;
    EXPECT_EQ(v.number.is_integer, n.is_integer) << t;
    EXPECT_EQ(v.number.integer, n.integer) << t;
    EXPECT_EQ(memcmp(&v.number.number, &n.number, 8) == 0 || (std::isnan(n.number) && std::isnan(v.number.number)),
              true)
        << t;
    EXPECT_EQ(fast.offset(), slow.offset()) << t;
  }
}

}  // namespace
}  // namespace graph_ascend::json
