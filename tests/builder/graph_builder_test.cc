// Building one side's graph (reference §5): root, hierarchy from
// construct.json, backward parent repair, orphan parents, API collections,
// parameters_grad nodes, stacks, micro steps and node order.
#include "graph/graph_builder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_files.h"

namespace graph_ascend::graph {
namespace {

using graph_ascend::testing::DumpJson;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::Tensor;
using graph_ascend::testing::WriteDumpDir;

using Names = std::vector<std::string>;
using Span = std::pair<size_t, size_t>;

const std::string kT = Tensor("[2, 4]", "1.0", "-1.0", "0.0", "2.0");
const std::string kIO = R"({"input_args": [)" + kT + R"(], "output": [)" + kT + "]}";

class GraphBuilderTest : public ::testing::Test {
 protected:
  void Build(const std::string& dump, const std::string& construct, const std::string& stack = "{}",
             bool complete_stack = false) {
    WriteDumpDir(dir_.path(), dump, construct, stack);
    BuildOptions options;
    options.complete_stack = complete_stack;
    auto side = BuildSide(dir_.path(), &pool_, options);
    ASSERT_TRUE(side.ok()) << side.error().ToString();
    side_ = std::move(*side);
  }
  Error BuildError(const std::string& dump, const std::string& construct, const std::string& stack = "{}") {
    WriteDumpDir(dir_.path(), dump, construct, stack);
    auto side = BuildSide(dir_.path(), &pool_, BuildOptions{});
    EXPECT_FALSE(side.ok());
    return side.ok() ? Error{} : side.error();
  }

  Graph& g() { return *side_->graph; }
  uint32_t Node(const std::string& name) {
    int32_t n = g().Find(std::string_view(name));
    EXPECT_NE(n, kNoNode) << name << " is not in the graph";
    return n == kNoNode ? 0 : static_cast<uint32_t>(n);
  }
  bool Has(const std::string& name) { return g().Find(std::string_view(name)) != kNoNode; }
  Names Children(const std::string& name) {
    Names out;
    for (uint32_t c : g().Children(Node(name))) out.emplace_back(g().Name(c));
    return out;
  }
  std::string Parent(const std::string& name) {
    int32_t p = g().parent[Node(name)];
    return p == kNoNode ? "<none>" : std::string(g().Name(static_cast<uint32_t>(p)));
  }
  Names AllNodes() {
    Names out;
    for (uint32_t n = 0; n < g().size(); ++n) out.emplace_back(g().Name(n));
    return out;
  }
  Names Stack(const std::string& name) {
    int32_t s = g().stack[Node(name)];
    if (s == kNoNode) return {"<none>"};
    const StackTable::Range& r = g().stacks.stacks[static_cast<size_t>(s)];
    Names out;
    for (uint32_t i = 0; i < r.count; ++i) out.emplace_back(pool_.Get(g().stacks.lines[r.first + i]));
    return out;
  }

  TempDir dir_;
  StringPool pool_;
  std::unique_ptr<Side> side_;
};

TEST_F(GraphBuilderTest, RootAndHierarchyInConstructOrder) {
  Build(DumpJson(R"("Module.a.A.forward.0": )" + kIO + R"(, "Torch.add.0.forward": )" + kIO),
        R"({"Module.a.A.forward.0": null, "Torch.add.0.forward": "Module.a.A.forward.0",
            "Module.a.b.B.forward.0": "Module.a.A.forward.0", "Tensor.mul.0.forward": "Module.a.b.B.forward.0",
            "Module.a.A.backward.0": ""})");
  EXPECT_EQ(g().Name(0), "DefaultModel");
  EXPECT_EQ(g().parent[0], kNoNode);
  EXPECT_EQ(Children("DefaultModel"), (Names{"Module.a.A.forward.0", "Module.a.A.backward.0"}));
  EXPECT_EQ(Children("Module.a.A.forward.0"), (Names{"Torch.add.0.forward", "Module.a.b.B.forward.0"}));
  EXPECT_EQ(Children("Module.a.b.B.forward.0"), Names{"Tensor.mul.0.forward"});
  EXPECT_EQ(g().op[Node("Module.a.A.forward.0")], NodeOp::kModule);
  EXPECT_EQ(g().op[Node("Torch.add.0.forward")], NodeOp::kApi);
  // Nodes missing from dump.json exist with no data.
  EXPECT_NE(g().entry[Node("Torch.add.0.forward")], kNoNode);
  EXPECT_EQ(g().entry[Node("Tensor.mul.0.forward")], kNoNode);
  EXPECT_EQ(g().Ancestors(Node("Tensor.mul.0.forward")).size(), 3u);
  EXPECT_EQ(g().Depth(Node("Tensor.mul.0.forward")), 3u);
  EXPECT_TRUE(g().Ancestors(0).empty());
}

// §5.11: a parent named before it appears as a key is created first.
TEST_F(GraphBuilderTest, NodeOrderCreatesParentsFirst) {
  Build(DumpJson(R"("Torch.add.0.forward": )" + kIO),
        R"({"Torch.add.0.forward": "Module.a.A.forward.0", "Module.a.A.forward.0": null,
            "Module.b.B.forward.0": null})");
  EXPECT_EQ(AllNodes(), (Names{"DefaultModel", "Module.a.A.forward.0", "Torch.add.0.forward", "Module.b.B.forward.0"}));
  EXPECT_EQ(Children("DefaultModel"), (Names{"Module.a.A.forward.0", "Module.b.B.forward.0"}));
}

// §5.4 orphans: the reference leaves a parent that is never a key
// unreachable; graph-ascend puts it under the root where it was first named.
TEST_F(GraphBuilderTest, OrphanParentsAreAttachedUnderTheRoot) {
  Build(DumpJson(R"("Torch.add.0.forward": )" + kIO),
        R"({"Module.y.Y.forward.0": null, "Torch.add.0.forward": "Module.x.X.forward.0",
            "Module.z.Z.forward.0": null})");
  EXPECT_EQ(Children("DefaultModel"), (Names{"Module.y.Y.forward.0", "Module.x.X.forward.0", "Module.z.Z.forward.0"}));
  EXPECT_EQ(Parent("Module.x.X.forward.0"), "DefaultModel");
  EXPECT_EQ(Children("Module.x.X.forward.0"), Names{"Torch.add.0.forward"});
  for (uint32_t n = 1; n < g().size(); ++n) EXPECT_NE(g().parent[n], kNoNode) << g().Name(n) << " is unreachable";
}

// issue 17 (2b): a cycle of parents (A's parent B, B's parent A) is broken
// at the edge that closed it, reported, and the cycle attached as an orphan
// parent: every node stays reachable from the root, no ancestor chain loops.
TEST_F(GraphBuilderTest, ParentCycleIsBrokenReportedAndAttached) {
  Build(DumpJson(R"("Torch.add.0.forward": )" + kIO),
        R"({"Module.a.A.forward.0": "Module.b.B.forward.0", "Module.b.B.forward.0": "Module.a.A.forward.0",
            "Torch.add.0.forward": "Module.a.A.forward.0", "Module.c.C.forward.0": null})");
  EXPECT_EQ(Children("DefaultModel"), (Names{"Module.b.B.forward.0", "Module.c.C.forward.0"}));
  EXPECT_EQ(Parent("Module.a.A.forward.0"), "Module.b.B.forward.0");
  EXPECT_EQ(Children("Module.a.A.forward.0"), Names{"Torch.add.0.forward"});
  EXPECT_EQ(g().Ancestors(Node("Torch.add.0.forward")).size(), 3u);
  for (uint32_t n = 1; n < g().size(); ++n) EXPECT_NE(g().parent[n], kNoNode) << g().Name(n) << " is unreachable";
  ASSERT_EQ(side_->warnings.size(), 1u);
  const Error& w = side_->warnings[0];
  EXPECT_EQ(w.file, dir_ / "construct.json");
  EXPECT_EQ(w.where, "key Module.b.B.forward.0");
  EXPECT_NE(w.message.find("cycle (Module.b.B.forward.0 -> Module.a.A.forward.0 -> Module.b.B.forward.0)"),
            std::string::npos)
      << w.message;
}

TEST_F(GraphBuilderTest, LongerCycleBelowANodeIsBrokenToo) {
  Build(DumpJson(""), R"({"Module.r.R.forward.0": null, "Module.a.A.forward.0": "Module.c.C.forward.0",
                          "Module.b.B.forward.0": "Module.a.A.forward.0",
                          "Module.c.C.forward.0": "Module.b.B.forward.0"})");
  for (uint32_t n = 1; n < g().size(); ++n) EXPECT_NE(g().parent[n], kNoNode) << g().Name(n) << " is unreachable";
  EXPECT_EQ(Parent("Module.c.C.forward.0"), "DefaultModel");
  EXPECT_EQ(side_->warnings.size(), 1u);
}

TEST_F(GraphBuilderTest, NoWarningsWithoutCycles) {
  Build(DumpJson(R"("Torch.add.0.forward": )" + kIO), R"({"Torch.add.0.forward": "Module.x.X.forward.0"})");
  EXPECT_TRUE(side_->warnings.empty());
}

TEST_F(GraphBuilderTest, SelfParentIsIgnoredAndTheNodeReachable) {
  Build(DumpJson(R"("Module.a.A.forward.0": )" + kIO), R"({"Module.a.A.forward.0": "Module.a.A.forward.0"})");
  EXPECT_EQ(Parent("Module.a.A.forward.0"), "DefaultModel");
}

// §5.8, with the reference's unit-test shapes.
TEST_F(GraphBuilderTest, ApiCollectionsGroupTwoOrMoreConsecutiveTopLevelApis) {
  Build(DumpJson(""), R"({"Tensor.a.0.forward": null, "Module.m.M.forward.0": null, "Module.n.N.forward.0": null,
                         "Torch.b.0.forward": null, "Functional.c.0.forward": null, "Module.o.O.forward.0": null,
                         "Tensor.d.0.forward": null, "NPU.e.0.forward": null, "Distributed.f.0.forward": null})");
  EXPECT_EQ(Children("DefaultModel"),
            (Names{"Tensor.a.0.forward", "Module.m.M.forward.0", "Module.n.N.forward.0", "Apis_Between_Modules.0",
                   "Module.o.O.forward.0", "Apis_Between_Modules.1"}));
  EXPECT_EQ(Children("Apis_Between_Modules.0"), (Names{"Torch.b.0.forward", "Functional.c.0.forward"}));
  EXPECT_EQ(Children("Apis_Between_Modules.1"),
            (Names{"Tensor.d.0.forward", "NPU.e.0.forward", "Distributed.f.0.forward"}));
  uint32_t coll = Node("Apis_Between_Modules.0");
  EXPECT_EQ(g().op[coll], NodeOp::kApiCollection);
  EXPECT_EQ(Parent("Apis_Between_Modules.0"), "DefaultModel");
  EXPECT_EQ(Parent("Torch.b.0.forward"), "Apis_Between_Modules.0");
  EXPECT_EQ(g().entry[coll], kNoNode);
  EXPECT_EQ(g().stack[coll], kNoNode);
  // Collections come after every construct.json node (§5.11).
  Names all = AllNodes();
  EXPECT_EQ(Names(all.end() - 2, all.end()), (Names{"Apis_Between_Modules.0", "Apis_Between_Modules.1"}));
}

TEST_F(GraphBuilderTest, ApiCollectionsOnlyAtTheTopAndBrokenByUnknownPrefixes) {
  Build(DumpJson(""), R"({"Module.m.M.forward.0": null, "Torch.a.0.forward": "Module.m.M.forward.0",
                         "Torch.b.0.forward": "Module.m.M.forward.0", "Tensor.c.0.forward": null,
                         "MindSpeed.d.0.forward": null, "Tensor.e.0.forward": null})");
  EXPECT_EQ(Children("Module.m.M.forward.0"), (Names{"Torch.a.0.forward", "Torch.b.0.forward"}));
  EXPECT_EQ(Children("DefaultModel"),
            (Names{"Module.m.M.forward.0", "Tensor.c.0.forward", "MindSpeed.d.0.forward", "Tensor.e.0.forward"}));
  EXPECT_FALSE(Has("Apis_Between_Modules.0"));
}

// §5.9: "P.parameters_grad" is the last child of P.backward.N with the largest N.
TEST_F(GraphBuilderTest, ParametersGradUnderTheLastBackwardCall) {
  const std::string grad = R"({"weight": [)" + kT + R"(], "bias": [)" + kT + "]}";
  Build(DumpJson(R"("Module.fc.Linear.parameters_grad": )" + grad + R"(, "Module.orphan.L.parameters_grad": )" + grad +
                 R"(, "Module.fc.Linear.backward.1": )" + kIO),
        R"({"Module.fc.Linear.forward.0": null, "Module.fc.Linear.backward.0": null,
            "Torch.add.0.backward": "Module.fc.Linear.backward.1", "Module.fc.Linear.backward.1": null})");
  EXPECT_EQ(Parent("Module.fc.Linear.parameters_grad"), "Module.fc.Linear.backward.1");
  EXPECT_EQ(Children("Module.fc.Linear.backward.1"),
            (Names{"Torch.add.0.backward", "Module.fc.Linear.parameters_grad"}));
  EXPECT_EQ(g().op[Node("Module.fc.Linear.parameters_grad")], NodeOp::kModule);
  EXPECT_NE(g().entry[Node("Module.fc.Linear.parameters_grad")], kNoNode);
  EXPECT_EQ(g().stack[Node("Module.fc.Linear.parameters_grad")], kNoNode);
  EXPECT_FALSE(Has("Module.orphan.L.parameters_grad")) << "no backward node: the grads are dropped";
  EXPECT_EQ(AllNodes().back(), "Module.fc.Linear.parameters_grad");
}

// msprobe 26 numbers the gradient entries: "P.parameters_grad.N" goes under
// P.backward.N, or the last backward call when there is no such call
// (docs/COMPATIBILITY.md C-pgrad).
TEST_F(GraphBuilderTest, NumberedParametersGrad) {
  const std::string grad = R"({"weight": [)" + kT + "]}";
  Build(DumpJson(R"("Module.fc.Linear.parameters_grad.0": )" + grad + R"(, "Module.fc.Linear.parameters_grad.1": )" +
                 grad + R"(, "Module.fc.Linear.parameters_grad.5": )" + grad +
                 R"(, "Module.bn.BatchNorm2d.parameters_grad.0": )" + grad),
        R"({"Module.fc.Linear.forward.0": null, "Module.bn.BatchNorm2d.forward.0": null,
            "Module.fc.Linear.backward.0": null, "Module.fc.Linear.backward.1": null})");
  EXPECT_EQ(Parent("Module.fc.Linear.parameters_grad.0"), "Module.fc.Linear.backward.0");
  EXPECT_EQ(Parent("Module.fc.Linear.parameters_grad.1"), "Module.fc.Linear.backward.1");
  EXPECT_EQ(Parent("Module.fc.Linear.parameters_grad.5"), "Module.fc.Linear.backward.1");
  EXPECT_EQ(Children("Module.fc.Linear.backward.1"),
            (Names{"Module.fc.Linear.parameters_grad.1", "Module.fc.Linear.parameters_grad.5"}));
  EXPECT_FALSE(Has("Module.bn.BatchNorm2d.parameters_grad.0")) << "no backward call of the module";
  // Their items are parameter gradients, one per parameter.
  const dump::DumpEntry& e = side_->dump.entries[g().entry[Node("Module.fc.Linear.parameters_grad.1")]];
  ASSERT_EQ(e.input_count, 1u);
  EXPECT_EQ(side_->dump.items[e.first_item].state, dump::ItemState::kParametersGrad);
  EXPECT_EQ(pool_.Get(side_->dump.items[e.first_item].key), ".weight");
}

TEST(ParametersGradModuleTest, Names) {
  long call = 7;
  EXPECT_EQ(dump::ParametersGradModule("Module.fc.Linear.parameters_grad", &call), "Module.fc.Linear");
  EXPECT_EQ(call, -1);
  EXPECT_EQ(dump::ParametersGradModule("Module.fc.Linear.parameters_grad.12", &call), "Module.fc.Linear");
  EXPECT_EQ(call, 12);
  EXPECT_EQ(dump::ParametersGradModule("Module.fc.Linear.parameters_grad.x"), "");
  EXPECT_EQ(dump::ParametersGradModule("Module.fc.Linear.backward.0"), "");
  EXPECT_EQ(dump::ParametersGradModule("parameters_grad"), "");
}

// §5.5, with the reference's unit-test shapes.
TEST_F(GraphBuilderTest, BackwardParentRepair) {
  Build(DumpJson(""), R"({"Module.root.R.forward.0": null, "Module.root.a.A.forward.0": "Module.root.R.forward.0",
                         "Module.root.R.backward.0": null, "Module.root.a.A.backward.0": null,
                         "Module.m.M.forward.0": null, "Tensor.add.0.forward": "Module.m.M.forward.0",
                         "Module.m.M.backward.0": null, "Tensor.add.0.backward": "",
                         "Module.k.K.forward.0": null, "Module.k.x.X.forward.0": "Module.k.K.forward.0",
                         "Module.k.x.X.backward.0": null,
                         "Module.e.E.forward.0": null, "Module.e.y.Y.forward.0": "Module.e.E.forward.0",
                         "Module.e.E.backward.0": null, "Module.e.y.Y.backward.0": "Module.other.O.backward.0",
                         "Module.n.N.backward.0": null})");
  EXPECT_EQ(Parent("Module.root.a.A.backward.0"), "Module.root.R.backward.0");
  EXPECT_EQ(Parent("Tensor.add.0.backward"), "Module.m.M.backward.0") << "API style: replace forward by backward";
  EXPECT_EQ(Parent("Module.k.x.X.backward.0"), "DefaultModel") << "the backward twin of the parent is not a key";
  EXPECT_EQ(Parent("Module.e.y.Y.backward.0"), "Module.other.O.backward.0") << "an explicit parent is kept";
  EXPECT_EQ(Parent("Module.n.N.backward.0"), "DefaultModel") << "no forward twin";
}

// The forward twin is a known name but not a key of construct.json: named
// only as a parent (a partial construct.json, §5.4) or only in dump.json.
TEST_F(GraphBuilderTest, BackwardRepairWhenTheForwardTwinIsNotAKey) {
  Build(DumpJson(R"("Torch.mm.0.forward": )" + kIO + R"(, "Torch.mm.0.backward": )" + kIO),
        R"({"Module.a.A.forward.0": "Module.p.P.forward.0", "Module.p.P.backward.0": null,
            "Torch.mm.0.backward": null})");
  EXPECT_EQ(Parent("Module.p.P.backward.0"), "DefaultModel");
  EXPECT_EQ(Parent("Torch.mm.0.backward"), "DefaultModel");
  EXPECT_EQ(Parent("Module.a.A.forward.0"), "Module.p.P.forward.0");
}

// §5.6 simplification: a module keeps the first line calling it, an API
// the line after msprobe's template call; otherwise everything is kept.
TEST(SimplifyStackTest, Rules) {
  std::vector<std::string_view> module_lines = {
      "File /t/torch/nn/modules/module.py, line 1568, in _call_impl, \n return forward_call(*args)",
      "File /w/net.py, line 12, in forward, \n x = self.bn1(x)",
      "File /w/net.py, line 30, in forward, \n y = self.bn1(y)"};
  EXPECT_EQ(SimplifyStack("Module.layer1.0.bn1.BatchNorm2d.forward.0", module_lines), Span(1, 1));
  EXPECT_EQ(SimplifyStack("Module.layer1.0.bn2.BatchNorm2d.forward.0", module_lines), Span(0, 3))
      << "no line calls bn2";
  EXPECT_EQ(SimplifyStack("Module.fc.forward", module_lines), Span(0, 3)) << "fewer than 4 segments";

  std::vector<std::string_view> api_lines = {
      "File /m/msprobe/pytorch/hook_module/wrap_torch.py, line 70, in torch_op_template, \n return "
      "TorchOPTemplate(op_name, hook)(*args, **kwargs)",
      "File /w/net.py, line 5, in forward, \n return torch.matmul(x, self.w)",
      "File /w/net.py, line 9, in run, \n net(x)"};
  EXPECT_EQ(SimplifyStack("Torch.matmul.0.forward", api_lines), Span(1, 1));
  std::vector<std::string_view> api_template = {"File a.py, line 1, in f, \n return api_template(x)",
                                                "File b.py, line 2, in g, \n z = f(x)"};
  EXPECT_EQ(SimplifyStack("Tensor.add.0.forward", api_template), Span(1, 1));
  std::vector<std::string_view> template_last = {"File b.py, line 2, in g, \n z = f(x)",
                                                 "File a.py, line 1, in f, \n return TensorOPTemplate(x)"};
  EXPECT_EQ(SimplifyStack("Tensor.add.0.forward", template_last), Span(0, 2))
      << "a template call on the last line has no next line";
  std::vector<std::string_view> not_a_word = {"File a.py, line 1, in f, \n return xTorchOPTemplate(x)",
                                              "File b.py, line 2, in g, \n z = f(x)"};
  EXPECT_EQ(SimplifyStack("Tensor.add.0.forward", not_a_word), Span(0, 2)) << "the capital must start a word";
}

TEST_F(GraphBuilderTest, StacksSimplifiedAndBorrowedByBackwardNodes) {
  const std::string stack = R"js({"0": [["Module.fc.Linear.forward.0"],
      ["File /t/torch/nn/modules/module.py, line 1, in _call_impl, \n return forward_call(*args)",
       "File /w/net.py, line 12, in forward, \n y = self.fc(x)"]],
    "1": [["Torch.matmul.0.forward"],
      ["File /m/msprobe/wrap_torch.py, line 70, in torch_op_template, \n return TorchOPTemplate(op, hook)(*args)",
       "File /w/net.py, line 5, in forward, \n return torch.matmul(x, self.w)"]]})js";
  const std::string construct =
      R"({"Module.fc.Linear.forward.0": null, "Torch.matmul.0.forward": "Module.fc.Linear.forward.0",
          "Module.fc.Linear.backward.3": null, "Torch.matmul.0.backward": "Module.fc.Linear.backward.3",
          "Module.gone.G.backward.0": null})";
  Build(DumpJson(""), construct, stack);
  EXPECT_EQ(Stack("Module.fc.Linear.forward.0"), Names{"File /w/net.py, line 12, in forward, \n y = self.fc(x)"});
  EXPECT_EQ(Stack("Torch.matmul.0.forward"),
            Names{"File /w/net.py, line 5, in forward, \n return torch.matmul(x, self.w)"});
  // Backward nodes borrow forward.0's stack (whatever their call count), API ones their forward's.
  EXPECT_EQ(Stack("Module.fc.Linear.backward.3"), Stack("Module.fc.Linear.forward.0"));
  EXPECT_EQ(Stack("Torch.matmul.0.backward"), Stack("Torch.matmul.0.forward"));
  EXPECT_EQ(Stack("Module.gone.G.backward.0"),
            Names{"This backward node cannot find the forward node and cannot retrieve stack information."});
  EXPECT_EQ(Stack("DefaultModel"), Names{"<none>"});
}

TEST_F(GraphBuilderTest, CompleteStackKeepsEveryLine) {
  const std::string stack = R"js({"0": [["Torch.matmul.0.forward"], ["File a.py, line 1, in f, \n TorchOPTemplate(x)",
                                                                      "File b.py, line 2, in g, \n y"]]})js";
  Build(DumpJson(""), R"({"Torch.matmul.0.forward": null})", stack, /*complete_stack=*/true);
  EXPECT_EQ(Stack("Torch.matmul.0.forward").size(), 2u);
}

TEST_F(GraphBuilderTest, OldStackFormatIsReadToo) {
  Build(
      DumpJson(""), R"({"Torch.matmul.0.forward": null})",
      R"js({"Torch.matmul.0.forward": ["File a.py, line 1, in f, \n TorchOPTemplate(x)", "File b.py, line 2, in g, \n y"]})js");
  EXPECT_EQ(Stack("Torch.matmul.0.forward"), Names{"File b.py, line 2, in g, \n y"});
}

// §5.10, the reference's unit-test sequence.
TEST_F(GraphBuilderTest, MicroSteps) {
  Build(DumpJson(""), R"({"Module.a.A.forward.0": null, "Module.a.A.backward.0": null, "Torch.x.0.forward": null,
                         "Torch.y.0.forward": null, "Module.a.A.forward.1": null, "Module.b.B.forward.0": null,
                         "Tensor.z.0.forward": "Module.b.B.forward.0", "Module.b.B.backward.0": null,
                         "Module.a.A.backward.1": null, "Torch.x.1.forward": null, "Torch.y.1.forward": null})");
  EXPECT_EQ(AssignMicroSteps(&g()), 2u);
  EXPECT_EQ(g().micro_steps, 2u);
  Names top = Children("DefaultModel");
  ASSERT_EQ(top.size(), 8u);
  std::vector<int32_t> steps;
  for (const std::string& n : top) steps.push_back(g().micro_step[Node(n)]);
  EXPECT_EQ(steps, (std::vector<int32_t>{0, 0, 0, 1, 1, 1, 1, 1}));
  EXPECT_EQ(g().micro_step[Node("Tensor.z.0.forward")], kNoNode) << "only root children get a micro step";
  EXPECT_EQ(g().micro_step[0], kNoNode);
}

TEST_F(GraphBuilderTest, OneMicroStepWithoutARepeatedForward) {
  Build(DumpJson(""), R"({"Module.a.A.forward.0": null, "Module.a.A.backward.0": null})");
  EXPECT_EQ(AssignMicroSteps(&g()), 1u);
}

// Level L1 dumps have an empty construct.json: the APIs in dump order
// (a graph-ascend extension; the reference refuses such dumps).
TEST_F(GraphBuilderTest, EmptyConstructBuildsTheApisInDumpOrder) {
  Build(DumpJson(R"("Functional.conv2d.0.forward": )" + kIO + R"(, "Functional.relu.0.forward": )" + kIO +
                 R"(, "Functional.conv2d.0.backward": )" + kIO),
        "{}");
  EXPECT_EQ(Children("DefaultModel"), Names{"Apis_Between_Modules.0"});
  EXPECT_EQ(Children("Apis_Between_Modules.0"),
            (Names{"Functional.conv2d.0.forward", "Functional.relu.0.forward", "Functional.conv2d.0.backward"}));
}

TEST_F(GraphBuilderTest, DumpDataDirAndTaskAreKept) {
  Build(R"({"task": "tensor", "level": "mix", "framework": "pytorch", "dump_data_dir": "/x/dump_tensor_data",
            "data": {}})",
        R"({"Module.a.A.forward.0": null})");
  EXPECT_EQ(side_->dump.task, "tensor");
  EXPECT_EQ(side_->dump.dump_data_dir, "/x/dump_tensor_data");
  EXPECT_EQ(g().size(), 2u);
}

TEST_F(GraphBuilderTest, EmptyDumpIsAnError) {
  Error e = BuildError(DumpJson(""), "{}");
  EXPECT_NE(e.message.find("empty dump"), std::string::npos) << e.ToString();
  EXPECT_NE(e.file.find("dump.json"), std::string::npos) << e.ToString();
}

// dump.json is the one file a dump folder must have (construct.json and
// stack.json may be absent: tests/builder/dump_only_test.cc).
TEST_F(GraphBuilderTest, MissingFilesAreNamed) {
  testing::WriteFile(dir_ / "construct.json", "{}");
  testing::WriteFile(dir_ / "stack.json", "{}");
  auto side = BuildSide(dir_.path(), &pool_, BuildOptions{});
  ASSERT_FALSE(side.ok());
  EXPECT_EQ(side.error().file, dir_.path() + "/dump.json");

  auto not_dir = BuildSide(dir_ / "dump.json", &pool_, BuildOptions{});
  ASSERT_FALSE(not_dir.ok());
  EXPECT_NE(not_dir.error().message.find("not a directory"), std::string::npos);
}

// §5.2 with literal dots (graph/graph.h: the reference's unescaped regex
// dot is treated as the bug it is).
TEST(ClassifyNodeTest, Prefixes) {
  for (const char* api : {"Tensor.add.0.forward", "Torch.matmul.0.forward", "Functional.relu.0.forward",
                          "NPU.npu_fusion_attention.0.forward", "VF.lstm.0.forward", "Distributed.all_reduce.0.forward",
                          "Aten.add.0.forward", "Mint.add.0.forward", "Primitive.add.0.forward", "Jit.f.0.forward",
                          "MintFunctional.relu.0.forward"}) {
    EXPECT_EQ(ClassifyNode(api), NodeOp::kApi) << api;
  }
  for (const char* module :
       {"Module.fc.Linear.forward.0", "Cell.fc.Dense.forward.0", "optimizer", "optimizer.step.0", "clip_grad_norm_.0",
        "MindSpeed.x.0.forward", "Other.x.0.forward", "TensorTest", "DefaultModel"}) {
    EXPECT_EQ(ClassifyNode(module), NodeOp::kModule) << module;
  }
  EXPECT_TRUE(IsModuleName("Cell.a.B.forward.0"));
  EXPECT_FALSE(IsModuleName("Tensor.a.0.forward"));
  EXPECT_FALSE(IsModuleName("ModuleTest")) << "dots are literal";
}

}  // namespace
}  // namespace graph_ascend::graph
