// config_check on samples/config_check: two packs written by real msprobe
// 26.2.0 (ConfigChecker around a tiny torch run; samples/generate/
// config_check_packs.py) that differ in HCCL_DETERMINISTIC, the learning
// rate, the seed and the peft version, checked against msprobe's own
// result.xlsx of the same packs (samples/config_check/msprobe_result.json,
// read with openpyxl by bench/reference/config_check_reference.py).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "json_file.h"
#include "config_check/config_check.h"
#include "zip/zip_archive.h"

namespace graph_ascend::testing {
namespace {

std::string Pack(const std::string& rel) { return Sample("config_check/" + rel); }

Json RunCheck(const TempDir& out) {
  RunResult r = RunTool({"config_check", "-c", Pack("bench.zip"), Pack("cmp.zip"), "-o", out / "result"});
  EXPECT_EQ(r.status, 0) << r.err;
  return ReadJson(out / "result/result.json");
}

bool Near(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) {
    return std::fabs(a.get<double>() - b.get<double>()) <= 1e-12 * std::max(1.0, std::fabs(b.get<double>()));
  }
  return a == b;
}

TEST(ConfigCheck, FindsTheFourKnownDifferences) {
  TempDir out;
  Json ours = RunCheck(out);
  EXPECT_EQ(ours["summary"], Json::parse(R"([["filename", "pass_check"], ["env", "error"], ["pip", "error"],
      ["dataset", "error"], ["weights", "error"], ["hyperparameters", "error"], ["random", "pass"]])"));
  EXPECT_EQ(ours["env"][1], Json::parse(R"(["HCCL_DETERMINISTIC", "HCCL_DETERMINISTIC", "true", "false", "error"])"));
  EXPECT_EQ(ours["pip"][1], Json::parse(R"(["peft", "0.13.0", "0.13.2", "error"])"));
  EXPECT_EQ(ours["hyperparameters"].size(), 3u);
  EXPECT_EQ(ours["hyperparameters"][1][1], "lr");
  EXPECT_EQ(ours["hyperparameters"][2][1], "seed");
}

// Row for row what msprobe wrote, except where msprobe is wrong (docs/COMPATIBILITY.md):
// its env sheet shows the cmp pack's value as bench_value and the other way round, and its
// relative differences are divided by the signed bench value (negative for negative stats).
TEST(ConfigCheck, MatchesMsprobesWorkbook) {
  TempDir out;
  Json ours = RunCheck(out);
  Json ref = ReadJson(Pack("msprobe_result.json"));
  ASSERT_EQ(ours.size(), ref.size());
  for (auto& [sheet, rows] : ref.items()) {
    ASSERT_TRUE(ours.contains(sheet)) << sheet;
    const Json& mine = ours[sheet];
    ASSERT_EQ(mine.size(), rows.size()) << sheet;
    EXPECT_EQ(mine[0], rows[0]) << sheet << " header";
    for (size_t r = 1; r < rows.size(); ++r) {
      Json want = rows[r];
      if (sheet == "env") std::swap(want[2], want[3]);
      if (sheet == "weights" || sheet == "dataset") {
        for (size_t c = 4; c < want.size(); ++c)
          if (want[c].is_number()) want[c] = std::fabs(want[c].get<double>());
      }
      // msprobe's row order within a step and rank is Python set order; find the row by its key.
      const Json* got = nullptr;
      size_t key = std::min<size_t>(3, want.size());
      for (size_t m = 1; m < mine.size(); ++m) {
        bool same = mine[m].size() == want.size();
        for (size_t c = 0; same && c < key; ++c) same = mine[m][c] == want[c];
        if (same) got = &mine[m];
      }
      ASSERT_NE(got, nullptr) << sheet << " " << want.dump();
      ASSERT_EQ(got->size(), want.size());
      for (size_t c = 0; c < want.size(); ++c) EXPECT_TRUE(Near((*got)[c], want[c])) << sheet << " " << want.dump();
    }
  }
}

TEST(ConfigCheck, WritesARealWorkbookWithOneSheetPerCheck) {
  TempDir out;
  RunCheck(out);
  auto zip = zip::ZipArchive::Open(out / "result/result.xlsx");
  ASSERT_TRUE(zip.ok()) << zip.error().ToString();
  auto workbook = zip->Read("xl/workbook.xml");
  ASSERT_TRUE(workbook.ok()) << workbook.error().ToString();
  size_t at = 0;
  for (const char* name : {"summary", "env", "pip", "dataset", "weights", "hyperparameters", "random"}) {
    size_t hit = workbook->find(std::string("name=\"") + name + "\"", at);
    EXPECT_NE(hit, std::string::npos) << name;
    at = hit == std::string::npos ? at : hit;
  }
  EXPECT_TRUE(zip->Read("xl/worksheets/sheet7.xml").ok());
  // The env sheet holds the variable that differs, as an inline string.
  auto env = zip->Read("xl/worksheets/sheet2.xml");
  ASSERT_TRUE(env.ok()) << env.error().ToString();
  EXPECT_NE(env->find("<t xml:space=\"preserve\">HCCL_DETERMINISTIC</t>"), std::string::npos) << *env;
  EXPECT_EQ(env->find("<c r=\"A1\" t=\"inlineStr\" s=\"1\">"), env->find("<c r=\"A1\""));
}

TEST(ConfigCheck, KeepsWhatIsInTheOutputFolder) {
  TempDir out;
  fs::create_directories(out / "result");
  { std::ofstream(out / "result/mine.txt") << "keep"; }
  RunCheck(out);
  EXPECT_TRUE(fs::exists(out / "result/mine.txt"));
  EXPECT_TRUE(fs::exists(out / "result/result.xlsx"));
}

TEST(ConfigCheck, FolderArgumentsCompareCheckpoints) {
  TempDir out;
  RunResult r = RunTool({"config_check", "-c", Sample("ckpt/tp2pp2_b"), Sample("ckpt/tp1pp1_b"), "-o", out / "s.json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadJson(out / "s.json").size(), 27u);
}

// -d: the static part of a pack, read back by -c against msprobe's pack of the same script.
TEST(ConfigCheck, DumpsTheStaticPartOfAPack) {
  TempDir out;
  std::string pack = out / "pack.zip";
  RunResult r = RunTool({"config_check", "-d", Pack("bench_train.sh"), "-o", pack});
  ASSERT_EQ(r.status, 0) << r.err;
  auto p = config_check::ReadPack(pack);
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  Json hyper = Json::parse(p->files["hyperparameters/hyperparameters_static.json"]);
  // msprobe reads "--bf16 --weight-decay 0.1" as bf16 = "--weight-decay" and loses weight-decay.
  EXPECT_EQ(hyper["bf16"], true);
  EXPECT_EQ(hyper["weight-decay"], "0.1");
  EXPECT_EQ(hyper["lr"], "1e-4");
  EXPECT_EQ(hyper["seed"], "1234");
  EXPECT_EQ(hyper["num-layers"], "2");  // from the GPT_ARGS block
  EXPECT_EQ(hyper["use-flash-attn"], true);
  EXPECT_TRUE(Json::parse(p->files["env"]).contains("GA_SOURCE_DIR"));  // this process's environment
  EXPECT_NE(p->files["pip"].find("="), std::string::npos);
  r = RunTool({"config_check", "-c", pack, Pack("bench.zip"), "-o", out / "result"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json rows = ReadJson(out / "result/result.json")["hyperparameters"];
  EXPECT_EQ(rows.size(), 3u) << rows.dump();
  EXPECT_EQ(rows[1], Json::parse(R"(["hyperparameters_static.json", "bf16", "bf16", "True", "--weight-decay",
      "pure name", "error"])"));
  EXPECT_EQ(rows[2][1], "weight-decay");
  EXPECT_EQ(rows[2][2], "Only in benchmark");
  // An existing pack is kept.
  r = RunTool({"config_check", "-d", Pack("bench_train.sh"), "-o", pack});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("exists"), std::string::npos) << r.err;
}

TEST(SequenceRatio, IsDifflibs) {
  // Values printed by Python's difflib.SequenceMatcher(None, a, b).ratio().
  using config_check::SequenceRatio;
  EXPECT_DOUBLE_EQ(SequenceRatio("learning_rate", "learningrate"), 0.96);
  EXPECT_DOUBLE_EQ(SequenceRatio("abcd", "bcde"), 0.75);
  EXPECT_DOUBLE_EQ(SequenceRatio("num_layers", "num_layer"), 0.9473684210526315);
  EXPECT_DOUBLE_EQ(SequenceRatio("micro_batch_size", "global_batch_size"), 0.7272727272727273);
  EXPECT_DOUBLE_EQ(SequenceRatio("x = torch.randn(2, 8)", "y = torch.randint(0, 2, (2,))"), 0.72);
  // b of 200+ characters: its popular characters are junk, so nothing matches.
  EXPECT_DOUBLE_EQ(SequenceRatio(std::string(150, 'a') + std::string(100, 'b'),
                                 std::string(120, 'b') + std::string(130, 'a')),
                   0.0);
  EXPECT_DOUBLE_EQ(SequenceRatio("", ""), 1.0);
  EXPECT_DOUBLE_EQ(SequenceRatio("seed", ""), 0.0);
}

struct BadPack {
  const char* file;
  const char* message;
};

class ConfigCheckBadInput : public ::testing::TestWithParam<BadPack> {};

TEST_P(ConfigCheckBadInput, OneLineExit2NothingWritten) {
  TempDir out;
  RunResult r = RunTool({"config_check", "-c", Pack(std::string("bad/") + GetParam().file), Pack("cmp.zip"), "-o",
                         out / "result"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(GetParam().file), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out / "result"));
}

INSTANTIATE_TEST_SUITE_P(Samples, ConfigCheckBadInput,
                         ::testing::Values(BadPack{"not_a_pack.zip", "not a config_check pack"},
                                           BadPack{"truncated_env.zip", "env byte"},
                                           BadPack{"not_a_zip.zip", "not a zip archive"}));

}  // namespace
}  // namespace graph_ascend::testing
