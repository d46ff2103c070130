// Comparing one matched pair (reference §6.4–§6.9): per-item metrics,
// the node's precision index for statistics, md5, tensor and structure
// modes, the colour legend and tooltips (§6.10), and the item views the
// comparison reads (§4.2).
#include "compare/pair_compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "base/py_format.h"
#include "compare/item_view.h"
#include "compare/legend.h"
#include "compare/tensor_compare.h"
#include "test_files.h"

namespace graph_ascend::compare {
namespace {

using graph_ascend::testing::TempDir;
using graph_ascend::testing::WriteFile;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

vis::Value Num(double x) {
  vis::Value v;
  v.set_number(x);
  return v;
}
vis::Value Int(int64_t x) {
  vis::Value v;
  v.set_integer(x);
  return v;
}
vis::Value Text(const std::string& s) {
  vis::Value v;
  v.set_text(s);
  return v;
}
vis::Value Json(const std::string& s) {
  vis::Value v;
  v.set_json(s);
  return v;
}
vis::Value Bool(bool b) {
  vis::Value v;
  v.set_boolean(b);
  return v;
}
vis::Value Null() {
  vis::Value v;
  v.set_null(true);
  return v;
}

using Fields = std::vector<std::pair<std::string, vis::Value>>;

vis::Item MakeItem(const std::string& key, vis::ItemState state, const Fields& fields) {
  vis::Item item;
  item.set_key(key);
  item.set_state(state);
  for (const auto& [name, value] : fields) {
    vis::Field* f = item.add_field();
    f->set_name(name);
    *f->mutable_value() = value;
  }
  return item;
}

// A statistics tensor leaf.
Fields TensorFields(vis::Value max, vis::Value min, vis::Value mean, vis::Value norm,
                    const std::string& shape = "[2, 3]", vis::Value requires_grad = Bool(true)) {
  return {{"type", Text("torch.Tensor")},
          {"dtype", Text("torch.float32")},
          {"shape", Json(shape)},
          {"Max", max},
          {"Min", min},
          {"Mean", mean},
          {"Norm", norm},
          {"requires_grad", requires_grad}};
}

vis::Item In(const std::string& key, const Fields& f) { return MakeItem(key, vis::STATE_INPUT, f); }
vis::Item Out(const std::string& key, const Fields& f) { return MakeItem(key, vis::STATE_OUTPUT, f); }

vis::NodeDetail Detail(std::initializer_list<vis::Item> inputs, std::initializer_list<vis::Item> outputs) {
  vis::NodeDetail d;
  for (const vis::Item& i : inputs) *d.add_input() = i;
  for (const vis::Item& o : outputs) *d.add_output() = o;
  return d;
}

// The metric texts of an item, in order.
std::vector<std::pair<std::string, std::string>> Metrics(const vis::Item& item) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const vis::Metric& m : item.metric()) out.emplace_back(m.name(), m.text());
  return out;
}
std::string MetricText(const vis::Item& item, const std::string& name) {
  for (const vis::Metric& m : item.metric()) {
    if (m.name() == name) return m.text();
  }
  return "<absent>";
}

PairVerdict Compare(vis::CompareMode mode, vis::NodeDetail* npu, const vis::NodeDetail& bench,
                    const std::string& name = "Module.fc.Linear.forward.0", const TensorSource* tensors = nullptr) {
  return ComparePair(mode, name, npu, bench, tensors);
}

// §10.8: the reference's complete worked example.
TEST(StatisticsTest, ReferenceWorkedExample) {
  vis::NodeDetail npu = Detail({In("X.input.0", TensorFields(Num(1.0), Num(-1.0), Num(0.0), Num(2.0), "[2, 4]"))},
                               {Out("X.output.0", TensorFields(Num(2.0), Num(-2.0), Num(0.1), Num(3.0)))});
  vis::NodeDetail bench = Detail({In("X.input.0", TensorFields(Num(1.0), Num(-1.0), Num(0.0), Num(2.0), "[2, 4]"))},
                                 {Out("X.output.0", TensorFields(Num(2.5), Num(-2.0), Num(0.1), Num(3.0)))});
  PairVerdict v = Compare(vis::MODE_STATISTICS, &npu, bench);
  ASSERT_TRUE(v.has_precision);
  EXPECT_EQ(v.precision_index, 0.2);
  EXPECT_TRUE(v.is_float);
  using M = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(Metrics(npu.output(0)), (M{{"Max diff", "-0.5"},
                                       {"Min diff", "0.0"},
                                       {"Mean diff", "0.0"},
                                       {"L2norm diff", "0.0"},
                                       {"MaxRelativeErr", "20.0%"},
                                       {"MinRelativeErr", "0.0%"},
                                       {"MeanRelativeErr", "0.0%"},
                                       {"NormRelativeErr", "0.0%"},
                                       {"Requires_grad Consistent", "True"}}));
  EXPECT_EQ(MetricText(npu.input(0), "MeanRelativeErr"), "N/A") << "bench Mean is 0";
  EXPECT_EQ(MetricText(npu.input(0), "Mean diff"), "0.0");
  EXPECT_EQ(bench.output(0).metric_size(), 0) << "only the NPU side gets metrics";
}

TEST(StatisticsTest, OnlyOutputsMakeTheIndex) {
  vis::NodeDetail npu = Detail({In("X.input.0", TensorFields(Num(3.0), Num(0.0), Num(1.0), Num(1.0)))},
                               {Out("X.output.0", TensorFields(Num(1.0), Num(0.0), Num(1.0), Num(1.0)))});
  vis::NodeDetail bench = Detail({In("X.input.0", TensorFields(Num(1.0), Num(0.0), Num(1.0), Num(1.0)))},
                                 {Out("X.output.0", TensorFields(Num(1.0), Num(0.0), Num(1.0), Num(1.0)))});
  PairVerdict v = Compare(vis::MODE_STATISTICS, &npu, bench);
  EXPECT_EQ(MetricText(npu.input(0), "MaxRelativeErr"), "200.0%");
  EXPECT_EQ(v.precision_index, 0.0);
  EXPECT_FALSE(v.is_float) << "msprobe keeps the int 0";
}

TEST(StatisticsTest, WorstRelativeErrorCappedAtOne) {
  vis::NodeDetail npu = Detail({}, {Out("X.output.0", TensorFields(Num(1.0), Num(-0.1), Num(0.0), Num(1.0))),
                                    Out("X.output.1", TensorFields(Num(1.0), Num(0.0), Num(0.0), Num(4.0)))});
  vis::NodeDetail bench = Detail({}, {Out("X.output.0", TensorFields(Num(1.0), Num(-0.3), Num(0.0), Num(1.0))),
                                      Out("X.output.1", TensorFields(Num(1.0), Num(0.0), Num(0.0), Num(1.0)))});
  PairVerdict v = Compare(vis::MODE_STATISTICS, &npu, bench);
  EXPECT_EQ(MetricText(npu.output(0), "MinRelativeErr"), "66.66666666666666%");
  EXPECT_EQ(MetricText(npu.output(0), "Min diff"), "0.19999999999999998");
  EXPECT_EQ(MetricText(npu.output(1), "NormRelativeErr"), "300.0%");
  EXPECT_EQ(v.precision_index, 1.0);
}

TEST(StatisticsTest, IntegerStatisticsKeepIntegerDifferences) {
  vis::NodeDetail npu = Detail({}, {Out("X.output.0", TensorFields(Int(3), Int(1), Null(), Null()))});
  vis::NodeDetail bench = Detail({}, {Out("X.output.0", TensorFields(Int(4), Int(1), Null(), Null()))});
  Compare(vis::MODE_STATISTICS, &npu, bench);
  EXPECT_EQ(MetricText(npu.output(0), "Max diff"), "-1");
  EXPECT_EQ(MetricText(npu.output(0), "MaxRelativeErr"), "25.0%");
  EXPECT_EQ(MetricText(npu.output(0), "Min diff"), "0");
  EXPECT_EQ(MetricText(npu.output(0), "Mean diff"), "N/A") << "None statistics";
  EXPECT_EQ(MetricText(npu.output(0), "MeanRelativeErr"), "N/A");
}

TEST(StatisticsTest, BooleanStatisticsAreNotNumbers) {
  vis::NodeDetail npu = Detail({}, {Out("X.output.0", TensorFields(Bool(true), Bool(false), Null(), Null()))});
  vis::NodeDetail bench = Detail({}, {Out("X.output.0", TensorFields(Bool(false), Bool(false), Null(), Null()))});
  PairVerdict v = Compare(vis::MODE_STATISTICS, &npu, bench);
  EXPECT_EQ(MetricText(npu.output(0), "Max diff"), "N/A");
  EXPECT_EQ(MetricText(npu.output(0), "MaxRelativeErr"), "N/A");
  EXPECT_EQ(v.precision_index, 0.0);
}

TEST(StatisticsTest, NanAndInfinity) {
  // NaN difference: "Nan" in both columns; a NaN NPU statistic is the worst index.
  vis::NodeDetail npu = Detail({}, {Out("X.output.0", TensorFields(Num(kNaN), Num(0.0), Num(0.5), Num(1.0)))});
  vis::NodeDetail bench = Detail({}, {Out("X.output.0", TensorFields(Num(1.0), Num(0.0), Num(0.5), Num(1.0)))});
  PairVerdict v = Compare(vis::MODE_STATISTICS, &npu, bench);
  EXPECT_EQ(MetricText(npu.output(0), "Max diff"), "Nan");
  EXPECT_EQ(MetricText(npu.output(0), "MaxRelativeErr"), "Nan");
  EXPECT_EQ(v.precision_index, 1.0);
  EXPECT_FALSE(v.is_float);

  // An infinite difference carries msprobe's trailing tab.
  npu = Detail({}, {Out("X.output.0", TensorFields(Num(kInf), Num(0.0), Num(0.5), Num(1.0)))});
  v = Compare(vis::MODE_STATISTICS, &npu, bench);
  EXPECT_EQ(MetricText(npu.output(0), "Max diff"), "inf\t");
  EXPECT_EQ(MetricText(npu.output(0), "MaxRelativeErr"), "inf%");
  EXPECT_EQ(v.precision_index, 1.0);

  // Infinite bench, finite NPU: -inf difference, NaN ratio that never wins max().
  npu = Detail({}, {Out("X.output.0", TensorFields(Num(1.0), Num(0.0), Num(0.5), Num(1.0)))});
  vis::NodeDetail inf_bench = Detail({}, {Out("X.output.0", TensorFields(Num(kInf), Num(0.0), Num(0.5), Num(1.0)))});
  v = Compare(vis::MODE_STATISTICS, &npu, inf_bench);
  EXPECT_EQ(MetricText(npu.output(0), "Max diff"), "-inf\t");
  EXPECT_EQ(MetricText(npu.output(0), "MaxRelativeErr"), "nan%");
  EXPECT_EQ(v.precision_index, 0.0);
}

TEST(StatisticsTest, NullMaxOutputsAreSkipped) {
  // An empty tensor (null statistics) next to a normal one.
  vis::NodeDetail npu = Detail({}, {Out("X.output.0", TensorFields(Null(), Null(), Null(), Null(), "[0]")),
                                    Out("X.output.1", TensorFields(Num(1.1), Num(0.0), Num(0.5), Num(1.0)))});
  vis::NodeDetail bench = Detail({}, {Out("X.output.0", TensorFields(Null(), Null(), Null(), Null(), "[0]")),
                                      Out("X.output.1", TensorFields(Num(1.0), Num(0.0), Num(0.5), Num(1.0)))});
  PairVerdict v = Compare(vis::MODE_STATISTICS, &npu, bench);
  EXPECT_EQ(MetricText(npu.output(0), "Max diff"), "N/A");
  EXPECT_NEAR(v.precision_index, 0.1, 1e-12);
}

TEST(StatisticsTest, ScalarArgumentsCompareTheirValues) {
  Fields three = {{"type", Text("int")}, {"value", Int(3)}};
  Fields four = {{"type", Text("int")}, {"value", Int(4)}};
  vis::NodeDetail npu = Detail({In("X.input.dim", three)}, {Out("X.output.0", three)});
  vis::NodeDetail bench = Detail({In("X.input.dim", four)}, {Out("X.output.0", four)});
  PairVerdict v = Compare(vis::MODE_STATISTICS, &npu, bench);
  EXPECT_EQ(MetricText(npu.input(0), "Max diff"), "-1");
  EXPECT_EQ(MetricText(npu.input(0), "NormRelativeErr"), "25.0%");
  EXPECT_EQ(v.precision_index, 0.25) << "an output scalar counts like a tensor";
}

TEST(StatisticsTest, RequiresGradConsistency) {
  auto with = [](vis::Value rg) { return TensorFields(Num(1.0), Num(0.0), Num(0.5), Num(1.0), "[2]", rg); };
  vis::NodeDetail npu =
      Detail({In("X.input.0", with(Bool(true))), In("X.input.1", with(Null())), In("X.input.2", with(Null()))}, {});
  vis::NodeDetail bench = Detail(
      {In("X.input.0", with(Bool(false))), In("X.input.1", with(Null())), In("X.input.2", with(Bool(false)))}, {});
  Compare(vis::MODE_STATISTICS, &npu, bench);
  EXPECT_EQ(MetricText(npu.input(0), "Requires_grad Consistent"), "False");
  EXPECT_EQ(MetricText(npu.input(1), "Requires_grad Consistent"), "True") << "None == None";
  EXPECT_EQ(MetricText(npu.input(2), "Requires_grad Consistent"), "False") << "None != False";
}

// §6.4: item j of each state pairs with item j of the same state.
TEST(StatisticsTest, ItemsPairByPositionWithinTheirState) {
  Fields a = TensorFields(Num(1.0), Num(0.0), Num(0.5), Num(1.0), "[2]");
  Fields b = TensorFields(Num(2.0), Num(0.0), Num(0.5), Num(1.0), "[2]");
  vis::NodeDetail npu;
  *npu.add_input() = In("X.input.0", a);
  *npu.add_input() = In("X.input.1", b);
  *npu.add_input() = MakeItem("X.parameters.weight", vis::STATE_PARAMETERS, b);
  vis::NodeDetail bench;
  *bench.add_input() = In("X.input.renamed", a);
  *bench.add_input() = MakeItem("X.parameters.weight", vis::STATE_PARAMETERS, a);
  Compare(vis::MODE_STATISTICS, &npu, bench);
  EXPECT_EQ(MetricText(npu.input(0), "Max diff"), "0.0") << "keys are not compared";
  EXPECT_EQ(npu.input(1).metric_size(), 0) << "an NPU item without a Bench partner gets no metrics";
  EXPECT_EQ(MetricText(npu.input(2), "Max diff"), "1.0") << "parameters pair with parameters";
}

TEST(StatisticsTest, NoComparedItemsMeansNoIndex) {
  vis::NodeDetail npu, bench;
  EXPECT_FALSE(Compare(vis::MODE_STATISTICS, &npu, bench).has_precision);
}

TEST(StatisticsTest, ComparingAgainReplacesTheMetrics) {
  vis::NodeDetail npu = Detail({}, {Out("X.output.0", TensorFields(Num(1.0), Num(0.0), Num(0.5), Num(1.0)))});
  vis::NodeDetail bench = npu;
  Compare(vis::MODE_STATISTICS, &npu, bench);
  Compare(vis::MODE_STATISTICS, &npu, bench);
  EXPECT_EQ(npu.output(0).metric_size(), 9);
  ClearMetrics(&npu);
  EXPECT_EQ(npu.output(0).metric_size(), 0);
}

// §6.9: the empty* APIs are forced to the best value.
TEST(StatisticsTest, IgnoredApis) {
  vis::NodeDetail npu = Detail({}, {Out("X.output.0", TensorFields(Num(9.0), Num(0.0), Num(0.5), Num(1.0)))});
  vis::NodeDetail bench = Detail({}, {Out("X.output.0", TensorFields(Num(1.0), Num(0.0), Num(0.5), Num(1.0)))});
  for (const char* name :
       {"Torch.empty.0.forward", "Torch.empty_like.3.forward", "Tensor.new_empty.0.forward",
        "Torch.empty_strided.0.forward", "NPU.empty_with_format.0.forward", "Tensor.new_empty_strided.0.forward"}) {
    vis::NodeDetail n = npu;
    EXPECT_EQ(Compare(vis::MODE_STATISTICS, &n, bench, name).precision_index, 0.0) << name;
  }
  vis::NodeDetail n = npu;
  EXPECT_EQ(Compare(vis::MODE_STATISTICS, &n, bench, "Torch.zeros.0.forward").precision_index, 1.0);
}

// §6.6.
TEST(Md5Test, PassWhenEveryMd5IsEqual) {
  auto md5 = [](const char* h) {
    Fields f = TensorFields(Num(1.0), Num(0.0), Num(0.5), Num(1.0));
    f.emplace_back("md5", Text(h));
    return f;
  };
  vis::NodeDetail npu = Detail({In("X.input.0", md5("0d968558"))}, {Out("X.output.0", md5("b68dcaa8"))});
  vis::NodeDetail bench = npu;
  PairVerdict v = Compare(vis::MODE_MD5, &npu, bench);
  EXPECT_EQ(v.precision_index, 1.0);
  EXPECT_EQ(v.md5_result, "pass");
  EXPECT_EQ(npu.md5_result(), "pass");
  EXPECT_EQ(Metrics(npu.input(0)), (std::vector<std::pair<std::string, std::string>>{
                                       {"Result", "pass"}, {"Requires_grad Consistent", "True"}}));

  // One differing input is enough.
  vis::NodeDetail other = Detail({In("X.input.0", md5("ffffffff"))}, {Out("X.output.0", md5("b68dcaa8"))});
  npu = Detail({In("X.input.0", md5("0d968558"))}, {Out("X.output.0", md5("b68dcaa8"))});
  v = Compare(vis::MODE_MD5, &npu, other);
  EXPECT_EQ(v.precision_index, 0.0);
  EXPECT_EQ(v.md5_result, "Different");
  EXPECT_EQ(MetricText(npu.input(0), "Result"), "Different");
  EXPECT_EQ(MetricText(npu.output(0), "Result"), "pass");
  EXPECT_EQ(npu.md5_result(), "Different");

  vis::NodeDetail ignored = npu;
  EXPECT_EQ(Compare(vis::MODE_MD5, &ignored, other, "Torch.empty.0.forward").precision_index, 1.0);
}

TEST(Md5Test, ScalarsCompareByTheCrcOfTheirText) {
  Fields three = {{"type", Text("int")}, {"value", Int(3)}};
  Fields four = {{"type", Text("int")}, {"value", Int(4)}};
  Fields float_one = {{"type", Text("float")}, {"value", Num(1.0)}};
  Fields int_one = {{"type", Text("int")}, {"value", Int(1)}};
  vis::NodeDetail npu = Detail({In("X.input.0", three), In("X.input.1", three), In("X.input.2", float_one)}, {});
  vis::NodeDetail bench = Detail({In("X.input.0", three), In("X.input.1", four), In("X.input.2", int_one)}, {});
  Compare(vis::MODE_MD5, &npu, bench);
  EXPECT_EQ(MetricText(npu.input(0), "Result"), "pass");
  EXPECT_EQ(MetricText(npu.input(1), "Result"), "Different");
  EXPECT_EQ(MetricText(npu.input(2), "Result"), "Different") << "str(1.0) != str(1)";
}

// §6.7 with .npy files read the way the builder reads them.
class TensorModeTest : public ::testing::Test {
 protected:
  // Writes a little-endian float64 .npy (format 1.0) into <side>/dump_tensor_data.
  void WriteNpy(const TempDir& side, const std::string& name, const std::vector<double>& values) {
    std::string header =
        "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(values.size()) + ",), }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string file = std::string("\x93NUMPY\x01\x00", 8);
    file.push_back(static_cast<char>(header.size() & 0xff));
    file.push_back(static_cast<char>(header.size() >> 8));
    file += header;
    file.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
    WriteFile(side / ("dump_tensor_data/" + name), file);
  }
  vis::Item Leaf(const std::string& key, vis::ItemState state, const std::string& data_name, vis::Value max,
                 const std::string& shape = "[16]") {
    Fields f = TensorFields(max, Num(0.0), Num(0.5), Num(1.0), shape);
    f.emplace_back("data_name", Text(data_name));
    return MakeItem(key, state, f);
  }

  TempDir npu_dir_, bench_dir_;
};

TEST_F(TensorModeTest, IndexIsTheDropOfTheThousandthRatio) {
  std::vector<double> ones(16, 1.0), off(16, 2.0);
  off[0] = 1.0;  // 1 of 16 output elements agrees: ratio 0.0625
  WriteNpy(npu_dir_, "X.input.0.npy", ones);
  WriteNpy(bench_dir_, "X.input.0.npy", ones);
  WriteNpy(npu_dir_, "X.output.0.npy", off);
  WriteNpy(bench_dir_, "X.output.0.npy", ones);
  DumpTensorSource source(npu_dir_.path(), bench_dir_.path());
  vis::NodeDetail npu;
  *npu.add_input() = Leaf("X.input.0", vis::STATE_INPUT, "X.input.0.npy", Num(1.0));
  *npu.add_output() = Leaf("X.output.0", vis::STATE_OUTPUT, "X.output.0.npy", Num(2.0));
  vis::NodeDetail bench;
  *bench.add_input() = Leaf("X.input.0", vis::STATE_INPUT, "X.input.0.npy", Num(1.0));
  *bench.add_output() = Leaf("X.output.0", vis::STATE_OUTPUT, "X.output.0.npy", Num(1.0));
  PairVerdict v = Compare(vis::MODE_TENSOR, &npu, bench, "Module.fc.Linear.forward.0", &source);
  EXPECT_EQ(v.precision_index, 0.9375);  // the reference's observed Linear example
  EXPECT_TRUE(v.is_float);
  EXPECT_EQ(MetricText(npu.output(0), "One Thousandth Err Ratio"), "0.0625");
  EXPECT_EQ(MetricText(npu.input(0), "Cosine"), "1.0");
  EXPECT_EQ(MetricText(npu.output(0), "Requires_grad Consistent"), "True");
  std::vector<std::string> names;
  for (const vis::Metric& m : npu.output(0).metric()) names.push_back(m.name());
  EXPECT_EQ(names,
            (std::vector<std::string>{"Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio",
                                      "Five Thousandths Err Ratio", "Requires_grad Consistent"}));
}

TEST_F(TensorModeTest, MissingFilesAndNonFiniteStatistics) {
  DumpTensorSource source(npu_dir_.path(), bench_dir_.path());
  // No data file on either side: every metric "unsupported", index 0.
  vis::NodeDetail npu;
  *npu.add_output() = Leaf("X.output.0", vis::STATE_OUTPUT, "-1", Num(1.0));
  vis::NodeDetail bench = npu;
  PairVerdict v = Compare(vis::MODE_TENSOR, &npu, bench, "Torch.add.0.forward", &source);
  EXPECT_EQ(MetricText(npu.output(0), "Cosine"), "unsupported");
  EXPECT_EQ(v.precision_index, 0.0);

  // A NaN NPU output statistic is the worst index; on an input the best.
  vis::NodeDetail nan_out;
  *nan_out.add_output() = Leaf("X.output.0", vis::STATE_OUTPUT, "absent.npy", Num(kNaN));
  EXPECT_EQ(Compare(vis::MODE_TENSOR, &nan_out, bench, "Torch.add.0.forward", &source).precision_index, 1.0);
  EXPECT_EQ(MetricText(nan_out.output(0), "MaxAbsErr"), "unsupported") << "unreadable file";
  vis::NodeDetail nan_in;
  *nan_in.add_input() = Leaf("X.input.0", vis::STATE_INPUT, "absent.npy", Num(kInf));
  *nan_in.add_output() = Leaf("X.output.0", vis::STATE_OUTPUT, "absent.npy", Num(1.0));
  vis::NodeDetail bench_io = nan_in;
  EXPECT_EQ(Compare(vis::MODE_TENSOR, &nan_in, bench_io, "Torch.add.0.forward", &source).precision_index, 0.0);
}

TEST(StructureTest, NoMetricsAndNoIndex) {
  vis::NodeDetail npu = Detail({}, {Out("X.output.0", TensorFields(Num(1.0), Num(0.0), Num(0.5), Num(1.0)))});
  vis::NodeDetail bench = Detail({}, {Out("X.output.0", TensorFields(Num(5.0), Num(0.0), Num(0.5), Num(1.0)))});
  EXPECT_FALSE(Compare(vis::MODE_STRUCTURE, &npu, bench).has_precision);
  EXPECT_EQ(npu.output(0).metric_size(), 0);
}

// §6.10.
class LegendTest : public ::testing::Test {
 protected:
  vis::FileMeta Meta(vis::CompareMode mode) {
    vis::FileMeta meta;
    meta.set_mode(mode);
    SetLegendAndTooltips(&meta);
    return meta;
  }
  static std::vector<std::string> Colors(const vis::FileMeta& m) {
    std::vector<std::string> out;
    for (const vis::ColorBucket& b : m.legend()) out.push_back(b.color());
    return out;
  }
  static std::vector<std::string> TipKeys(const vis::FileMeta& m) {
    std::vector<std::string> out;
    for (const vis::Tooltip& t : m.tooltips()) out.push_back(t.key());
    return out;
  }
};

TEST_F(LegendTest, StatisticsBuckets) {
  vis::FileMeta m = Meta(vis::MODE_STATISTICS);
  EXPECT_EQ(Colors(m), (std::vector<std::string>{"#FFFCF3", "#FFEDBE", "#FFDC7F", "#FFC62E", "#FF704D", "#C7C7C7"}));
  EXPECT_EQ(m.legend(1).lo(), 0.2);
  EXPECT_EQ(m.legend(1).hi(), 0.4);
  EXPECT_TRUE(m.legend(5).unmatched());
  EXPECT_EQ(m.legend(5).description(), "比对过程中节点未匹配上");
  EXPECT_NE(m.legend(0).description().find("相对误差"), std::string::npos);
  EXPECT_EQ(BucketOf(m.legend(), 0.0), 0);
  EXPECT_EQ(BucketOf(m.legend(), 0.19999), 0);
  EXPECT_EQ(BucketOf(m.legend(), 0.2), 1) << "left-closed";
  EXPECT_EQ(BucketOf(m.legend(), 0.25), 1);
  EXPECT_EQ(BucketOf(m.legend(), 0.6), 3);
  EXPECT_EQ(BucketOf(m.legend(), 0.8), 4);
  EXPECT_EQ(BucketOf(m.legend(), 1.0), 4) << "the last bucket holds its upper bound";
  EXPECT_EQ(BucketOf(m.legend(), 1.5), -1);
  EXPECT_EQ(BucketOf(m.legend(), -0.1), -1);
  EXPECT_EQ(BucketOf(m.legend(), kNaN), -1);
  EXPECT_EQ(UnmatchedBucket(m.legend()), 5);
  EXPECT_EQ(TipKeys(m), (std::vector<std::string>{"Max diff", "Min diff", "Mean diff", "L2norm diff"}));
  EXPECT_STREQ(TaskName(vis::MODE_STATISTICS), "summary");
}

TEST_F(LegendTest, TensorBuckets) {
  vis::FileMeta m = Meta(vis::MODE_TENSOR);
  EXPECT_EQ(Colors(m), (std::vector<std::string>{"#FFFCF3", "#FFEDBE", "#FFDC7F", "#FFC62E", "#FF704D", "#C7C7C7"}));
  EXPECT_EQ(BucketOf(m.legend(), 0.049), 0);
  EXPECT_EQ(BucketOf(m.legend(), 0.05), 1);
  EXPECT_EQ(BucketOf(m.legend(), 0.15), 3);
  EXPECT_EQ(BucketOf(m.legend(), 0.2), 4);
  EXPECT_EQ(BucketOf(m.legend(), 0.9375), 4);
  EXPECT_EQ(TipKeys(m), (std::vector<std::string>{"One Thousandth Err Ratio", "Five Thousandths Err Ratio", "Cosine",
                                                  "MaxAbsErr", "MaxRelativeErr"}));
  EXPECT_NE(m.legend(0).description().find("千分之一"), std::string::npos);
  EXPECT_STREQ(TaskName(vis::MODE_TENSOR), "all");
}

TEST_F(LegendTest, Md5Buckets) {
  vis::FileMeta m = Meta(vis::MODE_MD5);
  EXPECT_EQ(Colors(m), (std::vector<std::string>{"#FFFCF3", "#FF704D", "#C7C7C7"}));
  EXPECT_EQ(BucketOf(m.legend(), 1.0), 0);
  EXPECT_EQ(BucketOf(m.legend(), 0.0), 1);
  EXPECT_EQ(BucketOf(m.legend(), 0.5), -1) << "[x, x] buckets hold exactly x";
  EXPECT_EQ(m.legend(0).description(), "与标杆相比, 此节点所有输入输出的md5值相同");
  EXPECT_EQ(m.legend(1).description(), "与标杆相比, 此节点任意输入输出的md5值不同");
  EXPECT_EQ(TipKeys(m), std::vector<std::string>{"md5"});
  EXPECT_STREQ(TaskName(vis::MODE_MD5), "md5");
}

TEST_F(LegendTest, StructureAndBuild) {
  vis::FileMeta s = Meta(vis::MODE_STRUCTURE);
  EXPECT_EQ(Colors(s), std::vector<std::string>{"#C7C7C7"});
  EXPECT_EQ(UnmatchedBucket(s.legend()), 0);
  EXPECT_EQ(TipKeys(s).size(), 5u) << "the real-data tooltips";
  EXPECT_STREQ(TaskName(vis::MODE_STRUCTURE), "structure");
  vis::FileMeta b = Meta(vis::MODE_NONE);
  EXPECT_EQ(b.legend_size(), 0);
  EXPECT_EQ(b.tooltips_size(), 0);
  EXPECT_EQ(UnmatchedBucket(b.legend()), -1);
}

// §4.2 views of a leaf.
TEST(ItemViewTest, PyStrOfStoredValues) {
  vis::Value v = Json(R"({"a": true, "b": null, "c": "s", "d": [1, 2.5]})");
  EXPECT_EQ(PyStr(&v), "{'a': True, 'b': None, 'c': 's', 'd': [1, 2.5]}");
  vis::Value shape = Json("[2, 3]");
  EXPECT_EQ(PyStr(&shape), "[2, 3]");
  // JSON as the dump reader stores it: integer arrays take a short path that
  // must print as the general one does.
  for (auto [json, py] : std::vector<std::pair<std::string, std::string>>{{"[2,3]", "[2, 3]"},
                                                                          {"[[4, 5], [6]]", "[[4, 5], [6]]"},
                                                                          {"[[1,-2],[]]", "[[1, -2], []]"},
                                                                          {"[]", "[]"},
                                                                          {"[0,10]", "[0, 10]"},
                                                                          {"[-0]", "[0]"},
                                                                          {"[1.5,2]", "[1.5, 2]"},
                                                                          {"[1e3]", "[1000.0]"},
                                                                          {"[true,null]", "[True, None]"}}) {
    vis::Value compact = Json(json);
    EXPECT_EQ(PyStr(&compact), py) << json;
  }
  vis::Value f = Num(1e-05);
  EXPECT_EQ(PyStr(&f), "1e-05");
  vis::Value t = Bool(false);
  EXPECT_EQ(PyStr(&t), "False");
  EXPECT_EQ(PyStr(nullptr), "None");
}

TEST(ItemViewTest, NormalizedStatistics) {
  vis::Item tensor = Out("X.output.0", TensorFields(Num(2.0), Num(-1.0), Num(0.5), Num(3.0)));
  EXPECT_EQ(NormalizedStat(tensor, 0).number(), 2.0);
  EXPECT_EQ(NormalizedStat(tensor, 3).number(), 3.0);
  vis::Item scalar = In("X.input.alpha", {{"type", Text("float")}, {"value", Num(0.5)}});
  for (int k = 0; k < 4; ++k) EXPECT_EQ(NormalizedStat(scalar, k).number(), 0.5) << k;
  vis::Item dst = In("X.input.dst", {{"type", Text("int")}, {"value", Int(1)}});
  EXPECT_EQ(NormalizedStat(dst, 0).text(), "1") << "src/dst statistics are str(value)";
  vis::Item group =
      In("X.input.group",
         {{"type", Text("torch.ProcessGroup")}, {"group_ranks", Json("[0, 1]")}, {"group_id", Text("77849d8c")}});
  EXPECT_EQ(NormalizedStat(group, 2).text(), "[0, 1]");
  vis::Item size = In("X.input.1", {{"type", Text("torch.Size")}, {"value", Json("[2, 3]")}});
  vis::Value size_max = NormalizedStat(size, 0);
  EXPECT_TRUE(IsNull(&size_max)) << "torch.Size has no statistics";
}

TEST(ItemViewTest, Md5OfItems) {
  EXPECT_EQ(Crc32Hex(""), "00000000");
  EXPECT_EQ(Crc32Hex("123456789"), "cbf43926") << "the CRC-32 check value";
  Fields f = TensorFields(Num(1.0), Num(0.0), Num(0.5), Num(1.0));
  EXPECT_EQ(ItemMd5(Out("X.output.0", f)), "00000000") << "a tensor without md5 or value";
  f.emplace_back("md5", Text("0d968558"));
  EXPECT_EQ(ItemMd5(Out("X.output.0", f)), "0d968558");
  EXPECT_EQ(ItemMd5(In("X.input.0", {{"type", Text("int")}, {"value", Int(3)}})), "6dd28e9b");
  EXPECT_EQ(ItemMd5(In("X.input.0", {{"type", Text("float")}, {"value", Num(1.0)}})), "f7366f35");
  EXPECT_EQ(ItemMd5(In("X.input.0", {{"type", Text("bool")}, {"value", Bool(true)}})), "5dcee3b3");
  EXPECT_EQ(ItemMd5(In("X.input.src", {{"type", Text("int")}, {"value", Int(0)}})), "0");
  EXPECT_EQ(ItemMd5(In("X.input.group", {{"type", Text("torch.ProcessGroup")}, {"group_ranks", Json("[0, 1]")}})),
            "[0, 1]");
}

}  // namespace
}  // namespace graph_ascend::compare
