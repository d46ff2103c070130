// vis::RewriteLinks: a file written without links, rewritten with them,
// equals the file written with them in the first place, also when the links
// move detail-block boundaries (blocks end by bytes as well as by count).
#include "vis_writer/link_rewrite.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "same_graphs.h"
#include "test_files.h"
#include "vis/vis_file.h"

namespace graph_ascend::vis {
namespace {

using graph_ascend::testing::GraphContentDiff;
using graph_ascend::testing::TempDir;

constexpr uint32_t kNodes = 700;

// Node n's details: one item whose key is long enough that blocks end by
// bytes (~25 KiB a node, ~40 nodes a block) for the first 300 nodes, then
// short (blocks end by count).
NodeDetail Detail(uint32_t n) {
  NodeDetail d;
  d.set_stack_id(-1);
  Item* item = d.add_input();
  item->set_key("Distributed.all_reduce." + std::to_string(n) + ".forward.input.0" +
                std::string(n < 300 ? 25000 : 10, 'k'));
  return d;
}

DistributedLink Link(int rank, size_t peer_bytes) {
  DistributedLink l;
  l.set_communications_type("send_receive");
  l.set_rank(rank);
  l.set_peer_node(std::string(peer_bytes, 'p'));
  l.set_peer_index("0.5");
  return l;
}

// Writes a build of kNodes nodes as the builder's writer does (blocks by
// DetailBlockFull, sections in its order), with `links` in the details and
// the index flags.
void Write(const std::string& path, const SideLinks& links) {
  auto w = VisWriter::Create(path);
  ASSERT_TRUE(w.ok());
  NodeDetailBlock block;
  size_t bytes = 0;
  for (uint32_t n = 0; n < kNodes; ++n) {
    if (block.detail_size() == 0) block.set_first(n);
    NodeDetail* d = block.add_detail();
    *d = Detail(n);
    auto it = links.find(n);
    if (it != links.end()) {
      for (const DistributedLink& l : it->second.links) *d->add_distributed() = l;
      d->set_distributed_is_list(it->second.is_list);
    }
    bytes += d->ByteSizeLong();
    if (DetailBlockFull(block.detail_size(), bytes)) {
      ASSERT_TRUE((*w)->WriteDetailBlock(SIDE_NPU, block).ok());
      block.Clear();
      bytes = 0;
    }
  }
  if (block.detail_size() > 0) ASSERT_TRUE((*w)->WriteDetailBlock(SIDE_NPU, block).ok());
  NodeIndexChunk chunk;
  chunk.set_first(0);
  for (uint32_t n = 0; n < kNodes; ++n) {
    chunk.add_name(n == 0 ? "DefaultModel" : "Distributed.all_reduce." + std::to_string(n) + ".forward");
    chunk.add_node_type(n == 0 ? NODE_MODULE : NODE_API);
    chunk.add_parent(n == 0 ? -1 : 0);
    chunk.add_child_count(n == 0 ? kNodes - 1 : 0);
    chunk.add_micro_step(-1);
    chunk.add_precision_index(std::nan(""));
    chunk.add_overflow_level(0);
    chunk.add_matched(-1);
    chunk.add_flags(FLAG_HAS_DATA | (links.count(n) ? FLAG_DISTRIBUTED : 0));
  }
  for (uint32_t n = 1; n < kNodes; ++n) chunk.add_children(n);
  ASSERT_TRUE((*w)->WriteIndexChunk(SIDE_NPU, chunk).ok());
  FileMeta meta;
  meta.set_format_version(kFormatVersion);
  meta.set_kind(GRAPH_BUILD);
  meta.mutable_npu()->set_node_count(kNodes);
  ASSERT_TRUE((*w)->WriteMeta(meta).ok());
  ASSERT_TRUE((*w)->Commit().ok());
}

// The first node of each detail block.
std::vector<uint32_t> DetailBlocks(const std::string& path) {
  std::vector<uint32_t> firsts;
  auto r = VisReader::Open(path);
  if (!r.ok()) return firsts;
  for (const SectionRef* s : (*r)->Sections(SECTION_NODE_DETAILS, SIDE_NPU)) firsts.push_back(s->first());
  return firsts;
}

TEST(RewriteLinksTest, LinksThatMoveBlockBoundariesGiveTheWrittenFile) {
  TempDir dir;
  SideLinks links;
  // Big links early (the blocks after them end elsewhere), small ones later, a list.
  links[3].links = {Link(1, 60000), Link(2, 60000)};
  links[3].is_list = true;
  links[120].links = {Link(5, 200000)};
  links[299].links = {Link(7, 10)};
  links[650].links = {Link(0, 10)};
  const std::string expected = dir / "expected.vis";
  const std::string plain = dir / "plain.vis";
  const std::string rewritten = dir / "rewritten.vis";
  Write(expected, links);
  Write(plain, {});
  Write(rewritten, {});
  ASSERT_NE(DetailBlocks(expected), DetailBlocks(plain)) << "the links change the blocking";
  ASSERT_TRUE(RewriteLinks(rewritten, links, {}).ok());
  EXPECT_EQ(GraphContentDiff(expected, rewritten), "");
  // Again: the same file. And with no links: the plain file back.
  ASSERT_TRUE(RewriteLinks(rewritten, links, {}).ok());
  EXPECT_EQ(GraphContentDiff(expected, rewritten), "");
  ASSERT_TRUE(RewriteLinks(rewritten, {}, {}).ok());
  EXPECT_EQ(GraphContentDiff(plain, rewritten), "");
}

TEST(RewriteLinksTest, ANodeTheFileDoesNotHaveIsAnError) {
  TempDir dir;
  const std::string path = dir / "plain.vis";
  Write(path, {});
  SideLinks links;
  links[kNodes].links = {Link(1, 10)};
  Status st = RewriteLinks(path, links, {});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().ToString().find("graph has 700 nodes"), std::string::npos) << st.error().ToString();
  SideLinks bench;
  bench[1].links = {Link(1, 10)};
  st = RewriteLinks(path, {}, bench);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().ToString().find("no bench graph"), std::string::npos) << st.error().ToString();
}

}  // namespace
}  // namespace graph_ascend::vis
