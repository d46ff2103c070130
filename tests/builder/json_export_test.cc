// msprobe's JSON .vis (reference §10): value formatting of items (§4.2
// normalisation, §10.5 formatting, the reference's own unit-test cases of
// §13.1), Python's number texts (builder/base/py_format.h), the
// json.dump(indent=4) writer (§10.6) and the exporter on a built graph.
#include "formats/msprobe_json/json_export.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "base/py_format.h"
#include "graph/graph_builder.h"
#include "json/json_writer.h"
#include "test_files.h"
#include "vis_writer/graph_writer.h"

namespace graph_ascend::vis {
namespace {

using graph_ascend::testing::DumpJson;
using graph_ascend::testing::ReadFile;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::Tensor;
using graph_ascend::testing::WriteDumpDir;

using KV = std::vector<std::pair<std::string, std::string>>;

const double kInf = std::numeric_limits<double>::infinity();

Value Num(double x) {
  Value v;
  v.set_number(x);
  return v;
}
Value Int(int64_t x) {
  Value v;
  v.set_integer(x);
  return v;
}
Value Text(const std::string& s) {
  Value v;
  v.set_text(s);
  return v;
}
Value Json(const std::string& s) {
  Value v;
  v.set_json(s);
  return v;
}
Value Bool(bool b) {
  Value v;
  v.set_boolean(b);
  return v;
}
Value Null() {
  Value v;
  v.set_null(true);
  return v;
}

Item MakeItem(const std::string& key, const std::vector<std::pair<std::string, Value>>& fields) {
  Item item;
  item.set_key(key);
  for (const auto& [name, value] : fields) {
    Field* f = item.add_field();
    f->set_name(name);
    *f->mutable_value() = value;
  }
  return item;
}
void AddMetric(Item* item, const std::string& name, const std::string& text, double value = 0, bool has_value = false) {
  Metric* m = item->add_metric();
  m->set_name(name);
  m->set_text(text);
  m->set_value(value);
  m->set_has_value(has_value);
}

// The formatted value of `key`, or "<absent>".
std::string Get(const KV& kv, const std::string& key) {
  for (const auto& [k, v] : kv) {
    if (k == key) return v;
  }
  return "<absent>";
}
std::vector<std::string> KeysOf(const KV& kv) {
  std::vector<std::string> out;
  for (const auto& [k, v] : kv) out.push_back(k);
  return out;
}

// A float scalar argument as msprobe dumps it; formatting shows in its statistics.
KV FormatScalar(Value value, CompareMode mode = MODE_NONE) {
  return FormatItem(MakeItem("F.x.0.forward.input.alpha", {{"type", Text("float")}, {"value", value}}), mode,
                    "F.x.0.forward");
}

// §13.1: `_format_data` of the reference's unit tests.
TEST(FormatItemTest, ReferenceFormatDataCases) {
  EXPECT_EQ(Get(FormatScalar(Num(0.123456789)), "Max"), "0.123457");
  EXPECT_EQ(Get(FormatScalar(Num(1.123123123123e-11)), "Max"), "1.123123e-11");
  EXPECT_EQ(Get(FormatScalar(Num(kInf)), "Max"), "inf");
  EXPECT_EQ(Get(FormatScalar(Num(-kInf)), "Mean"), "-inf");
  EXPECT_EQ(Get(FormatScalar(Num(std::nan(""))), "Norm"), "nan");
  EXPECT_EQ(Get(FormatScalar(Int(-1)), "Min"), "-1");
  KV s = FormatItem(MakeItem("F.x.0.forward.input.s", {{"type", Text("str")}, {"value", Text("a'b")}}), MODE_NONE,
                    "F.x.0.forward");
  EXPECT_EQ(Get(s, "dtype"), "<class str>") << "<class 'str'> without quotes";
  EXPECT_EQ(Get(s, "value"), "ab");
  EXPECT_EQ(Get(s, "requires_grad"), "null") << "None -> null";
  // An all-null item is {"value": "null"}.
  Item null_arg;
  null_arg.set_key("F.x.0.forward.input.1");
  null_arg.set_is_null(true);
  EXPECT_EQ(FormatItem(null_arg, MODE_STATISTICS, "F.x.0.forward"), (KV{{"value", "null"}}));
}

// §13.1: `_format_decimal_string`.
TEST(FormatItemTest, ReferenceDecimalStringCases) {
  Item item = MakeItem("F.x.0.forward.output.0", {{"type", Text("torch.Tensor")},
                                                  {"dtype", Text("torch.float32")},
                                                  {"shape", Json("[2]")},
                                                  {"Max", Num(1.0)},
                                                  {"Min", Num(0.0)},
                                                  {"Mean", Num(0.5)},
                                                  {"Norm", Num(1.0)},
                                                  {"note", Text("0.12345678")},
                                                  {"odd", Text("0.0.25698548%")},
                                                  {"minus", Text("-1")},
                                                  {"neg", Text("-0.12345678")}});
  AddMetric(&item, "MaxRelativeErr", "0.123456789%");
  AddMetric(&item, "MinRelativeErr", "66.66666666666666%");
  AddMetric(&item, "MeanRelativeErr", "20.0%");
  KV kv = FormatItem(item, MODE_STATISTICS, "F.x.0.forward");
  EXPECT_EQ(Get(kv, "MaxRelativeErr"), "0.123457%");
  EXPECT_EQ(Get(kv, "MinRelativeErr"), "66.666667%");
  EXPECT_EQ(Get(kv, "MeanRelativeErr"), "20.0%");
  EXPECT_EQ(Get(kv, "note"), "0.123457");
  EXPECT_EQ(Get(kv, "odd"), "0.0.25698548%");
  EXPECT_EQ(Get(kv, "minus"), "-1");
  EXPECT_EQ(Get(kv, "neg"), "-0.12345678") << "negative numbers are not re-formatted";
}

// §10.4 / §10.8: a statistics tensor keeps its dump order, gains data_name.
TEST(FormatItemTest, TensorItem) {
  Item item = MakeItem("M.fc.Linear.forward.0.output.0", {{"type", Text("torch.Tensor")},
                                                          {"dtype", Text("torch.float32")},
                                                          {"shape", Json("[2, 3]")},
                                                          {"Max", Num(2.0)},
                                                          {"Min", Num(-2.0)},
                                                          {"Mean", Num(0.1)},
                                                          {"Norm", Num(3.0)},
                                                          {"requires_grad", Bool(true)}});
  AddMetric(&item, "Max diff", "-0.5", -0.5, true);
  AddMetric(&item, "Min diff", "0.19999999999999998", 0.19999999999999998, true);
  AddMetric(&item, "Mean diff", "2", 2, true);
  AddMetric(&item, "L2norm diff", "inf\t", kInf, false);
  AddMetric(&item, "MaxRelativeErr", "20.0%", 0.2, true);
  AddMetric(&item, "Requires_grad Consistent", "True", 1, true);
  KV kv = FormatItem(item, MODE_STATISTICS, "M.fc.Linear.forward.0");
  EXPECT_EQ(kv, (KV{{"type", "torch.Tensor"},
                    {"dtype", "torch.float32"},
                    {"shape", "[2, 3]"},
                    {"Max", "2.0"},
                    {"Min", "-2.0"},
                    {"Mean", "0.1"},
                    {"Norm", "3.0"},
                    {"requires_grad", "True"},
                    {"data_name", "-1"},
                    {"Max diff", "-0.5"},
                    {"Min diff", "0.2"},
                    {"Mean diff", "2"},
                    {"L2norm diff", "inf\t"},
                    {"MaxRelativeErr", "20.0%"},
                    {"Requires_grad Consistent", "True"}}));
}

// §4.4: a bool kwarg.
TEST(FormatItemTest, BoolKwargInReferenceOrder) {
  KV kv =
      FormatItem(MakeItem("Functional.relu.0.forward.input.inplace", {{"type", Text("bool")}, {"value", Bool(false)}}),
                 MODE_STATISTICS, "Functional.relu.0.forward");
  EXPECT_EQ(kv, (KV{{"type", "bool"},
                    {"value", "False"},
                    {"data_name", "-1"},
                    {"requires_grad", "null"},
                    {"Max", "False"},
                    {"Min", "False"},
                    {"Mean", "False"},
                    {"Norm", "False"},
                    {"dtype", "<class bool>"},
                    {"shape", "[]"}}));
}

TEST(FormatItemTest, NullStatisticsMakeANullItem) {
  // An empty tensor: statistics null.
  KV empty = FormatItem(MakeItem("T.x.0.forward.output.0", {{"type", Text("torch.Tensor")},
                                                            {"dtype", Text("torch.float32")},
                                                            {"shape", Json("[0]")},
                                                            {"Max", Null()},
                                                            {"Min", Null()},
                                                            {"Mean", Null()},
                                                            {"Norm", Null()}}),
                        MODE_STATISTICS, "T.x.0.forward");
  EXPECT_EQ(empty, (KV{{"value", "null"}}));
  // torch.Size and slice carry no statistics either (§4.2 sets none for them).
  EXPECT_EQ(FormatItem(MakeItem("T.view.0.forward.input.1", {{"type", Text("torch.Size")}, {"value", Json("[2, 3]")}}),
                       MODE_STATISTICS, "T.view.0.forward"),
            (KV{{"value", "null"}}));
}

TEST(FormatItemTest, SpecialLeaves) {
  KV ellipsis = FormatItem(MakeItem("T.x.0.forward.input.1", {{"type", Text("ellipsis")}, {"value", Text("...")}}),
                           MODE_NONE, "T.x.0.forward");
  EXPECT_EQ(Get(ellipsis, "dtype"), "ellipsis");
  EXPECT_EQ(Get(ellipsis, "shape"), "[]");
  EXPECT_EQ(Get(ellipsis, "Max"), "...");

  KV dst = FormatItem(MakeItem("Distributed.send.0.forward.input.dst", {{"type", Text("int")}, {"value", Int(1)}}),
                      MODE_MD5, "Distributed.send.0.forward");
  EXPECT_EQ(Get(dst, "dtype"), "int") << "src/dst keep their type as dtype";
  EXPECT_EQ(Get(dst, "Max"), "1");
  EXPECT_EQ(Get(dst, "md5"), "1");

  Item group =
      MakeItem("Distributed.all_reduce.0.forward.input.group",
               {{"type", Text("torch.ProcessGroup")}, {"group_ranks", Json("[0, 1]")}, {"group_id", Text("77849d8c")}});
  EXPECT_EQ(
      FormatItem(group, MODE_STATISTICS, "Distributed.all_reduce.0.forward"),
      (KV{{"type", "torch.ProcessGroup"}, {"group_ranks", "[0, 1]"}, {"group_id", "77849d8c"}, {"data_name", "-1"}}));

  KV list =
      FormatItem(MakeItem("T.x.0.forward.input.0", {{"type", Text("list")}, {"value", Json("[1, 2.5, null, true]")}}),
                 MODE_NONE, "T.x.0.forward");
  EXPECT_EQ(Get(list, "value"), "[1, 2.5, null, True]") << "str() of the list, None -> null";
  EXPECT_EQ(Get(list, "dtype"), "<class list>");
}

TEST(FormatItemTest, Md5IsKeptOnlyInMd5Mode) {
  Item item = MakeItem("T.x.0.forward.output.0", {{"type", Text("torch.Tensor")},
                                                  {"dtype", Text("torch.float32")},
                                                  {"shape", Json("[2]")},
                                                  {"Max", Num(1.0)},
                                                  {"Min", Num(0.0)},
                                                  {"Mean", Num(0.5)},
                                                  {"Norm", Num(1.0)},
                                                  {"md5", Text("0d968558")}});
  EXPECT_EQ(Get(FormatItem(item, MODE_MD5, "T.x.0.forward"), "md5"), "0d968558");
  EXPECT_EQ(Get(FormatItem(item, MODE_STATISTICS, "T.x.0.forward"), "md5"), "<absent>");
  EXPECT_EQ(Get(FormatItem(item, MODE_NONE, "T.x.0.forward"), "md5"), "<absent>");
  // Without a dumped md5 the CRC-32 of str(value) is written: "00000000" for a tensor.
  Item plain = MakeItem("T.x.0.forward.output.0", {{"type", Text("torch.Tensor")},
                                                   {"dtype", Text("torch.float32")},
                                                   {"shape", Json("[2]")},
                                                   {"Max", Num(1.0)},
                                                   {"Min", Num(0.0)},
                                                   {"Mean", Num(0.5)},
                                                   {"Norm", Num(1.0)}});
  EXPECT_EQ(Get(FormatItem(plain, MODE_MD5, "T.x.0.forward"), "md5"), "00000000");
  EXPECT_EQ(Get(FormatScalar(Int(3), MODE_MD5), "md5"), "6dd28e9b");
}

TEST(FormatItemTest, BatchIsendIrecvDropsP2PKeys) {
  Item item = MakeItem("Distributed.batch_isend_irecv.0.forward.output.0.0", {{"type", Text("int")},
                                                                              {"value", Int(1)},
                                                                              {"op", Text("isend")},
                                                                              {"peer", Int(1)},
                                                                              {"tag", Int(0)},
                                                                              {"group_id", Text("g")}});
  KV kv = FormatItem(item, MODE_NONE, "Distributed.batch_isend_irecv.0.forward");
  for (const char* k : {"op", "peer", "tag", "group_id"}) EXPECT_EQ(Get(kv, k), "<absent>") << k;
  EXPECT_EQ(Get(FormatItem(item, MODE_NONE, "Distributed.isend.0.forward"), "op"), "isend");
}

TEST(FormatItemTest, StringRules) {
  KV kv = FormatItem(MakeItem("T.x.0.forward.output.0", {{"type", Text("torch.Tensor")},
                                                         {"dtype", Text("torch.float32")},
                                                         {"shape", Json("[]")},
                                                         {"Max", Num(1.0)},
                                                         {"Min", Num(0.0)},
                                                         {"Mean", Num(0.5)},
                                                         {"Norm", Num(1.0)},
                                                         {"a", Text("None of 'these'")},
                                                         {"b", Text(" ")},
                                                         {"c", Text("")},
                                                         {"d", Null()}}),
                     MODE_NONE, "T.x.0.forward");
  EXPECT_EQ(Get(kv, "a"), "null of these");
  EXPECT_EQ(Get(kv, "b"), "null");
  EXPECT_EQ(Get(kv, "c"), "");
  EXPECT_EQ(Get(kv, "d"), "null");
  EXPECT_EQ(Get(kv, "shape"), "[]");
}

TEST(FormatItemTest, TensorMetricsAreRoundedLikeNumbers) {
  Item item = MakeItem("T.x.0.forward.output.0", {{"type", Text("torch.Tensor")},
                                                  {"dtype", Text("torch.float32")},
                                                  {"shape", Json("[2]")},
                                                  {"Max", Num(1.0)},
                                                  {"Min", Num(0.0)},
                                                  {"Mean", Num(0.5)},
                                                  {"Norm", Num(1.0)},
                                                  {"data_name", Text("T.x.0.forward.output.0.pt")}});
  AddMetric(&item, "Cosine", "0.993999088548", 0.993999088548, true);
  AddMetric(&item, "EucDist", "1e-07", 1e-07, true);
  AddMetric(&item, "MaxAbsErr", "unsupported");
  AddMetric(&item, "One Thousandth Err Ratio", "0.0625", 0.0625, true);
  KV kv = FormatItem(item, MODE_TENSOR, "T.x.0.forward");
  EXPECT_EQ(Get(kv, "Cosine"), "0.993999");
  EXPECT_EQ(Get(kv, "EucDist"), "1.000000e-07");
  EXPECT_EQ(Get(kv, "MaxAbsErr"), "unsupported");
  EXPECT_EQ(Get(kv, "One Thousandth Err Ratio"), "0.0625");
  EXPECT_EQ(Get(kv, "data_name"), "T.x.0.forward.output.0.pt") << "kept with its extension, at its place";
  EXPECT_EQ(KeysOf(kv)[7], "data_name");
}

// builder/base/py_format.h against CPython's repr / round / format.
TEST(PyFormatTest, Repr) {
  EXPECT_EQ(PyRepr(0.1), "0.1");
  EXPECT_EQ(PyRepr(1e-05), "1e-05");
  EXPECT_EQ(PyRepr(0.0001), "0.0001");
  EXPECT_EQ(PyRepr(1.234e-05), "1.234e-05");
  EXPECT_EQ(PyRepr(1e16), "1e+16");
  EXPECT_EQ(PyRepr(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(PyRepr(12345678901234567.0), "1.2345678901234568e+16");
  EXPECT_EQ(PyRepr(3.0), "3.0");
  EXPECT_EQ(PyRepr(-0.0), "-0.0");
  EXPECT_EQ(PyRepr(0.0), "0.0");
  EXPECT_EQ(PyRepr(9.090909090909092), "9.090909090909092");
  EXPECT_EQ(PyRepr(0.30000000000000004), "0.30000000000000004");
  EXPECT_EQ(PyRepr(1e22), "1e+22");
  EXPECT_EQ(PyRepr(5e-324), "5e-324");
  EXPECT_EQ(PyRepr(-2.5e-07), "-2.5e-07");
  EXPECT_EQ(PyRepr(1.5e200), "1.5e+200");
  EXPECT_EQ(PyRepr(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(PyRepr(-123.456789012), "-123.456789012");
  EXPECT_EQ(PyRepr(kInf), "inf");
  EXPECT_EQ(PyRepr(-kInf), "-inf");
  EXPECT_EQ(PyRepr(std::nan("")), "nan");
}

TEST(PyFormatTest, RoundSixIsCorrectlyRounded) {
  EXPECT_EQ(PyRound6(9.090909090909092), "9.090909");
  EXPECT_EQ(PyRound6(0.30000000000000004), "0.3");
  EXPECT_EQ(PyRound6(1.0000005), "1.000001");
  EXPECT_EQ(PyRound6(0.1234565), "0.123456") << "the binary value is just below the half";
  EXPECT_EQ(PyRound6(2.5e-07), "0.0");
  EXPECT_EQ(PyRound6(1.5e-06), "2e-06");
  EXPECT_EQ(PyRound6(-123.456789012), "-123.456789");
  EXPECT_EQ(PyRound6(1e16), "1e+16");
  EXPECT_EQ(PyRound6(kInf), "inf");
}

TEST(PyFormatTest, ExponentSix) {
  EXPECT_EQ(PyExp6(1.123123123123e-11), "1.123123e-11");
  EXPECT_EQ(PyExp6(1e16), "1.000000e+16");
  EXPECT_EQ(PyExp6(5e-324), "4.940656e-324");
  EXPECT_EQ(PyExp6(-2.5e-07), "-2.500000e-07");
}

TEST(PyFormatTest, FloatRuleOfTheExport) {
  // repr in exponent form (|x| < 1e-4 or >= 1e16) -> "{:.6e}", else round(x, 6).
  EXPECT_EQ(Get(FormatScalar(Num(1e16)), "Max"), "1.000000e+16");
  EXPECT_EQ(Get(FormatScalar(Num(1234567890123456.0)), "Max"), "1234567890123456.0");
  EXPECT_EQ(Get(FormatScalar(Num(0.0001)), "Max"), "0.0001");
  EXPECT_EQ(Get(FormatScalar(Num(1.234e-05)), "Max"), "1.234000e-05");
  EXPECT_EQ(Get(FormatScalar(Num(0.30000000000000004)), "Max"), "0.3");
  EXPECT_EQ(Get(FormatScalar(Num(-2.5e-07)), "Max"), "-2.500000e-07");
}

// §10.6: json.dump(indent=4) layout, ASCII escapes.
TEST(JsonWriterTest, PythonIndentFourLayout) {
  std::string out;
  json::JsonWriter w(&out);
  w.BeginObject();
  w.Key("a");
  w.BeginObject();
  w.EndObject();
  w.Key("b");
  w.BeginArray();
  w.String("x");
  w.Raw("1.5");
  w.Null();
  w.Bool(true);
  w.EndArray();
  w.Key("c");
  w.BeginArray();
  w.EndArray();
  w.Key("\xE6\xAF\x94");
  w.String("q\"\n");
  w.EndObject();
  EXPECT_EQ(out,
            "{\n"
            "    \"a\": {},\n"
            "    \"b\": [\n"
            "        \"x\",\n"
            "        1.5,\n"
            "        null,\n"
            "        true\n"
            "    ],\n"
            "    \"c\": [],\n"
            "    \"\\u6bd4\": \"q\\\"\\n\"\n"
            "}");
}

// The exporter on a graph built from a hand-made dump.
TEST(ExportJsonTest, BuildFileLayout) {
  TempDir dir;
  const std::string t = Tensor("[2, 4]", "1.0", "-1.0", "0.0", "2.0");
  WriteDumpDir(
      dir / "dump", DumpJson(R"("Module.fc.Linear.forward.0": {"input_args": [)" + t + R"(], "output": [)" + t + "]}"),
      R"({"Module.fc.Linear.forward.0": null, "Torch.matmul.0.forward": "Module.fc.Linear.forward.0"})",
      R"js({"0": [["Module.fc.Linear.forward.0"], ["File /w/net.py, line 12, in forward, \n y = self.fc(x)"]]})js");
  StringPool pool;
  auto side = graph::BuildSide(dir / "dump", &pool, graph::BuildOptions{});
  ASSERT_TRUE(side.ok()) << side.error().ToString();
  graph::AssignMicroSteps((*side)->graph.get());
  WriteRequest request;
  request.meta.set_kind(GRAPH_BUILD);
  request.meta.set_micro_steps(1);
  request.npu = side->get();
  ASSERT_TRUE(WriteVis(dir / "build.vis", request).ok());
  Status st = ExportJson(dir / "build.vis", dir / "build.json");
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  std::string text = ReadFile(dir / "build.json");
  const std::string head =
      "{\n"
      "    \"root\": \"DefaultModel\",\n"
      "    \"dump_data_dir\": null,\n"
      "    \"node\": {\n"
      "        \"DefaultModel\": {\n"
      "            \"id\": \"DefaultModel\",\n"
      "            \"node_type\": 0,\n"
      "            \"output_data\": {},\n"
      "            \"input_data\": {},\n"
      "            \"upnode\": \"None\",\n"
      "            \"subnodes\": [\n"
      "                \"Module.fc.Linear.forward.0\"\n"
      "            ],\n"
      "            \"matched_node_link\": [],\n"
      "            \"suggestions\": {},\n"
      "            \"stack_info\": [],\n"
      "            \"data\": {}\n"
      "        },\n"
      "        \"Module.fc.Linear.forward.0\": {\n"
      "            \"id\": \"Module.fc.Linear.forward.0\",\n"
      "            \"node_type\": 0,\n"
      "            \"output_data\": {\n"
      "                \"Module.fc.Linear.forward.0.output.0\": {\n"
      "                    \"type\": \"torch.Tensor\",\n";
  EXPECT_EQ(text.substr(0, head.size()), head);
  EXPECT_NE(text.find("\"stack_info\": [\n                \"File /w/net.py, line 12, in forward, \\n y = self.fc(x)\"\n"
                      "            ],\n            \"micro_step_id\": 0,\n"),
            std::string::npos)
      << "root children carry micro_step_id after stack_info";
  EXPECT_NE(text.find("\"upnode\": \"Module.fc.Linear.forward.0\""), std::string::npos);
  const std::string tail = "    \"MicroSteps\": 1,\n    \"OverflowCheck\": false\n}";
  ASSERT_GE(text.size(), tail.size());
  EXPECT_EQ(text.substr(text.size() - tail.size()), tail) << "no trailing newline, no task in a build";
  EXPECT_EQ(text.find("\"task\""), std::string::npos);
  EXPECT_EQ(text.find("\"Colors\""), std::string::npos);
  std::filesystem::directory_iterator it(dir.path()), end;
  for (; it != end; ++it) EXPECT_EQ(it->path().string().find(".tmp"), std::string::npos) << it->path();
}

TEST(ExportJsonTest, Errors) {
  TempDir dir;
  testing::WriteFile(dir / "not.vis", "not a vis file at all, long enough to have a header and a trailer");
  Status st = ExportJson(dir / "not.vis", dir / "out.json");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().file, dir / "not.vis");
  EXPECT_FALSE(std::filesystem::exists(dir / "out.json"));
}

}  // namespace
}  // namespace graph_ascend::vis
