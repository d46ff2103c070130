// The noise rule's kinds (docs/DIVERGENCE.md, "The noise, learned from the
// run"): KindOf drops the call counters and keeps a module's class and
// direction, including on names no dump should hold (empty words, a name of
// counters only), as the token-list version it replaced did.
#include <gtest/gtest.h>

#include "divergence/noise_rule.h"

namespace graph_ascend::divergence {
namespace {

TEST(KindOfTest, DropsCountersAndKeepsAModulesClassAndDirection) {
  EXPECT_EQ(KindOf("Functional.linear.3.forward"), "Functional.linear.forward");
  EXPECT_EQ(KindOf("Tensor.__matmul__.0.backward"), "Tensor.__matmul__.backward");
  EXPECT_EQ(KindOf("Module.model.layers.244.mlp.LlamaMLP.forward.0"), "Module.LlamaMLP.forward");
  EXPECT_EQ(KindOf("Cell.network.0.Dense.backward.2"), "Cell.Dense.backward");
  // Three words or fewer: nothing to shorten.
  EXPECT_EQ(KindOf("Module.Linear.forward.0"), "Module.Linear.forward");
  EXPECT_EQ(KindOf("Distributed.all_reduce.0.forward"), "Distributed.all_reduce.forward");
}

TEST(KindOfTest, OddNamesGiveWhatTheTokenListGave) {
  EXPECT_EQ(KindOf(""), "");
  EXPECT_EQ(KindOf("12.3"), "");
  EXPECT_EQ(KindOf("."), "");
  EXPECT_EQ(KindOf(".a"), "a");
  EXPECT_EQ(KindOf("12...a.a"), "a.a");
  EXPECT_EQ(KindOf("a..b"), "a..b");
  EXPECT_EQ(KindOf("Cell."), "Cell.");
  EXPECT_EQ(KindOf("3.Module.x.y.Z.forward"), "Module.Z.forward");
  EXPECT_EQ(KindOf("Module.a.b."), "Module.b.");
  EXPECT_EQ(KindOf("007x.1.y"), "007x.y");
}

}  // namespace
}  // namespace graph_ascend::divergence
