// The verdict's sentence when nothing diverges beyond noise (verdict::QuietSentence),
// as info, check and the report word it: on values, and on a compare of the
// real p2p_micro sample, whose rank 1 is noise only.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_runner.h"
#include "test_files.h"
#include "verdict/verdict.h"
#include "vis/vis_index.h"

namespace {

using namespace graph_ascend;
using graph_ascend::testing::Graph;
using graph_ascend::testing::Ok;
using graph_ascend::testing::Sample;
using graph_ascend::testing::TempDir;

std::string Marked(const std::string& node) { return "<b>" + node + "</b>"; }

verdict::Verdict Quiet(double margin, const std::string& node) {
  verdict::Verdict v;
  v.ranked = v.noise_rule = v.has_largest = true;
  v.largest_margin = margin;
  v.largest_node = node;
  v.threshold = 5;
  return v;
}

TEST(QuietSentenceTest, SaysTheLargestMarginAndWhereInEachCommandsWords) {
  verdict::Verdict v = Quiet(1.2578, "Distributed.isend.0.forward");
  // info
  EXPECT_EQ(verdict::QuietSentence(v),
            "no divergence beyond noise (largest margin 1.26x the noise, at Distributed.isend.0.forward; an op counts "
            "above 5x)");
  // check: one line of a CI log, without the threshold
  EXPECT_EQ(verdict::QuietSentence(v, {.threshold_digits = 0}),
            "no divergence beyond noise (largest margin 1.26x the noise, at Distributed.isend.0.forward)");
  // the report: a sentence of its own, one more digit, the name marked up
  EXPECT_EQ(verdict::QuietSentence(v, {.capital = true, .margin_digits = 4, .threshold_digits = 4, .node = Marked}),
            "No divergence beyond noise (largest margin 1.258x the noise, at <b>Distributed.isend.0.forward</b>; an op "
            "counts above 5x)");
}

TEST(QuietSentenceTest, NoLargestMarginStoredIsTheBareVerdict) {
  verdict::Verdict v;
  v.ranked = true;  // a rule other than the noise rule (md5): no margin
  EXPECT_EQ(verdict::QuietSentence(v), "no divergence beyond noise");
  EXPECT_EQ(verdict::QuietSentence(v, {.capital = true, .node = Marked}), "No divergence beyond noise");
}

TEST(QuietSentenceTest, AcceptedEntriesAreCountedAndTheMarginLeftOut) {
  // The largest margin may be an accepted entry's: check does not say it.
  verdict::Verdict v = Quiet(40, "Functional.dropout.0.forward");
  EXPECT_EQ(verdict::QuietSentence(v, {.threshold_digits = 0}, 2),
            "no divergence beyond noise other than the 2 accepted");
}

TEST(QuietSentenceTest, ReadFromARealNoiseOnlyCompare) {
  TempDir dir;
  std::vector<std::string> files = Graph(Sample("p2p_micro/batch.json"), dir / "out");
  ASSERT_EQ(files.size(), 2u);
  std::string rank1;
  for (const std::string& f : files) {
    if (f.find("rank1") != std::string::npos) rank1 = f;
  }
  ASSERT_FALSE(rank1.empty());
  auto reader = Ok(vis::VisReader::Open(rank1));
  vis::SideIndex npu = Ok(vis::LoadSideIndex(*reader, vis::SIDE_NPU));
  verdict::Verdict v = Ok(verdict::ReadVerdict(*reader, npu, rank1));
  ASSERT_TRUE(v.entries.empty());
  EXPECT_EQ(verdict::QuietSentence(v),
            "no divergence beyond noise (largest margin 1.26x the noise, at Distributed.isend.0.forward; an op counts "
            "above 5x)");
}

}  // namespace
