// graph-ascend report (issue 32, point 1): one self-contained HTML file per
// compare, on compares of the real samples: the verdict, the path on both
// sides, the comparison table, the ranking, the layer profile, the runs'
// metadata; nothing fetched from a network; bad input is one line and exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "test_files.h"

namespace {

namespace fs = std::filesystem;
using graph_ascend::testing::ExpectOneError;
using graph_ascend::testing::Files;
using graph_ascend::testing::Graph;
using graph_ascend::testing::Lines;
using graph_ascend::testing::ReadFile;
using graph_ascend::testing::RunResult;
using graph_ascend::testing::RunTool;
using graph_ascend::testing::Sample;
using graph_ascend::testing::SourceDir;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::WriteFile;

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

class ReportTest : public ::testing::Test {
 protected:
  std::string Compare(const std::string& config, const std::string& name) {
    std::vector<std::string> files = Graph(config, dir_ / name);
    EXPECT_EQ(files.size(), 1u);
    return files.empty() ? "" : files[0];
  }
  std::string Report(const std::string& vis, const std::string& name) {
    std::string out = dir_ / name;
    RunResult r = RunTool({"report", vis, "-o", out});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "");
    return ReadFile(out);
  }
  // Self-contained: no script, no reference that a browser would fetch.
  static void ExpectOffline(const std::string& html) {
    EXPECT_EQ(html.find("http"), std::string::npos);
    EXPECT_EQ(html.find("src="), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("<link"), std::string::npos);
    EXPECT_EQ(html.find("url("), std::string::npos);
    EXPECT_EQ(html.find("@import"), std::string::npos);
  }
  TempDir dir_;
};

// gpt_statistics: layer 1's MLP under bf16 autocast, first divergence Functional.linear.11.forward.
TEST_F(ReportTest, ADivergingCompare) {
  std::string vis = Compare(Sample("gpt_statistics/compare.json"), "gpt");
  std::string html = Report(vis, "gpt.html");
  ExpectOffline(html);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  // The verdict line, with the reason and margin check's own words.
  EXPECT_NE(html.find("<p class=\"verdict diverges\">First divergence: <span class=\"name\">Functional.linear.11.forward"
                      "</span> (api, dtype/shape changed, &gt; 1e6x the noise: its kind shows none, index 0.002488)</p>"),
            std::string::npos)
      << html.substr(0, 3000);
  // The path from the root on both sides: every ancestor twice (NPU and Bench), the node last.
  for (const char* name : {"DefaultModel", "Module.model.LlamaModel.forward.0",
                           "Module.model.layers.1.LlamaDecoderLayer.forward.0", "Module.model.layers.1.mlp.LlamaMLP.forward.0",
                           "Module.model.layers.1.mlp.gate_proj.Linear.forward.0"}) {
    EXPECT_EQ(Count(html, std::string("<li class=\"name\">") + name + "</li>"), 2u) << name;
  }
  EXPECT_EQ(Count(html, "<li class=\"name\">Functional.linear.11.forward</li>"), 2u);
  // Its comparison table: the output whose dtype changed, both sides' values and the metrics.
  size_t row = html.find("<td class=\"name\">Functional.linear.11.forward.output.0</td>");
  ASSERT_NE(row, std::string::npos);
  std::string output_row = html.substr(row, html.find("</tr>", row) - row);
  EXPECT_NE(output_row.find("dtype torch.bfloat16"), std::string::npos) << output_row;
  EXPECT_NE(output_row.find("dtype torch.float32"), std::string::npos) << output_row;
  EXPECT_NE(output_row.find("MaxRelativeErr"), std::string::npos) << output_row;
  // The next entries of the ranking, as check prints them.
  EXPECT_NE(html.find("<ol start=\"2\"><li class=\"name\">Functional.linear.12.forward (api, dtype/shape changed"),
            std::string::npos);
  // The layer profile: a chart with one column per decoder layer, its table, layer 1 the first divergence.
  EXPECT_EQ(Count(html, "<svg class=\"ga-profile-chart\""), 1u);
  EXPECT_EQ(Count(html, "class=\"ga-profile-hit\""), 3u);
  EXPECT_NE(html.find("By model.layers.N"), std::string::npos);
  size_t layer1 = html.find("<tr><td class=\"name\">model.layers.1</td>");
  ASSERT_NE(layer1, std::string::npos);
  EXPECT_NE(html.substr(layer1, html.find("</tr>", layer1) - layer1).find("the first divergence"), std::string::npos);
  // The runs' metadata as the .vis stores it.
  EXPECT_NE(html.find("<dt>written by</dt><dd>graph-ascend "), std::string::npos);
  EXPECT_NE(html.find(Sample("gpt_statistics/npu/step0/rank0") + " (pytorch, "), std::string::npos);
  EXPECT_NE(html.find(Sample("gpt_statistics/bench/step0/rank0") + " (pytorch, "), std::string::npos);
  EXPECT_NE(html.find("<dt>command line</dt>"), std::string::npos);
  // Written through a temporary file: nothing else is left beside it.
  EXPECT_EQ(Files(dir_.path()), (std::vector<std::string>{"gpt", "gpt.html"}));
}

// renamed_act: the first divergence is an unmatched module; the Bench path ends at its nearest matched ancestor.
TEST_F(ReportTest, AnUnmatchedFirstDivergence) {
  std::string html = Report(Compare(Sample("renamed_act/compare.json"), "act"), "act.html");
  ExpectOffline(html);
  EXPECT_NE(html.find("First divergence: <span class=\"name\">Module.blocks.1.act.GELU.forward.0</span> (module, "
                      "unmatched between matched neighbours, unmatched)"),
            std::string::npos)
      << html.substr(0, 3000);
  EXPECT_NE(html.find("(nothing below matches it)"), std::string::npos);
}

// A run that differs everywhere by noise alone (bench/divergence's llama under bf16 linear layers).
TEST_F(ReportTest, ANoisyCompareWithoutDivergence) {
  std::string cmd = "tar -xJf '" + SourceDir() + "/bench/divergence/corpus.tar.xz' -C '" + dir_.path() +
                    "' corpus/runs/npu-llama-bf16lin-none-s1 corpus/runs/bench-llama-none-none-s1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  WriteFile(dir_ / "noisy.json", "{\"npu_path\": \"" + (dir_ / "corpus/runs/npu-llama-bf16lin-none-s1/step0/rank0") +
                                     "\", \"bench_path\": \"" +
                                     (dir_ / "corpus/runs/bench-llama-none-none-s1/step0/rank0") + "\"}");
  std::string html = Report(Compare(dir_ / "noisy.json", "noisy"), "noisy.html");
  ExpectOffline(html);
  EXPECT_NE(html.find("<p class=\"verdict agrees\">No divergence beyond noise (largest margin "), std::string::npos);
  EXPECT_EQ(html.find("id=\"path\""), std::string::npos) << "no path to a divergence";
  EXPECT_EQ(Count(html, "class=\"ga-profile-hit\""), 2u);
}

// A compare without layers still reports, and says why it has no profile; --depth gives one.
TEST_F(ReportTest, NoLayersAndADepth) {
  std::string vis = Compare(Sample("cnn_statistics/compare.json"), "cnn");
  std::string html = Report(vis, "cnn.html");
  ExpectOffline(html);
  RunResult r = RunTool({"report", vis, "-o", dir_ / "depth.html", "--depth", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  html = ReadFile(dir_ / "depth.html");
  EXPECT_NE(html.find("By depth 1"), std::string::npos);
  std::string l1 = Compare(Sample("l1_api/compare.json"), "l1");
  html = Report(l1, "l1.html");
  EXPECT_NE(html.find("No layer profile: layer profile: no repeated layer modules"), std::string::npos);
}

// Bad input: one line, exit 2, and no report written (an existing one is left as it was).
TEST_F(ReportTest, BadInputIsOneLineAndWritesNothing) {
  std::string vis = Compare(Sample("gpt_statistics/compare.json"), "gpt");
  WriteFile(dir_ / "kept.html", "old");
  std::vector<std::string> build = Graph(Sample("gpt_statistics/build.json"), dir_ / "build");
  ASSERT_EQ(build.size(), 1u);
  ExpectOneError(RunTool({"report", build[0], "-o", dir_ / "kept.html"}), {build[0], "a build of one run"});
  ExpectOneError(RunTool({"report", dir_ / "missing.vis", "-o", dir_ / "kept.html"}), {"missing.vis"});
  WriteFile(dir_ / "damaged.vis", "not a vis file");
  ExpectOneError(RunTool({"report", dir_ / "damaged.vis", "-o", dir_ / "kept.html"}), {"damaged.vis"});
  std::string db = SourceDir() + "/tests/data/msprobe_outputs/dist_gloo_batch_26.2.0.vis.db";
  ExpectOneError(RunTool({"report", db, "-o", dir_ / "kept.html"}), {"dist_gloo_batch_26.2.0.vis.db", "msprobe .vis.db"});
  ExpectOneError(RunTool({"report", vis, "-o", dir_ / "no/such/folder/r.html"}), {"r.html", "cannot write"});
  EXPECT_EQ(ReadFile(dir_ / "kept.html"), "old");
  for (auto [args, part] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"report", vis}, "report needs -o REPORT.html"},
           {{"report", "-o", dir_ / "r.html"}, "report needs a .vis file"},
           {{"report", vis, "-o"}, "-o needs a value"},
           {{"report", vis, "-o", dir_ / "r.html", "--depth", "x"}, "--depth 'x'"},
           {{"report", vis, vis, "-o", dir_ / "r.html"}, "report takes one .vis file"},
           {{"report", vis, "--pdf"}, "unknown option '--pdf'"}}) {
    RunResult r = RunTool(args);
    EXPECT_EQ(r.status, 2) << part;
    EXPECT_EQ(r.out, "") << part;
    EXPECT_EQ(Lines(r.err).at(0).rfind("graph-ascend: error: ", 0), 0u) << r.err;
    EXPECT_NE(Lines(r.err).at(0).find(part), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "r.html"));
  EXPECT_EQ(Files(dir_.path()), (std::vector<std::string>{"build", "damaged.vis", "gpt", "kept.html"}));
}

// More than two runs (issue 33 point 4): run i's compare of a runs output
// reports which run it is against which reference and where the runs first
// disagree at its step and rank; an ordinary compare has no such section.
TEST_F(ReportTest, RepeatedRunsSummary) {
  std::string out = dir_ / "repeat";
  RunResult g = RunTool({"graph", "-i", Sample("repeat_runs/runs.json"), "-o", out});
  ASSERT_EQ(g.status, 0) << g.err;
  std::string vis;
  for (const auto& e : fs::directory_iterator(out + "/run2")) vis = e.path().string();
  std::string html = Report(vis, "run2.html");
  ExpectOffline(html);
  EXPECT_EQ(Count(html, "<h2 id=\"repeated\">More than two runs</h2>"), 1u);
  EXPECT_NE(html.find("This file compares run 2 (NPU) with the reference, run 0 (Bench)."), std::string::npos);
  EXPECT_NE(html.find("<dt>run 0 (reference)</dt><dd>" + Sample("repeat_runs/run0") + "</dd><dt>run 1</dt>"),
            std::string::npos);
  EXPECT_NE(html.find("step0 rank0: first disagreement at Module.pool.Pool.forward.0 (entry 5), output.0 Max: spread"),
            std::string::npos);
  // A broken runs.json beside: the report still renders, and says why the section is missing.
  WriteFile(out + "/runs.json", "{\"runs\": [");
  html = Report(vis, "broken.html");
  EXPECT_NE(html.find("runs.json could not be read: "), std::string::npos);
  // The same file elsewhere is an ordinary compare.
  fs::create_directories(dir_ / "plain");
  fs::copy_file(vis, dir_ / "plain/c.vis");
  EXPECT_EQ(Report(dir_ / "plain/c.vis", "plain.html").find("More than two runs"), std::string::npos);
}

}  // namespace
