#include "view_store.h"

#include <gtest/gtest.h>

namespace graph_ascend::service {
namespace {

TEST(ViewStoreTest, ViewsArePerSessionFileSideAndMicroStep) {
  ViewStore store(16, size_t{1} << 30, 3600);
  auto a = store.Get("tab-a", 1, 0, -1);
  EXPECT_EQ(store.Get("tab-a", 1, 0, -1), a);
  EXPECT_NE(store.Get("tab-b", 1, 0, -1), a);
  EXPECT_NE(store.Get("tab-a", 2, 0, -1), a);
  EXPECT_NE(store.Get("tab-a", 1, 1, -1), a);
  EXPECT_NE(store.Get("tab-a", 1, 0, 0), a);
  EXPECT_EQ(store.views(), 5u);
  EXPECT_EQ(store.sessions(), 2u);
  // A session id cannot spoof another key by embedding the separator.
  EXPECT_NE(store.Get(std::string("tab-a\0"
                                  "1/0/-1",
                                  12),
                      1, 0, -1),
            a);
}

TEST(ViewStoreTest, LeastRecentlyUsedViewsGoFirst) {
  ViewStore store(2, size_t{1} << 30, 3600);
  auto a = store.Get("a", 1, 0, -1);
  auto b = store.Get("b", 1, 0, -1);
  EXPECT_EQ(store.Get("a", 1, 0, -1), a);  // a is now the most recent
  store.Get("c", 1, 0, -1);                // evicts b
  EXPECT_EQ(store.views(), 2u);
  EXPECT_EQ(store.Get("a", 1, 0, -1), a);
  EXPECT_NE(store.Get("b", 1, 0, -1), b);  // a fresh view
}

TEST(ViewStoreTest, LayoutBytesAreBounded) {
  ViewStore store(100, 1000, 3600);
  auto big = store.Get("big", 1, 0, -1);
  big->bytes = 900;
  store.Get("small", 1, 0, -1)->bytes = 50;
  EXPECT_EQ(store.views(), 2u);
  store.Get("other", 1, 0, -1)->bytes = 200;  // over the budget on the next request
  store.Get("other", 1, 0, -1);
  EXPECT_EQ(store.views(), 2u);
  EXPECT_NE(store.Get("big", 1, 0, -1), big);
}

TEST(ViewStoreTest, IdleViewsAreDropped) {
  ViewStore store(100, size_t{1} << 30, 0);
  auto a = store.Get("a", 1, 0, -1);
  store.Get("b", 1, 0, -1);  // with no idle time allowed, "a" is idle by now
  EXPECT_EQ(store.views(), 1u);
  EXPECT_NE(store.Get("a", 1, 0, -1), a);
}

}  // namespace
}  // namespace graph_ascend::service
