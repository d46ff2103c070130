// Issue 17 through bin/graph-ascend: each damaged input the independent
// probe found gives exit status 2, one "graph-ascend: error:" line naming
// the file and the place, and leaves nothing in the output directory.
#include <sys/stat.h>

#include <functional>
#include <set>

#include "cli_runner.h"

namespace graph_ascend {
namespace {

using namespace graph_ascend::testing;  // NOLINT

class DamagedInputTest : public ::testing::Test {
 protected:
  void SetUp() override { WriteFile(dir_ / "out/keep.txt", "a file of the user's"); }

  // A copy of samples/<name>/{npu,bench}/step0/rank0 as dir/npu and dir/bench, with a compare.json.
  void CopySample(const std::string& name, bool compare = true) {
    fs::copy(Sample(name + "/npu/step0/rank0"), dir_ / "npu", fs::copy_options::recursive);
    if (compare) fs::copy(Sample(name + "/bench/step0/rank0"), dir_ / "bench", fs::copy_options::recursive);
    WriteFile(dir_ / "compare.json",
              compare ? R"({"npu_path": "npu", "bench_path": "bench"})" : R"({"npu_path": "npu"})");
  }
  void Replace(const std::string& rel, const std::string& from, const std::string& to) {
    std::string text = ReadFile(dir_ / rel);
    size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from << " in " << rel;
    WriteFile(dir_ / rel, text.replace(at, from.size(), to));
  }
  void ExpectFailure(const std::vector<std::string>& parts, const std::string& config = "",
                     const std::vector<std::string>& flags = {}) {
    std::vector<std::string> args = {"graph", "-i", config.empty() ? dir_ / "compare.json" : config, "-o",
                                     dir_ / "out"};
    args.insert(args.end(), flags.begin(), flags.end());
    ExpectOneError(RunTool(args), parts);
    EXPECT_EQ(Files(dir_ / "out"), std::vector<std::string>{"keep.txt"}) << "nothing written, nothing removed";
  }

  TempDir dir_;
};

// 1d: only regular files; a FIFO would block open(), /dev/zero read forever.
TEST_F(DamagedInputTest, CompareJsonThatIsADeviceOrFifo) {
  ExpectFailure({"/dev/zero", "not a regular file"}, "/dev/zero");
  ASSERT_EQ(mkfifo((dir_ / "fifo.json").c_str(), 0600), 0);
  ExpectFailure({dir_ / "fifo.json", "not a regular file"}, dir_ / "fifo.json");
}

TEST_F(DamagedInputTest, DumpJsonThatIsAFifo) {
  CopySample("dist_gloo");
  fs::remove(dir_ / "npu/dump.json");
  ASSERT_EQ(mkfifo((dir_ / "npu/dump.json").c_str(), 0600), 0);
  ExpectFailure({dir_ / "npu/dump.json", "not a regular file"});
}

// 1a: a non-scalar key in the layer-mapping yaml.
TEST_F(DamagedInputTest, LayerMappingYamlWithAListKey) {
  fs::copy(Sample("layer_mapping/npu"), dir_ / "npu", fs::copy_options::recursive);
  fs::copy(Sample("layer_mapping/bench"), dir_ / "bench", fs::copy_options::recursive);
  WriteFile(dir_ / "compare.json", R"({"npu_path": "npu/step0/rank0", "bench_path": "bench/step0/rank0"})");
  for (const char* yaml : {"[a, b]: {x: y}\n", "{a: b}: {x: y}\n", "? - a\n: ~\n"}) {
    WriteFile(dir_ / "bad.yaml", yaml);
    ExpectFailure({dir_ / "bad.yaml", "line 1, column "}, "", {"-lm", dir_ / "bad.yaml"});
  }
}

// 1b: a stride-0 view of 16,777,216,000 floats over 1000 (134 GB before).
TEST_F(DamagedInputTest, TensorViewLargerThanItsStorage) {
  CopySample("gpt_tensor");
  std::string pt = dir_ / "npu/dump_tensor_data/Tensor.mean.0.forward.output.0.pt";
  ASSERT_TRUE(fs::exists(pt));
  fs::copy_file(SourceDir() + "/tests/builder/testdata/pt/expand_huge.pt", pt, fs::copy_options::overwrite_existing);
  ExpectFailure({pt, "data.pkl", "over a storage of 1000"});
}

// 2c: a wrong-typed dump field is not "no inputs".
TEST_F(DamagedInputTest, InputArgsThatIsAString) {
  CopySample("dist_gloo");
  Replace("npu/dump.json", "\"input_args\": [", "\"input_args\": \"oops\", \"ignored\": [");
  ExpectFailure({dir_ / "npu/dump.json", "line ", "key data.", ".input_args: expected a list or an object"});
}

// 2a: names that are not UTF-8 are refused where they are, not written into
// a .vis that nothing can read.
TEST_F(DamagedInputTest, NamesThatAreNotUtf8) {
  CopySample("dist_gloo");
  std::string original = ReadFile(dir_ / "npu/dump.json");
  for (const char* bad : {"Functional.linear\xff", "Functional.linear\\ud800"}) {
    Replace("npu/dump.json", "\"Functional.linear", std::string("\"") + bad);
    ExpectFailure({dir_ / "npu/dump.json", "line ", "UTF-8"});
    WriteFile(dir_ / "npu/dump.json", original);
  }
  Replace("npu/construct.json", "\"Module.fc1.Linear.forward.0\"", "\"Module.fc1.Linear.forward.0\xc0\x80\"");
  ExpectFailure({dir_ / "npu/construct.json", "line ", "UTF-8"});
}

// graph_visualize reports what was repaired in its input as graph does (issue 34: it printed nothing).
TEST_F(DamagedInputTest, GraphVisualizeReportsAConstructJsonCycle) {
  CopySample("cnn_statistics", false);
  Json construct = Json::parse(ReadFile(dir_ / "npu/construct.json"));
  std::string child, parent;
  for (auto& [k, v] : construct.items()) {
    if (v.is_string() && construct.contains(v.get<std::string>()) && construct[v.get<std::string>()].is_string()) {
      child = k;
      parent = v.get<std::string>();
      break;
    }
  }
  ASSERT_FALSE(child.empty()) << "a node whose parent has a parent";
  construct[parent] = child;
  WriteFile(dir_ / "npu/construct.json", construct.dump());

  RunResult r = RunTool({"graph_visualize", "-tp", dir_ / "npu", "-o", dir_ / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> err = Lines(r.err);
  ASSERT_EQ(err.size(), 1u) << r.err;
  EXPECT_EQ(err[0].rfind("graph-ascend: warning: " + dir_ / "npu/construct.json" + ": key ", 0), 0u) << err[0];
}

// 2b: a construct.json cycle is reported and its nodes drawn; export writes
// a tree (every node reached once from the root through subnodes, upnode
// the node it was reached from).
TEST_F(DamagedInputTest, ConstructJsonCycleIsReportedAndAttached) {
  CopySample("cnn_statistics", false);
  RunResult plain = RunTool({"graph", "-i", dir_ / "compare.json", "-o", dir_ / "plain"});
  ASSERT_EQ(plain.status, 0) << plain.err;
  Json construct = Json::parse(ReadFile(dir_ / "npu/construct.json"));
  std::string child, parent;
  for (auto& [k, v] : construct.items()) {
    if (v.is_string() && construct.contains(v.get<std::string>()) && construct[v.get<std::string>()].is_string()) {
      child = k;
      parent = v.get<std::string>();
      break;
    }
  }
  ASSERT_FALSE(child.empty()) << "a node whose parent has a parent";
  construct[parent] = child;  // child's parent is parent, parent's parent is child
  WriteFile(dir_ / "npu/construct.json", construct.dump());

  RunResult r = RunTool({"graph", "-i", dir_ / "compare.json", "-o", dir_ / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> err = Lines(r.err);
  ASSERT_EQ(err.size(), 1u) << r.err;
  EXPECT_EQ(err[0].rfind("graph-ascend: warning: " + dir_ / "npu/construct.json" + ": key ", 0), 0u) << err[0];
  // Named from the node whose parent edge closed the cycle (the later key), which goes under the root.
  bool named = err[0].find("the parents form a cycle (" + parent + " -> " + child + " -> " + parent + ")") !=
               std::string::npos;
  EXPECT_TRUE(named) << err[0];

  Json graph = Export(Lines(r.out).at(0));
  Json before = Export(Lines(plain.out).at(0));
  std::vector<std::string> order = PreOrder(graph);
  EXPECT_EQ(order.size(), graph["node"].size()) << "every node reachable from the root";
  EXPECT_EQ(graph["node"].size(), before["node"].size()) << "nothing dropped";
  std::set<std::string> seen;
  for (const std::string& n : order) {
    EXPECT_TRUE(seen.insert(n).second) << n << " reached twice";
    for (const Json& c : graph["node"][n]["subnodes"]) EXPECT_EQ(graph["node"][c.get<std::string>()]["upnode"], n);
  }
}

// 1c: a table of contents whose size wraps the uint64 range check.
TEST_F(DamagedInputTest, InfoAndExportOnAWrappingTableOfContents) {
  std::vector<std::string> files = Graph(Sample("dist_gloo/build.json"), dir_ / "built");
  ASSERT_EQ(files.size(), 1u);
  std::string bytes = ReadFile(files[0]);
  size_t trailer = bytes.size() - 24;
  uint64_t toc_offset = 0;
  for (int i = 7; i >= 0; --i) toc_offset = (toc_offset << 8) | static_cast<unsigned char>(bytes[trailer + i]);
  uint64_t size = ~uint64_t{0} - toc_offset + 17;  // offset + size == 16 (mod 2^64)
  for (int i = 0; i < 8; ++i) bytes[trailer + 8 + i] = static_cast<char>(size >> (8 * i));
  std::string bad = dir_ / "wrap.vis";
  WriteFile(bad, bytes);
  ExpectOneError(RunTool({"info", bad}), {bad, "table of contents out of range"});
  ExpectOneError(RunTool({"export", bad, "-o", dir_ / "out/x.json"}), {bad, "table of contents out of range"});
  EXPECT_EQ(Files(dir_ / "out"), std::vector<std::string>{"keep.txt"});
}

}  // namespace
}  // namespace graph_ascend
