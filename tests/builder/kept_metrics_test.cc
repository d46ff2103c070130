// compare::KeptMetrics: what is kept is what was compared, metric by metric.
#include "compare/kept_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace graph_ascend::compare {
namespace {

std::string Describe(const PairMetrics& m) {
  std::string out = "items " + std::to_string(m.items()) + " md5 '" + std::string(m.md5_result) + "'";
  for (uint32_t k = 0; k < m.items(); ++k) {
    out += "\n" + std::to_string(k) + ":";
    for (const PairMetric* x = m.begin(k); x != m.end(k); ++x) {
      char value[40];
      snprintf(value, sizeof(value), "%a", x->value);
      out += " [" + std::string(x->name) + "|" + std::to_string(static_cast<int>(x->kind)) + "|" +
             std::string(m.text(*x)) + "|" + value + "|" + (x->has_value ? "v" : "-") + "]";
    }
  }
  return out;
}

TEST(KeptMetricsTest, GetGivesWhatWasKept) {
  PairMetrics a;
  a.Reset(4);
  a.Add(0, "Max diff", MetricKind::kMaxDiff, "0.5", 0.5, true);
  a.Add(0, "MaxRelativeErr", MetricKind::kMaxRelative, "N/A", 0, false);
  // Item 1 has none; a name the kinds do not know, a known name under another kind, -0.0, a value without has_value.
  a.Add(2, "EucDist", MetricKind::kOther, "1.25", 1.25, true);
  a.Add(2, "Cosine", MetricKind::kOther, "-0.0", -0.0, true);
  a.Add(2, "Max diff", MetricKind::kMinDiff, "", 7.0, false);
  a.Add(3, "Requires_grad Consistent", MetricKind::kRequiresGrad, "True", 0, false);
  a.md5_result = "Different";
  PairMetrics b;
  b.Reset(0);
  KeptMetrics kept;
  kept.Reset(5);
  kept.Keep(1, a);
  kept.Keep(3, b);
  EXPECT_FALSE(kept.kept(0));
  EXPECT_TRUE(kept.kept(1));
  EXPECT_TRUE(kept.kept(3));
  EXPECT_FALSE(kept.kept(5));
  PairMetrics got;
  got.Reset(1);
  got.Add(0, "stale", MetricKind::kOther, "x", 1, true);
  kept.Get(1, &got);
  EXPECT_EQ(Describe(got), Describe(a));
  EXPECT_TRUE(std::signbit(got.begin(2)[1].value));
  kept.Get(3, &got);
  EXPECT_EQ(Describe(got), Describe(b));
  kept.Reset(2);
  EXPECT_FALSE(kept.kept(1));
}

}  // namespace
}  // namespace graph_ascend::compare
