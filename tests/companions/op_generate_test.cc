// graph-ascend op_generate (companions/op_generate) on the real dumps of samples/: the extracted
// entries against msprobe 8.3.3's own extraction of the same calls (testdata/op_generate, made by
// its regenerate.sh), the script it writes, and bad input (exit 2, one line, nothing written).
// Running the scripts needs torch: tests/python/test_op_generate_scripts.py does that.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "op_generate/op_generate.h"

namespace graph_ascend::testing {
namespace {

struct Case {
  std::string name, dump, api, propagation, mode, standard;
};

std::vector<Case> Cases() {
  std::ifstream in(SourceDir() + "/tests/companions/testdata/op_generate/cases.tsv");
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Case c;
    std::getline(fields, c.name, '\t');
    std::getline(fields, c.dump, '\t');
    std::getline(fields, c.api, '\t');
    std::getline(fields, c.propagation, '\t');
    std::getline(fields, c.mode, '\t');
    std::getline(fields, c.standard, '\t');
    cases.push_back(c);
  }
  return cases;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Tensor paths differ by machine (msprobe keeps dump_data_dir, the folder of the machine that dumped).
std::string WithoutTensorFolders(const std::string& json) {
  return std::regex_replace(json, std::regex("\"data_name\": \"[^\"]*/"), "\"data_name\": \"");
}

std::string WriteConfig(const TempDir& dir, const std::string& dump, const std::string& api,
                        const std::string& propagation, const std::string& mode) {
  std::string path = dir / "config_op.json";
  std::ofstream(path) << "{\"dump_json_path\": \"" << dump << "\", \"api_name\": \"" << api
                      << "\", \"extract_api_path\": \"" << (dir / ("extract/" + api + ".json"))
                      << "\", \"propagation\": \"" << propagation << "\", \"data_mode\": \"" << mode
                      << "\", \"random_seed\": 1234, \"iter_times\": 1}";
  return path;
}

size_t FilesUnder(const std::string& dir) {
  size_t n = 0;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return 0;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); ++it) {
    n += it->is_regular_file() ? 1 : 0;
  }
  return n;
}

TEST(OpGenerate, ExtractMatchesMsprobe833OnEveryCase) {
  std::vector<Case> cases = Cases();
  ASSERT_GE(cases.size(), 8u);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    std::string config = WriteConfig(dir, Sample(c.dump), c.api, c.propagation, c.mode);
    RunResult r = RunTool({"op_generate", "-i", config, "-o", dir / "scripts"});
    ASSERT_EQ(r.status, 0) << r.err;
    std::string ours = Slurp(dir / ("extract/" + c.api + ".json"));
    std::string golden = Slurp(SourceDir() + "/tests/companions/testdata/op_generate/msprobe-8.3.3/" + c.name + ".json");
    ASSERT_FALSE(golden.empty()) << "no msprobe extract for " << c.name;
    EXPECT_EQ(WithoutTensorFolders(ours), WithoutTensorFolders(golden));
    std::string script = Slurp(dir / ("scripts/" + c.api + "." + c.propagation + ".py"));
    EXPECT_NE(script.find("\nSPEC = {"), std::string::npos);
    EXPECT_NE(script.find("\"propagation\": \"" + c.propagation + "\""), std::string::npos);
    EXPECT_NE(r.out.find("script="), std::string::npos);
  }
}

TEST(OpGenerate, TensorPathsFallBackToTheFolderBesideDumpJson) {
  // dump_data_dir names the dumping machine's folder; when it is absent the files beside dump.json are used.
  TempDir dir;
  fs::create_directories(dir / "rank0/dump_tensor_data");
  std::string dump = Slurp(Sample("gpt_tensor/npu/step0/rank0/dump.json"));
  dump = std::regex_replace(dump, std::regex("\"dump_data_dir\": \"[^\"]*\""),
                            "\"dump_data_dir\": \"/nonexistent/dump_tensor_data\"");
  std::ofstream(dir / "rank0/dump.json") << dump;
  auto entries = op_generate::ExtractApi(dir / "rank0/dump.json", "Functional.linear.0");
  ASSERT_TRUE(entries.ok()) << entries.error().ToString();
  const op_generate::JsonValue* fwd = entries->entries.Find("Functional.linear.0.forward");
  ASSERT_NE(fwd, nullptr);
  std::string name = fwd->Find("input_args")->items[0].StringOr("data_name");
  EXPECT_EQ(name, (dir / "rank0/dump_tensor_data/Functional.linear.0.forward.input.0.pt"));
}

TEST(OpGenerate, ConvWithoutBiasGivesNoneInTheScript) {
  // msprobe 8.3.3 crashes here (None bias: 'NoneType' object does not support item assignment).
  TempDir dir;
  std::string config = WriteConfig(dir, Sample("cnn_statistics/npu/step0/rank0/dump.json"), "Functional.conv2d.0",
                                   "forward", "random_data");
  RunResult r = RunTool({"op_generate", "-i", config, "-o", dir / "scripts"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string script = Slurp(dir / "scripts/Functional.conv2d.0.forward.py");
  EXPECT_NE(script.find("\"api\": \"torch.nn.functional.conv2d\""), std::string::npos);
  EXPECT_NE(script.find("        None,\n"), std::string::npos);  // the bias argument
  EXPECT_NE(script.find("[64, 3, 7, 7]"), std::string::npos);    // resnet's first conv weight
}

TEST(OpGenerate, AnExistingExtractFileIsReusedWithoutADump) {
  TempDir dir;
  std::string golden = SourceDir() + "/tests/companions/testdata/op_generate/msprobe-8.3.3/layer_norm_backward.json";
  std::ofstream(dir / "config_op.json") << "{\"extract_api_path\": \"" << golden
                                        << "\", \"propagation\": \"backward\"}";
  RunResult r = RunTool({"op_generate", "-i", dir / "config_op.json", "-o", dir / "scripts"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("extract="), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "scripts/Functional.layer_norm.0.backward.py"));
}

// A MindSpore dump (testdata/op_generate/mindspore, real MindSpore on CPU): the script runs the
// mindspore module's API and writes doc 33's CSV files; running it is test_op_generate_mindspore.py's.
TEST(OpGenerate, MindSporeDumpGivesAMindSporeScript) {
  TempDir dir;
  std::string dump = SourceDir() + "/tests/companions/testdata/op_generate/mindspore/dump.json";
  struct {
    const char* api;
    const char* module_api;
  } cases[] = {{"MintFunctional.softmax.0", "mindspore.mint.nn.functional.softmax"},
               {"Mint.add.0", "mindspore.mint.add"},
               {"Functional.gelu.0", "mindspore.ops.gelu"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.api);
    std::string config = WriteConfig(dir, dump, c.api, "backward", "real_data");
    RunResult r = RunTool({"op_generate", "-i", config, "-o", dir / "scripts"});
    ASSERT_EQ(r.status, 0) << r.err;
    std::string script = Slurp(dir / ("scripts/" + std::string(c.api) + ".backward.py"));
    EXPECT_NE(script.find("\"api\": \"" + std::string(c.module_api) + "\""), std::string::npos);
    EXPECT_NE(script.find("import mindspore as ms"), std::string::npos);
    EXPECT_NE(script.find("accuracy_checking_details_"), std::string::npos);
    EXPECT_EQ(script.find("import torch"), std::string::npos);
    // The .npy files are found beside dump.json (dump_data_dir is the folder of the machine that dumped).
    EXPECT_NE(script.find("op_generate/mindspore/dump_tensor_data/" + std::string(c.api) + ".forward.input.0.npy"),
              std::string::npos);
  }
  // -f mindspore on a PyTorch dump: its Torch.* APIs have no MindSpore module.
  std::string config = WriteConfig(dir, Sample("overflow_nan/npu/step0/rank0/dump.json"), "Torch.exp.0", "forward",
                                   "random_data");
  RunResult r = RunTool({"op_generate", "-i", config, "-o", dir / "torch_as_ms", "-f", "mindspore"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("only Mint, MintFunctional, Functional and Tensor APIs"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "torch_as_ms"));
}

struct BadInput {
  const char* what;
  std::string dump, api, propagation, mode;
  const char* message;
};

TEST(OpGenerate, BadInputIsOneLineExitTwoAndNothingWritten) {
  TempDir stripped;  // a tensor dump whose tensor files are gone
  fs::create_directories(stripped / "rank0");
  std::string dump = Slurp(Sample("gpt_tensor/npu/step0/rank0/dump.json"));
  std::ofstream(stripped / "rank0/dump.json")
      << std::regex_replace(dump, std::regex("\"dump_data_dir\": \"[^\"]*\""), "\"dump_data_dir\": \"/nonexistent\"");
  std::vector<BadInput> cases = {
      {"api not in the dump", Sample("gpt_tensor/npu/step0/rank0/dump.json"), "Functional.linear.99", "forward",
       "random_data", "no entry for API 'Functional.linear.99'"},
      {"backward of an API without one", Sample("cnn_statistics/npu/step0/rank0/dump.json"), "Tensor.__iadd__.0",
       "backward", "random_data", "has no backward entry for Tensor.__iadd__.0"},
      {"real_data on a statistics dump", Sample("cnn_statistics/npu/step0/rank0/dump.json"), "Functional.conv2d.0",
       "forward", "real_data", "this tensor has no data_name"},
      {"real_data with a tensor file missing", stripped / "rank0/dump.json", "Functional.linear.0", "forward",
       "real_data", "the tensor file does not exist"},
      {"a call name that matches several calls", Sample("gpt_tensor/npu/step0/rank0/dump.json"), "Functional.linear",
       "forward", "random_data", "matches more than one call"},
      {"an API that cannot run alone", Sample("dist_gloo/npu/step0/rank0/dump.json"), "Distributed.all_reduce.0",
       "forward", "random_data", "only Functional, Tensor and Torch APIs"},
      {"not a dump", SourceDir() + "/samples/gpt_tensor/compare.json", "Functional.linear.0", "forward",
       "random_data", "not an msprobe dump.json"},
  };
  for (const BadInput& c : cases) {
    SCOPED_TRACE(c.what);
    TempDir dir;
    std::string config = WriteConfig(dir, c.dump, c.api, c.propagation, c.mode);
    RunResult r = RunTool({"op_generate", "-i", config, "-o", dir / "scripts"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(FilesUnder(dir / "scripts") + FilesUnder(dir / "extract"), 0u);
  }
}

TEST(OpGenerate, BadConfigNamesTheKey) {
  TempDir dir;
  struct {
    const char* text;
    const char* message;
  } configs[] = {
      {R"({"dump_json_path": "d.json", "api_name": "A.b.0", "extract_api_path": "x.json", "iter_times": 1001})",
       "config_op.json: key iter_times: must be between 1 and 1000"},
      {R"({"dump_json_path": "d.json", "api_name": "A.b.0", "extract_api_path": "x.json", "propagation": "up"})",
       "key propagation: must be forward or backward"},
      {R"({"dump_json_path": "d.json", "api_name": "A.b.0"})", "key extract_api_path: is required"},
      {R"({"dump_json_path": "d.json", "extract_api_path": "x.json", "random_seed": "7"})",
       "key random_seed: must be an integer"},
      {R"([1, 2])", "must be a JSON object"},
  };
  for (const auto& c : configs) {
    SCOPED_TRACE(c.text);
    std::ofstream(dir / "config_op.json") << c.text;
    RunResult r = RunTool({"op_generate", "-i", dir / "config_op.json", "-o", dir / "scripts"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "scripts"));
  }
}

// A dump.json of one call per entry: `entries` is the text of its "data" object's members.
std::string WriteDump(const TempDir& dir, const std::string& entries, const std::string& framework = "pytorch") {
  std::string path = dir / "dump.json";
  std::ofstream(path) << "{\"task\": \"statistics\", \"level\": \"L1\", \"framework\": \"" << framework
                      << "\", \"dump_data_dir\": null, \"data\": {" << entries << "}}";
  return path;
}

// One forward entry of a float32 tensor in and out; `extra` goes into input_kwargs.
std::string Entry(const std::string& key, const std::string& extra = "") {
  std::string t = R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0, "Min": 0.0,
                      "requires_grad": false})";
  return "\"" + key + "\": {\"input_args\": [" + t + "], \"input_kwargs\": {" + extra + "}, \"output\": [" + t + "]}";
}

// The config with `api` written by nlohmann (so that any character survives into the file).
std::string WriteConfigJson(const TempDir& dir, const std::string& dump, const std::string& api,
                            const std::string& extract = "") {
  nlohmann::json c = {{"api_name", api}, {"extract_api_path", extract.empty() ? dir / "extract/x.json" : extract}};
  if (!dump.empty()) c["dump_json_path"] = dump;
  std::string path = dir / "config_op.json";
  std::ofstream(path) << c.dump();
  return path;
}

// An API name is checked against msprobe's support list before anything is generated: the dump
// chooses an entry of that list, never a Python attribute chain (issue 35, point 3).
TEST(OpGenerate, AnApiOffMsprobesListIsRefusedInOneLine) {
  struct {
    const char* what;
    std::string key;  // the dump's entry key, also the config's api_name + ".forward"
    const char* message;
  } cases[] = {
      {"an attribute chain out of torch", "Torch.os.system.0", "dumps no PyTorch Torch API named 'os.system'"},
      {"a torch function msprobe does not wrap", "Torch.load.0", "dumps no PyTorch Torch API named 'load'"},
      {"a dunder of torch", "Torch.__builtins__.0", "dumps no PyTorch Torch API named '__builtins__'"},
      {"a Tensor method off the list", "Tensor.__reduce_ex__.0", "dumps no PyTorch Tensor API named '__reduce_ex__'"},
      {"a newline ending the header comment", "Torch.exp.0\\nimport os; os.system('touch pwned')\\n#",
       "'Torch.exp.0\\nimport os; os.system('touch pwned')\\n#' is not an msprobe API call name"},
      {"a carriage return", "Torch.exp\\rprint(1).0", "dumps no PyTorch Torch API named 'exp\\rprint(1)'"},
      {"a path out of the output folder", "../../escaped.exp.0",
       "APIs can be reproduced alone, not '../../escaped.exp.0'"},
      {"no call index", "Torch.exp.forward0", "is not an msprobe API call name"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    TempDir dir;
    std::string dump = WriteDump(dir, Entry(c.key + ".forward"));
    std::string api = nlohmann::json::parse("\"" + c.key + "\"").get<std::string>();
    RunResult r = RunTool({"op_generate", "-i", WriteConfigJson(dir, dump, api), "-o", dir / "scripts"});
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("graph-ascend: error: " + dump + ": "), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(FilesUnder(dir / "scripts") + FilesUnder(dir / "extract"), 0u);
    EXPECT_FALSE(fs::exists(dir / "escaped.exp.0.forward.py"));
    // The same entry in an extract file (no dump) is refused alike.
    std::ofstream(dir / "extract.json") << "{" << Entry(c.key + ".forward") << "}";
    r = RunTool({"op_generate", "-i", WriteConfigJson(dir, "", "", dir / "extract.json"), "-o", dir / "scripts"});
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(FilesUnder(dir / "scripts"), 0u);
  }
}

TEST(OpGenerate, MindSporeNamesAreCheckedAgainstMindSporesList) {
  TempDir dir;
  std::string dump =
      WriteDump(dir, Entry("Mint.os.0.forward") + ", " + Entry("Functional.gelu.0.forward"), "mindspore");
  RunResult r = RunTool({"op_generate", "-i", WriteConfigJson(dir, dump, "Mint.os.0"), "-o", dir / "scripts"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("dumps no MindSpore Mint API named 'os'"), std::string::npos) << r.err;
  EXPECT_EQ(FilesUnder(dir / "scripts"), 0u);
  r = RunTool({"op_generate", "-i", WriteConfigJson(dir, dump, "Functional.gelu.0"), "-o", dir / "scripts"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string script = Slurp(dir / "scripts/Functional.gelu.0.forward.py");
  EXPECT_NE(script.find("\"api\": \"mindspore.ops.gelu\""), std::string::npos);
  EXPECT_NE(script.find("    \"mindspore.mint\": frozenset(\n"), std::string::npos);
}

TEST(OpGenerate, AListedEntryNamedByItsLastPartResolvesToTheEntry) {
  // msprobe 26 dumps torch.linalg.vector_norm as Torch.vector_norm.N; older msprobe kept the whole entry.
  TempDir dir;
  std::string dump =
      WriteDump(dir, Entry("Torch.vector_norm.0.forward") + ", " + Entry("Torch.linalg.vector_norm.1.forward"));
  for (const char* api : {"Torch.vector_norm.0", "Torch.linalg.vector_norm.1"}) {
    SCOPED_TRACE(api);
    RunResult r = RunTool({"op_generate", "-i", WriteConfigJson(dir, dump, api), "-o", dir / "scripts"});
    ASSERT_EQ(r.status, 0) << r.err;
    std::string script = Slurp(dir / ("scripts/" + std::string(api) + ".forward.py"));
    EXPECT_NE(script.find("\"api\": \"torch.linalg.vector_norm\""), std::string::npos);
  }
}

// Dump text reaches a script only inside SPEC's literals, escaped: no newline, carriage return,
// quote or NUL of the dump ends a literal or a comment (issue 35, point 3).
TEST(OpGenerate, DumpStringsReachTheScriptOnlyAsEscapedLiterals) {
  TempDir dir;
  std::string evil = R"("k\"\n\rimport os #": "a\nimport os; os.system('x')\r\n\u2028\u0000\u00e9\ud83d\ude00\\\"")";
  std::string dump = WriteDump(dir, Entry("Torch.exp.0.forward", evil));
  RunResult r = RunTool({"op_generate", "-i", WriteConfigJson(dir, dump, "Torch.exp.0"), "-o", dir / "scripts"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string script = Slurp(dir / "scripts/Torch.exp.0.forward.py");
  EXPECT_EQ(script.find("\nimport os"), std::string::npos);
  EXPECT_EQ(script.find('\r'), std::string::npos);
  EXPECT_EQ(script.find('\0'), std::string::npos);
  EXPECT_NE(script.find(R"("k\"\n\rimport os #": "a\nimport os; os.system('x')\r\n\u2028\x00\xe9\U0001f600\\\"",)"),
            std::string::npos);
  auto odd = [](unsigned char c) { return c != '\n' && (c < 0x20 || c >= 0x7f); };
  EXPECT_EQ(std::count_if(script.begin(), script.end(), odd), 0);  // printable ASCII lines only
  EXPECT_NE(script.find("# Reproduces Torch.exp.0 (forward) from dump.json, written by graph-ascend op_generate.\n"),
            std::string::npos);
}

}  // namespace
}  // namespace graph_ascend::testing
