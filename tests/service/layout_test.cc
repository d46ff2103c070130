#include "layout.h"

#include <gtest/gtest.h>

#include "open_graph.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

using testing::TempDir;

class LayoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    graph_ = testing::ResnetLike();
    testing::WriteCompare(dir_.Join("compare.vis"), graph_, {});
    auto f = OpenGraph::Open(dir_.Join("compare.vis"), "compare.vis", {});
    ASSERT_TRUE(f.ok()) << f.error().ToString();
    file_ = *f;
  }
  const SideGraph& npu() const { return *file_->side(vis::SIDE_NPU); }
  uint32_t Node(const std::string& name) const { return static_cast<uint32_t>(graph_.Find(name)); }
  const LayoutBox* Box(const std::vector<LayoutBox>& boxes, const std::string& name) const {
    for (const auto& b : boxes) {
      if (b.node == Node(name)) return &b;
    }
    return nullptr;
  }

  TempDir dir_;
  testing::FixtureGraph graph_;
  std::shared_ptr<OpenGraph> file_;
};

// The worked example of the plugin reference §6.6 (the NPU root of its fixture).
TEST_F(LayoutTest, RootLayoutMatchesTheReference) {
  ViewState view(-1);
  const auto& boxes = view.Layout(npu());
  ASSERT_EQ(boxes.size(), 21u);
  EXPECT_EQ(boxes[0].width, 230);
  EXPECT_EQ(boxes[0].height, 300);
  EXPECT_EQ(boxes[0].x, 0);
  EXPECT_EQ(boxes[0].y, 0);
  const char* leaves[4] = {"Module.conv1.Conv2d.forward.0", "Module.bn1.BatchNorm2d.forward.0",
                           "Module.relu.ReLU.forward.0", "Module.maxpool.MaxPool2d.forward.0"};
  const int xs[4] = {7, 62, 117, 172};
  for (int i = 0; i < 4; ++i) {
    const LayoutBox* b = Box(boxes, leaves[i]);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->x, xs[i]) << leaves[i];
    EXPECT_EQ(b->y, 25);
    EXPECT_EQ(b->width, 50);
    EXPECT_EQ(b->height, 15);
  }
  for (int k = 1; k <= 4; ++k) {
    const LayoutBox* f = Box(boxes, "Module.layer" + std::to_string(k) + ".Sequential.forward.0");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->width, 214);
    EXPECT_EQ(f->x, 8);
    EXPECT_EQ(f->y, 25 + 25 * k);
    const LayoutBox* b = Box(boxes, "Module.layer" + std::to_string(k) + ".Sequential.backward.0");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->width, 220);
    EXPECT_EQ(b->x, 5);
    EXPECT_EQ(b->y, 175 + 25 * (4 - k));
  }
  EXPECT_EQ(Box(boxes, "Module.avgpool.AdaptiveAvgPool2d.forward.0")->y, 150);
  EXPECT_EQ(Box(boxes, "Module.conv1.Conv2d.backward.0")->y, 275);
}

TEST_F(LayoutTest, ExpandGrowsTheNodeAndMovesWhatFollows) {
  ViewState view(-1);
  ASSERT_TRUE(view.Expand(npu(), Node("Module.layer1.Sequential.forward.0")).ok());
  const auto& boxes = view.Layout(npu());
  ASSERT_EQ(boxes.size(), 23u);
  const LayoutBox* layer1 = Box(boxes, "Module.layer1.Sequential.forward.0");
  EXPECT_EQ(layer1->width, 214);
  EXPECT_EQ(layer1->height, 75);
  const LayoutBox* b0 = Box(boxes, "Module.layer1.0.BasicBlock.forward.0");
  const LayoutBox* b1 = Box(boxes, "Module.layer1.1.BasicBlock.forward.0");
  EXPECT_EQ(b0->width, 184);
  EXPECT_EQ(b0->x, 23);
  EXPECT_EQ(b0->y, 75);
  EXPECT_EQ(b1->y, 100);
  EXPECT_EQ(Box(boxes, "Module.layer2.Sequential.forward.0")->y, 75 + 60);
  EXPECT_EQ(Box(boxes, "Module.conv1.Conv2d.backward.0")->y, 275 + 60);
  EXPECT_EQ(boxes[0].height, 360);
  // Children come right after their parent (pre-order), with their subtree end.
  EXPECT_EQ(boxes[layer1->end - 1].node, Node("Module.layer1.1.BasicBlock.forward.0"));

  ASSERT_TRUE(view.Collapse(npu(), Node("Module.layer1.Sequential.forward.0")).ok());
  EXPECT_EQ(view.Layout(npu()).size(), 21u);
  EXPECT_EQ(view.Layout(npu())[0].height, 300);
}

TEST_F(LayoutTest, RevealExpandsAncestorsAndCollapseForgetsDescendants) {
  ViewState view(-1);
  uint32_t leaf = Node("Module.layer3.1.bn1.BatchNorm2d.forward.0");
  ASSERT_TRUE(view.Reveal(npu(), leaf).ok());
  EXPECT_TRUE(view.IsExpanded(Node("Module.layer3.Sequential.forward.0")));
  EXPECT_TRUE(view.IsExpanded(Node("Module.layer3.1.BasicBlock.forward.0")));
  EXPECT_FALSE(view.IsExpanded(leaf));
  const auto& boxes = view.Layout(npu());
  const LayoutBox* b = Box(boxes, "Module.layer3.1.bn1.BatchNorm2d.forward.0");
  ASSERT_NE(b, nullptr);
  // Nested boxes: every box lies inside its parent's box.
  for (const auto& box : boxes) {
    if (box.parent_box < 0) continue;
    const LayoutBox& p = boxes[static_cast<size_t>(box.parent_box)];
    EXPECT_GE(box.x, p.x);
    EXPECT_GE(box.y, p.y + 15);
    EXPECT_LE(box.x + box.width, p.x + p.width);
    EXPECT_LE(box.y + box.height, p.y + p.height);
  }
  ASSERT_TRUE(view.Collapse(npu(), Node("Module.layer3.Sequential.forward.0")).ok());
  EXPECT_FALSE(view.IsExpanded(Node("Module.layer3.1.BasicBlock.forward.0")));
  ASSERT_TRUE(view.Expand(npu(), Node("Module.layer3.Sequential.forward.0")).ok());
  EXPECT_EQ(view.Layout(npu()).size(), 23u);  // the blocks come back collapsed
  // The root never collapses; a leaf does not expand.
  ASSERT_TRUE(view.Collapse(npu(), 0).ok());
  ASSERT_TRUE(view.Expand(npu(), leaf).ok());
  EXPECT_FALSE(view.IsExpanded(leaf));
  EXPECT_TRUE(view.IsExpanded(0));
}

TEST_F(LayoutTest, ViewportCutKeepsIntersectingBoxesAndTheirAncestors) {
  ViewState view(-1);
  ASSERT_TRUE(view.Expand(npu(), Node("Module.layer1.Sequential.forward.0")).ok());
  const auto& boxes = view.Layout(npu());
  // A band around y = 75..90 holds layer1's first block, layer1 and the root.
  auto cut = view.Cut(npu(), Viewport{0, 76, 230, 10});
  std::vector<uint32_t> nodes;
  for (const LayoutBox& b : cut) nodes.push_back(b.node);
  ASSERT_EQ(cut.size(), 3u);
  EXPECT_EQ(cut[2].parent_box, 1);
  EXPECT_EQ(cut[2].x, 23);
  EXPECT_EQ(cut[2].y, 75);
  EXPECT_EQ(nodes, (std::vector<uint32_t>{0, Node("Module.layer1.Sequential.forward.0"),
                                          Node("Module.layer1.0.BasicBlock.forward.0")}));
  EXPECT_TRUE(view.Cut(npu(), Viewport{1000, 1000, 10, 10}).empty());
  // Every box of a full layout that meets a band is in the band's cut, and nothing else.
  for (int32_t y = 0; y < 400; y += 37) {
    Viewport band{0, y, 230, 20};
    std::vector<uint32_t> want, got;
    for (const LayoutBox& b : boxes) {
      if (band.Intersects(b)) want.push_back(b.node);
    }
    for (const LayoutBox& b : view.Cut(npu(), band)) got.push_back(b.node);
    EXPECT_EQ(got, want) << "band at y=" << y;
  }
  LayoutBox at;
  ASSERT_TRUE(view.Locate(npu(), Node("Module.layer1.1.BasicBlock.forward.0"), &at));
  EXPECT_EQ(at.x, 23);
  EXPECT_EQ(at.y, 100);
  EXPECT_EQ(at.width, 184);
  EXPECT_FALSE(view.Locate(npu(), Node("Module.layer2.0.BasicBlock.forward.0"), &at));
}

TEST_F(LayoutTest, LabelsShortenDeepNames) {
  EXPECT_EQ(Label(npu(), 0), "DefaultModel");
  EXPECT_EQ(Label(npu(), Node("Module.layer1.Sequential.forward.0")), "Module.layer1.Sequential.forward.0");
  EXPECT_EQ(Label(npu(), Node("Module.layer1.0.BasicBlock.forward.0")), "layer1.0.BasicBlock.forward.0");
  EXPECT_EQ(Label(npu(), Node("Module.layer1.0.conv1.Conv2d.forward.0")), "conv1.Conv2d.forward.0");
}

TEST(LayoutMicroStepTest, MicroStepKeepsOnlyItsFirstLevelNodes) {
  TempDir dir;
  testing::FixtureOptions options;
  options.micro_steps = 2;
  auto graph = testing::ResnetLike();
  testing::WriteCompare(dir.Join("c.vis"), graph, options);
  auto f = OpenGraph::Open(dir.Join("c.vis"), "c.vis", {});
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  const SideGraph& g = *(*f)->side(vis::SIDE_NPU);
  ViewState all(-1), first(0), second(1);
  EXPECT_EQ(all.Layout(g).size(), 21u);
  EXPECT_EQ(first.Layout(g).size(), 11u);
  EXPECT_EQ(second.Layout(g).size(), 11u);
  uint32_t late = static_cast<uint32_t>(graph.Find("Module.layer1.1.bn1.BatchNorm2d.backward.0"));
  EXPECT_FALSE(first.Reveal(g, late).ok());
  EXPECT_TRUE(second.Reveal(g, late).ok());
}

}  // namespace
}  // namespace graph_ascend::service
