// The layer profile (issue 32, point 4) on compares of the real samples: its
// numbers against the .vis's own stored details, its layers and ranking
// entries against the samples' known culprits, `info --profile` and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "profile/layer_profile.h"
#include "test_files.h"
#include "verdict/verdict.h"
#include "vis/vis_index.h"

namespace {

namespace fs = std::filesystem;
using namespace graph_ascend;
using graph_ascend::testing::ExpectOneError;
using graph_ascend::testing::Graph;
using graph_ascend::testing::Lines;
using graph_ascend::testing::Ok;
using graph_ascend::testing::RunResult;
using graph_ascend::testing::RunTool;
using graph_ascend::testing::Sample;
using graph_ascend::testing::SourceDir;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::WriteFile;

struct Opened {
  std::unique_ptr<vis::VisReader> reader;
  vis::SideIndex npu, bench;
  verdict::Verdict verdict;
};

Opened Open(const std::string& path) {
  Opened o;
  o.reader = Ok(vis::VisReader::Open(path));
  o.npu = Ok(vis::LoadSideIndex(*o.reader, vis::SIDE_NPU));
  o.bench = Ok(vis::LoadSideIndex(*o.reader, vis::SIDE_BENCH));
  o.verdict = Ok(verdict::ReadVerdict(*o.reader, o.npu, path));
  return o;
}

double Number(const vis::Item& item, const std::string& name) {
  for (const vis::Field& f : item.field()) {
    if (f.name() == name && f.value().kind_case() == vis::Value::kNumber) return f.value().number();
  }
  return NAN;
}

// The change of a statistics item pair against the tensor's scale, from the stored fields
// (docs/DIVERGENCE.md, "Change, against the tensor's scale").
double Change(const vis::Item& a, const vis::Item& b) {
  double scale = std::max({std::fabs(Number(a, "Max")), std::fabs(Number(a, "Min")), std::fabs(Number(b, "Max")),
                           std::fabs(Number(b, "Min"))});
  double change = 0;
  for (const char* s : {"Max", "Min", "Mean"}) change = std::max(change, std::fabs(Number(a, s) - Number(b, s)));
  change = scale > 0 ? change / scale : 0;
  double norm = std::max(Number(a, "Norm"), Number(b, "Norm"));
  if (norm > 0) change = std::max(change, std::fabs(Number(a, "Norm") - Number(b, "Norm")) / norm);
  return change;
}

// The largest change over the output items (and parameter gradients) of the NPU nodes named by
// `names`, paired k-th with k-th as stored; -1 when none is found.
double LargestChange(const Opened& o, const std::vector<std::string>& names) {
  double largest = -1;
  for (const std::string& name : names) {
    for (uint32_t n = 0; n < o.npu.size(); ++n) {
      if (o.npu.Name(n) != name) continue;
      vis::NodeDetail a = Ok(o.reader->ReadDetail(vis::SIDE_NPU, n, name));
      int32_t m = o.npu.matched[n];
      EXPECT_GE(m, 0) << name;
      vis::NodeDetail b = Ok(o.reader->ReadDetail(vis::SIDE_BENCH, m, o.bench.Name(m)));
      bool pgrad = name.find(".parameters_grad") != std::string::npos;
      const auto& items_a = pgrad ? a.input() : a.output();
      const auto& items_b = pgrad ? b.input() : b.output();
      for (int k = 0; k < items_a.size() && k < items_b.size(); ++k) {
        if (std::isnan(Number(items_a[k], "Max"))) continue;
        largest = std::max(largest, Change(items_a[k], items_b[k]));
      }
    }
  }
  return largest;
}

class LayerProfileTest : public ::testing::Test {
 protected:
  std::string Compare(const std::string& config, const std::string& name) {
    std::vector<std::string> files = Graph(config, dir_ / name);
    EXPECT_EQ(files.size(), 1u);
    return files.empty() ? "" : files[0];
  }
  TempDir dir_;
};

// gpt_statistics: bit for bit the same up to layer 1's MLP under bf16 autocast (samples/README.md).
TEST_F(LayerProfileTest, TheDecoderLayersOfTheBitIdenticalSampleAgainstItsDetails) {
  std::string path = Compare(Sample("gpt_statistics/compare.json"), "gpt");
  Opened o = Open(path);
  profile::Profile p = Ok(profile::ReadProfile(*o.reader, o.npu, o.bench, o.verdict, 0));
  EXPECT_EQ(p.grouping, "model.layers.N");
  ASSERT_EQ(p.points.size(), 3u);
  for (int layer = 0; layer < 3; ++layer) {
    const profile::Point& point = p.points[layer];
    std::string l = std::to_string(layer);
    EXPECT_EQ(point.label, "model.layers." + l);
    EXPECT_EQ(o.npu.Name(point.node), "Module.model.layers." + l + ".LlamaDecoderLayer.forward.0");
    // Each series against the stored statistics of the nodes it stands for.
    std::string module = "Module.model.layers." + l + ".";
    std::vector<std::string> grads;
    for (uint32_t n = 0; n < o.npu.size(); ++n) {
      std::string name(o.npu.Name(n));
      if (name.rfind(module, 0) == 0 && name.find(".parameters_grad") != std::string::npos) grads.push_back(name);
    }
    EXPECT_EQ(grads.size(), 9u) << "7 Linear, 2 RMSNorm weights";
    struct {
      int series;
      std::vector<std::string> names;
    } cases[] = {{profile::kForward, {module + "LlamaDecoderLayer.forward.0"}},
                 {profile::kBackward, {module + "LlamaDecoderLayer.backward.0"}},
                 {profile::kParamGrad, grads}};
    for (const auto& c : cases) {
      const profile::Value& v = point.value[c.series];
      ASSERT_TRUE(v.has) << l << " " << profile::SeriesName(c.series);
      EXPECT_DOUBLE_EQ(v.error, LargestChange(o, c.names)) << l << " " << profile::SeriesName(c.series);
      EXPECT_GT(v.floor, 0);
    }
  }
  // Before the culprit the runs agree bit for bit: layer 0's forward is exactly 0, under its floor.
  EXPECT_EQ(p.points[0].value[profile::kForward].error, 0);
  EXPECT_LT(p.points[0].value[profile::kForward].error, p.points[0].value[profile::kForward].floor);
  // The first divergence (Functional.linear.11.forward, in layer 1's gate_proj) is in layer 1, and every
  // entry of the ranking inside a layer is counted in it.
  EXPECT_FALSE(p.points[0].first);
  EXPECT_TRUE(p.points[1].first);
  EXPECT_FALSE(p.points[2].first);
  EXPECT_EQ(p.points[0].ranked, 0u);
  size_t inside = 0;
  for (const verdict::Entry& e : o.verdict.entries) {
    for (uint32_t n = e.node; n != 0 && o.npu.parent[n] >= 0; n = o.npu.parent[n]) {
      std::string name(o.npu.Name(n));
      if (name.rfind("Module.model.layers.", 0) == 0 && name.find("DecoderLayer.") != std::string::npos) {
        ++inside;
        break;
      }
    }
  }
  EXPECT_EQ(p.points[1].ranked + p.points[2].ranked, inside);
  EXPECT_GT(p.points[1].ranked, 0u);
}

// The modules at a depth: the root's children are depth 1, LlamaModel's children depth 2.
TEST_F(LayerProfileTest, ModulesAtADepth) {
  std::string path = Compare(Sample("gpt_statistics/compare.json"), "gpt");
  Opened o = Open(path);
  profile::Profile p = Ok(profile::ReadProfile(*o.reader, o.npu, o.bench, o.verdict, 2));
  EXPECT_EQ(p.grouping, "depth 2");
  std::vector<std::string> labels;
  for (const profile::Point& point : p.points) labels.push_back(point.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"model.embed_tokens", "model.rotary_emb", "model.layers.0",
                                              "model.layers.1", "model.layers.2", "model.norm"}));
  // A module's parameter gradients are those of the modules inside it.
  EXPECT_TRUE(p.points[2].value[profile::kParamGrad].has);
  EXPECT_FALSE(p.points[1].value[profile::kParamGrad].has) << "the rotary embedding has no parameters";
}

// Tensor mode: each series is the floor rule's item error, 1 - the share of elements within 1/1000.
TEST_F(LayerProfileTest, TensorModeUsesTheStoredThousandthRatio) {
  std::string path = Compare(Sample("gpt_tensor/compare.json"), "tensor");
  Opened o = Open(path);
  profile::Profile p = Ok(profile::ReadProfile(*o.reader, o.npu, o.bench, o.verdict, 0));
  ASSERT_EQ(p.points.size(), 2u);
  for (int layer = 0; layer < 2; ++layer) {
    std::string name = "Module.model.layers." + std::to_string(layer) + ".LlamaDecoderLayer.forward.0";
    uint32_t n = p.points[layer].node;
    ASSERT_EQ(o.npu.Name(n), name);
    vis::NodeDetail d = Ok(o.reader->ReadDetail(vis::SIDE_NPU, n, name));
    double worst = -1;
    for (const vis::Item& item : d.output()) {
      for (const vis::Metric& m : item.metric()) {
        if (m.name() == "One Thousandth Err Ratio" && m.has_value()) worst = std::max(worst, 1 - m.value());
      }
    }
    ASSERT_GE(worst, 0);
    EXPECT_DOUBLE_EQ(p.points[layer].value[profile::kForward].error, worst) << name;
    EXPECT_DOUBLE_EQ(p.points[layer].value[profile::kForward].floor, 1e-3) << "float32's tensor floor";
  }
  EXPECT_EQ(p.points[0].value[profile::kForward].error, 0);
  EXPECT_TRUE(p.points[1].first) << "the eps of layer 1's post_attention_layernorm";
}

// overflow_nan: blocks.1's softmax in float16 overflows; an Inf/NaN output is the largest error there is.
TEST_F(LayerProfileTest, AnOverflowIsAnInfiniteError) {
  std::string path = Compare(Sample("overflow_nan/compare.json"), "overflow");
  Opened o = Open(path);
  profile::Profile p = Ok(profile::ReadProfile(*o.reader, o.npu, o.bench, o.verdict, 0));
  ASSERT_EQ(p.points.size(), 2u);
  EXPECT_EQ(p.points[1].label, "blocks.1");
  const profile::Value& v = p.points[1].value[profile::kForward];
  ASSERT_TRUE(v.has);
  EXPECT_TRUE(std::isinf(v.error));
  EXPECT_GT(v.error, v.floor);
  EXPECT_TRUE(p.points[1].first);
  EXPECT_EQ(p.points[0].value[profile::kForward].error, 0) << "blocks.0 agrees bit for bit";
  EXPECT_TRUE(std::isfinite(p.points[0].value[profile::kForward].floor)) << "an overflow is no noise";
}

// A run that differs everywhere by noise alone (bench/divergence's llama under bf16 linear layers): no
// entry, every layer's forward change of the same order.
TEST_F(LayerProfileTest, ANoisyRunHasNoRankedLayer) {
  std::string corpus = SourceDir() + "/bench/divergence/corpus.tar.xz";
  std::string cmd = "tar -xJf '" + corpus + "' -C '" + dir_.path() +
                    "' corpus/runs/npu-llama-bf16lin-none-s1 corpus/runs/bench-llama-none-none-s1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  WriteFile(dir_ / "noisy.json", "{\"npu_path\": \"" + (dir_ / "corpus/runs/npu-llama-bf16lin-none-s1/step0/rank0") +
                                     "\", \"bench_path\": \"" +
                                     (dir_ / "corpus/runs/bench-llama-none-none-s1/step0/rank0") + "\"}");
  std::string path = Compare(dir_ / "noisy.json", "noisy");
  Opened o = Open(path);
  EXPECT_TRUE(o.verdict.entries.empty()) << "no divergence beyond noise";
  profile::Profile p = Ok(profile::ReadProfile(*o.reader, o.npu, o.bench, o.verdict, 0));
  ASSERT_EQ(p.points.size(), 2u);
  for (const profile::Point& point : p.points) {
    EXPECT_EQ(point.ranked, 0u);
    EXPECT_FALSE(point.first);
    const profile::Value& v = point.value[profile::kForward];
    ASSERT_TRUE(v.has);
    EXPECT_GT(v.error, 0) << "noise everywhere";
    EXPECT_DOUBLE_EQ(v.error, LargestChange(o, {"Module." + point.label + ".LlamaDecoderLayer.forward.0"}));
  }
}

TEST_F(LayerProfileTest, InfoProfilePrintsOneLinePerLayer) {
  std::string path = Compare(Sample("gpt_statistics/compare.json"), "gpt");
  RunResult r = RunTool({"info", path, "--profile"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 7u) << r.out;
  EXPECT_EQ(lines[2].rfind("layer profile by model.layers.N (3 points)", 0), 0u) << lines[2];
  EXPECT_EQ(lines[4].rfind("  model.layers.0 ", 0), 0u) << lines[4];
  EXPECT_NE(lines[5].find("the first divergence"), std::string::npos) << lines[5];
  EXPECT_EQ(lines[4].find("divergence"), std::string::npos) << lines[4];
  r = RunTool({"info", "--profile", "--depth", "1", path});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("layer profile by depth 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  model "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  lm_head "), std::string::npos) << r.out;
}

TEST_F(LayerProfileTest, BadInputIsOneLineAndExitTwo) {
  std::string gpt = Compare(Sample("gpt_statistics/compare.json"), "gpt");
  // l1_api dumps APIs only: no module, no layer.
  std::string l1 = Compare(Sample("l1_api/compare.json"), "l1");
  ExpectOneError(RunTool({"info", "--profile", l1}), {l1, "no repeated layer modules", "--depth"});
  ExpectOneError(RunTool({"info", "--profile", "--depth", "9", gpt}), {gpt, "--depth 9", "no forward module"});
  std::vector<std::string> build = Graph(Sample("gpt_statistics/build.json"), dir_ / "build");
  ASSERT_EQ(build.size(), 1u);
  ExpectOneError(RunTool({"info", "--profile", build[0]}), {build[0], "no layer profile"});
  WriteFile(dir_ / "damaged.vis", "not a vis file");
  ExpectOneError(RunTool({"info", "--profile", dir_ / "damaged.vis"}), {"damaged.vis"});
  for (auto [args, part] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"info", gpt, "--profile", "--depth", "0"}, "--depth '0'"},
           {{"info", gpt, "--profile", "--depth"}, "--depth needs a value"},
           {{"info", gpt, "--depth", "2"}, "--depth goes with --profile"},
           {{"info", gpt, "--layers"}, "unknown option '--layers'"}}) {
    RunResult r = RunTool(args);
    EXPECT_EQ(r.status, 2) << part;
    EXPECT_EQ(r.out, "") << part;
    EXPECT_NE(Lines(r.err).at(0).find(part), std::string::npos) << r.err;
  }
}

}  // namespace
