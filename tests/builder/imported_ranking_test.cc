// The divergence ranking of msprobe's own files (issue 29 point 1): a .vis.db
// (8.2-26.x) or JSON .vis (8.1) converted by `graph-ascend import` holds a
// ranking made by the builder's rule from the pairs' stored metrics
// (vis::AddRanking over divergence::RankFromDetails), and a file that cannot
// be ranked says why. On the real files of tests/data/msprobe_outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "msprobe_fixtures.h"
#include "test_files.h"
#include "vis/vis_file.h"
#include "vis/vis_index.h"
#include "vis_writer/ranking_rewrite.h"

namespace graph_ascend::formats {
namespace {

namespace fs = std::filesystem;
using testing::Ok;
using testing::RunTool;
using testing::Sample;
using testing::TempDir;

std::string Fixture(const std::string& name) { return testing::SourceDir() + "/tests/data/msprobe_outputs/" + name; }

// The .vis files under `dir`, in name order.
std::vector<std::string> VisFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().extension() == ".vis") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Import(const std::string& input, const std::string& dir) {
  testing::RunResult r = RunTool({"import", input, "-o", dir});
  EXPECT_EQ(r.status, 0) << r.err;
  return VisFiles(dir);
}

struct Ranked {
  vis::FileMeta meta;
  vis::DivergenceRanking ranking;
  std::vector<std::string> names;  // of the entries, in order
};

Ranked ReadRanking(const std::string& path) {
  Ranked out;
  auto reader = Ok(vis::VisReader::Open(path));
  if (!reader) return out;
  out.meta = reader->meta();
  out.ranking = Ok(reader->ReadDivergence());
  vis::SideIndex npu = Ok(vis::LoadSideIndex(*reader, vis::SIDE_NPU));
  for (const vis::DivergenceEntry& e : out.ranking.entry()) {
    EXPECT_LT(e.node(), npu.size());
    if (e.node() < npu.size()) out.names.emplace_back(npu.Name(e.node()));
  }
  return out;
}

// Every compare of msprobe's files, whatever version and layout, comes out of
// `import` ranked, FileMeta summing the ranking up as a build's does.
TEST(ImportedRankingTest, EveryMsprobeCompareIsRankedOnImport) {
  std::vector<std::string> inputs;
  for (const std::string& suffix : {std::string(".vis.db"), std::string(".vis")}) {
    for (const std::string& f : Fixtures(suffix)) {
      if (f.find("_build_") == std::string::npos) inputs.push_back(f);
    }
  }
  ASSERT_GE(inputs.size(), 12u);
  for (const std::string& input : inputs) {
    SCOPED_TRACE(input);
    TempDir dir;
    std::vector<std::string> files = Import(input, dir.path());
    ASSERT_FALSE(files.empty());
    for (const std::string& f : files) {
      SCOPED_TRACE(f);
      Ranked r = ReadRanking(f);
      EXPECT_TRUE(r.meta.divergence_ranked());
      EXPECT_EQ(r.meta.divergence_unranked(), "");
      EXPECT_EQ(r.meta.divergence_count(), static_cast<uint32_t>(r.ranking.entry_size()));
      if (r.ranking.entry_size() > 0) {
        EXPECT_EQ(r.meta.first_divergence(), r.names[0]);
        EXPECT_EQ(r.meta.first_divergence_reason(), r.ranking.entry(0).reason());
        EXPECT_EQ(r.meta.overview().first_divergence_node(), static_cast<int32_t>(r.ranking.entry(0).node()));
      }
      // Statistics compares rank by the noise rule, as a build of them does.
      if (r.meta.mode() == vis::MODE_STATISTICS) EXPECT_EQ(r.ranking.rule(), vis::DIVERGENCE_RULE_NOISE);
    }
  }
}

// Where the repository has both the dumps and msprobe's file of them, the
// imported file's first divergence is the one a graph-ascend build of the same
// dumps gives (samples/dist_gloo: a compare, and a batch of 2 steps x 2 ranks).
TEST(ImportedRankingTest, FirstDivergenceIsTheBuildsOfTheSameDumps) {
  struct Case {
    const char* config;
    std::vector<const char*> files;
  };
  const std::vector<Case> cases = {
      {"dist_gloo/compare.json",
       {"dist_gloo_compare_8.1.2.vis", "dist_gloo_compare_8.2.1.vis.db", "dist_gloo_compare_8.3.3.vis.db",
        "dist_gloo_compare_26.2.0.vis.db"}},
      {"dist_gloo/batch.json", {"dist_gloo_batch_8.2.1.vis.db", "dist_gloo_batch_8.3.3.vis.db",
                                "dist_gloo_batch_26.2.0.vis.db"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.config);
    TempDir built_dir;
    testing::RunResult r = RunTool({"graph", "-i", Sample(c.config), "-o", built_dir.path()});
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<std::string> built = VisFiles(built_dir.path());
    ASSERT_FALSE(built.empty());
    std::vector<Ranked> want;
    for (const std::string& b : built) want.push_back(ReadRanking(b));
    for (const char* name : c.files) {
      SCOPED_TRACE(name);
      TempDir dir;
      std::vector<std::string> files = Import(Fixture(name), dir.path());
      ASSERT_EQ(files.size(), built.size());
      // Both named compare[_stepS_rankR]_<time>.vis: the same order.
      for (size_t i = 0; i < files.size(); ++i) {
        SCOPED_TRACE(files[i]);
        Ranked got = ReadRanking(files[i]);
        ASSERT_TRUE(want[i].meta.divergence_ranked());
        ASSERT_FALSE(want[i].names.empty()) << "the build ranks nothing: the comparison says nothing";
        ASSERT_FALSE(got.names.empty());
        EXPECT_EQ(got.names[0], want[i].names[0]);
        EXPECT_EQ(got.ranking.entry(0).reason(), want[i].ranking.entry(0).reason());
        EXPECT_EQ(got.ranking.rule(), want[i].ranking.rule());
      }
    }
  }
}

// `info` on an imported file prints the stored ranking, its first entry first.
TEST(ImportedRankingTest, InfoPrintsTheImportedRanking) {
  TempDir dir;
  std::vector<std::string> files = Import(Fixture("dist_gloo_compare_26.2.0.vis.db"), dir.path());
  ASSERT_EQ(files.size(), 1u);
  Ranked r = ReadRanking(files[0]);
  ASSERT_FALSE(r.names.empty());
  testing::RunResult info = RunTool({"info", files[0]});
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("first divergence, in execution order: " + r.names[0] + " ("), std::string::npos)
      << info.out;
  EXPECT_NE(info.out.find("divergence ranking (" + std::to_string(r.names.size()) + "):"), std::string::npos)
      << info.out;
}

// A build has nothing to rank and is left as it is; a compare none of whose
// nodes is matched cannot be ranked and says why, in full.
TEST(ImportedRankingTest, WhatCannotBeRankedSaysWhy) {
  TempDir dir;
  std::vector<std::string> built = Import(Fixture("dist_gloo_build_26.2.0.vis.db"), dir / "build");
  ASSERT_EQ(built.size(), 1u);
  Ranked b = ReadRanking(built[0]);
  EXPECT_FALSE(b.meta.divergence_ranked());
  EXPECT_EQ(b.meta.divergence_unranked(), "");

  // msprobe's compare with every match link taken out (a copy: the real file stays as it is).
  std::string db = dir / "unmatched.vis.db";
  fs::copy_file(Fixture("dist_gloo_compare_26.2.0.vis.db"), db);
  ExecSql(db, "UPDATE tb_nodes SET matched_node_link = '[]'");
  std::vector<std::string> files = Import(db, dir / "unmatched");
  ASSERT_EQ(files.size(), 1u);
  Ranked u = ReadRanking(files[0]);
  EXPECT_FALSE(u.meta.divergence_ranked());
  EXPECT_EQ(u.ranking.entry_size(), 0);
  EXPECT_EQ(u.meta.divergence_unranked(),
            "no node of the two runs is matched, so no pair's metrics say where they part");
  // Ranking it again changes nothing.
  auto again = Ok(vis::AddRanking(files[0]));
  EXPECT_FALSE(again.ranked);
  EXPECT_EQ(again.why_not, u.meta.divergence_unranked());
}

}  // namespace
}  // namespace graph_ascend::formats
