// Checkpoint compare on samples/ckpt: Megatron layouts written by real
// torch.save (samples/generate/megatron_checkpoints.py), checked against
// msprobe 26.2.0's own output on the same folders (samples/ckpt/msprobe/,
// written by bench/reference/ckpt_compare_reference.py).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "json_file.h"
#include "ckpt/ckpt_compare.h"
#include "ckpt/megatron_checkpoint.h"
#include "torch_save/pickle.h"
#include "ckpt/torch_file.h"

namespace graph_ascend::testing {
using torch_save::PickleValue;
using ckpt::TorchFile;
namespace {

std::string Ckpt(const std::string& rel) { return Sample("ckpt/" + rel); }

// Runs ckpt_compare into a fresh folder and returns its JSON.
Json RunCompare(const std::string& a, const std::string& b) {
  TempDir out;
  std::string file = out / "similarity.json";
  RunResult r = RunTool({"ckpt_compare", a, b, "-o", file});
  EXPECT_EQ(r.status, 0) << r.err;
  return ReadJson(file);
}

// Same parameters as msprobe, same shapes and sizes, metrics within float32
// rounding (msprobe computes in float32, graph-ascend in double).
void ExpectMatchesMsprobe(const Json& ours, const std::string& reference) {
  Json ref = ReadJson(Ckpt("msprobe/" + reference));
  ASSERT_TRUE(ref.is_object()) << reference;
  ASSERT_EQ(ours.size(), ref.size());
  for (auto& [name, r] : ref.items()) {
    ASSERT_TRUE(ours.contains(name)) << name;
    const Json& o = ours[name];
    EXPECT_EQ(o["shape"], r["shape"]) << name;
    EXPECT_EQ(o["numel"], r["numel"]) << name;
    for (const char* m : {"l2", "cos"}) {
      if (r[m].is_null()) {
        EXPECT_TRUE(o[m].is_null()) << name << " " << m;
        continue;
      }
      double want = r[m].get<double>(), got = o[m].get<double>();
      EXPECT_NEAR(got, want, 1e-5 * std::max(1.0, std::fabs(want))) << name << " " << m;
    }
  }
}

TEST(CkptCompare, Tp2Pp2MatchesMsprobe) {
  Json ours = RunCompare(Ckpt("tp2pp2_a"), Ckpt("tp2pp2_b"));
  ExpectMatchesMsprobe(ours, "tp2pp2.json");
  // Four layers over two stages: stage 1's local layers 0, 1 are global 2, 3.
  EXPECT_TRUE(ours.contains("decoder.layers.3.mlp.linear_fc2.weight"));
  EXPECT_FALSE(ours.contains("decoder.layers.4.mlp.linear_fc2.weight"));
  // TP shards merged: linear_qkv [(4 + 2 * 2) * 4, 16] column-parallel, linear_proj row-parallel.
  EXPECT_EQ(ours["decoder.layers.0.self_attention.linear_qkv.weight"]["shape"], Json::parse("[32, 16]"));
  EXPECT_EQ(ours["decoder.layers.2.self_attention.linear_proj.weight"]["shape"], Json::parse("[16, 16]"));
  EXPECT_EQ(ours["decoder.layers.1.mlp.linear_fc2.weight"]["shape"], Json::parse("[16, 32]"));
  // Two more SGD steps moved every weight a little.
  double cos = ours["decoder.layers.0.mlp.linear_fc1.weight"]["cos"].get<double>();
  EXPECT_LT(cos, 1.0);
  EXPECT_GT(cos, 0.9);
  EXPECT_GT(ours["output_layer.weight"]["l2"].get<double>(), 0.0);
}

// The same weights saved TP 2 x PP 2 and TP 1 x PP 1 merge to the same model;
// the command says that it merged two different layouts (msprobe does not).
TEST(CkptCompare, LayoutsOfTheSameWeightsAreIdentical) {
  TempDir out;
  RunResult r = RunTool({"ckpt_compare", Ckpt("tp2pp2_b"), Ckpt("tp1pp1_b"), "-o", out / "s.json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("graph-ascend: note: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is TP 2 x PP 2, "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is TP 1: both were merged into whole models"), std::string::npos) << r.err;
  Json ours = ReadJson(out / "s.json");
  ExpectMatchesMsprobe(ours, "tp2pp2_vs_tp1pp1.json");
  EXPECT_EQ(ours.size(), 3u + 4u * 6u);
  for (auto& [name, v] : ours.items()) {
    EXPECT_EQ(v["l2"].get<double>(), 0.0) << name;
    EXPECT_NEAR(v["cos"].get<double>(), 1.0, 1e-12) << name;
  }
}

// An uneven pipeline (PP 3 with 1, 2 and 1 layers): each stage's layers
// follow the layers of the stages before it. msprobe numbers stage p from
// p x (layers of stage 0), which puts stage 2's layer on layer 2 and loses
// layer 3 (docs/COMPATIBILITY.md CK-uneven-pp).
TEST(CkptCompare, UnevenPipelineStagesAreNumberedInOrder) {
  Json ours = RunCompare(Ckpt("pp3_uneven_b"), Ckpt("tp1pp1_b"));
  EXPECT_EQ(ours.size(), 3u + 4u * 6u);
  for (auto& [name, v] : ours.items()) {
    EXPECT_EQ(v["l2"].get<double>(), 0.0) << name;
    EXPECT_NEAR(v["cos"].get<double>(), 1.0, 1e-12) << name;
  }
  auto ck = ckpt::LoadMegatronCheckpoint(Ckpt("pp3_uneven_b"));
  ASSERT_TRUE(ck.ok()) << ck.error().ToString();
  EXPECT_EQ(ck->Layout(), "TP 1 x PP 3");
  // Stage 2 (mp_rank_00_002) holds one layer, local 0 = global 3.
  const ckpt::ModelParam& p = ck->params.at("decoder.layers.3.mlp.linear_fc1.weight");
  EXPECT_NE(p.shards[0].file->path().find("mp_rank_00_002"), std::string::npos);
}

// Two layouts that do not merge into the same parameters (a MoE model with
// TP 2 x EP 2 against a dense TP 1 one) are refused, not compared on the
// names they happen to share.
TEST(CkptCompare, LayoutsThatLeaveParametersWithoutAPartnerAreRefused) {
  TempDir out;
  RunResult r = RunTool({"ckpt_compare", Ckpt("ep_a"), Ckpt("tp1pp1_b"), "-o", out / "s.json"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("no partner after merging TP 2 x EP 2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ckpt/ep_a/iter_0000002: key decoder.layers.0.mlp."), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(out.path()));
}

TEST(CkptCompare, VirtualPipelineMatchesMsprobe) {
  Json ours = RunCompare(Ckpt("vpp_a/iter_0000002"), Ckpt("vpp_b/iter_0000004"));
  ExpectMatchesMsprobe(ours, "vpp.json");
  // Chunk 1 of stage 1 (model1 in mp_rank_00_001) holds global layer 3.
  EXPECT_TRUE(ours.contains("decoder.layers.3.input_layernorm.weight"));
  // Same weights as the TP 2 x PP 2 save of the same step.
  Json same = RunCompare(Ckpt("vpp_a/iter_0000002"), Ckpt("tp2pp2_a"));
  for (auto& [name, v] : same.items()) EXPECT_EQ(v["l2"].get<double>(), 0.0) << name;
}

TEST(CkptCompare, ExpertParallelMatchesMsprobe) {
  Json ours = RunCompare(Ckpt("ep_a"), Ckpt("ep_b"));
  ExpectMatchesMsprobe(ours, "ep.json");
  // EP rank 1's local experts 0, 1 are global experts 2, 3; bf16 read as such.
  EXPECT_TRUE(ours.contains("decoder.layers.0.mlp.experts.local_experts.3.linear_fc1.weight"));
  EXPECT_FALSE(ours.contains("decoder.layers.0.mlp.experts.local_experts.4.linear_fc1.weight"));
  EXPECT_EQ(ours["decoder.layers.0.mlp.experts.local_experts.3.linear_fc1.weight"]["shape"], Json::parse("[64, 16]"));
}

// msprobe fails on "release" (it formats iter_{None:07d}); given the release
// folder itself it reads it, and maps the legacy names to mcore ones.
TEST(CkptCompare, ReleaseWithLegacyNames) {
  Json ours = RunCompare(Ckpt("release_b"), Ckpt("tp1pp1_b"));
  ExpectMatchesMsprobe(ours, "release_vs_tp1pp1.json");
  EXPECT_TRUE(ours.contains("decoder.layers.0.self_attention.linear_qkv.weight"));
  EXPECT_TRUE(ours.contains("decoder.final_layernorm.weight"));
  for (auto& [name, v] : ours.items()) EXPECT_EQ(v["l2"].get<double>(), 0.0) << name;
}

TEST(CkptCompare, ReadsArgsNamespaceAsOpaqueObject) {
  auto f = TorchFile::Open(Ckpt("tp2pp2_a/iter_0000002/mp_rank_01_001/model_optim_rng.pt"));
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  const PickleValue* args = f->root().Get("args");
  ASSERT_NE(args, nullptr);
  EXPECT_EQ(args->kind, PickleValue::Kind::kObject);
  EXPECT_EQ(args->s, "argparse.Namespace");
  EXPECT_EQ(args->Get("tensor_model_parallel_size")->i, 2);
  EXPECT_EQ(args->Get("pipeline_model_parallel_size")->i, 2);
  EXPECT_DOUBLE_EQ(args->Get("lr")->f, 0.05);
  EXPECT_EQ(f->root().Get("iteration")->i, 2);
}

// A string literal's bytes, NULs included.
template <size_t N>
std::string Bytes(const char (&s)[N]) {
  return std::string(s, N - 1);
}

// Pickles whose value contains itself (Python writes `l = []; l.append(l)`
// as `] q\x00 h\x00 a .`): refused, and nothing is kept alive by the cycle of
// shared_ptrs (LeakSanitizer reported the list before the fix).
TEST(Unpickle, AValueThatContainsItselfIsAnErrorAndNotALeak) {
  const std::pair<const char*, std::string> cases[] = {
      {"list, APPEND", Bytes("\x80\x02]q\x00h\x00" "a.")},
      {"list, APPENDS", Bytes("\x80\x02]q\x00(h\x00h\x00" "e.")},
      {"dict, SETITEM", Bytes("\x80\x02}q\x00X\x01\x00\x00\x00kh\x00s.")},
      {"object, BUILD", Bytes("\x80\x02" "cargparse\nNamespace\n)\x81q\x00h\x00" "b.")},
      {"two lists holding each other", Bytes("\x80\x02]q\x00]q\x01h\x00" "aa.")},
      {"a cycle popped off the stack", Bytes("\x80\x02]q\x00]q\x01h\x00" "ah\x01" "a0h\x00.")},
  };
  for (const auto& [what, pickle] : cases) {
    auto v = torch_save::Unpickle(pickle, "data.pkl");
    ASSERT_FALSE(v.ok()) << what;
    EXPECT_NE(v.error().ToString().find("contains itself"), std::string::npos) << what << ": " << v.error().ToString();
  }
  // The same list, then an unknown opcode: an error, and the list is freed as well.
  EXPECT_FALSE(torch_save::Unpickle(Bytes("\x80\x02]q\x00h\x00" "a\xff"), "data.pkl").ok());
  // A value shared twice (no cycle) still reads.
  auto shared = torch_save::Unpickle(Bytes("\x80\x02]q\x00]q\x01" "ah\x01" "a."), "data.pkl");
  ASSERT_TRUE(shared.ok()) << shared.error().ToString();
  ASSERT_EQ((*shared)->items.size(), 2u);
  EXPECT_EQ((*shared)->items[0], (*shared)->items[1]);
}

TEST(CkptCompare, RefusesToOverwriteUnlessForced) {
  TempDir out;
  std::string file = out / "similarity.json";
  { std::ofstream(file) << "keep me"; }
  RunResult r = RunTool({"ckpt_compare", Ckpt("tp1pp1_b"), Ckpt("release_b"), "-o", file});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("exists"), std::string::npos) << r.err;
  std::ifstream in(file);
  std::string kept((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(kept, "keep me");
  r = RunTool({"ckpt_compare", Ckpt("tp1pp1_b"), Ckpt("release_b"), "-o", file, "--force"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(ReadJson(file).contains("output_layer.weight"));
}

struct BadCase {
  const char* folder;
  const char* message;
};

class CkptCompareBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(CkptCompareBadInput, OneLineExit2NothingWritten) {
  TempDir out;
  std::string file = out / "similarity.json";
  RunResult r = RunTool({"ckpt_compare", Ckpt(std::string("bad/") + GetParam().folder), Ckpt("tp1pp1_b"), "-o", file});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(std::string("ckpt/bad/") + GetParam().folder), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(out.path())) << "something was written";
}

INSTANTIATE_TEST_SUITE_P(Samples, CkptCompareBadInput,
                         ::testing::Values(BadCase{"not_zip", "not a zip archive"}, BadCase{"truncated", "truncated"},
                                           BadCase{"missing_member", "missing tensor storage"},
                                           BadCase{"missing_rank", "missing mp_rank_01"},
                                           BadCase{"ep_no_num_experts",
                                                   "inconsistent layout: global parameter decoder.layers.0.mlp."
                                                   "experts.local_experts.0."}));

}  // namespace
}  // namespace graph_ascend::testing
