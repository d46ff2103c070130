// bin/graph-ascend and the paths it is given or finds (issue 35): reads
// confined to a folder (--confine, what the graph service passes), one-line
// errors whatever a path or a file holds, and no empty output folder left by
// a failed run.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace graph_ascend::testing {
namespace {

const char* kRankFiles[] = {"dump.json", "construct.json", "stack.json"};

// A log directory holding `npu/` (a copy of a sample rank, except `linked`,
// a symbolic link to the same file copied into `outside`), and compare.json.
void LogWithLinkedFile(const TempDir& log, const TempDir& outside, const std::string& linked) {
  const std::string rank = Sample("gpt_statistics/npu/step0/rank0");
  fs::create_directories(log / "npu");
  for (const char* f : kRankFiles) {
    if (f == linked) {
      fs::copy(rank + "/" + f, outside / f);
      fs::create_symlink(outside / f, log / ("npu/" + std::string(f)));
    } else {
      fs::copy(rank + "/" + f, log / ("npu/" + std::string(f)));
    }
  }
  WriteFile(log / "compare.json", "{\"npu_path\": \"npu\"}");
}

TEST(ConfineTest, AFileLinkedOutOfTheFolderIsRefused) {
  for (const char* linked : kRankFiles) {
    SCOPED_TRACE(linked);
    TempDir log, outside;
    LogWithLinkedFile(log, outside, linked);
    RunResult r = RunTool({"--confine", log.path(), "graph", "-i", log / "compare.json", "-o", log / "out"});
    ExpectOneError(r, {log / ("npu/" + std::string(linked)), "path leaves the log directory"});
    EXPECT_FALSE(fs::exists(log / "out")) << "no .vis, no folder";
    // Unconfined, the link is read as before.
    r = RunTool({"graph", "-i", log / "compare.json", "-o", log / "out"});
    EXPECT_EQ(r.status, 0) << r.err;
  }
}

TEST(ConfineTest, FoldersLinkedOutOfTheFolderAreRefused) {
  TempDir log, outside;
  fs::copy(Sample("gpt_statistics/npu"), outside / "npu", fs::copy_options::recursive);
  // A rank folder and a step folder that are links, and compare.json naming a folder outside.
  fs::create_directories(log / "ranks");
  fs::create_directory_symlink(outside / "npu/step0/rank0", log / "ranks/rank0");
  fs::create_directories(log / "steps");
  fs::create_directory_symlink(outside / "npu/step0", log / "steps/step0");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ranks", log / "ranks/rank0"}, {"steps", log / "steps/step0"}, {outside / "npu", outside / "npu"}};
  for (const auto& [npu, named] : cases) {
    SCOPED_TRACE(npu);
    WriteFile(log / "compare.json", "{\"npu_path\": \"" + npu + "\"}");
    RunResult r = RunTool({"--confine", log.path(), "graph", "-i", log / "compare.json", "-o", log / "out"});
    ExpectOneError(r, {named, "path leaves the log directory"});
    EXPECT_FALSE(fs::exists(log / "out"));
    std::string target = npu[0] == '/' ? npu : log / npu;
    r = RunTool({"--confine", log.path(), "graph_visualize", "-tp", target, "-o", log / "out"});
    ExpectOneError(r, {named, "path leaves the log directory"});
    EXPECT_FALSE(fs::exists(log / "out"));
  }
  // compare.json itself outside.
  WriteFile(outside / "compare.json", "{\"npu_path\": \"" + (outside / "npu/step0/rank0") + "\"}");
  RunResult r = RunTool({"--confine", log.path(), "graph", "-i", outside / "compare.json", "-o", log / "out"});
  ExpectOneError(r, {outside / "compare.json", "path leaves the log directory"});
}

TEST(ConfineTest, TheFolderMustExist) {
  TempDir log;
  RunResult r = RunTool({"--confine", log / "none", "graph", "-i", "x.json", "-o", log / "out"});
  ExpectOneError(r, {log / "none", "--confine"});
}

// Each error is one line on stderr, however the path or the file is made.
TEST(OneLineErrorTest, APathWithANewlineGivesOneLine) {
  TempDir dir;
  const std::string folder = dir / "two\nlines\r\x1b[31m";
  WriteFile(folder + "/compare.json", "{\"npu_path\": 3}");
  RunResult r = RunTool({"graph", "-i", folder + "/compare.json", "-o", dir / "out"});
  ExpectOneError(r, {"two\\nlines\\r\\x1b[31m/compare.json", "npu_path"});
  r = RunTool({"graph", "-i", dir / "no\nsuch.json", "-o", dir / "out"});
  ExpectOneError(r, {"no\\nsuch.json"});
  r = RunTool({"graph", "--no\nsuch", "-i", "x"});  // the usage follows the one error line
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(Lines(r.err)[0], "graph-ascend: error: unknown option '--no\\nsuch'");
  EXPECT_EQ(Lines(r.err)[1], "");
  EXPECT_EQ(Lines(r.err)[2].rfind("usage: graph-ascend graph", 0), 0u);
}

TEST(OneLineErrorTest, RawBytesOfAFileAreEscapedAndCut) {
  TempDir dir;
  // A checkpoint's iteration file quoted in the error: a newline, escape
  // sequences and 10 KB of text.
  fs::create_directories(dir / "a");
  WriteFile(dir / "a/latest_checkpointed_iteration.txt", "12\nrm -rf \x1b[2J\x01\xff" + std::string(10000, 'x'));
  RunResult r = RunTool({"ckpt_compare", dir / "a", dir / "a", "-o", dir / "out.json"});
  ExpectOneError(r, {"latest_checkpointed_iteration.txt", "got '12\\nrm -rf \\x1b[2J\\x01\\xff"});
  EXPECT_LT(r.err.size(), 400u) << r.err;
  // A JSON string holding control characters and a dump.json key of them.
  WriteFile(dir / "c/compare.json", "{\"npu_path\": \"x\\n\\u001b[31m\"}");
  r = RunTool({"graph", "-i", dir / "c/compare.json", "-o", dir / "out"});
  ExpectOneError(r, {"\\x1b[31m"});
}

// A failed run removes the output folders it made (empty), not those it found.
TEST(OutputFolderTest, AFailedRunLeavesNoFolderItMade) {
  TempDir dir;
  const std::string rank = Sample("gpt_statistics/npu/step0/rank0");
  fs::create_directories(dir / "npu");
  for (const char* f : kRankFiles) fs::copy(rank + "/" + f, dir / ("npu/" + std::string(f)));
  WriteFile(dir / "npu/dump.json", "{\"task\": \"statistics\", \"data\": {\"x\": [}}");
  WriteFile(dir / "compare.json", "{\"npu_path\": \"npu\"}");
  RunResult r = RunTool({"graph", "-i", dir / "compare.json", "-o", dir / "new/deeper"});
  ExpectOneError(r, {"dump.json"});
  EXPECT_FALSE(fs::exists(dir / "new")) << "both folders it made are gone";
  fs::create_directories(dir / "kept");
  r = RunTool({"graph", "-i", dir / "compare.json", "-o", dir / "kept/deeper"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(fs::is_directory(dir / "kept")) << "a folder it found stays";
  EXPECT_FALSE(fs::exists(dir / "kept/deeper"));
}

}  // namespace
}  // namespace graph_ascend::testing
