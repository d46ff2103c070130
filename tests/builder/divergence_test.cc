// The divergence ranking (docs/DIVERGENCE.md) on hand-made graphs: each
// reason, the noise floor (dtype and upstream), execution order across
// forward, backward and optimizer, modules against their children, and the
// evidence read from compared items. The same ranking on real dumps is in
// cli_e2e_test (info) and the page tests.
#include "divergence/divergence.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compare/pair_compare.h"

namespace graph_ascend::divergence {
namespace {

using graph::Graph;
using graph::NodeOp;

// A graph whose nodes are added under a parent, matched or not, with evidence.
class Fixture {
 public:
  Fixture() : g_(&pool_) { g_.AddNode(pool_.Intern("DefaultModel"), NodeOp::kModule), ev_.emplace_back(); }

  uint32_t Add(uint32_t parent, const std::string& name, bool matched, Evidence e = {}) {
    bool module = name.rfind("Module.", 0) == 0;
    uint32_t n = g_.AddNode(pool_.Intern(name), module ? NodeOp::kModule : NodeOp::kApi);
    g_.AppendChild(parent, n);
    g_.matched[n] = matched ? static_cast<int32_t>(n) : graph::kNoNode;
    if (matched) e.compared = true;
    ev_.push_back(e);
    return n;
  }
  std::vector<std::string> Ranked(vis::CompareMode mode = vis::MODE_STATISTICS) {
    vis::DivergenceRanking r = Rank(g_, ev_, mode);
    std::vector<std::string> out;
    for (const auto& e : r.entry()) out.push_back(std::string(g_.Name(e.node())) + ":" + ReasonName(e.reason()));
    return out;
  }
  Graph& graph() { return g_; }
  const std::vector<Evidence>& evidence() const { return ev_; }

 private:
  StringPool pool_;
  Graph g_;
  std::vector<Evidence> ev_;
};

Evidence Err(double in, double out, double floor = 1e-5) {
  Evidence e;
  e.has_input = e.has_output = true;
  e.input_error = in;
  e.output_error = out;
  e.floor = floor;
  // The noise rule's measures: the same changes, fp32 outputs.
  e.input_change = in;
  e.output_change = out;
  e.ulp = 0x1p-23;
  e.precision = kPrecisionFp32;
  return e;
}

// Ops that agree bit for bit, the rest of a run with one bug: the noise rule
// learns the run's noise from them (none).
void AddAgreeingOps(Fixture* f, int count) {
  for (int i = 0; i < count; ++i) f->Add(0, "Tensor.view." + std::to_string(i) + ".forward", true, Err(0, 0));
}

TEST(Divergence, OutputsDifferWhileInputsAgree) {
  Fixture f;
  f.Add(0, "Functional.linear.0.forward", true, Err(0, 0));
  f.Add(0, "Functional.gelu.0.forward", true, Err(0, 0.3));
  f.Add(0, "Functional.linear.1.forward", true, Err(0.3, 0.6));
  EXPECT_EQ(f.Ranked(), std::vector<std::string>{"Functional.gelu.0.forward:outputs differ, inputs agree"});
}

TEST(Divergence, FloorOfTheDtypeHidesFloatNoise) {
  Fixture f;  // cross-framework: every index ~1e-7, fp32
  f.Add(0, "Tensor.__add__.0.forward", true, Err(0, 1e-7));
  f.Add(0, "Tensor.__mul__.0.forward", true, Err(1e-7, 2e-7));
  f.Add(0, "Functional.linear.0.forward", true, Err(2e-7, 0.05));
  EXPECT_EQ(f.Ranked(), std::vector<std::string>{"Functional.linear.0.forward:outputs differ, inputs agree"});
  EXPECT_EQ(DtypeFloor(vis::MODE_STATISTICS, "torch.float32"), 1e-5);
  EXPECT_GT(DtypeFloor(vis::MODE_STATISTICS, "torch.bfloat16"), DtypeFloor(vis::MODE_STATISTICS, "torch.float16"));
  EXPECT_GT(DtypeFloor(vis::MODE_STATISTICS, "torch.float16"), DtypeFloor(vis::MODE_STATISTICS, "torch.float32"));
}

TEST(Divergence, UpstreamNoiseRaisesTheFloor) {
  Fixture f;
  // Upstream operators all show 8e-6 (under the fp32 floor of 1e-5): 3e-5
  // (under 5x the run's noise; the noise rule) is still noise beside them;
  // 1e-2 is not.
  for (int i = 0; i < 5; ++i) f.Add(0, "Tensor.add." + std::to_string(i) + ".forward", true, Err(8e-6, 8e-6));
  f.Add(0, "Tensor.mul.0.forward", true, Err(8e-6, 3e-5));
  f.Add(0, "Tensor.mul.1.forward", true, Err(5e-5, 1e-2));
  EXPECT_EQ(f.Ranked(), std::vector<std::string>{"Tensor.mul.1.forward:outputs differ, inputs agree"});
}

// Issue 28: every op differs a little (bf16 kernels). The first linear's
// change (its inputs agree) is its kind's noise: no divergence, with the
// largest margin stored.
TEST(Divergence, NoiseEverywhereIsNoDivergence) {
  Fixture f;
  for (int i = 0; i < 8; ++i) {
    double in = i == 0 ? 0 : 4e-3 + 1e-4 * i;
    f.Add(0, "Functional.linear." + std::to_string(i) + ".forward", true, Err(in, 3e-3 + 2e-4 * (i % 3)));
    f.Add(0, "Functional.gelu." + std::to_string(i) + ".forward", true, Err(3e-3, 3.5e-3 + 1e-4 * (i % 2)));
  }
  vis::DivergenceRanking r = Rank(f.graph(), f.evidence(), vis::MODE_STATISTICS);
  EXPECT_EQ(r.entry_size(), 0);
  EXPECT_EQ(r.rule(), vis::DIVERGENCE_RULE_NOISE);
  EXPECT_TRUE(r.has_largest());
  EXPECT_GT(r.largest_margin(), 0);
  EXPECT_LE(r.largest_margin(), kNoiseMargin);
}

// The same run with one gelu off by 0.2: it stands out of its kind's noise
// (learned from the other instances, so its own change does not raise it),
// and its entry shows the margin.
TEST(Divergence, OneOpBeyondItsKindsNoise) {
  Fixture f;
  for (int i = 0; i < 8; ++i) {
    double in = i == 0 ? 0 : 4e-3 + 1e-4 * i;
    f.Add(0, "Functional.linear." + std::to_string(i) + ".forward", true, Err(in, 3e-3 + 2e-4 * (i % 3)));
    double out = i == 5 ? 0.2 : 3.5e-3 + 1e-4 * (i % 2);
    f.Add(0, "Functional.gelu." + std::to_string(i) + ".forward", true, Err(3e-3, out));
  }
  vis::DivergenceRanking r = Rank(f.graph(), f.evidence(), vis::MODE_STATISTICS);
  ASSERT_GE(r.entry_size(), 1);
  EXPECT_EQ(f.graph().Name(r.entry(0).node()), "Functional.gelu.5.forward");
  EXPECT_GT(r.entry(0).margin(), 20);
}

TEST(Divergence, DtypeChangeCountsBelowTheFloor) {
  Fixture f;
  AddAgreeingOps(&f, 3);
  Evidence cast = Err(0, 0.0025);
  cast.ulp = 0;  // a cast: no rounding floor where the dtypes differ (EvidenceOf)
  cast.output_changed = true;
  cast.note = "output.0 dtype torch.bfloat16 vs torch.float32";
  f.Add(0, "Functional.linear.11.forward", true, cast);
  Evidence next = Err(0.0025, 0.0025, 8e-3);
  next.input_changed = true;
  f.Add(0, "Functional.silu.0.forward", true, next);
  EXPECT_EQ(f.Ranked(), std::vector<std::string>{"Functional.linear.11.forward:dtype/shape changed"});
}

TEST(Divergence, OverflowAppears) {
  Fixture f;
  Evidence exp = Err(0, 1);
  exp.output_nonfinite = true;
  f.Add(0, "Torch.exp.1.forward", true, exp);
  Evidence sum = Err(1, 1);
  sum.input_nonfinite = sum.output_nonfinite = true;
  f.Add(0, "Torch.sum.1.forward", true, sum);
  EXPECT_EQ(f.Ranked(), std::vector<std::string>{"Torch.exp.1.forward:overflow appeared"});
}

TEST(Divergence, Md5Differs) {
  Fixture f;
  Evidence same = Err(0, 0, 0), differs = Err(0, 1, 0), after = Err(1, 1, 0);
  f.Add(0, "Functional.conv2d.0.forward", true, same);
  f.Add(0, "Functional.batch_norm.6.forward", true, differs);
  f.Add(0, "Functional.relu.6.forward", true, after);
  EXPECT_EQ(f.Ranked(vis::MODE_MD5), std::vector<std::string>{"Functional.batch_norm.6.forward:md5 differs, inputs equal"});
}

TEST(Divergence, UnmatchedBetweenMatchedNeighbours) {
  Fixture f;  // a renamed activation class: GELU (npu) vs GELUActivation (bench)
  uint32_t mlp = f.Add(0, "Module.mlp.MLP.forward.0", true, Err(0, 0.4));
  uint32_t fc1 = f.Add(mlp, "Module.mlp.fc1.Linear.forward.0", true, Err(0, 0));
  f.Add(fc1, "Functional.linear.0.forward", true, Err(0, 0));
  uint32_t act = f.Add(mlp, "Module.mlp.act.GELU.forward.0", false);
  f.Add(act, "Functional.gelu.0.forward", false);
  uint32_t fc2 = f.Add(mlp, "Module.mlp.fc2.Linear.forward.0", true, Err(0.4, 0.4));
  f.Add(fc2, "Functional.linear.1.forward", true, Err(0.4, 0.4));
  EXPECT_EQ(f.Ranked(), std::vector<std::string>{"Module.mlp.act.GELU.forward.0:unmatched between matched neighbours"});
}

// Each node of a run of unmatched calls has the same neighbours: the last
// compared op before the run and the first after it (found once for all,
// not by a walk from each node: a long run must not be quadratic).
TEST(Divergence, UnmatchedRunBetweenMatchedNeighbours) {
  Fixture f;
  f.Add(0, "Functional.linear.0.forward", true, Err(0, 0));
  for (int i = 0; i < 3; ++i) f.Add(0, "Functional.gelu." + std::to_string(i) + ".forward", false);
  f.Add(0, "Functional.linear.1.forward", true, Err(0.4, 0.4));
  EXPECT_EQ(f.Ranked(), (std::vector<std::string>{"Functional.gelu.0.forward:unmatched between matched neighbours",
                                                  "Functional.gelu.1.forward:unmatched between matched neighbours",
                                                  "Functional.gelu.2.forward:unmatched between matched neighbours"}));
}

// The op after an unmatched module is the first after its whole subtree,
// however deep: a disagreeing op inside it does not count.
TEST(Divergence, UnmatchedModuleIsJudgedAfterItsWholeSubtree) {
  Fixture f;
  f.Add(0, "Functional.linear.0.forward", true, Err(0, 0));
  uint32_t outer = f.Add(0, "Module.block.Block.forward.0", false);
  uint32_t inner = f.Add(outer, "Module.block.inner.Inner.forward.0", true, Err(0, 0));
  uint32_t deeper = f.Add(inner, "Module.block.inner.deeper.Deeper.forward.0", false);
  f.Add(deeper, "Functional.relu.0.forward", true, Err(0.4, 0.4));  // inside: inputs off, not "after"
  f.Add(0, "Functional.linear.1.forward", true, Err(0, 0));
  EXPECT_TRUE(f.Ranked(vis::MODE_MD5).empty());
  Fixture g;
  g.Add(0, "Functional.linear.0.forward", true, Err(0, 0));
  uint32_t block = g.Add(0, "Module.block.Block.forward.0", false);
  uint32_t in = g.Add(block, "Module.block.inner.Inner.forward.0", true, Err(0, 0));
  g.Add(in, "Functional.relu.0.forward", true, Err(0, 0));
  g.Add(0, "Functional.linear.1.forward", true, Err(0.4, 0.4));
  EXPECT_EQ(g.Ranked(vis::MODE_MD5),
            std::vector<std::string>{"Module.block.Block.forward.0:unmatched between matched neighbours"});
}

// Under noise an unmatched region (MindSpore's reshape backward, which PyTorch does not dump) is named
// only when the input of the op after it stands out beyond every change made before it, by the same
// margin as any op: 1.5e-6 is above 5x the run's noise (2e-7) but not above 5x the 1e-6 seen before.
TEST(Divergence, UnmatchedRegionIsHeldAgainstTheChangesBeforeIt) {
  auto run = [](double after) {
    Fixture f;
    for (int i = 0; i < 6; ++i) f.Add(0, "Tensor.add." + std::to_string(i) + ".forward", true, Err(0, 2e-7));
    for (int i = 0; i < 3; ++i) f.Add(0, "Tensor.mul." + std::to_string(i) + ".forward", true, Err(1e-6, 1e-6));
    f.Add(0, "Tensor.reshape.0.forward", false);
    f.Add(0, "Functional.linear.0.forward", true, Err(after, after));
    return f.Ranked();
  };
  EXPECT_TRUE(run(1.5e-6).empty());
  EXPECT_EQ(run(1e-2), std::vector<std::string>{"Tensor.reshape.0.forward:unmatched between matched neighbours"});
}

// A collective's output carries the other ranks' inputs: it is explained up to the largest input change
// this rank brings to a collective (4e-3), not only its own (3.5e-4); a peer's bug (0.1) still stands out.
TEST(Divergence, CollectiveCarriesThePeersNoise) {
  auto run = [](double peer) {
    Fixture f;
    for (int i = 0; i < 6; ++i) f.Add(0, "Tensor.add." + std::to_string(i) + ".forward", true, Err(0, 2e-7));
    f.Add(0, "Distributed.all_reduce.0.forward", true, Err(4e-3, 2.6e-3));
    f.Add(0, "Distributed.all_reduce.1.forward", true, Err(3.5e-4, peer));
    return f.Ranked();
  };
  EXPECT_TRUE(run(2e-3).empty());
  EXPECT_EQ(run(0.1),
            std::vector<std::string>{"Distributed.all_reduce.1.forward:outputs differ, inputs agree"});
}

TEST(Divergence, HarmlessUnmatchedNodeIsNotRanked) {
  Fixture f;
  f.Add(0, "Functional.linear.0.forward", true, Err(0, 0));
  f.Add(0, "Tensor.view.0.forward", false);
  f.Add(0, "Functional.linear.1.forward", true, Err(0, 0));
  EXPECT_TRUE(f.Ranked().empty());
}

TEST(Divergence, ModuleWhoseOwnApisAreUnmatched) {
  Fixture f;  // a hand-written LayerNorm against F.layer_norm
  f.Add(0, "Functional.linear.0.forward", true, Err(0, 0));
  uint32_t norm = f.Add(0, "Module.norm.LayerNorm.forward.0", true, Err(0, 0.02));
  f.Add(norm, "Tensor.mean.0.forward", false);
  f.Add(norm, "Tensor.sub.0.forward", false);
  f.Add(norm, "Tensor.pow.0.forward", false);
  f.Add(0, "Functional.linear.1.forward", true, Err(0.02, 0.03));
  EXPECT_EQ(f.Ranked(), std::vector<std::string>{"Module.norm.LayerNorm.forward.0:outputs differ, inputs agree"});
}

TEST(Divergence, ModuleGivesWayToTheOperatorInsideIt) {
  Fixture f;
  uint32_t m = f.Add(0, "Module.layers.1.mlp.MLP.forward.0", true, Err(0, 0.5));
  f.Add(m, "Functional.linear.11.forward", true, Err(0, 0.5));
  EXPECT_EQ(f.Ranked(), std::vector<std::string>{"Functional.linear.11.forward:outputs differ, inputs agree"});
}

TEST(Divergence, ExecutionOrderForwardBackwardOptimizer) {
  Fixture f;  // tree order: optimizer, backward, forward; execution: forward, backward, optimizer
  uint32_t opt = f.Add(0, "optimizer", false);
  AddAgreeingOps(&f, 3);
  f.Add(opt, "Tensor.add_.29.forward", true, Err(0, 0.2));
  f.Add(0, "Functional.linear.0.backward", true, Err(0, 0.2));
  f.Add(0, "Functional.linear.0.forward", true, Err(0, 0.2));
  EXPECT_EQ(f.Ranked(), (std::vector<std::string>{"Functional.linear.0.forward:outputs differ, inputs agree",
                                                  "Functional.linear.0.backward:outputs differ, inputs agree",
                                                  "Tensor.add_.29.forward:outputs differ, inputs agree"}));
  std::vector<uint32_t> order = ExecutionOrder(f.graph());
  EXPECT_EQ(order.front(), 0u);
  EXPECT_EQ(f.graph().Name(order.back()), "Tensor.add_.29.forward");
}

// Evidence from stored items, as ComparePair leaves them.
vis::Item StatItem(const std::string& key, vis::ItemState state, const std::string& dtype, double max) {
  vis::Item it;
  it.set_key(key);
  it.set_state(state);
  auto field = [&](const char* name, auto set) {
    vis::Field* f = it.add_field();
    f->set_name(name);
    set(f->mutable_value());
  };
  field("type", [](vis::Value* v) { v->set_text("torch.Tensor"); });
  field("dtype", [&](vis::Value* v) { v->set_text(dtype); });
  field("shape", [](vis::Value* v) { v->set_json("[2, 3]"); });
  for (const char* stat : {"Max", "Min", "Mean", "Norm"}) field(stat, [&](vis::Value* v) { v->set_number(max); });
  return it;
}

TEST(Divergence, EvidenceReadsMetricsDtypeAndOverflow) {
  vis::NodeDetail npu, bench;
  *npu.add_input() = StatItem("A.0.forward.input.0", vis::STATE_INPUT, "torch.float32", 1.0);
  *npu.add_output() = StatItem("A.0.forward.output.0", vis::STATE_OUTPUT, "torch.bfloat16", 2.01);
  *bench.add_input() = StatItem("A.0.forward.input.0", vis::STATE_INPUT, "torch.float32", 1.0);
  *bench.add_output() = StatItem("A.0.forward.output.0", vis::STATE_OUTPUT, "torch.float32", 2.0);
  compare::ComparePair(vis::MODE_STATISTICS, "A.0.forward", &npu, bench, nullptr);
  Evidence e = EvidenceOf(vis::MODE_STATISTICS, npu, bench);
  EXPECT_TRUE(e.compared);
  EXPECT_EQ(e.input_error, 0);
  EXPECT_NEAR(e.output_error, 0.005, 1e-9);
  EXPECT_FALSE(e.input_changed);
  EXPECT_TRUE(e.output_changed);
  EXPECT_EQ(e.note, "output.0 dtype torch.bfloat16 vs torch.float32");
  EXPECT_EQ(e.floor, DtypeFloor(vis::MODE_STATISTICS, "torch.bfloat16"));
  EXPECT_FALSE(e.output_nonfinite);

  (*npu.mutable_output(0)->mutable_field(3)->mutable_value()).set_number(INFINITY);
  compare::ComparePair(vis::MODE_STATISTICS, "A.0.forward", &npu, bench, nullptr);
  EXPECT_TRUE(EvidenceOf(vis::MODE_STATISTICS, npu, bench).output_nonfinite);
}

// msprobe lists a module's parameter gradients in arrival order, which differs
// between runs (samples/bert_pgrad: bias first on one side): the evidence
// pairs them by parameter name, as their metrics are, so equal gradients in
// another order are no change of shape.
TEST(Divergence, EvidencePairsParameterGradientsByName) {
  vis::NodeDetail npu, bench;
  auto grad = [](const std::string& name, const char* shape, double value) {
    vis::Item it = StatItem("Module.fc.Linear.parameters_grad.0." + name, vis::STATE_PARAMETERS_GRAD,
                            "torch.float32", value);
    it.mutable_field(2)->mutable_value()->set_json(shape);
    return it;
  };
  *npu.add_output() = grad("bias", "[3]", 0.5);
  *npu.add_output() = grad("weight", "[3, 2]", 2.0);
  *bench.add_output() = grad("weight", "[3, 2]", 2.0);
  *bench.add_output() = grad("bias", "[3]", 0.5);
  compare::ComparePair(vis::MODE_STATISTICS, "Module.fc.Linear.parameters_grad.0", &npu, bench, nullptr);
  Evidence e = EvidenceOf(vis::MODE_STATISTICS, npu, bench);
  EXPECT_TRUE(e.compared);
  EXPECT_FALSE(e.output_changed) << e.note;
  EXPECT_EQ(e.note, "");
  EXPECT_EQ(e.output_error, 0);
}

// A near-zero Mean no longer makes a relative error of 1 (batch_norm's
// output Mean is ~1e-9 on both sides): the change is measured against the
// tensor's scale, max |Max|, |Min|.
TEST(Divergence, ChangeIsAgainstTheTensorsScale) {
  vis::NodeDetail npu, bench;
  *npu.add_input() = StatItem("B.0.forward.input.0", vis::STATE_INPUT, "torch.float32", 2.0);
  *bench.add_input() = StatItem("B.0.forward.input.0", vis::STATE_INPUT, "torch.float32", 2.0);
  *npu.add_output() = StatItem("B.0.forward.output.0", vis::STATE_OUTPUT, "torch.float32", 3.0);
  *bench.add_output() = StatItem("B.0.forward.output.0", vis::STATE_OUTPUT, "torch.float32", 3.0);
  npu.mutable_output(0)->mutable_field(5)->mutable_value()->set_number(1e-9);   // Mean
  bench.mutable_output(0)->mutable_field(5)->mutable_value()->set_number(-2e-9);
  compare::ComparePair(vis::MODE_STATISTICS, "B.0.forward", &npu, bench, nullptr);
  Evidence e = EvidenceOf(vis::MODE_STATISTICS, npu, bench);
  EXPECT_GE(e.output_error, 1);  // msprobe's MeanRelativeErr: 300 %
  EXPECT_EQ(e.input_change, 0);
  EXPECT_GE(e.output_change, 0);
  EXPECT_LT(e.output_change, 1e-8);  // 3e-9 over the scale 3
}

// MindSpore against PyTorch (bench/divergence's twin cases): MindSpore's dense backward lists the
// weight's and the input's gradients, PyTorch's linear backward one tensor of another shape. Lists
// laid out differently are not one tensor changed: a k-th pair of different shapes in a state where
// the NPU has an item without a k-th counterpart is left out; a shape of the same element count
// ([1, 2, 6, 8] against [2, 6, 8]) is the same data for the statistics, no shape change.
TEST(Divergence, EvidenceLeavesOutListsLaidOutDifferently) {
  auto shaped = [](const std::string& key, vis::ItemState state, const char* shape, double value) {
    vis::Item it = StatItem(key, state, "torch.float32", value);
    it.mutable_field(2)->mutable_value()->set_json(shape);
    return it;
  };
  vis::NodeDetail npu, bench;
  *npu.add_input() = shaped("D.0.backward.input.0", vis::STATE_INPUT, "[1, 6, 16]", 1.0);
  *npu.add_output() = shaped("D.0.backward.output.0", vis::STATE_OUTPUT, "[32, 16]", 5.0);
  *npu.add_output() = shaped("D.0.backward.output.1", vis::STATE_OUTPUT, "[1, 6, 16]", 1.0);
  *bench.add_input() = shaped("D.0.backward.input.0", vis::STATE_INPUT, "[1, 6, 16]", 1.0);
  *bench.add_output() = shaped("D.0.backward.output.0", vis::STATE_OUTPUT, "[6, 32]", 1.0);
  compare::ComparePair(vis::MODE_STATISTICS, "D.0.backward", &npu, bench, nullptr);
  Evidence e = EvidenceOf(vis::MODE_STATISTICS, npu, bench);
  EXPECT_TRUE(e.compared);
  EXPECT_FALSE(e.output_shape_changed);
  EXPECT_LT(e.output_change, 0) << "no output measured";
  EXPECT_GT(e.ulp, 0) << "the outputs' dtype still sets the rounding floor";

  vis::NodeDetail npu2, bench2;
  *npu2.add_input() = shaped("M.0.backward.input.0", vis::STATE_INPUT, "[1, 2, 6, 8]", 1.0);
  *npu2.add_output() = shaped("M.0.backward.output.0", vis::STATE_OUTPUT, "[1, 2, 6, 8]", 2.0);
  *bench2.add_input() = shaped("M.0.backward.input.0", vis::STATE_INPUT, "[1, 2, 6, 8]", 1.0);
  *bench2.add_output() = shaped("M.0.backward.output.0", vis::STATE_OUTPUT, "[2, 6, 8]", 2.0);
  compare::ComparePair(vis::MODE_STATISTICS, "M.0.backward", &npu2, bench2, nullptr);
  Evidence f = EvidenceOf(vis::MODE_STATISTICS, npu2, bench2);
  EXPECT_FALSE(f.output_shape_changed);
  EXPECT_EQ(f.output_change, 0);

  // Another element count with lists of one length is still a shape change.
  bench2.mutable_output(0)->mutable_field(2)->mutable_value()->set_json("[2, 6, 6]");
  compare::ComparePair(vis::MODE_STATISTICS, "M.0.backward", &npu2, bench2, nullptr);
  EXPECT_TRUE(EvidenceOf(vis::MODE_STATISTICS, npu2, bench2).output_shape_changed);
}

}  // namespace
}  // namespace graph_ascend::divergence
