// Small text operations on dump names (builder/base/strings.h).
#include "base/strings.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace graph_ascend {
namespace {

TEST(StringsTest, ReplaceAllIntoReusedStorage) {
  std::string out = "left over";
  ReplaceAll("Module.backward_hook.L.backward", "backward", "forward", &out);
  EXPECT_EQ(out, "Module.forward_hook.L.forward");
  ReplaceAll("no match", "backward", "forward", &out);
  EXPECT_EQ(out, "no match");
  EXPECT_EQ(ReplaceAll("aaa", "a", "bb"), "bbbbbb");
  EXPECT_EQ(ReplaceAll("abc", "", "x"), "abc");
}

TEST(StringsTest, DotSegmentFromEndIsSplitDotsFromTheEnd) {
  for (std::string_view s : {"Module.layer.0.Linear.forward.0", "a.b.c.d", "a.b.c", "", ".", "..a..", "a", ".x.y.z"}) {
    std::vector<std::string_view> seg = SplitDots(s);
    for (size_t k = 0; k < 6; ++k) {
      std::string_view got;
      bool found = DotSegmentFromEnd(s, k, &got);
      ASSERT_EQ(found, k < seg.size()) << s << " k=" << k;
      if (found) {
        EXPECT_EQ(got, seg[seg.size() - 1 - k]) << s << " k=" << k;
        EXPECT_TRUE(got.empty() || (got.data() >= s.data() && got.data() + got.size() <= s.data() + s.size()));
      }
    }
  }
}

}  // namespace
}  // namespace graph_ascend
