// Layer-mapping matching, -lm [yaml] (reference §6.3.3): every NPU dump name
// is placed in a scope tree by its module path (APIs: their construct
// parent's path, plus the framework function of an old-format stack), the
// scope is translated with the yaml's per-class renames, and the Bench call
// at the same scope, state and call position is its counterpart. The
// matches expected below are those msprobe 8.1.2 gives on the same dumps,
// except for msprobe 26's numbered gradients, which 8.1.2 drops, and the
// errors, where msprobe only warns (docs/COMPATIBILITY.md C-pgrad, C-yaml).
#include "match/layer_mapping.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "match/matcher.h"
#include "test_util.h"

namespace graph_ascend::match {
namespace {

using graph_ascend::testing::Entry;
using graph_ascend::testing::Shaped;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::WriteFile;

// One name of a dump: its construct.json parent ("" for none), whether
// dump.json has it (construct-only names do not) and whether construct.json
// has it (parameter gradients are not there).
struct Call {
  std::string name;
  std::string parent;
  bool in_dump = true;
  bool in_construct = true;
  std::string entry = Entry(Shaped("[2]"), Shaped("[2]"));
};
using Calls = std::vector<Call>;

std::string DumpData(const Calls& calls) {
  std::string data;
  for (const Call& c : calls) {
    if (c.in_dump) data += (data.empty() ? "\"" : ", \"") + c.name + "\": " + c.entry;
  }
  return data;
}

std::string Construct(const Calls& calls) {
  std::string out = "{";
  for (const Call& c : calls) {
    if (!c.in_construct) continue;
    out += (out.size() > 1 ? ", \"" : "\"") + c.name + "\": " + (c.parent.empty() ? "null" : "\"" + c.parent + "\"");
  }
  return out + "}";
}

// A stack.json of msprobe ≥ 8.2 (grouped: no per-name stacks, so no frame
// scope); the reference needs a non-empty stack.json to build a mapping.
std::string GroupedStack(const Calls& calls) {
  return R"({"0": [[")" + calls[0].name + R"js("], ["File model.py, line 1, in forward, \n y = f(x)"]]})js";
}

// An old-format stack.json: {name: [lines]}.
std::string OldStack(const std::string& name, const std::vector<std::string>& lines) {
  std::string out = "{\"" + name + "\": [";
  for (size_t i = 0; i < lines.size(); ++i) out += (i ? ", \"" : "\"") + lines[i] + "\"";
  return out + "]}";
}

class LayerMappingTest : public graph_ascend::testing::SidePairTest {
 protected:
  // Builds both sides, builds the mapping (bare -lm when `yaml` is absent)
  // and matches. A mapping error is kept in error_.
  void Map(const Calls& npu, const Calls& bench, const std::optional<std::string>& yaml = std::nullopt,
           const std::string& npu_stack = "", const std::string& bench_stack = "") {
    BuildSides(DumpData(npu), Construct(npu), DumpData(bench), Construct(bench),
               npu_stack.empty() ? GroupedStack(npu) : npu_stack,
               bench_stack.empty() ? GroupedStack(bench) : bench_stack);
    ASSERT_TRUE(npu_ && bench_);
    std::string path;
    if (yaml) {
      path = yaml_dir_ / "mapping.yaml";
      WriteFile(path, *yaml);
    }
    auto mapping = NameMapping::Build(*npu_, *bench_, path);
    error_.reset();
    if (!mapping.ok()) {
      error_ = mapping.error();
      return;
    }
    mapped_ = mapping->mapped();
    unmapped_ = mapping->unmapped();
    yaml_used_ = mapping->yaml_entries_used();
    pairs_ = MatchMapped(npu_.get(), bench_.get(), *mapping);
  }
  // The error of the last Map, as printed.
  std::string ErrorText() { return error_ ? error_->ToString() : "<no error>"; }

  TempDir yaml_dir_;
  std::optional<Error> error_;
  size_t mapped_ = 0, unmapped_ = 0, yaml_used_ = 0;
  uint32_t pairs_ = 0;
};

// Modules: the scope is the module path, the class is not part of it.
// APIs: their parent's path (class, state and count dropped) plus the API
// name; without a parent, the top layer.
TEST_F(LayerMappingTest, ScopesOfModulesAndApis) {
  Map({{"Module.a.b.Lin.forward.0", "Module.a.A.forward.0"},
       {"Torch.matmul.0.forward", "Module.a.A.forward.0"},
       {"Module.a.A.forward.0", ""},
       {"Torch.add.0.forward", ""}},
      {{"Module.a.b.Dense.forward.0", "Module.a.Other.forward.1"},
       {"Torch.matmul.3.forward", "Module.a.Other.forward.1"},
       {"Module.a.Other.forward.1", ""},
       {"Torch.add.2.forward", ""}});
  ASSERT_FALSE(error_) << ErrorText();
  EXPECT_EQ(MatchOf("Module.a.b.Lin.forward.0"), "Module.a.b.Dense.forward.0");
  EXPECT_EQ(MatchOf("Torch.matmul.0.forward"), "Torch.matmul.3.forward");
  EXPECT_EQ(MatchOf("Module.a.A.forward.0"), "Module.a.Other.forward.1");
  EXPECT_EQ(MatchOf("Torch.add.0.forward"), "Torch.add.2.forward");
  EXPECT_EQ(mapped_, 4u);
  EXPECT_EQ(unmapped_, 0u);
  EXPECT_EQ(pairs_, 5u) << "the root by its own name";
}

// `P.parameters_grad` (and msprobe 26's `P.parameters_grad.N`): the scope
// of module P.
TEST_F(LayerMappingTest, ParameterGradientsTakeTheirModulesScope) {
  const std::string yaml = "TopLayer:\n  fc1: dense\n";
  Map({{"Module.fc1.Linear.forward.0", ""},
       {"Module.fc1.Linear.backward.0", ""},
       {"Module.fc1.Linear.parameters_grad", "", true, false}},
      {{"Module.dense.Linear.forward.0", ""},
       {"Module.dense.Linear.backward.0", ""},
       {"Module.dense.Linear.parameters_grad", "", true, false}},
      yaml);
  ASSERT_FALSE(error_) << ErrorText();
  EXPECT_EQ(MatchOf("Module.fc1.Linear.backward.0"), "Module.dense.Linear.backward.0");
  EXPECT_EQ(MatchOf("Module.fc1.Linear.parameters_grad"), "Module.dense.Linear.parameters_grad");
  Map({{"Module.fc1.Linear.forward.0", ""},
       {"Module.fc1.Linear.backward.0", ""},
       {"Module.fc1.Linear.parameters_grad.0", "", true, false}},
      {{"Module.dense.Linear.forward.0", ""},
       {"Module.dense.Linear.backward.0", ""},
       {"Module.dense.Linear.parameters_grad.0", "", true, false}},
      yaml);
  ASSERT_FALSE(error_) << ErrorText();
  EXPECT_EQ(MatchOf("Module.fc1.Linear.parameters_grad.0"), "Module.dense.Linear.parameters_grad.0");
}

// The Megatron / Hugging Face pair of samples/layer_mapping in small: keys
// are the NPU parent's class, sources may span levels, a destination is cut
// at '(' (fused linear -> its first split counterpart).
TEST_F(LayerMappingTest, YamlRenames) {
  const std::string attn = "Module.decoder.layers.0.self_attention.SelfAttention.forward.0";
  const std::string layer = "Module.decoder.layers.0.TransformerLayer.forward.0";
  const std::string llama_attn = "Module.model.layers.0.self_attn.LlamaAttention.forward.0";
  const std::string llama_layer = "Module.model.layers.0.LlamaDecoderLayer.forward.0";
  const Calls npu = {
      {"Module.embedding.word_embeddings.Embedding.forward.0", "Module.embedding.LanguageModelEmbedding.forward.0"},
      {"Module.embedding.LanguageModelEmbedding.forward.0", ""},
      {"Module.decoder.layers.0.self_attention.linear_qkv."
       "ColumnParallelLinear.forward.0",
       attn},
      {"Torch.matmul.0.forward", attn},
      {"Torch.matmul.1.forward", attn},
      {attn, layer},
      {layer, "Module.decoder.TransformerBlock.forward.0"},
      {"Module.decoder.TransformerBlock.forward.0", ""}};
  const Calls bench = {{"Module.model.embed_tokens.Embedding.forward.0", "Module.model.LlamaModel.forward.0"},
                       {"Module.model.layers.0.self_attn.q_proj.Linear.forward.0", llama_attn},
                       {"Module.model.layers.0.self_attn.k_proj.Linear.forward.0", llama_attn},
                       {"Torch.matmul.3.forward", llama_attn},
                       {"Torch.matmul.4.forward", llama_attn},
                       {llama_attn, llama_layer},
                       {llama_layer, "Module.model.LlamaModel.forward.0"},
                       {"Module.model.LlamaModel.forward.0", ""}};
  const std::string yaml =
      "TopLayer:\n"
      "  embedding.word_embeddings: model.embed_tokens\n"
      "  decoder: model\n"
      "TransformerLayer:\n"
      "  self_attention: self_attn\n"
      "SelfAttention:\n"
      "  linear_qkv: q_proj(k_proj, v_proj)\n";
  Map(npu, bench, yaml);
  ASSERT_FALSE(error_) << ErrorText();
  EXPECT_EQ(MatchOf("Module.embedding.word_embeddings.Embedding.forward.0"),
            "Module.model.embed_tokens.Embedding.forward.0");
  EXPECT_EQ(MatchOf("Module.embedding.LanguageModelEmbedding.forward.0"), "")
      << "'embedding' alone is not a source; Bench has no 'embedding'";
  EXPECT_EQ(MatchOf("Module.decoder.layers.0.self_attention.linear_qkv."
                    "ColumnParallelLinear.forward.0"),
            "Module.model.layers.0.self_attn.q_proj.Linear.forward.0");
  EXPECT_EQ(MatchOf("Torch.matmul.0.forward"), "Torch.matmul.3.forward");
  EXPECT_EQ(MatchOf("Torch.matmul.1.forward"), "Torch.matmul.4.forward");
  EXPECT_EQ(MatchOf(attn), llama_attn);
  EXPECT_EQ(MatchOf(layer), llama_layer) << "'layers' and '0' need no entry";
  EXPECT_EQ(MatchOf("Module.decoder.TransformerBlock.forward.0"), "Module.model.LlamaModel.forward.0");
  EXPECT_EQ(yaml_used_, 4u);
  EXPECT_EQ(unmapped_, 1u);

  Map(npu, bench);  // bare -lm: the names differ, nothing maps
  ASSERT_FALSE(error_) << ErrorText();
  EXPECT_EQ(MatchOf("Module.decoder.TransformerBlock.forward.0"), "");
  EXPECT_EQ(mapped_, 0u);
  EXPECT_EQ(pairs_, 1u) << "the root";
}

// A top key `Cell` (MindSpore's name) is the top layer; among sources with
// the same first segment the longest is tried first, whatever the yaml order.
TEST_F(LayerMappingTest, CellIsTheTopLayerAndLongestSourceFirst) {
  Map({{"Module.a.b.B.forward.0", ""}, {"Module.a.c.C.forward.0", ""}},
      {{"Module.y.B.forward.0", ""}, {"Module.x.c.C.forward.0", ""}}, "Cell:\n  a: x\n  a.b: y(z)\n");
  ASSERT_FALSE(error_) << ErrorText();
  EXPECT_EQ(MatchOf("Module.a.b.B.forward.0"), "Module.y.B.forward.0");
  EXPECT_EQ(MatchOf("Module.a.c.C.forward.0"), "Module.x.c.C.forward.0");
  EXPECT_EQ(yaml_used_, 2u);
}

// A scope level that no dump name ends at (a ModuleList such as `layers`)
// has its own name as class, so the yaml can key renames by it.
TEST_F(LayerMappingTest, UndumpedContainerIsKeyedByItsName) {
  Map({{"Module.dec.layers.2.L.forward.0", "Module.dec.D.forward.0"}, {"Module.dec.D.forward.0", ""}},
      {{"Module.dec.layers.0.L.forward.0", "Module.dec.D.forward.0"}, {"Module.dec.D.forward.0", ""}},
      "layers:\n  \"2\": \"0\"\n");
  ASSERT_FALSE(error_) << ErrorText();
  EXPECT_EQ(MatchOf("Module.dec.layers.2.L.forward.0"), "Module.dec.layers.0.L.forward.0");
  EXPECT_EQ(MatchOf("Module.dec.D.forward.0"), "Module.dec.D.forward.0");
}

// Calls pair by position within their scope and state; a call without a
// counterpart there stays unmatched even when Bench has its exact name;
// names that dump.json lacks (root, construct-only modules) keep their own.
TEST_F(LayerMappingTest, CallOrderWithinAScope) {
  Map({{"Torch.add.0.forward", "Module.m.M.forward.0"},
       {"Torch.add.1.forward", "Module.m.M.forward.0"},
       {"Torch.add.2.forward", "Module.m.M.forward.0"},
       {"Module.m.M.forward.0", "Module.c.C.forward.0"},
       {"Module.m.M.forward.1", "Module.c.C.forward.0"},
       {"Module.c.C.forward.0", "", false}},
      {{"Torch.add.0.forward", "Module.m.M.forward.0"},
       {"Torch.add.1.forward", "Module.m.M.forward.0"},
       {"Module.m.M.forward.0", "Module.c.C.forward.0"},
       {"Torch.add.2.forward", "Module.n.N.forward.0"},
       {"Module.n.N.forward.0", "Module.c.C.forward.0"},
       {"Module.m.M.forward.1", "Module.c.C.forward.0"},
       {"Module.c.C.forward.0", "", false}});
  ASSERT_FALSE(error_) << ErrorText();
  EXPECT_EQ(MatchOf("Torch.add.0.forward"), "Torch.add.0.forward");
  EXPECT_EQ(MatchOf("Torch.add.1.forward"), "Torch.add.1.forward");
  EXPECT_EQ(MatchOf("Torch.add.2.forward"), "") << "no third add in Bench's m: no fall back to the same name";
  EXPECT_EQ(MatchOf("Module.m.M.forward.0"), "Module.m.M.forward.0");
  EXPECT_EQ(MatchOf("Module.m.M.forward.1"), "Module.m.M.forward.1");
  EXPECT_EQ(MatchOf("Module.c.C.forward.0"), "Module.c.C.forward.0") << "construct-only: same name";
  EXPECT_EQ(MatchOf("DefaultModel"), "DefaultModel");
  EXPECT_EQ(unmapped_, 1u);
}

// The order is the dump order: a different numbering on the Bench side
// does not matter, and neither do types and shapes (no structural check).
TEST_F(LayerMappingTest, NoStructuralCheck) {
  Map({{"Torch.matmul.0.forward", "Module.m.M.forward.0", true, true, Entry(Shaped("[2, 3]"), Shaped("[2, 3]"))},
       {"Module.m.M.forward.0", "", true, true, Entry(Shaped("[2]") + ", " + Shaped("[5]"), Shaped("[2]"))}},
      {{"Torch.matmul.4.forward", "Module.m.M.forward.0", true, true, Entry(Shaped("[7]", "torch.int64"), "null")},
       {"Module.m.M.forward.0", "", true, true, Entry(Shaped("[9]"), Shaped("[9]"))}});
  ASSERT_FALSE(error_) << ErrorText();
  EXPECT_EQ(MatchOf("Torch.matmul.0.forward"), "Torch.matmul.4.forward");
  EXPECT_EQ(MatchOf("Module.m.M.forward.0"), "Module.m.M.forward.0");
}

// The reference's observed case: decoder vs encoder needs the yaml.
TEST_F(LayerMappingTest, BareOrWithYaml) {
  const Calls npu = {{"Module.model.decoder.TransformerBlock.forward.0", "Module.model.GPTModel.forward.0"},
                     {"Module.model.GPTModel.forward.0", ""}};
  const Calls bench = {{"Module.model.encoder.TransformerBlock.forward.0", "Module.model.GPTModel.forward.0"},
                       {"Module.model.GPTModel.forward.0", ""}};
  Map(npu, bench);
  ASSERT_FALSE(error_) << ErrorText();
  EXPECT_EQ(MatchOf("Module.model.decoder.TransformerBlock.forward.0"), "");
  EXPECT_EQ(MatchOf("Module.model.GPTModel.forward.0"), "Module.model.GPTModel.forward.0");
  Map(npu, bench, "GPTModel:\n  decoder: encoder\n");
  ASSERT_FALSE(error_) << ErrorText();
  EXPECT_EQ(MatchOf("Module.model.decoder.TransformerBlock.forward.0"),
            "Module.model.encoder.TransformerBlock.forward.0");
  Map(npu, bench, "");
  ASSERT_FALSE(error_) << "an empty yaml is a bare -lm: " << ErrorText();
  EXPECT_EQ(MatchOf("Module.model.decoder.TransformerBlock.forward.0"), "");
}

// A backward call takes the scope of its forward twin: msprobe attributes
// some backward calls to an outer module (samples/README.md).
TEST_F(LayerMappingTest, BackwardFollowsItsForwardScope) {
  const Calls bench = {{"Torch.mul.2.forward", "Module.outer.inner.I.forward.0"},
                       {"Module.outer.inner.I.forward.0", "Module.outer.O.forward.0"},
                       {"Module.outer.O.forward.0", ""},
                       {"Torch.mul.2.backward", "Module.outer.inner.I.backward.0"},
                       {"Module.outer.inner.I.backward.0", "Module.outer.O.backward.0"},
                       {"Module.outer.O.backward.0", ""}};
  Map({{"Torch.mul.0.forward", "Module.outer.inner.I.forward.0"},
       {"Module.outer.inner.I.forward.0", "Module.outer.O.forward.0"},
       {"Module.outer.O.forward.0", ""},
       {"Torch.mul.0.backward", "Module.outer.O.backward.0"},
       {"Module.outer.O.backward.0", ""}},
      bench);
  ASSERT_FALSE(error_) << ErrorText();
  EXPECT_EQ(MatchOf("Torch.mul.0.forward"), "Torch.mul.2.forward");
  EXPECT_EQ(MatchOf("Torch.mul.0.backward"), "Torch.mul.2.backward");
  // Without the forward call in dump.json the backward keeps its own scope.
  Map({{"Torch.mul.0.forward", "Module.outer.inner.I.forward.0", false},
       {"Module.outer.inner.I.forward.0", "Module.outer.O.forward.0"},
       {"Module.outer.O.forward.0", ""},
       {"Torch.mul.0.backward", "Module.outer.O.backward.0"},
       {"Module.outer.O.backward.0", ""}},
      bench);
  ASSERT_FALSE(error_) << ErrorText();
  EXPECT_EQ(MatchOf("Torch.mul.0.backward"), "");
}

// Pipeline stages number ParallelTransformer layers globally: each side's
// layers are renumbered from its smallest index.
TEST_F(LayerMappingTest, ParallelTransformerLayersAreRenumbered) {
  auto stage = [](const std::string& cls, int first, const std::string& add) {
    const std::string top = "Module.enc." + cls + ".forward.0";
    const std::string a = "Module.enc.layers." + std::to_string(first) + ".L.forward.0";
    const std::string b = "Module.enc.layers." + std::to_string(first + 1) + ".L.forward.0";
    return Calls{{a, top}, {add, b}, {b, top}, {top, ""}};
  };
  Map(stage("ParallelTransformer", 2, "Torch.add.0.forward"), stage("ParallelTransformer", 0, "Torch.add.5.forward"));
  ASSERT_FALSE(error_) << ErrorText();
  EXPECT_EQ(MatchOf("Module.enc.layers.2.L.forward.0"), "Module.enc.layers.0.L.forward.0");
  EXPECT_EQ(MatchOf("Module.enc.layers.3.L.forward.0"), "Module.enc.layers.1.L.forward.0");
  EXPECT_EQ(MatchOf("Torch.add.0.forward"), "Torch.add.5.forward") << "APIs inside a layer too";
  Map(stage("TransformerStack", 2, "Torch.add.0.forward"), stage("TransformerStack", 0, "Torch.add.5.forward"));
  ASSERT_FALSE(error_) << ErrorText();
  EXPECT_EQ(MatchOf("Module.enc.layers.2.L.forward.0"), "") << "only ParallelTransformer layers";
  EXPECT_EQ(MatchOf("Torch.add.0.forward"), "");
}

// An old-format stack.json adds the framework function that called the API
// (the last framework frame right below msprobe's Template wrapper) to its
// scope; the grouped format of msprobe >= 8.2 has no per-name stacks.
TEST_F(LayerMappingTest, FrameStackScope) {
  const std::string api = "Functional.linear.0.forward";
  const Calls calls = {{api, "Module.attn.A.forward.0"}, {"Module.attn.A.forward.0", ""}};
  const std::string tmpl =
      "File "
      "/usr/lib/python3/site-packages/msprobe/pytorch/hook_module/"
      "wrap_functional.py, line 97, in "
      "functional_op_template, \\n return FunctionalOPTemplate(op_name, "
      "hook)(*args, **kwargs)";
  const std::string frame =
      "File /usr/lib/python3/site-packages/torch/nn/functional.py, line 5290, "
      "in multi_head_attention_forward, \\n "
      "attn = linear(q, w)";
  const std::string fwd =
      "File /usr/lib/python3/site-packages/torch/nn/modules/activation.py, "
      "line 1368, in forward, \\n return "
      "F.multi_head_attention_forward(";
  const std::string user = "File /work/model.py, line 12, in forward, \\n y = F.linear(x, w)";
  const std::string with_frame = OldStack(api, {tmpl, frame, fwd});
  const std::string direct = OldStack(api, {tmpl, user});

  Map(calls, calls, std::nullopt, with_frame, direct);
  ASSERT_FALSE(error_) << ErrorText();
  EXPECT_EQ(MatchOf(api), "") << "NPU scope attn.multi_head_attention_forward.linear, Bench "
                                 "attn.linear";
  EXPECT_EQ(MatchOf("Module.attn.A.forward.0"), "Module.attn.A.forward.0");
  Map(calls, calls, std::nullopt, with_frame, with_frame);
  EXPECT_EQ(MatchOf(api), api);
  Map(calls, calls, std::nullopt, GroupedStack(calls), direct);
  EXPECT_EQ(MatchOf(api), api) << "grouped stacks give no frame scope";
  // Frames of msprobe itself, `__call__` and a user frame before any
  // framework frame give none either.
  const std::string msprobe_frame =
      "File /usr/lib/python3/site-packages/torch/../msprobe/core.py, line 3, "
      "in hook_forward, \\n x";
  const std::string call_frame =
      "File /usr/lib/python3/site-packages/torch/nn/modules/module.py, line 3, "
      "in __call__, \\n x";
  Map(calls, calls, std::nullopt, OldStack(api, {tmpl, msprobe_frame, fwd}), direct);
  EXPECT_EQ(MatchOf(api), api);
  Map(calls, calls, std::nullopt, OldStack(api, {tmpl, call_frame, fwd}), direct);
  EXPECT_EQ(MatchOf(api), api);
  const std::string reconstruct =
      "File /usr/lib/python3/site-packages/torch/nn/functional.py, line 9, in _reconstruct_heads, \\n x";
  Map(calls, calls, std::nullopt, OldStack(api, {tmpl, reconstruct, fwd}), direct);
  EXPECT_EQ(MatchOf(api), api) << "a function whose name contains 'construct' is skipped too";
  Map(calls, calls, std::nullopt, OldStack(api, {tmpl, user, frame, fwd}), direct);
  EXPECT_EQ(MatchOf(api), api);
  // The window ends at the first forward line below the first wrapper; a
  // wrapper further down the stack (a nested call) does not start another.
  Map(calls, calls, std::nullopt, OldStack(api, {tmpl, user, tmpl, frame, fwd}), direct);
  EXPECT_EQ(MatchOf(api), api);
  Map(calls, calls, std::nullopt, OldStack(api, {tmpl, tmpl, frame, fwd}), direct);
  EXPECT_EQ(MatchOf(api), "") << "consecutive wrapper lines: the frame below the last one";
}

// ---------------------------------------------------------------- errors

const Calls kSmall = {{"Module.a.A.forward.0", ""}};

TEST_F(LayerMappingTest, UnparsableYamlNamesFileAndLine) {
  Map(kSmall, kSmall, "TopLayer:\n  a: b\n  c: [d\n");
  ASSERT_TRUE(error_);
  EXPECT_EQ(error_->file, yaml_dir_ / "mapping.yaml");
  EXPECT_NE(error_->where.find("line "), std::string::npos) << ErrorText();
  EXPECT_NE(ErrorText().find("parse"), std::string::npos) << ErrorText();
}

TEST_F(LayerMappingTest, YamlThatIsNotAMap) {
  Map(kSmall, kSmall, "- TopLayer\n- a\n");
  ASSERT_TRUE(error_);
  EXPECT_EQ(error_->file, yaml_dir_ / "mapping.yaml");
  EXPECT_NE(ErrorText().find("map"), std::string::npos) << ErrorText();
  Map(kSmall, kSmall, "TopLayer:\n  a: b\nGPTModel: decoder\n");
  ASSERT_TRUE(error_);
  EXPECT_NE(error_->where.find("line 3"), std::string::npos) << ErrorText();
  EXPECT_NE(error_->where.find("GPTModel"), std::string::npos) << ErrorText();
  Map(kSmall, kSmall, "TopLayer:\n  a: [b, c]\n");
  ASSERT_TRUE(error_);
  EXPECT_NE(error_->where.find("line 2"), std::string::npos) << ErrorText();
}

TEST_F(LayerMappingTest, YamlThatNamesNothingPresent) {
  Map(kSmall, kSmall, "GPTModel:\n  decoder: encoder\nTopLayer:\n  b: c\n");
  ASSERT_TRUE(error_);
  EXPECT_EQ(error_->file, yaml_dir_ / "mapping.yaml");
  EXPECT_NE(ErrorText().find("none of the 2 entries"), std::string::npos) << ErrorText();
  Map(kSmall, kSmall, "GPTModel:\n  decoder: encoder\nTopLayer:\n  a: c\n");
  EXPECT_FALSE(error_) << "one entry used is enough: " << ErrorText();
}

TEST_F(LayerMappingTest, MissingYaml) {
  BuildSides(DumpData(kSmall), Construct(kSmall), DumpData(kSmall), Construct(kSmall), GroupedStack(kSmall),
             GroupedStack(kSmall));
  auto mapping = NameMapping::Build(*npu_, *bench_, yaml_dir_ / "absent.yaml");
  ASSERT_FALSE(mapping.ok());
  EXPECT_EQ(mapping.error().file, yaml_dir_ / "absent.yaml");
  auto dir = NameMapping::Build(*npu_, *bench_, yaml_dir_.path());
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.error().ToString().find("directory"), std::string::npos) << dir.error().ToString();
}

}  // namespace
}  // namespace graph_ascend::match
