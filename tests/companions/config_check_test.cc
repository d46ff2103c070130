// config_check on samples/config_check: two packs written by real msprobe
// 26.2.0 (ConfigChecker around a tiny torch run; samples/generate/
// config_check_packs.py) that differ in HCCL_DETERMINISTIC, the learning
// rate, the seed and the peft version, checked against msprobe's own
// result.xlsx of the same packs (samples/config_check/msprobe_result.json,
// read with openpyxl by bench/reference/config_check_reference.py).
#include "config_check/config_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "json_file.h"
#include "torch_save/zip_archive.h"
#include "zip/zip_writer.h"

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

// ---- rule coverage: rules.json's cases, pack by pack -----------------------

Json CellJson(const config_check::Cell& c) {
  if (auto t = std::get_if<std::string>(&c)) return *t;
  if (auto d = std::get_if<double>(&c)) return *d;
  if (auto i = std::get_if<int64_t>(&c)) return *i;
  if (auto b = std::get_if<bool>(&c)) return *b;
  return nullptr;
}

config_check::Pack PackOf(const std::string& name, const Json& members) {
  config_check::Pack p;
  p.path = name;
  for (auto& [member, content] : members.items())
    p.files[member] = content.is_string() ? content.get<std::string>() : content.dump(4);
  return p;
}

Json RulesCases() { return ReadJson(SourceDir() + "/tests/companions/testdata/config_check/rules.json"); }

class ConfigCheckRules : public ::testing::TestWithParam<std::string> {};

TEST_P(ConfigCheckRules, GivesTheExpectedSheets) {
  Json c = RulesCases()[GetParam()];
  ASSERT_TRUE(c.is_object()) << GetParam();
  auto sheets = config_check::ComparePacks(PackOf("bench.zip", c["bench"]), PackOf("cmp.zip", c["cmp"]));
  ASSERT_TRUE(sheets.ok()) << sheets.error().ToString();
  Json names = Json::array();
  for (const auto& s : *sheets) names.push_back(s.name);
  EXPECT_EQ(names, c["sheets"]);
  for (const auto& s : *sheets) {
    if (!c["expect"].contains(s.name)) continue;
    Json rows = Json::array();
    for (const auto& r : s.rows) {
      Json row = Json::array();
      for (const auto& cell : r) row.push_back(CellJson(cell));
      rows.push_back(row);
    }
    EXPECT_EQ(rows, c["expect"][s.name]) << GetParam() << " sheet " << s.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ConfigCheckRules,
                         ::testing::Values("gpu_env", "npu_vs_gpu_env", "gpu_vs_npu_env", "hyperparameter_names",
                                           "check_in_one_pack", "member_in_one_pack"));

// Through the command: a pack without weights/ against one with them is a
// summary warning and a row of the members sheet, not a silent skip.
TEST(ConfigCheck, ReportsACheckThatOnePackLacks) {
  TempDir out;
  auto cmp = config_check::ReadPack(Pack("cmp.zip"));
  ASSERT_TRUE(cmp.ok()) << cmp.error().ToString();
  std::vector<std::pair<std::string, std::string>> members;
  for (const auto& [name, text] : cmp->files)
    if (name.rfind("weights/", 0) != 0) members.emplace_back(name, text);
  ASSERT_LT(members.size(), cmp->files.size());
  ASSERT_TRUE(zip::WriteZip(out / "no_weights.zip", members, false).ok());
  RunResult r = RunTool({"config_check", "-c", Pack("bench.zip"), out / "no_weights.zip", "-o", out / "result"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("weights          warning"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("members          1 pack members are in one pack only"), std::string::npos) << r.out;
  Json result = ReadJson(out / "result/result.json");
  EXPECT_FALSE(result.contains("weights"));
  EXPECT_EQ(result["members"], Json::parse(R"([["check", "member", "only_in", "level"],
      ["weights", "weights/", "bench", "warning"]])"));
  EXPECT_EQ(result["summary"][4], Json::parse(R"(["weights", "warning"])"));
}

// result.xlsx and result.json are written together or not at all.
TEST(ConfigCheck, WritesBothResultsOrNeither) {
  TempDir out;
  // result.json cannot replace a non-empty folder: the second rename fails.
  fs::create_directories(out / "result/result.json/inside");
  RunResult r = RunTool({"config_check", "-c", Pack("bench.zip"), Pack("cmp.zip"), "-o", out / "result"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("result.json"), std::string::npos) << r.err;
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(out / "result")) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"result.json"}) << "result.xlsx or a temporary file was left";
  // A folder the run made is removed again when nothing could be written into it.
  fs::create_directories(out / "ro");
  fs::permissions(out / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  if (access((out / "ro").c_str(), W_OK) != 0) {  // (root writes anyway)
    r = RunTool({"config_check", "-c", Pack("bench.zip"), Pack("cmp.zip"), "-o", out / "ro/result"});
    EXPECT_EQ(r.status, 2);
    EXPECT_FALSE(fs::exists(out / "ro/result"));
  }
  fs::permissions(out / "ro", fs::perms::owner_all);
}

// ---- -d: what the static part of a pack reads ------------------------------

Json DumpHyperparameters(const std::string& script) {
  TempDir out;
  RunResult r = RunTool({"config_check", "-d", script, "-o", out / "pack.zip"});
  EXPECT_EQ(r.status, 0) << r.err;
  auto p = config_check::ReadPack(out / "pack.zip");
  if (!p.ok()) {
    ADD_FAILURE() << p.error().ToString();
    return Json();
  }
  auto it = p->files.find("hyperparameters/hyperparameters_static.json");
  return it == p->files.end() ? Json() : Json::parse(it->second);
}

TEST(ConfigCheckDump, ReadsAYamlConfig) {
  TempDir in;
  WriteFile(in / "train.yaml",
            "model:\n  hidden_size: 1024\n  layers: [0, 1, 2]\n  act: swiglu\noptimizer:\n  lr: 1.0e-4\n"
            "  eps: 1e-8\n  fused: yes\ndata:\n  - {path: /a, weight: 0.5}\n  - {path: /b, weight: 0.5}\n");
  Json h = DumpHyperparameters(in / "train.yaml");
  // PyYAML's types: 1.0e-4 is a float, 1e-8 (no dot) a string, yes a boolean; lists of scalars stay whole.
  EXPECT_EQ(h, Json::parse(R"({"data.0.path": "/a", "data.0.weight": 0.5, "data.1.path": "/b",
      "data.1.weight": 0.5, "model.act": "swiglu", "model.hidden_size": 1024, "model.layers": [0, 1, 2],
      "optimizer.eps": "1e-8", "optimizer.fused": true, "optimizer.lr": 0.0001})"));
}

TEST(ConfigCheckDump, ReadsAnMsrunLaunchLine) {
  TempDir in;
  WriteFile(in / "run.sh",
            "#!/bin/bash\nLR=2e-5\nGPT_ARGS=\"\n    --num-layers 32\n    --use-fused-rmsnorm\n\"\n"
            "msrun --worker_num=8 --local_worker_num 8 --master_port=8118 --join=True \\\n"
            "    pretrain_gpt.py $GPT_ARGS --lr $LR --bf16 | tee train.log\n");
  Json h = DumpHyperparameters(in / "run.sh");
  // msprobe reads --worker_num=8 as worker_num = true (and loses 8).
  EXPECT_EQ(h, Json::parse(R"({"bf16": true, "join": "True", "local_worker_num": "8", "lr": "2e-5",
      "master_port": "8118", "num-layers": "32", "use-fused-rmsnorm": true, "worker_num": "8"})"));
}

// A plain "python train.py ..." launch (no torchrun): msprobe finds no launch line and packs no
// hyperparameters; graph-ascend reads the first python line.
TEST(ConfigCheckDump, ReadsAPlainPythonLaunchLine) {
  TempDir in;
  WriteFile(in / "run.sh",
            "export CUDA_VISIBLE_DEVICES=0\ncd /opt/python\n"
            "CUDA_LAUNCH_BLOCKING=1 python3 -u train.py --lr 1e-4 --epochs 3 \\\n  --fp16\n");
  EXPECT_EQ(DumpHyperparameters(in / "run.sh"), Json::parse(R"({"epochs": "3", "fp16": true, "lr": "1e-4"})"));
  // A torchrun line wins over an earlier python line (msprobe's launchers first).
  WriteFile(in / "both.sh", "python prepare.py --out data\ntorchrun --nproc_per_node 8 train.py --lr 3e-4\n");
  EXPECT_EQ(DumpHyperparameters(in / "both.sh"), Json::parse(R"({"lr": "3e-4", "nproc_per_node": "8"})"));
}

// Found by the fuzz target config_check_script: a block that names itself
// (GPT_ARGS="... $GPT_ARGS") is expanded once, as msprobe's str.replace does,
// not forever; bytes that are not UTF-8 become U+FFFD instead of an exception.
TEST(ConfigCheckDump, OddScriptsEndWithAnAnswer) {
  TempDir in;
  WriteFile(in / "self.sh", "GPT_ARGS=\"--lr 1e-3 $GPT_ARGS\"\ntorchrun train.py $GPT_ARGS --seed 7\n");
  EXPECT_EQ(DumpHyperparameters(in / "self.sh"), Json::parse(R"({"lr": "1e-3", "seed": "7"})"));
  WriteFile(in / "latin1.sh", "torchrun train.py --data-path /d/caf\xe9 --lr 1\n");
  EXPECT_EQ(DumpHyperparameters(in / "latin1.sh"),
            Json::parse("{\"data-path\": \"/d/caf\xef\xbf\xbd\", \"lr\": \"1\"}"));
  // Long lines, blocks and values: std::regex, which recursed once per character, overflowed the
  // stack on a 36 KB script of the fuzz target; these are read by hand now.
  std::string long_value(300000, 'x');
  WriteFile(in / "long.sh", "LONG_ARGS=\"--tag " + long_value + "\"\nV=" + long_value + "\npython " +
                                std::string(300000, 'y') + ".py $LONG_ARGS --v $V\n");
  Json h = DumpHyperparameters(in / "long.sh");
  EXPECT_EQ(h["tag"], long_value);
  EXPECT_EQ(h["v"], long_value);
  WriteFile(in / "long.yaml", "big: " + std::string(300000, '7') + "\nfloat: 1." + std::string(300000, '5') +
                                  "\nhuge: 1.0e+999\nnot_float: 1.0e999\nsmall: 1_000\n");
  h = DumpHyperparameters(in / "long.yaml");
  // Past int64 an int is a float; past a double it has no JSON number (null). PyYAML wants a signed exponent.
  EXPECT_TRUE(h["big"].is_null()) << h["big"];
  EXPECT_DOUBLE_EQ(h["float"].get<double>(), 1.5555555555555556);
  EXPECT_TRUE(h["huge"].is_null()) << h["huge"];
  EXPECT_EQ(h["not_float"], "1.0e999");
  EXPECT_EQ(h["small"], 1000);  // PyYAML drops the underscores
}

// A pip list is raw text: a version that is not UTF-8 reaches both result files as U+FFFD.
TEST(ConfigCheck, ResultsStayValidTextOnBytesThatAreNotUtf8) {
  TempDir out;
  auto bench = config_check::ReadPack(Pack("bench.zip"));
  ASSERT_TRUE(bench.ok()) << bench.error().ToString();
  std::vector<std::pair<std::string, std::string>> members(bench->files.begin(), bench->files.end());
  for (auto& [name, text] : members)
    if (name == "pip") text += "peft=0.13\xff\n";
  ASSERT_TRUE(zip::WriteZip(out / "odd.zip", members, false).ok());
  RunResult r = RunTool({"config_check", "-c", out / "odd.zip", Pack("cmp.zip"), "-o", out / "result"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadJson(out / "result/result.json")["pip"][1],
            Json::parse("[\"peft\", \"0.13\xef\xbf\xbd\", \"0.13.2\", \"error\"]"));
  auto zip = zip::ZipArchive::Open(out / "result/result.xlsx");
  ASSERT_TRUE(zip.ok()) << zip.error().ToString();
  auto pip = zip->Read("xl/worksheets/sheet3.xml");
  ASSERT_TRUE(pip.ok()) << pip.error().ToString();
  EXPECT_NE(pip->find("0.13\xef\xbf\xbd</t>"), std::string::npos) << *pip;
  EXPECT_EQ(pip->find("\xff"), std::string::npos);
}

// --python names the interpreter whose packages are listed: a venv with one
// package of its own (its dist-info written by hand) against python3.
TEST(ConfigCheckDump, ListsThePackagesOfTheGivenInterpreter) {
  TempDir dir;
  std::string venv = dir / "venv";
  ASSERT_EQ(system(("python3 -m venv --without-pip " + venv + " >/dev/null 2>&1").c_str()), 0);
  std::string site;
  for (const auto& e : fs::recursive_directory_iterator(venv))
    if (e.path().filename() == "site-packages") site = e.path().string();
  ASSERT_FALSE(site.empty());
  WriteFile(site + "/ga_probe_pkg-1.2.3.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: ga_probe_pkg\nVersion: 1.2.3\n");
  auto pip_of = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"config_check", "-d", "-o", dir / "pack.zip", "--force"};
    args.insert(args.end(), extra.begin(), extra.end());
    RunResult r = RunTool(args);
    EXPECT_EQ(r.status, 0) << r.err;
    auto p = config_check::ReadPack(dir / "pack.zip");
    return p.ok() ? p->files["pip"] : std::string();
  };
  EXPECT_NE(pip_of({"--python", venv + "/bin/python"}).find("ga_probe_pkg=1.2.3\n"), std::string::npos);
  EXPECT_EQ(pip_of({}).find("ga_probe_pkg"), std::string::npos);
  RunResult r = RunTool({"config_check", "-d", "-o", dir / "other.zip", "--python", dir / "no-such-python"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no-such-python"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "other.zip"));
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
