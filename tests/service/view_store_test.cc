#include "view_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "open_graph.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

using testing::TempDir;

// The nodes a view shows expanded.
std::vector<uint32_t> Expanded(const SideGraph& g, View* v) {
  std::lock_guard<std::mutex> l(v->mu);
  std::vector<uint32_t> out;
  for (uint32_t n = 0; n < g.size(); ++n) {
    if (v->state.IsExpanded(n)) out.push_back(n);
  }
  return out;
}

// Applies `op` on the named node to the view and records it, as GetView and its kin do.
void Take(ViewStore* store, View* v, const SideGraph& g, ViewOp op, const std::string& name) {
  std::lock_guard<std::mutex> l(v->mu);
  auto n = static_cast<uint32_t>(g.Find(name));
  Status s = op == ViewOp::kExpand ? v->state.Expand(g, n) : op == ViewOp::kCollapse ? v->state.Collapse(g, n)
                                                                                     : v->state.Reveal(g, n);
  ASSERT_TRUE(s.ok()) << name;
  store->Record(v, g, op, n);
}

class ViewJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteCompare(dir_.Join("compare.vis"), testing::ResnetLike(), {});
    auto f = OpenGraph::Open(dir_.Join("compare.vis"), "compare.vis", {});
    ASSERT_TRUE(f.ok()) << f.error().ToString();
    file_ = *f;
  }
  const SideGraph& g() const { return *file_->side(vis::SIDE_NPU); }
  size_t Journals() const {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir_.Join("views"))) {
      n += e.path().extension() == ".journal";
    }
    return n;
  }

  TempDir dir_;
  std::shared_ptr<OpenGraph> file_;
};

TEST_F(ViewJournalTest, AViewComesBackFromItsJournalOnAFreshStore) {
  std::vector<uint32_t> before, root_only;
  std::string journal;
  {
    ViewStore store(16, size_t{1} << 30, 3600, dir_.Join("views"));
    auto v = store.Get("tab", file_->id(), 0, -1, "compare.vis", &g());
    root_only = Expanded(g(), v.get());
    Take(&store, v.get(), g(), ViewOp::kReveal, "Module.layer2.0.conv1.Conv2d.forward.0");
    Take(&store, v.get(), g(), ViewOp::kExpand, "Module.layer1.0.BasicBlock.forward.0");
    Take(&store, v.get(), g(), ViewOp::kCollapse, "Module.layer2.0.BasicBlock.forward.0");
    before = Expanded(g(), v.get());
    journal = v->journal;
  }  // the server dies: the store goes, its journals stay
  ASSERT_GT(before.size(), root_only.size() + 1);
  std::ofstream(journal, std::ios::app) << "{\"op\":\"expand\",\"node\":\"Module.lay";  // killed mid-append

  ViewStore fresh(16, size_t{1} << 30, 3600, dir_.Join("views"));
  // The file is opened again on the new server (another id); the view replays its journal.
  auto v = fresh.Get("tab", file_->id() + 1, 0, -1, "compare.vis", &g());
  EXPECT_EQ(Expanded(g(), v.get()), before);
  EXPECT_EQ(Expanded(g(), fresh.Get("other-tab", file_->id() + 1, 0, -1, "compare.vis", &g()).get()), root_only);
  // The torn line was cut: what comes next is a line of its own.
  Take(&fresh, v.get(), g(), ViewOp::kCollapse, "Module.layer1.0.BasicBlock.forward.0");
  auto after = Expanded(g(), v.get());
  ViewStore third(16, size_t{1} << 30, 3600, dir_.Join("views"));
  EXPECT_EQ(Expanded(g(), third.Get("tab", file_->id() + 2, 0, -1, "compare.vis", &g()).get()), after);
}

TEST_F(ViewJournalTest, ADroppedViewTakesItsJournalAlong) {
  ViewStore store(1, size_t{1} << 30, 3600, dir_.Join("views"));
  auto a = store.Get("a", file_->id(), 0, -1, "compare.vis", &g());
  auto root_only = Expanded(g(), a.get());
  Take(&store, a.get(), g(), ViewOp::kExpand, "Module.layer1.0.BasicBlock.forward.0");
  EXPECT_EQ(Journals(), 1u);
  store.Get("b", file_->id(), 0, -1, "compare.vis", &g());  // evicts a
  EXPECT_EQ(Journals(), 0u);
  ViewStore fresh(16, size_t{1} << 30, 3600, dir_.Join("views"));
  EXPECT_EQ(Expanded(g(), fresh.Get("a", file_->id(), 0, -1, "compare.vis", &g()).get()), root_only);
}

TEST_F(ViewJournalTest, ALongSessionsJournalStaysInProportionToItsView) {
  ViewStore store(16, size_t{1} << 30, 3600, dir_.Join("views"));
  auto v = store.Get("tab", file_->id(), 0, -1, "compare.vis", &g());
  for (int i = 0; i < 5000; ++i) {
    Take(&store, v.get(), g(), ViewOp::kExpand, "Module.layer1.0.BasicBlock.forward.0");
    Take(&store, v.get(), g(), ViewOp::kCollapse, "Module.layer1.0.BasicBlock.forward.0");
  }
  auto before = Expanded(g(), v.get());
  std::string journal = v->journal;
  struct stat st;
  ASSERT_EQ(stat(journal.c_str(), &st), 0);
  EXPECT_LT(st.st_size, 4096 * 80);  // rewritten as the expanded nodes, not 10^4 lines
  ViewStore fresh(16, size_t{1} << 30, 3600, dir_.Join("views"));
  EXPECT_EQ(Expanded(g(), fresh.Get("tab", file_->id(), 0, -1, "compare.vis", &g()).get()), before);
}

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
