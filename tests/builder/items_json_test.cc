// The items of a .vis.db row as msprobe writes them (formats/model/foreign_item.h,
// formats/model/item_text.h): each value's text by msprobe's float rule, the object as
// Python's json.dumps writes it. The expected texts are Python's, computed once with
//
//   python3 -c 'import json
//   def fmt(x):  # msprobe export: repr with an exponent -> "{:.6e}", else round(x, 6)
//       return f"{x:.6e}" if "e" in repr(x) else repr(round(x, 6))
//   for x in [-0.0, 1e-05, ...]: print(json.dumps(json.dumps(fmt(x))))'
//
// (Python 3.11; the whole objects likewise with json.dumps(json.dumps({key: {...}}))).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/py_format.h"
#include "formats/model/foreign_item.h"
#include "formats/model/item_json.h"
#include "formats/model/item_text.h"
#include "json/json_reader.h"

namespace graph_ascend::formats {
namespace {

using KV = std::vector<std::pair<std::string, std::string>>;

void AddField(vis::Item* item, const std::string& name, const vis::Value& v) {
  vis::Field* f = item->add_field();
  f->set_name(name);
  *f->mutable_value() = v;
}

vis::Value Num(double x) {
  vis::Value v;
  v.set_number(x);
  return v;
}

// A float scalar argument as msprobe dumps it: its value and statistics are the number's text.
google::protobuf::RepeatedPtrField<vis::Item> Scalar(const vis::Value& value, const std::string& type) {
  google::protobuf::RepeatedPtrField<vis::Item> items;
  vis::Item* item = items.Add();
  item->set_key("F.x.0.forward.input.alpha");
  vis::Value t;
  t.set_text(type);
  AddField(item, "type", t);
  AddField(item, "value", value);
  return items;
}

// The quoted text of "Max" in the items JSON.
std::string MaxText(const std::string& json) {
  size_t at = json.find("\"Max\": ");
  if (at == std::string::npos) return "<no Max>";
  at += 7;
  size_t end = json.find("\", ", at + 1);
  return json.substr(at, end + 1 - at);
}

TEST(ItemsJsonTest, FloatsAsPythonWritesThem) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::pair<double, const char*> cases[] = {
      {-0.0, "\"-0.0\""},
      {0.0, "\"0.0\""},
      {1e-05, "\"1.000000e-05\""},
      {0.0001, "\"0.0001\""},
      {1e16, "\"1.000000e+16\""},
      {9999999999999998.0, "\"9999999999999998.0\""},
      {5e-324, "\"4.940656e-324\""},
      {std::nan(""), "\"nan\""},
      {inf, "\"inf\""},
      {-inf, "\"-inf\""},
      {3.0, "\"3.0\""},
      {1e15, "\"1000000000000000.0\""},
      {123456789.0, "\"123456789.0\""},
      {-2.5, "\"-2.5\""},
      {0.1234565, "\"0.123456\""},  // the binary value lies just below the half
      {1.0000005, "\"1.000001\""},
      {9.090909090909092, "\"9.090909\""},
      {0.30000000000000004, "\"0.3\""},
      {123456789.1234567, "\"123456789.123457\""},
      {99999999.9999996, "\"100000000.0\""},
      {0.00012345678, "\"0.000123\""},
      {1234567890.123456, "\"1234567890.123456\""},  // 16 digits: read back, not the short way
      {-123.456789012, "\"-123.456789\""},
      {1.7976931348623157e308, "\"1.797693e+308\""},
      {2.2250738585072014e-308, "\"2.225074e-308\""},
      {0.000999999949, "\"0.001\""},
      {4503599627370497.5, "\"4503599627370498.0\""},
  };
  for (const auto& [x, python] : cases) {
    EXPECT_EQ(MaxText(ItemsJson(Scalar(Num(x), "float"), vis::MODE_STATISTICS, "F.x.0.forward")), python)
        << PyRepr(x);
  }
}

TEST(ItemsJsonTest, LargeIntegersAsPythonWritesThem) {
  const std::pair<int64_t, const char*> cases[] = {
      {9007199254740993, "\"9007199254740993\""},  // 2**53 + 1: no double in between
      {std::numeric_limits<int64_t>::min(), "\"-9223372036854775808\""},
      {std::numeric_limits<int64_t>::max(), "\"9223372036854775807\""},
  };
  for (const auto& [n, python] : cases) {
    vis::Value v;
    v.set_integer(n);
    EXPECT_EQ(MaxText(ItemsJson(Scalar(v, "int"), vis::MODE_STATISTICS, "F.x.0.forward")), python);
  }
}

TEST(ItemsJsonTest, WholeObjectsAsJsonDumpsWritesThem) {
  EXPECT_EQ(ItemsJson(Scalar(Num(0.1234565), "float"), vis::MODE_STATISTICS, "F.x.0.forward"),
            "{\"F.x.0.forward.input.alpha\": {\"type\": \"float\", \"value\": \"0.123456\", \"data_name\": \"-1\", "
            "\"requires_grad\": \"null\", \"Max\": \"0.123456\", \"Min\": \"0.123456\", \"Mean\": \"0.123456\", "
            "\"Norm\": \"0.123456\", \"dtype\": \"<class float>\", \"shape\": \"[]\"}}");
  // Quotes, backslashes, control and non-ASCII characters escaped as ensure_ascii does
  // (a surrogate pair above the BMP); msprobe drops single quotes and writes None as null.
  vis::Value text;
  text.set_text("a\"b\\c \xc3\xa9 \xf0\x9f\x98\x80 \t None'");
  auto items = Scalar(text, "str");
  items[0].set_key("T.x.0.forward.input.s");
  const std::string v = "\"a\\\"b\\\\c \\u00e9 \\ud83d\\ude00 \\t null\"";
  EXPECT_EQ(ItemsJson(items, vis::MODE_STATISTICS, "T.x.0.forward"),
            "{\"T.x.0.forward.input.s\": {\"type\": \"str\", \"value\": " + v +
                ", \"data_name\": \"-1\", \"requires_grad\": \"null\", \"Max\": " + v + ", \"Min\": " + v +
                ", \"Mean\": " + v + ", \"Norm\": " + v + ", \"dtype\": \"<class str>\", \"shape\": \"[]\"}}");
}

// The short way of round(x, 6) (the rounded decimal itself when it has 15 digits or fewer)
// against reading that decimal back and taking its repr, over many magnitudes.
TEST(ItemsJsonTest, RoundedFloatsAsReadBack) {
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<double> mantissa(1.0, 10.0);
  std::uniform_int_distribution<int> exponent(-5, 16);
  for (int i = 0; i < 200000; ++i) {
    double x = mantissa(rng) * std::pow(10.0, exponent(rng)) * (i % 2 ? -1 : 1);
    if (i % 7 == 0) x = std::round(x * 1e3) / 1e3;  // short decimals too
    std::string repr = PyRepr(x);
    std::string python = "\"" + (repr.find('e') != std::string::npos ? PyExp6(x) : PyRound6(x)) + "\"";
    ASSERT_EQ(MaxText(ItemsJson(Scalar(Num(x), "float"), vis::MODE_STATISTICS, "F.x.0.forward")), python) << repr;
  }
}

TEST(ItemsJsonTest, ReusedRowGivesWhatAFreshOneGives) {
  vis::Item tensor;
  tensor.set_key("T.x.0.forward.input.0");
  vis::Value t;
  t.set_text("torch.Tensor");
  AddField(&tensor, "type", t);
  t.set_text("torch.float32");
  AddField(&tensor, "dtype", t);
  AddField(&tensor, "Max", Num(1.5));
  vis::Item group;
  group.set_key("Distributed.all_reduce.0.forward.input.group");
  t.set_text("torch.ProcessGroup");
  AddField(&group, "type", t);
  vis::Value ranks;
  ranks.set_json("[0, 1]");
  AddField(&group, "group_ranks", ranks);
  t.set_text("77849d8c");
  AddField(&group, "group_id", t);
  vis::Metric* m = group.add_metric();
  m->set_name("Max diff");
  m->set_text("0.0");
  vis::ItemText row;
  for (const vis::Item* item : {&tensor, &group, &tensor, &group}) {
    vis::FormatItemTo(*item, vis::MODE_STATISTICS, "Distributed.all_reduce.0.forward", &row);
    EXPECT_EQ(KV(row.begin(), row.end()),
              vis::FormatItem(*item, vis::MODE_STATISTICS, "Distributed.all_reduce.0.forward"))
        << item->key();
  }
  // The process group keeps its four fields, in this order (not {"value": "null"}).
  vis::FormatItemTo(group, vis::MODE_STATISTICS, "Distributed.all_reduce.0.forward", &row);
  EXPECT_EQ(KV(row.begin(), row.end()), (KV{{"type", "torch.ProcessGroup"},
                                            {"group_ranks", "[0, 1]"},
                                            {"group_id", "77849d8c"},
                                            {"data_name", "-1"}}));
}

// AppendItemJson writes the usual items in one pass and the rest through FormatItemTo: both
// must give FormatItem's pairs as json.dumps writes them. Items drawn from the pieces each rule
// of FormatItemTo looks at (a dtype or none, null or empty; Max missing or null; data_name
// null, empty or missing; md5 in md5 mode or not; names twice; metrics named as fields or
// defaults; process groups, torch.Size, ellipsis, src; batch_isend_irecv's erased fields;
// texts with quotes, None, long decimals, escapes).
TEST(ItemsJsonTest, OnePassGivesFormatItemsPairs) {
  auto reference = [](const vis::Item& item, vis::CompareMode mode, const std::string& node) {
    std::string out = "{";
    bool first = true;
    for (const auto& [k, v] : vis::FormatItem(item, mode, node)) {
      if (!first) out += ", ";
      first = false;
      json::AppendQuoted(k, &out, true);
      out += ": ";
      json::AppendQuoted(v, &out, true);
    }
    return out + "}";
  };
  auto text = [](const std::string& t) {
    vis::Value v;
    v.set_text(t);
    return v;
  };
  const std::vector<std::string> names = {"type", "dtype", "shape", "Max", "Min", "Mean", "Norm", "requires_grad",
                                          "data_name", "md5", "value", "op", "peer", "tag", "group_id", "group_ranks",
                                          "Max diff", "k\"ey\xc3\xa9"};
  const std::vector<vis::Value> values = [&] {
    std::vector<vis::Value> v = {text("torch.float32"), text(""), text("None"), text(" "), text("a'b"),
                                 text("0.12345678%"), text("12.3456789"), text("-1"), text("\x01\"\\"),
                                 text("torch.ProcessGroup"), text("torch.Size"), text("ellipsis"),
                                 text("slice"), text("null")};
    vis::Value x;
    for (double d : {0.1234565, -0.0, 1e-5, 2.5, 1e17, std::nan("")}) x.set_number(d), v.push_back(x);
    x.set_integer(-7), v.push_back(x);
    x.set_boolean(true), v.push_back(x);
    x.set_null(true), v.push_back(x);
    x.set_json("[2, 3]"), v.push_back(x);
    x.set_json("{\"a\": None}"), v.push_back(x);
    v.emplace_back();  // no kind
    return v;
  }();
  const std::vector<std::string> metric_names = {"Max diff", "MaxRelativeErr", "Cosine", "Max", "dtype", "md5"};
  const std::vector<std::pair<std::string, double>> metric_texts = {
      {"0.0", 0}, {"0.0%", 0}, {"N/A", 0}, {"12", 12}, {"1.5e-05", 1.5e-5}, {"0.123456789%", 0.00123}, {"True", 1},
      {"nan", 0}, {"-3", -3}, {"", 0}, {"1e", 1}, {" 2.5", 2.5}};
  std::mt19937_64 rng(29);
  auto pick = [&rng](size_t n) { return static_cast<size_t>(rng() % n); };
  for (int i = 0; i < 40000; ++i) {
    vis::Item item;
    const char* keys[] = {"T.x.0.forward.input.0", "D.send.0.forward.input.dst", "F.x.0.forward.output.0"};
    item.set_key(keys[pick(3)]);
    if (pick(50) == 0) item.set_is_null(true);
    // Mostly a tensor's fields in their order, with a few changes.
    bool usual = pick(3) != 0;
    if (usual) {
      AddField(&item, "type", text("torch.Tensor"));
      AddField(&item, "dtype", text("torch.float32"));
      AddField(&item, "shape", values[pick(values.size())]);
      for (const char* s : {"Max", "Min", "Mean", "Norm"}) {
        AddField(&item, s, Num(static_cast<double>(rng() % 1000) / 7));
      }
    }
    for (size_t k = pick(usual ? 3 : 7); k > 0; --k) {
      AddField(&item, names[pick(names.size())], values[pick(values.size())]);
    }
    for (size_t k = pick(4); k > 0; --k) {
      vis::Metric* m = item.add_metric();
      m->set_name(pick(4) == 0 ? metric_names[pick(metric_names.size())] : metric_names[pick(3)]);
      const auto& [t, v] = metric_texts[pick(metric_texts.size())];
      m->set_text(t);
      m->set_value(v);
      m->set_has_value(pick(5) != 0);
    }
    vis::CompareMode mode = pick(3) == 0 ? vis::MODE_MD5 : vis::MODE_STATISTICS;
    std::string node = pick(5) == 0 ? "Distributed.batch_isend_irecv.0.forward" : "T.x.0.forward";
    std::string got;
    vis::AppendItemJson(item, mode, node, &got);
    ASSERT_EQ(got, reference(item, mode, node)) << item.DebugString() << mode << node;
  }
}

}  // namespace
}  // namespace graph_ascend::formats
