// msprobe 26's grading of a matched pair (compare/grading.h): each rule of
// its statistics, md5 and tensor checkers, the redundant-API and
// communication exceptions, and items pairing (parameter gradients by name).
#include "compare/grading.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "compare/pair_compare.h"

namespace graph_ascend::compare {
namespace {

const double kInf = std::numeric_limits<double>::infinity();

void AddField(vis::Item* item, const std::string& name, const vis::Value& v) {
  vis::Field* f = item->add_field();
  f->set_name(name);
  *f->mutable_value() = v;
}

vis::Value Number(double x) {
  vis::Value v;
  v.set_number(x);
  return v;
}
vis::Value Text(const std::string& s) {
  vis::Value v;
  v.set_text(s);
  return v;
}

// A tensor leaf with statistics; norm also sets mean.
vis::Item* Tensor(vis::NodeDetail* d, const std::string& key, vis::ItemState state, double max, double min, double norm,
                  const std::string& dtype = "torch.float32", const std::string& shape = "[4]") {
  vis::Item* item = state == vis::STATE_OUTPUT ? d->add_output() : d->add_input();
  item->set_key(key);
  item->set_state(state);
  AddField(item, "type", Text("torch.Tensor"));
  AddField(item, "dtype", Text(dtype));
  vis::Value s;
  s.set_json(shape);
  AddField(item, "shape", s);
  AddField(item, "Max", Number(max));
  AddField(item, "Min", Number(min));
  AddField(item, "Mean", Number(norm / 2));
  AddField(item, "Norm", Number(norm));
  return item;
}

// A non-tensor argument ({"type": "int", "value": v}).
void Scalar(vis::NodeDetail* d, const std::string& key, int64_t value) {
  vis::Item* item = d->add_input();
  item->set_key(key);
  item->set_state(vis::STATE_INPUT);
  AddField(item, "type", Text("int"));
  vis::Value v;
  v.set_integer(value);
  AddField(item, "value", v);
}

// One input and one output a side, with the given Norms: the relative error
// rules read the NormRelativeErr ComparePair computes from them.
struct Pair {
  vis::NodeDetail npu, bench;
};
Pair Statistics(double in_npu, double in_bench, double out_npu, double out_bench) {
  Pair p;
  Tensor(&p.npu, ".input.0", vis::STATE_INPUT, 1, -1, in_npu);
  Tensor(&p.bench, ".input.0", vis::STATE_INPUT, 1, -1, in_bench);
  Tensor(&p.npu, ".output.0", vis::STATE_OUTPUT, 1, -1, out_npu);
  Tensor(&p.bench, ".output.0", vis::STATE_OUTPUT, 1, -1, out_bench);
  return p;
}

double Grade(vis::CompareMode mode, const std::string& name, Pair& p, bool parallel_merge = false) {
  ComparePair(mode, name, &p.npu, p.bench, nullptr);
  return Grade26(mode, name, p.npu, p.bench, parallel_merge);
}

const char* kApi = "Functional.linear.0.forward";

TEST(GradingTest, EqualStatisticsPass) {
  Pair p = Statistics(2, 2, 3, 3);
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, p), kGradePass);
}

TEST(GradingTest, MatchedPairWithoutNpuItemsHasNoGrade) {
  Pair p;
  EXPECT_TRUE(std::isnan(Grade(vis::MODE_STATISTICS, "Module.relu.ReLU.forward.0", p)));
  Tensor(&p.bench, ".output.0", vis::STATE_OUTPUT, 1, -1, 3);
  EXPECT_TRUE(std::isnan(Grade(vis::MODE_STATISTICS, "Module.relu.ReLU.forward.0", p)));
  Pair npu_only;
  Tensor(&npu_only.npu, ".output.0", vis::STATE_OUTPUT, 1, -1, 3);
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, "Module.relu.ReLU.forward.0", npu_only), kGradeError);
}

TEST(GradingTest, StructureAndBuildHaveNoGrade) {
  Pair p = Statistics(2, 2, 3, 3);
  EXPECT_TRUE(std::isnan(Grade26(vis::MODE_STRUCTURE, kApi, p.npu, p.bench, false)));
  EXPECT_TRUE(std::isnan(Grade26(vis::MODE_NONE, kApi, p.npu, p.bench, false)));
}

// Input norm relative error < 0.1 and an output's > 0.5: error.
TEST(GradingTest, OutputNormRelativeErrorAboveHalfWithCalmInputsIsError) {
  Pair p = Statistics(2.1, 2, 4.8, 3);  // input 5 %, output 60 %
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, p), kGradeError);
  Pair noisy = Statistics(2.4, 2, 4.8, 3);  // input 20 %: the rule does not apply, nor does 10x
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, noisy), kGradePass);
}

// Output relative error over 10x the input's (or > 0.1 with exact inputs): warning.
TEST(GradingTest, OutputTenTimesTheInputErrorIsWarning) {
  Pair p = Statistics(2.02, 2, 3.9, 3);  // 1 % in, 30 % out
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, p), kGradeWarning);
  Pair exact = Statistics(2, 2, 3.6, 3);  // 0 in, 20 % out
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, exact), kGradeWarning);
  Pair small = Statistics(2, 2, 3.2, 3);  // 0 in, 6.7 % out
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, small), kGradePass);
}

TEST(GradingTest, NanOrInfOnlyInTheNpuIsError) {
  Pair p = Statistics(2, 2, 3, 3);
  p.npu.mutable_output(0)->mutable_field(3)->mutable_value()->set_number(kInf);  // Max
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, p), kGradeError);
  Pair both = Statistics(2, 2, 3, 3);
  both.npu.mutable_output(0)->mutable_field(3)->mutable_value()->set_number(kInf);
  both.bench.mutable_output(0)->mutable_field(3)->mutable_value()->set_number(kInf);
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, both), kGradePass);
}

TEST(GradingTest, DtypeAndShapeMismatchAreErrors) {
  Pair dtype;
  Tensor(&dtype.npu, ".output.0", vis::STATE_OUTPUT, 1, -1, 3, "torch.bfloat16");
  Tensor(&dtype.bench, ".output.0", vis::STATE_OUTPUT, 1, -1, 3, "torch.float32");
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, dtype), kGradeError);
  Pair shape;
  Tensor(&shape.npu, ".output.0", vis::STATE_OUTPUT, 1, -1, 3, "torch.float32", "[4, 2]");
  Tensor(&shape.bench, ".output.0", vis::STATE_OUTPUT, 1, -1, 3, "torch.float32", "[8]");
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, shape), kGradeError);
  // Merged graphs hold TP shards: no shape rule.
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, shape, /*parallel_merge=*/true), kGradePass);
}

// A fused bench projection (qkv, gate_up) keeps its own dtype.
TEST(GradingTest, FusedBenchItemSkipsTheDtypeRule) {
  Pair p;
  Tensor(&p.npu, ".output.0", vis::STATE_OUTPUT, 1, -1, 3, "torch.bfloat16");
  Tensor(&p.bench, "Module.linear_qkv.output.0", vis::STATE_OUTPUT, 1, -1, 3, "torch.float32");
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, p), kGradePass);
}

TEST(GradingTest, DifferentScalarArgumentIsError) {
  Pair p = Statistics(2, 2, 3, 3);
  Scalar(&p.npu, ".input.1", 1);
  Scalar(&p.bench, ".input.1", 2);
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, p), kGradeError);
  Pair same = Statistics(2, 2, 3, 3);
  Scalar(&same.npu, ".input.1", 2);
  Scalar(&same.bench, ".input.1", 2);
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, same), kGradePass);
}

// An NPU item without a bench counterpart: its shape and dtype differ from
// msprobe's "Nan" cells.
TEST(GradingTest, NpuItemWithoutCounterpartIsError) {
  Pair p = Statistics(2, 2, 3, 3);
  Tensor(&p.npu, ".output.1", vis::STATE_OUTPUT, 1, -1, 3);
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, p), kGradeError);
  Pair extra_bench = Statistics(2, 2, 3, 3);
  Tensor(&extra_bench.bench, ".output.1", vis::STATE_OUTPUT, 1, -1, 3);
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, extra_bench), kGradePass) << "extra bench items are dropped";
}

// Redundant APIs (empty*, to, __setitem__, numpy): every rule skipped.
TEST(GradingTest, RedundantApisPass) {
  for (const char* name : {"Torch.empty.0.forward", "Tensor.to.3.forward", "Tensor.__setitem__.1.forward",
                           "Tensor.numpy.0.forward", "Torch.empty_like.2.forward"}) {
    Pair p = Statistics(2, 2, 30, 3);
    EXPECT_EQ(Grade(vis::MODE_STATISTICS, name, p), kGradePass) << name;
  }
  Pair md5;
  Tensor(&md5.npu, ".output.0", vis::STATE_OUTPUT, 1, -1, 3, "torch.bfloat16");
  Tensor(&md5.bench, ".output.0", vis::STATE_OUTPUT, 1, -1, 3, "torch.float32");
  EXPECT_EQ(Grade(vis::MODE_MD5, "Torch.empty.0.forward", md5), kGradePass)
      << "md5 too (msprobe 26 grades these an error in md5 mode: COMPATIBILITY C26-empty-md5)";
}

// Communication APIs with placeholder inputs: the input rows are skipped,
// the outputs still graded.
TEST(GradingTest, PlaceholderInputsOfCommunicationAreSkipped) {
  const char* name = "Distributed.all_to_all_single.0.forward";
  Pair in;
  Tensor(&in.npu, ".input.0", vis::STATE_INPUT, 1, -1, 3, "torch.bfloat16");
  Tensor(&in.bench, ".input.0", vis::STATE_INPUT, 1, -1, 3, "torch.float32");
  Tensor(&in.npu, ".output.0", vis::STATE_OUTPUT, 1, -1, 3);
  Tensor(&in.bench, ".output.0", vis::STATE_OUTPUT, 1, -1, 3);
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, name, in), kGradePass);
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, kApi, in), kGradeError) << "another API: the input dtype counts";
  Pair out;
  Tensor(&out.npu, ".input.0", vis::STATE_INPUT, 1, -1, 3);
  Tensor(&out.bench, ".input.0", vis::STATE_INPUT, 1, -1, 3);
  Tensor(&out.npu, ".output.0", vis::STATE_OUTPUT, 1, -1, 3, "torch.bfloat16");
  Tensor(&out.bench, ".output.0", vis::STATE_OUTPUT, 1, -1, 3, "torch.float32");
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, name, out), kGradeError);
}

TEST(GradingTest, RankSuffixOfMergedApisIsStripped) {
  EXPECT_EQ(ApiOfName("Torch.empty_rank1.0.forward", true), "empty");
  EXPECT_EQ(ApiOfName("Torch.empty_rank1.0.forward", false), "empty_rank1");
  Pair p = Statistics(2, 2, 30, 3);
  EXPECT_EQ(Grade(vis::MODE_STATISTICS, "Torch.to_rank2.0.forward", p, /*parallel_merge=*/true), kGradePass);
}

vis::Item* Md5Item(vis::NodeDetail* d, const std::string& key, const std::string& md5) {
  vis::Item* item = Tensor(d, key, vis::STATE_OUTPUT, 1, -1, 3);
  AddField(item, "md5", Text(md5));
  return item;
}

TEST(GradingTest, Md5DifferentIsErrorMissingIsWarning) {
  Pair same, diff, missing;
  Md5Item(&same.npu, ".output.0", "0a1b2c3d");
  Md5Item(&same.bench, ".output.0", "0a1b2c3d");
  EXPECT_EQ(Grade(vis::MODE_MD5, kApi, same), kGradePass);
  Md5Item(&diff.npu, ".output.0", "0a1b2c3d");
  Md5Item(&diff.bench, ".output.0", "ffffffff");
  EXPECT_EQ(Grade(vis::MODE_MD5, kApi, diff), kGradeError);
  Md5Item(&missing.npu, ".output.0", "0a1b2c3d");
  EXPECT_EQ(Grade(vis::MODE_MD5, kApi, missing), kGradeWarning);
}

// Tensor mode reads the metrics of the real-data compare.
void SetMetric(vis::Item* item, const std::string& name, double value) {
  vis::Metric* m = item->add_metric();
  m->set_name(name);
  m->set_value(value);
  m->set_has_value(true);
}

TEST(GradingTest, TensorCosineDropIsWarningThousandthCollapseIsError) {
  auto pair = [](double in_cos, double out_cos, double in_ratio, double out_ratio) {
    Pair p;
    vis::Item* a = Tensor(&p.npu, ".input.0", vis::STATE_INPUT, 1, -1, 3);
    Tensor(&p.bench, ".input.0", vis::STATE_INPUT, 1, -1, 3);
    vis::Item* b = Tensor(&p.npu, ".output.0", vis::STATE_OUTPUT, 1, -1, 3);
    Tensor(&p.bench, ".output.0", vis::STATE_OUTPUT, 1, -1, 3);
    SetMetric(a, "Cosine", in_cos);
    SetMetric(b, "Cosine", out_cos);
    SetMetric(a, "One Thousandth Err Ratio", in_ratio);
    SetMetric(b, "One Thousandth Err Ratio", out_ratio);
    return Grade26(vis::MODE_TENSOR, kApi, p.npu, p.bench, false);
  };
  EXPECT_EQ(pair(1, 1, 1, 1), kGradePass);
  EXPECT_EQ(pair(0.99, 0.8, 1, 0.9), kGradeWarning);
  EXPECT_EQ(pair(0.85, 0.6, 1, 0.9), kGradePass) << "inputs already below 0.9 cosine";
  EXPECT_EQ(pair(1, 0.95, 0.95, 0.05), kGradeError);
  EXPECT_EQ(pair(1, 0.95, 0.95, 0.2), kGradePass);
}

// Gradients arrive in a different order in the two runs: they pair by name.
TEST(GradingTest, ParameterGradientsPairByName) {
  Pair p;
  Tensor(&p.npu, "M.parameters_grad.0.weight.0", vis::STATE_PARAMETERS_GRAD, 1, -1, 3, "torch.float32", "[4, 4]");
  Tensor(&p.npu, "M.parameters_grad.0.bias.0", vis::STATE_PARAMETERS_GRAD, 1, -1, 2, "torch.float32", "[4]");
  Tensor(&p.bench, "M.parameters_grad.0.bias.0", vis::STATE_PARAMETERS_GRAD, 1, -1, 2, "torch.float32", "[4]");
  Tensor(&p.bench, "M.parameters_grad.0.weight.0", vis::STATE_PARAMETERS_GRAD, 1, -1, 3, "torch.float32", "[4, 4]");
  std::vector<const vis::Item*> peers = PairedItems(p.npu, p.bench);
  ASSERT_EQ(peers.size(), 2u);
  EXPECT_EQ(peers[0], &p.bench.input(1));
  EXPECT_EQ(peers[1], &p.bench.input(0));
  ComparePair(vis::MODE_STATISTICS, "M.parameters_grad.0", &p.npu, p.bench, nullptr);
  for (const vis::Item& item : p.npu.input()) {
    bool seen = false;
    for (const vis::Metric& m : item.metric()) {
      if (m.name() != "NormRelativeErr") continue;
      seen = true;
      EXPECT_EQ(m.text(), "0.0%") << item.key() << ": equal gradients, no false difference";
    }
    EXPECT_TRUE(seen) << item.key();
  }
  EXPECT_EQ(Grade26(vis::MODE_STATISTICS, "M.parameters_grad.0", p.npu, p.bench, false), kGradePass);
}

}  // namespace
}  // namespace graph_ascend::compare
