#include "vis/vis_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "compare/pair_compare.h"
#include "graph/graph_builder.h"
#include "test_files.h"
#include "vis_writer/detail_wire.h"
#include "vis_writer/graph_writer.h"

namespace graph_ascend::vis {
namespace {

namespace fs = std::filesystem;

class VisFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vis_file_test_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes a build file of `n` nodes: a root with n-1 children, details in
  // blocks of `block` nodes.
  std::string WriteSample(uint32_t n, uint32_t block) {
    std::string path = (dir_ / "sample.vis").string();
    auto w = VisWriter::Create(path);
    EXPECT_TRUE(w.ok());
    FileMeta meta;
    meta.set_format_version(kFormatVersion);
    meta.set_kind(GRAPH_BUILD);
    meta.set_micro_steps(1);
    meta.mutable_npu()->set_node_count(n);
    EXPECT_TRUE((*w)->WriteMeta(meta).ok());
    NodeIndexChunk chunk;
    for (uint32_t i = 0; i < n; ++i) {
      chunk.add_name(i == 0 ? "DefaultModel" : "Torch.add." + std::to_string(i) + ".forward");
      chunk.add_node_type(i == 0 ? NODE_MODULE : NODE_API);
      chunk.add_parent(i == 0 ? -1 : 0);
      chunk.add_child_count(i == 0 ? n - 1 : 0);
      chunk.add_micro_step(-1);
      chunk.add_precision_index(std::nan(""));
      chunk.add_overflow_level(OVERFLOW_NONE);
      chunk.add_matched(-1);
      chunk.add_flags(0);
    }
    for (uint32_t i = 1; i < n; ++i) chunk.add_children(i);
    EXPECT_TRUE((*w)->WriteIndexChunk(SIDE_NPU, chunk).ok());
    for (uint32_t first = 0; first < n; first += block) {
      NodeDetailBlock b;
      b.set_first(first);
      for (uint32_t i = first; i < std::min(n, first + block); ++i) {
        Item* item = b.add_detail()->add_output();
        // Even nodes' keys stored whole (version 1), odd ones' as suffixes (version 2).
        if (i % 2 == 0) {
          item->set_key("node" + std::to_string(i) + ".output.0");
        } else {
          item->set_key_suffix(".output.0");
        }
      }
      EXPECT_TRUE((*w)->WriteDetailBlock(SIDE_NPU, b).ok());
    }
    EXPECT_TRUE((*w)->Commit().ok());
    return path;
  }

  fs::path dir_;
};

TEST_F(VisFileTest, RoundTripReadsIndexAndOneDetailByNode) {
  std::string path = WriteSample(1000, 64);
  auto r = VisReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ((*r)->meta().npu().node_count(), 1000u);
  EXPECT_TRUE((*r)->has_side(SIDE_NPU));
  EXPECT_FALSE((*r)->has_side(SIDE_BENCH));
  uint32_t seen = 0;
  ASSERT_TRUE((*r)->ReadIndex(SIDE_NPU,
                              [&](NodeIndexChunk& c) {
                                seen += c.name_size();
                                EXPECT_EQ(c.name(1), "Torch.add.1.forward");
                                return Status::Ok();
                              })
                  .ok());
  EXPECT_EQ(seen, 1000u);
  auto d = (*r)->ReadDetail(SIDE_NPU, 776, "Torch.add.776.forward");
  ASSERT_TRUE(d.ok()) << d.error().ToString();
  EXPECT_EQ(d->output(0).key(), "node776.output.0");
  d = (*r)->ReadDetail(SIDE_NPU, 777, "Torch.add.777.forward");
  ASSERT_TRUE(d.ok()) << d.error().ToString();
  EXPECT_EQ(d->output(0).key(), "Torch.add.777.forward.output.0");
  EXPECT_FALSE(d->output(0).has_key_suffix());
  auto block = (*r)->ReadDetailBlock(SIDE_NPU, 777, [](uint32_t n) { return n == 777 ? "M.777" : "other"; });
  ASSERT_TRUE(block.ok()) << block.error().ToString();
  EXPECT_EQ(block->detail(static_cast<int>(777 - block->first())).output(0).key(), "M.777.output.0");
  EXPECT_EQ(block->detail(static_cast<int>(776 - block->first())).output(0).key(), "node776.output.0");
  EXPECT_FALSE((*r)->ReadDetail(SIDE_NPU, 1000, "").ok());
}

TEST_F(VisFileTest, NoTemporaryFileLeftAfterCommitOrAbandon) {
  WriteSample(10, 4);
  {
    auto w = VisWriter::Create((dir_ / "abandoned.vis").string());
    ASSERT_TRUE(w.ok());
  }
  std::vector<std::string> names;
  for (auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0], "sample.vis");
}

TEST_F(VisFileTest, TruncatedFileIsRejectedWithByteOffset) {
  std::string path = WriteSample(100, 10);
  auto size = fs::file_size(path);
  fs::resize_file(path, size - 5);
  auto r = VisReader::Open(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().ToString().find("truncated"), std::string::npos) << r.error().ToString();
  EXPECT_NE(r.error().where.find("byte"), std::string::npos);
}

TEST_F(VisFileTest, JsonVisIsRecognisedAndNamed) {
  std::string path = (dir_ / "old.vis").string();
  std::ofstream(path) << "{\n    \"NPU\": {}, \"padding\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"\n}";
  auto r = VisReader::Open(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("JSON .vis of msprobe"), std::string::npos);
  EXPECT_NE(r.error().message.find("graph-ascend import"), std::string::npos);
}

// info and export read only graph-ascend's .vis: an msprobe .vis.db is named as one, with the way to convert it.
TEST_F(VisFileTest, MsprobeVisDbIsRecognisedAndNamed) {
  std::string path = (dir_ / "run.vis.db").string();
  std::string head("SQLite format 3\0", 16);
  std::ofstream(path, std::ios::binary) << head << std::string(4096, '\0');
  auto r = VisReader::Open(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("msprobe .vis.db"), std::string::npos) << r.error().ToString();
  EXPECT_NE(r.error().message.find("graph-ascend import"), std::string::npos);
}

TEST_F(VisFileTest, CorruptedSectionIsReportedNotCrashed) {
  std::string path = WriteSample(200, 50);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    const char junk[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    f.write(junk, sizeof(junk));
  }
  auto r = VisReader::Open(path);
  if (r.ok()) {
    Status st = (*r)->ReadIndex(SIDE_NPU, [](NodeIndexChunk&) { return Status::Ok(); });
    auto d = (*r)->ReadDetail(SIDE_NPU, 0, "DefaultModel");
    EXPECT_FALSE(st.ok() && d.ok());
  } else {
    EXPECT_NE(r.error().where.find("byte"), std::string::npos);
  }
}

// The writer refills one detail node after node: what it holds afterwards
// must not depend on the node it held before (items, fields and values of
// another size and kind, metrics and an md5 result added by a compare).
TEST(FillDetailTest, RefillingGivesWhatAFreshDetailGets) {
  StringPool pool;
  auto side =
      graph::BuildSide(testing::SourceDir() + "/samples/gpt_statistics/npu/step0/rank0", &pool, graph::BuildOptions{});
  ASSERT_TRUE(side.ok()) << side.error().message;
  uint32_t n = (*side)->graph->size();
  ASSERT_GT(n, 100u);
  NodeDetail reused;
  size_t items = 0;
  // Forward, then backward, then from both ends: neighbours of every size.
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < n; ++i) order.push_back(i);
  for (uint32_t i = n; i-- > 0;) order.push_back(i);
  for (uint32_t i = 0; i < n / 2; ++i) order.insert(order.end(), {i, n - 1 - i});
  for (uint32_t node : order) {
    FillDetail(**side, node, &reused);
    NodeDetail fresh;
    FillDetail(**side, node, &fresh);
    ASSERT_EQ(reused.SerializeAsString(), fresh.SerializeAsString()) << "node " << node;
    items += fresh.input_size() + fresh.output_size();
    // What a compare adds to the NPU detail.
    reused.set_md5_result("Different");
    for (Item& it : *reused.mutable_output()) it.add_metric()->set_name("Max diff");
  }
  EXPECT_GT(items, 1000u) << "the sample's nodes have items";
}

}  // namespace
}  // namespace graph_ascend::vis

namespace graph_ascend::vis {
namespace {

// AppendDetailWire writes what protobuf writes: field 2 of a NodeDetailBlock.
std::string ProtobufField2(const NodeDetail& d) {
  NodeDetailBlock block;
  *block.add_detail() = d;
  return block.SerializeAsString();
}

std::string Wire(const NodeDetail& d, bool* used = nullptr) {
  std::string out;
  size_t size = 0;
  bool ok = AppendDetailWire(d, 2, &out, &size);
  if (used != nullptr) *used = ok;
  if (ok) {
    EXPECT_EQ(size, d.ByteSizeLong());
  }
  return out;
}

TEST(DetailWireTest, SameBytesAsProtobuf) {
  std::vector<NodeDetail> cases(4);
  cases[1].set_stack_id(-1);
  NodeDetail& d = cases[2];
  d.set_stack_id(300);
  for (int side = 0; side < 2; ++side) {
    for (int k = 0; k < 3; ++k) {
      Item* it = side == 0 ? d.add_input() : d.add_output();
      it->set_key(k == 0 ? "" : std::string(k * 90, 'k'));
      // Stored keys: an empty suffix is still written (it is not the key).
      if (k == 0) it->set_key_suffix(side == 0 ? "" : ".output.0");
      it->set_state(static_cast<ItemState>(k + side));
      it->set_is_null(k == 1);
      Field* f = it->add_field();
      f->set_name("Max");
      f->mutable_value()->set_number(k == 0 ? -0.0 : std::nan(""));
      it->add_field()->mutable_value()->set_text("");
      it->add_field()->mutable_value()->set_integer(-5 + k);
      it->add_field()->mutable_value()->set_null(true);
      it->add_field()->mutable_value()->set_boolean(false);
      it->add_field()->mutable_value()->set_json(std::string(200, '['));
      it->add_field()->set_name("no value");
      Metric* m = it->add_metric();
      m->set_name("Max diff");
      m->set_text(k == 2 ? "" : "1.5");
      m->set_value(k == 0 ? -0.0 : (k == 1 ? 0.0 : 1e300));
      m->set_has_value(k != 1);
    }
  }
  DistributedLink* l = d.add_distributed();
  l->set_communications_type("send");
  l->set_rank(-2);
  l->set_peer_node("Distributed.recv.0.forward");
  l->set_peer_index("0.5");
  d.add_distributed();
  d.set_distributed_is_list(true);
  d.add_parallel_merge_info("rank 0");
  d.add_parallel_merge_info("");
  d.set_md5_result("pass");
  cases[3].add_output()->set_key(std::string(20000, 'x'));
  for (const NodeDetail& c : cases) {
    bool used = false;
    std::string wire = Wire(c, &used);
    EXPECT_TRUE(used);
    EXPECT_EQ(wire, ProtobufField2(c));
  }
}

// A detail written straight from the dump is the filled detail's wire form,
// on every node of samples that have parameter gradients, null arguments,
// full keys, md5 and statistics.
TEST(DetailWireTest, SideDetailIsTheFilledDetail) {
  for (const char* dir : {"gpt_statistics/npu/step0/rank0", "bert_pgrad/npu/step0/rank0", "cnn_md5/npu/step0/rank0",
                          "dist_gloo/npu/step0/rank1"}) {
    StringPool pool;
    std::string path = testing::SourceDir() + "/samples/" + dir;
    auto side = graph::BuildSide(path, &pool, graph::BuildOptions{});
    ASSERT_TRUE(side.ok()) << side.error().message;
    size_t direct = 0;
    SideDetailWriter writer(pool);
    for (uint32_t node = 0; node < (*side)->graph->size(); ++node) {
      std::string wire;
      size_t size = 0;
      if (!writer.Append(**side, node, 2, &wire, &size)) continue;
      ++direct;
      NodeDetail filled;
      FillDetail(**side, node, &filled);
      NodeDetailBlock block;
      *block.add_detail() = filled;
      ASSERT_EQ(wire, block.SerializeAsString()) << dir << " node " << node;
      EXPECT_EQ(size, filled.ByteSizeLong());
    }
    EXPECT_GT(direct, 10u) << dir;
  }
}

// The metrics of a pair compared from the dump's arrays (the builder).
compare::PairVerdict CompareFromDump(CompareMode mode, const graph::Side& npu, uint32_t node, const graph::Side& bench,
                                     uint32_t peer, compare::PairMetrics* metrics) {
  auto items_of = [](const graph::Side& side, uint32_t n, compare::NodeItems* out) {
    const graph::Graph& g = *side.graph;
    const dump::DumpEntry* e = g.entry[n] == graph::kNoNode ? nullptr : &side.dump.entries[g.entry[n]];
    compare::ItemsOf(side.dump, e, g.Name(n), *side.pool, out);
  };
  compare::NodeItems a, b;
  items_of(npu, node, &a);
  items_of(bench, peer, &b);
  compare::ItemPairing pairing;
  compare::PairItems(a, b, &pairing);
  return compare::ComparePair(mode, npu.graph->Name(node), pairing, nullptr, metrics);
}

// A compared detail written from the dump plus what the compare added (the
// items' metrics, the md5 result) is the compared detail's wire form; and a
// pair compared from the dump's arrays gets the metrics and index that the
// same pair gets compared from its stored details (the service).
TEST(DetailWireTest, SideDetailWithComparedMetricsIsTheComparedDetail) {
  for (const char* sample : {"gpt_statistics", "cnn_md5"}) {
    std::string root = testing::SourceDir() + "/samples/" + sample;
    StringPool pool;
    auto pair =
        graph::BuildSidePair(root + "/npu/step0/rank0", root + "/bench/step0/rank0", &pool, graph::BuildOptions{});
    ASSERT_TRUE(pair.ok()) << pair.error().message;
    CompareMode mode = pair->npu->dump.summary_md5 ? MODE_MD5 : MODE_STATISTICS;
    const graph::Graph& g = *pair->npu->graph;
    size_t with_metrics = 0;
    SideDetailWriter writer(pool);
    for (uint32_t node = 1; node < g.size(); ++node) {
      int32_t peer = pair->bench->graph->Find(g.name[node]);
      if (peer == graph::kNoNode) continue;
      compare::PairMetrics metrics;
      compare::PairVerdict from_dump =
          CompareFromDump(mode, *pair->npu, node, *pair->bench, static_cast<uint32_t>(peer), &metrics);
      NodeDetail d, b;
      FillDetail(*pair->npu, node, &d);
      FillDetail(*pair->bench, static_cast<uint32_t>(peer), &b);
      NodeDetail stored = d;
      compare::StoreMetrics(metrics, &d);
      compare::PairVerdict from_details = compare::ComparePair(mode, std::string(g.Name(node)), &stored, b, nullptr);
      ASSERT_EQ(stored.SerializeAsString(), d.SerializeAsString()) << sample << " node " << node;
      EXPECT_EQ(from_dump.has_precision, from_details.has_precision);
      EXPECT_EQ(std::isnan(from_dump.precision_index), std::isnan(from_details.precision_index));
      if (!std::isnan(from_dump.precision_index)) {
        EXPECT_EQ(from_dump.precision_index, from_details.precision_index);
      }
      EXPECT_EQ(from_dump.is_float, from_details.is_float);
      std::string wire;
      size_t size = 0;
      if (!writer.Append(*pair->npu, node, 2, &wire, &size, &metrics)) continue;
      for (const auto* items : {&d.input(), &d.output()}) {
        for (const Item& it : *items) with_metrics += it.metric_size() > 0;
      }
      ASSERT_EQ(wire, ProtobufField2(d)) << sample << " node " << node;
      EXPECT_EQ(size, d.ByteSizeLong());
    }
    EXPECT_GT(with_metrics, 10u) << sample;
    // A writer of another pool leaves the node to the general path.
    StringPool other;
    SideDetailWriter stranger(other);
    std::string wire;
    size_t size = 0;
    EXPECT_FALSE(stranger.Append(*pair->npu, 1, 2, &wire, &size));
    EXPECT_TRUE(wire.empty());
  }
}

// The index written straight from the graph is protobuf's serialization of
// the chunk message, for whole graphs and for ranges that start past node 0,
// with compare results (precision, grade, matches) in it.
TEST(DetailWireTest, IndexChunkIsProtobufsChunk) {
  for (const char* sample : {"gpt_statistics", "cnn_md5", "dist_gloo"}) {
    std::string root = testing::SourceDir() + "/samples/" + sample;
    std::string rank = std::string(sample) == "dist_gloo" ? "/step0/rank1" : "/step0/rank0";
    StringPool pool;
    auto pair = graph::BuildSidePair(root + "/npu" + rank, root + "/bench" + rank, &pool, graph::BuildOptions{});
    ASSERT_TRUE(pair.ok()) << pair.error().message;
    graph::Graph& g = *pair->npu->graph;
    for (uint32_t n = 0; n < g.size(); ++n) {
      g.matched[n] = pair->bench->graph->Find(g.name[n]);
      if (n % 3 == 0) g.precision[n] = n * 0.25;
      if (n % 5 == 0) g.grade[n] = 0.5;
      g.precision_float[n] = n % 2;
    }
    for (const graph::Side* side : {pair->npu.get(), pair->bench.get()}) {
      uint32_t size = side->graph->size();
      for (auto [first, end] : {std::pair<uint32_t, uint32_t>{0, size}, {7, size}, {size - 1, size}}) {
        std::string wire;
        ASSERT_TRUE(AppendIndexChunkWire(*side, first, end, &wire));
        EXPECT_EQ(wire, IndexChunkOf(*side, first, end).SerializeAsString()) << sample << " from " << first;
      }
    }
  }
}

// samples/gpt_statistics's two sides, each NPU node matched to the Bench
// node of its name.
Result<graph::SidePair> MatchedStatisticsPair(StringPool* pool) {
  std::string root = testing::SourceDir() + "/samples/gpt_statistics";
  auto pair = graph::BuildSidePair(root + "/npu/step0/rank0", root + "/bench/step0/rank0", pool, graph::BuildOptions{});
  if (!pair.ok()) return pair;
  graph::Graph& g = *pair->npu->graph;
  for (uint32_t n = 0; n < g.size(); ++n) g.matched[n] = pair->bench->graph->Find(g.name[n]);
  return pair;
}

// The statistics compare of NPU node n and the Bench node it is matched to.
void CompareMatched(const graph::SidePair& pair, uint32_t n, compare::PairMetrics* metrics) {
  uint32_t peer = static_cast<uint32_t>(pair.npu->graph->matched[n]);
  CompareFromDump(MODE_STATISTICS, *pair.npu, n, *pair.bench, peer, metrics);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A compare written with any number of threads, or serially, is the same
// file; a serial compare sees the matched nodes in order.
TEST(WriteVisTest, TheFileDoesNotDependOnTheThreads) {
  StringPool pool;
  auto pair = MatchedStatisticsPair(&pool);
  ASSERT_TRUE(pair.ok()) << pair.error().message;
  fs::path dir = fs::temp_directory_path() / ("write_vis_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string first;
  for (int threads : {1, 2, 5, 0}) {
    WriteRequest req;
    req.npu = pair->npu.get();
    req.bench = pair->bench.get();
    req.threads = threads == 0 ? 2 : threads;
    req.serial_compare = threads == 0;
    std::vector<uint32_t> order;
    req.compare_pair = [&](uint32_t n, compare::PairMetrics* metrics) {
      if (req.serial_compare) order.push_back(n);
      CompareMatched(*pair, n, metrics);
    };
    std::string path = (dir / ("t" + std::to_string(threads) + ".vis")).string();
    ASSERT_TRUE(WriteVis(path, req).ok());
    std::string bytes = ReadAll(path);
    if (first.empty()) {
      first = bytes;
      EXPECT_GT(first.size(), 10000u);
    } else {
      EXPECT_EQ(bytes, first) << threads << " threads";
    }
    if (req.serial_compare) {
      EXPECT_GT(order.size(), 100u);
      EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
    }
  }
  fs::remove_all(dir);
}

// Each detail block holds `first` and its nodes' details as protobuf writes
// them, though the writer cuts blocks out of chunks that hold a block's head
// before the node that starts it and packs most blocks in place.
TEST(WriteVisTest, DetailBlocksAreProtobufsBytes) {
  StringPool pool;
  auto pair = MatchedStatisticsPair(&pool);
  ASSERT_TRUE(pair.ok()) << pair.error().message;
  const graph::Graph& g = *pair->npu->graph;
  auto compare = [&](uint32_t n, compare::PairMetrics* metrics) { CompareMatched(*pair, n, metrics); };
  fs::path dir = fs::temp_directory_path() / ("detail_blocks_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "c.vis").string();
  WriteRequest req;
  req.npu = pair->npu.get();
  req.bench = pair->bench.get();
  req.threads = 3;
  req.compare_pair = compare;
  ASSERT_TRUE(WriteVis(path, req).ok());
  auto reader = VisReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  for (auto [side_id, side] :
       {std::pair<Side, graph::Side*>{SIDE_NPU, pair->npu.get()}, {SIDE_BENCH, pair->bench.get()}}) {
    uint32_t nodes = 0;
    std::vector<const SectionRef*> blocks = (*reader)->Sections(SECTION_NODE_DETAILS, side_id);
    EXPECT_GT(blocks.size(), 2u);
    for (const SectionRef* ref : blocks) {
      EXPECT_EQ(ref->first(), nodes);
      std::string raw;
      ASSERT_TRUE((*reader)->ReadRaw(*ref, &raw).ok());
      EXPECT_EQ(raw.size(), ref->raw_size());
      NodeDetailBlock expected;
      expected.set_first(ref->first());
      compare::PairMetrics metrics;
      for (uint32_t n = ref->first(); n < ref->first() + ref->count(); ++n) {
        NodeDetail* d = expected.add_detail();
        FillDetail(*side, n, d);
        if (side_id == SIDE_NPU && g.matched[n] != graph::kNoNode) {
          compare(n, &metrics);
          compare::StoreMetrics(metrics, d);
        }
      }
      EXPECT_EQ(raw, expected.SerializeAsString()) << "block of " << ref->first();
      nodes += ref->count();
    }
    EXPECT_EQ(nodes, side->graph->size());
  }
  fs::remove_all(dir);
}

// The metrics a write keeps (WriteRequest::kept_metrics, compared on several
// threads) give each node's details as the file holds them (KeptDetail), as
// graph --output_format db writes its rows from them.
TEST(WriteVisTest, KeptDetailsAreTheFilesDetails) {
  StringPool pool;
  auto pair = MatchedStatisticsPair(&pool);
  ASSERT_TRUE(pair.ok()) << pair.error().message;
  fs::path dir = fs::temp_directory_path() / ("kept_details_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "c.vis").string();
  compare::KeptMetrics kept;
  WriteRequest req;
  req.npu = pair->npu.get();
  req.bench = pair->bench.get();
  req.threads = 3;
  req.compare_pair = [&](uint32_t n, compare::PairMetrics* metrics) { CompareMatched(*pair, n, metrics); };
  req.kept_metrics = &kept;
  ASSERT_TRUE(WriteVis(path, req).ok());
  const graph::Graph& g = *pair->npu->graph;
  size_t compared = 0;
  for (uint32_t n = 0; n < g.size(); ++n) {
    EXPECT_EQ(kept.kept(n), g.matched[n] != graph::kNoNode) << g.Name(n);
    compared += kept.kept(n);
  }
  EXPECT_GT(compared, 100u);
  auto reader = VisReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  NodeDetail d;
  for (auto [side_id, side] :
       {std::pair<Side, graph::Side*>{SIDE_NPU, pair->npu.get()}, {SIDE_BENCH, pair->bench.get()}}) {
    const graph::Graph& sg = *side->graph;
    uint32_t n = 0;
    for (const SectionRef* ref : (*reader)->Sections(SECTION_NODE_DETAILS, side_id)) {
      auto block = (*reader)->ReadDetailBlock(side_id, ref->first(), [&sg](uint32_t k) { return sg.Name(k); });
      ASSERT_TRUE(block.ok()) << block.error().message;
      for (const NodeDetail& stored : block->detail()) {
        KeptDetail(*side, side_id == SIDE_NPU ? &kept : nullptr, n, &d);
        ASSERT_EQ(d.SerializeAsString(), stored.SerializeAsString()) << sg.Name(n);
        ++n;
      }
    }
    EXPECT_EQ(n, sg.size());
  }
  fs::remove_all(dir);
}

TEST(DetailWireTest, LeavesNonAsciiAndSuggestionsToProtobuf) {
  NodeDetail d;
  d.add_input()->set_key("caf\xc3\xa9");
  bool used = true;
  EXPECT_TRUE(Wire(d, &used).empty());
  EXPECT_FALSE(used);
  NodeDetail s;
  (*s.mutable_suggestions())["a"] = "b";
  EXPECT_TRUE(Wire(s, &used).empty());
  EXPECT_FALSE(used);
}

}  // namespace
}  // namespace graph_ascend::vis
