// graph-ascend code_mapping (companions/code_mapping) on a real MindSpore 2.10 CPU run
// (testdata/code_mapping, made by its make_data.sh): the save_graphs IR, the tensor dump, and a
// statistic.csv in MindSpore's layout (CPU refuses statistic dumps), checked against msprobe
// 8.3.3's code_mapping on the same files; then bad input.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "code_mapping/file_set.h"
#include "code_mapping/ir_graph.h"

namespace graph_ascend::testing {
namespace {

using Rows = std::vector<std::vector<std::string>>;

std::string Data(const std::string& rel) { return SourceDir() + "/tests/companions/testdata/code_mapping/" + rel; }

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A CSV reader for the test's own checks (quoted fields may hold commas and line breaks).
Rows ReadCsv(const std::string& path) {
  std::string text = Slurp(path);
  Rows rows(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
    } else if (c == '\n') {
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

size_t Column(const Rows& rows, const std::string& name) {
  const auto& h = rows.at(0);
  return static_cast<size_t>(std::find(h.begin(), h.end(), name) - h.begin());
}

bool IsBackward(const std::string& scope) { return scope.rfind("Gradients", 0) == 0; }

std::string OnlyCsvIn(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(dir)) found.push_back(e.path().string());
  EXPECT_EQ(found.size(), 1u);
  return found.empty() ? "" : found[0];
}

TEST(CodeMapping, ParsesTheRealIr) {
  auto nodes = code_mapping::ReadIr(Data("mindspore_cpu/graph_build_0.ir"));
  ASSERT_TRUE(nodes.ok()) << nodes.error().ToString();
  const code_mapping::IrNode* matmul = nullptr;
  for (const auto& n : *nodes) {
    if (n.scope == "Default/network-WithLossCell/_backbone-Net/dense-Dense/MatMul-op0") matmul = &n;
  }
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->op, "PrimFunc_MatMul");
  ASSERT_GE(matmul->code.size(), 2u);
  EXPECT_EQ(matmul->code.back().find("In file "), 0u);
  EXPECT_NE(matmul->code.back().find("x = self.matmul(x, self.weight)"), std::string::npos);
  EXPECT_NE(matmul->code.back().back(), '/');
}

TEST(CodeMapping, TensorDumpMatchesMsprobe833) {
  TempDir dir;
  RunResult r = RunTool({"code_mapping", "--ir", Data("mindspore_cpu/graph_build_0.ir"), "--dump_data",
                         Data("mindspore_cpu/dump"), "--output", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("rows=79 "), std::string::npos) << r.out;
  std::string csv = OnlyCsvIn(dir / "out");
  EXPECT_NE(fs::path(csv).filename().string().find("code_mapping_"), std::string::npos);
  Rows ours = ReadCsv(csv), theirs = ReadCsv(Data("msprobe-8.3.3/code_mapping_npy.csv"));
  ASSERT_EQ(ours[0], (std::vector<std::string>{"File Path", "Code Stack", "Scope Name"}));
  ASSERT_EQ(ours[0], theirs[0]);
  ASSERT_EQ(ours.size(), theirs.size());
  std::map<std::string, std::vector<std::string>> by_file;
  for (size_t i = 1; i < theirs.size(); ++i) by_file[fs::path(theirs[i][0]).filename().string()] = theirs[i];
  size_t forward = 0, backward = 0;
  for (size_t i = 1; i < ours.size(); ++i) {
    std::string file = fs::path(ours[i][0]).filename().string();
    SCOPED_TRACE(file);
    ASSERT_TRUE(by_file.count(file));
    const auto& m = by_file[file];
    EXPECT_EQ(ours[i][2], m[2]);  // the scopes always agree
    if (IsBackward(ours[i][2])) {
      // msprobe's unique_id pattern never matches, so its backward rows keep the gradient's own
      // code; graph-ascend gives them the forward call's code, as msprobe intends.
      ++backward;
      EXPECT_NE(ours[i][1], m[1]);
    } else {
      ++forward;
      EXPECT_EQ(ours[i][1], m[1]);
    }
  }
  EXPECT_GT(forward, 30u);
  EXPECT_GT(backward, 5u);
}

TEST(CodeMapping, BackwardKernelsGetTheForwardCallsCode) {
  TempDir dir;
  RunResult r = RunTool({"code_mapping", "--ir", Data("mindspore_cpu/graph_build_0.ir"), "--dump_data",
                         Data("mindspore_cpu/dump"), "--output", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  Rows rows = ReadCsv(OnlyCsvIn(dir / "out"));
  bool seen = false;
  for (const auto& row : rows) {
    if (row[2] != "Gradients/Default/network-WithLossCell/_backbone-Net/dense-Dense/Grad_MatMul/MatMul-op0") continue;
    seen = true;
    EXPECT_NE(row[1].find("x = self.matmul(x, self.weight)"), std::string::npos) << row[1];
  }
  EXPECT_TRUE(seen);
}

TEST(CodeMapping, StatisticCsvGainsTwoColumnsAtomicallyWithACopy) {
  TempDir dir;
  fs::copy(Data("statistic"), dir / "statistic", fs::copy_options::recursive);
  std::string stat = dir / "statistic/rank_0/Net/0/0/statistic.csv";
  std::string original = Slurp(stat);
  RunResult r = RunTool({"code_mapping", "--ir", Data("mindspore_cpu/graph_build_0.ir"), "--dump_data",
                         dir / "statistic", "--output", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Slurp(stat + ".orig"), original);
  EXPECT_FALSE(fs::exists(dir / "out"));  // statistic dumps are rewritten in place
  Rows ours = ReadCsv(stat), theirs = ReadCsv(Data("msprobe-8.3.3/statistic.csv"));
  Rows before = ReadCsv(stat + ".orig");
  // The original columns (without MindSpore's trailing empty one), then the two new ones.
  std::vector<std::string> header(before[0].begin(), before[0].end() - 1);
  header.push_back("Code Stack");
  header.push_back("Scope Name");
  EXPECT_EQ(ours[0], header);
  ASSERT_EQ(ours.size(), theirs.size());
  size_t code = Column(ours, "Code Stack"), scope = Column(ours, "Scope Name");
  size_t their_code = Column(theirs, "Code Stack"), their_scope = Column(theirs, "Scope Name");
  for (size_t i = 1; i < ours.size(); ++i) {
    SCOPED_TRACE(ours[i][1]);
    EXPECT_EQ(std::vector<std::string>(ours[i].begin(), ours[i].begin() + 13),
              std::vector<std::string>(before[i].begin(), before[i].begin() + 13));
    EXPECT_EQ(ours[i][scope], theirs[i][their_scope]);
    if (!IsBackward(ours[i][scope])) EXPECT_EQ(ours[i][code], theirs[i][their_code]);
  }
  // A second run refreshes the columns instead of adding more, and keeps the first copy.
  std::string mapped = Slurp(stat);
  r = RunTool({"code_mapping", "--ir", Data("mindspore_cpu/graph_build_0.ir"), "--dump_data", stat});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Slurp(stat), mapped);
  EXPECT_EQ(Slurp(stat + ".orig"), original);
}

TEST(CodeMapping, NoBackupWhenAskedNot) {
  TempDir dir;
  fs::copy(Data("statistic"), dir / "statistic", fs::copy_options::recursive);
  RunResult r = RunTool({"code_mapping", "--ir", Data("mindspore_cpu/graph_build_0.ir"), "--dump_data",
                         dir / "statistic", "--no-backup"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir / "statistic/rank_0/Net/0/0/statistic.csv.orig"));
}

TEST(CodeMapping, BadInputIsOneLineExitTwoAndNothingWritten) {
  TempDir dir;
  fs::create_directories(dir / "empty");
  std::ofstream(dir / "x.npy") << "not used";
  struct {
    const char* what;
    std::string ir, dump;
    const char* message;
  } cases[] = {
      {"an IR file that is not one", SourceDir() + "/samples/gpt_tensor/compare.json", Data("mindspore_cpu/dump"),
       "not a MindSpore IR file"},
      {"a missing IR file", dir / "none.ir", Data("mindspore_cpu/dump"), "no such IR file"},
      {"nothing to map", Data("mindspore_cpu/graph_build_0.ir"), dir / "empty", "nothing to map"},
      {"a dump name without a scope", Data("mindspore_cpu/graph_build_0.ir"), dir / "x.npy",
       "not a MindSpore dump name"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    RunResult r = RunTool({"code_mapping", "--ir", c.ir, "--dump_data", c.dump, "--output", dir / "out"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
}

// MindSpore saves a file whose name would pass 255 characters as 32 digits and names it in the
// folder's mapping.csv (no header: numbered name, original name; msprobe doc 06, 8.1).
TEST(CodeMapping, NumberedFilesAreNamedByTheirFoldersMappingCsv) {
  TempDir dir;
  fs::copy(Data("mindspore_cpu/dump"), dir / "dump", fs::copy_options::recursive);
  fs::path folder = dir / "dump/rank_0/Net/0/0";
  const std::string long_name =
      "MatMul.Gradients_Default_network-WithLossCell__backbone-Net_dense-Dense_Grad_MatMul_MatMul-op0.0.0."
      "1796136980290998.input.3.DefaultFormat.Bool.npy";
  const std::string numbered = "12345678901234567890123456789012.npy";
  ASSERT_TRUE(fs::exists(folder / long_name));
  fs::rename(folder / long_name, folder / numbered);
  std::ofstream(folder / "mapping.csv") << "98765432109876543210987654321098.npy,Other.name.npy\n"
                                        << numbered << "," << long_name << "\n";
  RunResult r = RunTool({"code_mapping", "--ir", Data("mindspore_cpu/graph_build_0.ir"), "--dump_data", dir / "dump",
                         "--output", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  Rows rows = ReadCsv(OnlyCsvIn(dir / "out"));
  bool seen = false;
  for (const auto& row : rows) {
    if (fs::path(row[0]).filename() != numbered) continue;
    seen = true;
    EXPECT_EQ(row[2], "Gradients/Default/network-WithLossCell/_backbone-Net/dense-Dense/Grad_MatMul/MatMul-op0");
    EXPECT_NE(row[1].find("x = self.matmul(x, self.weight)"), std::string::npos) << row[1];
  }
  EXPECT_TRUE(seen);

  // A numbered file that mapping.csv does not name, then no mapping.csv at all: exit 2, no output.
  std::ofstream(folder / "mapping.csv") << "98765432109876543210987654321098.npy,Other.name.npy\n";
  r = RunTool({"code_mapping", "--ir", Data("mindspore_cpu/graph_build_0.ir"), "--dump_data", dir / "dump", "--output",
               dir / "out2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find((folder / "mapping.csv").string() + ": has no row for " + numbered), std::string::npos) << r.err;
  fs::remove(folder / "mapping.csv");
  r = RunTool({"code_mapping", "--ir", Data("mindspore_cpu/graph_build_0.ir"), "--dump_data", dir / "dump", "--output",
               dir / "out2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("mapping.csv: missing: it names the numbered file " + numbered), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out2"));
}

// WriteFileSet: a rename that fails part-way puts every output back as it was.
int renames_left = 0;
int FailingRename(const char* from, const char* to) {
  if (renames_left-- == 0) {
    errno = EIO;
    return -1;
  }
  return ::rename(from, to);
}

std::vector<std::string> Listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(CodeMappingFileSet, AllOrNothing) {
  TempDir dir;
  std::ofstream(dir / "a.csv") << "old a";
  std::ofstream(dir / "c.csv") << "old c";
  std::vector<code_mapping::OutputFile> files = {
      {dir / "a.csv", "new a"}, {dir / "b.csv", "new b"}, {dir / "c.csv", "new c"}};
  for (int fail_at = 0; fail_at < 3; ++fail_at) {
    SCOPED_TRACE(fail_at);
    renames_left = fail_at;
    Status s = code_mapping::WriteFileSet(files, &FailingRename);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().file, files[fail_at].path);
    EXPECT_NE(s.error().message.find("put back"), std::string::npos) << s.error().ToString();
    EXPECT_EQ(Listing(dir.path()), (std::vector<std::string>{"a.csv", "c.csv"}));  // no temporary, no backup, no b
    EXPECT_EQ(Slurp(dir / "a.csv"), "old a");
    EXPECT_EQ(Slurp(dir / "c.csv"), "old c");
  }
  // A temporary that cannot be written (a folder in its place): nothing changes either.
  std::string blocked = dir / ("c.csv.tmp-" + std::to_string(getpid()));
  fs::create_directories(blocked);
  Status s = code_mapping::WriteFileSet(files);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().file, blocked);
  fs::remove(blocked);
  EXPECT_EQ(Listing(dir.path()), (std::vector<std::string>{"a.csv", "c.csv"}));
  EXPECT_EQ(Slurp(dir / "a.csv"), "old a");

  ASSERT_TRUE(code_mapping::WriteFileSet(files).ok());
  EXPECT_EQ(Listing(dir.path()), (std::vector<std::string>{"a.csv", "b.csv", "c.csv"}));
  EXPECT_EQ(Slurp(dir / "a.csv"), "new a");
  EXPECT_EQ(Slurp(dir / "b.csv"), "new b");
  EXPECT_EQ(Slurp(dir / "c.csv"), "new c");
}

}  // namespace
}  // namespace graph_ascend::testing
