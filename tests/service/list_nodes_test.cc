// ListNodes (graph_service_nodes.cc): a side's nodes without a view, a page at
// a time or by name, as the Python API (docs/PYTHON_API.md) reads them.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "graph_service.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

using testing::TempDir;

class ListNodesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    graph_ = testing::ResnetLike();
    testing::WriteCompare(dir_.Join("compare.vis"), graph_, {});
    testing::FixtureOptions build;
    build.kind = vis::GRAPH_BUILD;
    testing::WriteCompare(dir_.Join("build.vis"), graph_, build);
    ServiceOptions options;
    options.logdir = dir_.path();
    options.cache_dir = cache_.path();
    auto impl = GraphServiceImpl::Create(options);
    ASSERT_TRUE(impl.ok()) << impl.error().ToString();
    service_ = std::move(*impl);
  }
  grpc::Status List(const ListNodesRequest& req, ListNodesReply* reply) {
    return service_->ListNodes(nullptr, &req, reply);
  }
  ListNodesRequest Page(vis::Side side, uint32_t offset, uint32_t limit, bool matched_only = false) const {
    ListNodesRequest req;
    req.set_file("compare.vis");
    req.set_side(side);
    req.set_offset(offset);
    req.set_limit(limit);
    req.set_matched_only(matched_only);
    return req;
  }

  TempDir dir_;
  TempDir cache_;
  testing::FixtureGraph graph_;
  std::unique_ptr<GraphServiceImpl> service_;
};

TEST_F(ListNodesTest, PagesWalkTheSideInNodeOrderWithEveryColumn) {
  std::vector<std::string> names;
  uint32_t offset = 0, pages = 0;
  for (;;) {
    ListNodesReply reply;
    ASSERT_TRUE(List(Page(vis::SIDE_NPU, offset, 7), &reply).ok());
    ASSERT_EQ(reply.total(), graph_.nodes.size());
    ASSERT_LE(reply.index_size(), 7);
    for (int k = 0; k < reply.index_size(); ++k) {
      const testing::FixtureNode& n = graph_.nodes[reply.index(k)];
      EXPECT_EQ(reply.index(k), static_cast<int32_t>(names.size()));
      EXPECT_EQ(reply.name(k), n.name);
      EXPECT_EQ(reply.parent(k), n.parent);
      EXPECT_EQ(reply.node_type(k), n.type);
      bool unmatched = n.name == "Module.fc.Linear.forward.0" || n.name == "Module.fc.Linear.backward.0";
      EXPECT_EQ(reply.matched(k) < 0, unmatched) << n.name;
      EXPECT_EQ(reply.matched_name(k), unmatched ? "" : n.name);  // Bench has the same names
      if (unmatched) {
        EXPECT_TRUE(std::isnan(reply.precision_index(k))) << n.name;  // NaN: none
      }
      names.push_back(reply.name(k));
    }
    ++pages;
    offset = reply.next_offset();
    if (offset == reply.total()) break;
  }
  EXPECT_EQ(names.size(), graph_.nodes.size());
  EXPECT_EQ(pages, (graph_.nodes.size() + 6) / 7);
}

TEST_F(ListNodesTest, MatchedOnlyLeavesOutTheUnmatchedAndResumesWhereItStopped) {
  ListNodesReply all;
  ASSERT_TRUE(List(Page(vis::SIDE_BENCH, 0, 0, true), &all).ok());
  EXPECT_EQ(all.index_size(), static_cast<int>(graph_.nodes.size()) - 2);
  EXPECT_EQ(all.next_offset(), all.total());
  for (const std::string& name : all.name()) EXPECT_EQ(name.find("Module.fc.Linear"), std::string::npos);
  // A page of 3 matched nodes ends after the third it found, not after 3 indices.
  ListNodesReply first;
  ASSERT_TRUE(List(Page(vis::SIDE_BENCH, 0, 3, true), &first).ok());
  ASSERT_EQ(first.index_size(), 3);
  EXPECT_EQ(first.next_offset(), static_cast<uint32_t>(first.index(2)) + 1);
}

TEST_F(ListNodesTest, NamesAnswerThoseNodesAndAMissingOneIsNotFound) {
  ListNodesRequest req = Page(vis::SIDE_NPU, 0, 0);
  req.add_names("Module.layer1.Sequential.forward.0");
  req.add_names("DefaultModel");
  ListNodesReply reply;
  ASSERT_TRUE(List(req, &reply).ok());
  ASSERT_EQ(reply.index_size(), 2);
  EXPECT_EQ(reply.index(0), graph_.Find("Module.layer1.Sequential.forward.0"));
  EXPECT_EQ(reply.index(1), 0);
  req.add_names("Module.no_such.forward.0");
  grpc::Status st = List(req, &reply);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(st.error_message(), "compare.vis: NPU has no node named 'Module.no_such.forward.0'");
}

TEST_F(ListNodesTest, ABuildHasNoBenchSideAndABadFileIsNamed) {
  ListNodesRequest req = Page(vis::SIDE_BENCH, 0, 0);
  req.set_file("build.vis");
  ListNodesReply reply;
  grpc::Status st = List(req, &reply);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(), "build.vis: a build file has no Bench side");
  req.set_side(vis::SIDE_NPU);
  ASSERT_TRUE(List(req, &reply).ok());
  EXPECT_EQ(reply.matched(0), -1);
  EXPECT_EQ(reply.matched_name(0), "");
  req.set_file("missing.vis");
  EXPECT_EQ(List(req, &reply).error_code(), grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace graph_ascend::service
