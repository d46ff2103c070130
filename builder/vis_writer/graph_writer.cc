#include "vis_writer/graph_writer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include "base/parallel.h"
#include "vis/protobuf_log.h"
#include "vis/vis_file.h"
#include "vis_writer/detail_wire.h"
#include "vis_writer/wire_bytes.h"

namespace graph_ascend::vis {
namespace {

void SetValue(const StringPool& pool, const dump::Value& in, Value* out) {
  switch (in.kind) {
    case dump::ValueKind::kNull: out->set_null(true); break;
    case dump::ValueKind::kBool: out->set_boolean(in.boolean); break;
    case dump::ValueKind::kInteger: out->set_integer(in.integer); break;
    case dump::ValueKind::kNumber: out->set_number(in.number); break;
    // mutable_*()->assign reuses the string a refilled value holds; set_*(data, size)
    // would build a temporary std::string first.
    case dump::ValueKind::kString: {
      std::string_view t = pool.Get(in.string);
      out->mutable_text()->assign(t.data(), t.size());
      break;
    }
    case dump::ValueKind::kJson: {
      std::string_view t = pool.Get(in.string);
      out->mutable_json()->assign(t.data(), t.size());
      break;
    }
  }
}

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// The bytes that open a detail block starting at `first`: NodeDetailBlock's
// `first` (field 1, omitted when 0).
size_t BlockHeadSize(uint32_t first) { return first == 0 ? 0 : 1 + wire::VarintSize(first); }
void AppendBlockHead(uint32_t first, std::string* out) {
  if (first == 0) return;
  out->push_back(0x08);
  AppendVarint(first, out);
}

// The nodes of one chunk of a window, filled, compared and serialized by one thread:
// node k of the range takes [begin[k], end[k]) of `bytes`, its NodeDetail
// `size[k]` bytes after the field tag and length. A node whose index is a
// multiple of kDetailBlockNodes has the head of a block starting at it
// (BlockHeadSize) right before it, so that a block of one-thread cutting is
// mostly one piece of `bytes`, compressed where it is.
struct SerializedRange {
  std::string bytes;
  std::vector<size_t> begin;
  std::vector<size_t> end;
  std::vector<size_t> size;
  std::string problem;  // protobuf's complaint (invalid UTF-8), stops the write
};

// Bytes [begin, end) of a chunk's serialized details.
struct BlockPiece {
  const std::string* bytes;
  size_t begin;
  size_t end;
};

// One section on its way: serialized, then compressed on some thread. A
// detail block may still be `raw` followed by `pieces` of the chunks it was
// cut from, joined on the thread that packs it (unless it is one piece).
struct PackedBlock {
  uint32_t first = 0;
  uint32_t count = 0;
  std::string raw;
  std::vector<BlockPiece> pieces;
  size_t raw_size = 0;  // set by packing
  std::string packed;
  std::string error;
  bool unwritable = false;  // `error` is protobuf's complaint about the section's content
};

// Appends b's pieces to b->raw.
void JoinPieces(PackedBlock* b) {
  if (b->pieces.empty()) return;
  size_t size = b->raw.size();
  for (const BlockPiece& p : b->pieces) size += p.end - p.begin;
  b->raw.reserve(size);
  for (const BlockPiece& p : b->pieces) b->raw.append(*p.bytes, p.begin, p.end - p.begin);
  b->pieces.clear();
}

// One SectionPacker per thread.
class Packers {
 public:
  Packers(const VisWriter& w, int threads) {
    for (int t = 0; t < threads; ++t) packers_.push_back(std::make_unique<SectionPacker>(w.zstd_level()));
  }
  int threads() const { return static_cast<int>(packers_.size()); }
  // Compresses `b` on thread `t` (unless serializing it failed).
  void Pack(int t, PackedBlock* b) {
    if (!b->error.empty()) return;
    std::string_view raw;
    if (b->raw.empty() && b->pieces.size() == 1) {
      // One piece of a chunk's bytes, head included: no copy.
      const BlockPiece& p = b->pieces[0];
      raw = std::string_view(*p.bytes).substr(p.begin, p.end - p.begin);
    } else {
      JoinPieces(b);
      raw = b->raw;
    }
    b->raw_size = raw.size();
    if (raw.size() > kMaxSectionBytes) {
      b->error = "section of " + std::to_string(raw.size()) + " bytes is over the limit";
    } else if (!packers_[t]->Pack(raw, &b->packed, &b->error) && b->error.empty()) {
      b->error = "zstd failed";
    }
  }

 private:
  std::vector<std::unique_ptr<SectionPacker>> packers_;
};

// Writes `blocks` in order; the first error stops.
Status WriteBlocks(VisWriter* w, SectionKind kind, const char* what, Side side, std::vector<PackedBlock>* blocks) {
  for (PackedBlock& b : *blocks) {
    if (!b.error.empty()) return MakeError(w->path(), std::string(what) + (b.unwritable ? " section" : ""), b.error);
    GA_RETURN_IF_ERROR(w->WritePacked(kind, side, b.first, b.count, b.raw_size, b.packed));
  }
  blocks->clear();
  return Status::Ok();
}

// Serializes `msg` into b->raw; protobuf's complaint (invalid UTF-8) becomes b->error.
void Serialize(const google::protobuf::MessageLite& msg, PackedBlock* b) {
  ProtobufLogCapture log;
  b->raw.clear();
  if (!msg.SerializeToString(&b->raw)) b->error = "cannot serialize section";
  if (std::string problem = log.Take(); !problem.empty()) {
    b->error = "cannot be written: " + problem;
    b->unwritable = true;
  }
}

// Sections [0, count) made by make(i, block) and packed on every thread, a
// round of threads() sections at a time, written in order.
Status WriteSections(VisWriter* w, Packers* packers, SectionKind kind, const char* what, Side side, uint32_t count,
                     const std::function<void(uint32_t, PackedBlock*)>& make) {
  int threads = packers->threads();
  std::vector<PackedBlock> blocks;
  for (uint32_t round = 0; round < count; round += threads) {
    blocks.assign(std::min<uint32_t>(threads, count - round), PackedBlock());
    RunOnThreads(static_cast<int>(blocks.size()), [&](int t) {
      make(round + t, &blocks[t]);
      packers->Pack(t, &blocks[t]);
    });
    GA_RETURN_IF_ERROR(WriteBlocks(w, kind, what, side, &blocks));
  }
  return Status::Ok();
}

// The details of a side are made a window of nodes at a time: the window's
// nodes are filled, compared and serialized on every thread, a chunk of
// nodes at a time (threads claim the next chunk, so a thread given costly
// nodes does not hold the other up), cut into blocks by the rule of a
// one-thread writer (kDetailBlockNodes nodes or kDetailBlockBytes), the
// blocks joined and compressed on every thread and written in order, so the
// file is the same for any number of threads. The blocks of one window are
// joined and compressed in the same round of threads as the next window is
// filled (two sets of chunk buffers), so that no core waits for the other
// between the two.
// NodeDetailBlock's wire form is `first` (field 1, omitted when 0) followed
// by each detail as field 2, which is what is concatenated here.
constexpr uint32_t kWindowNodes = 64 * kDetailBlockNodes;
constexpr uint32_t kChunkNodes = 256;
static_assert(kWindowNodes % kChunkNodes == 0);

// Cuts serialized details into detail blocks as a one-thread writer would;
// a block may span windows.
class BlockCutter {
 public:
  // Cuts the chunks [0, chunks) of a window starting at node w0: full blocks
  // go to `out` as pieces of `ranges`, which must stay unchanged until they
  // are packed; the block left open is copied out of them.
  void Cut(const std::vector<SerializedRange>& ranges, uint32_t w0, uint32_t chunks, std::vector<PackedBlock>* out) {
    for (uint32_t c = 0; c < chunks; ++c) {
      const SerializedRange& r = ranges[c];
      uint32_t a = w0 + c * kChunkNodes;
      for (size_t k = 0; k < r.end.size(); ++k) {
        size_t begin = r.begin[k];
        if (open_.count == 0) {
          open_.first = a + static_cast<uint32_t>(k);
          if (open_.first % kDetailBlockNodes == 0) {
            begin -= BlockHeadSize(open_.first);  // the head written before the node
          } else {
            AppendBlockHead(open_.first, &open_.raw);
          }
        }
        if (!open_.pieces.empty() && open_.pieces.back().bytes == &r.bytes && open_.pieces.back().end == begin) {
          open_.pieces.back().end = r.end[k];
        } else {
          open_.pieces.push_back({&r.bytes, begin, r.end[k]});
        }
        ++open_.count;
        open_bytes_ += r.size[k];
        if (DetailBlockFull(open_.count, open_bytes_)) Close(out);
      }
    }
    JoinPieces(&open_);
  }
  // Hands over the block left open (the side's last).
  void Finish(std::vector<PackedBlock>* out) {
    if (open_.count > 0) Close(out);
  }

 private:
  void Close(std::vector<PackedBlock>* out) {
    size_t last = open_.raw.capacity();
    out->push_back(std::move(open_));
    open_ = PackedBlock();
    open_.raw.reserve(last);  // a block continued across windows grows once at most
    open_bytes_ = 0;
  }

  PackedBlock open_;
  size_t open_bytes_ = 0;
};

// The chunk buffers of both sides' details: window k is filled into
// ranges[k % 2] while window k - 1's blocks, cut from ranges[(k - 1) % 2], are
// packed. Kept from side to side, so that their pages are faulted in once.
struct DetailChunks {
  std::vector<SerializedRange> ranges[2] = {std::vector<SerializedRange>(kWindowNodes / kChunkNodes),
                                            std::vector<SerializedRange>(kWindowNodes / kChunkNodes)};
  // The most bytes a chunk has taken so far: a chunk's buffer is reserved
  // that large before it is filled (growing it would copy it a dozen times).
  std::atomic<size_t> chunk_bytes{0};
};

Status WriteDetails(VisWriter* w, Packers* packers, DetailChunks* buffers, const SideDetailWriter& direct, Side side_id,
                    graph::Side* side, graph::Side* other, const WriteRequest& req, double progress_base,
                    double progress_span) {
  graph::Graph& g = *side->graph;
  int threads = packers->threads();
  bool comparing = other != nullptr && req.compare_pair;
  // Tensor compares read .pt files in node order: one thread fills, claiming the chunks in order.
  int fill_threads = comparing && req.serial_compare ? 1 : threads;
  std::vector<SerializedRange>* ranges = buffers->ranges;
  std::atomic<size_t>& chunk_bytes = buffers->chunk_bytes;
  BlockCutter cutter;
  std::vector<PackedBlock> blocks;  // cut, to be packed in the next round
  // Packs `blocks` and fills window [w0, w1) into `fill` (none when w0 == w1)
  // on every thread; packing first, so its blocks can be written soon after.
  auto round = [&](uint32_t w0, uint32_t w1, std::vector<SerializedRange>* fill) {
    uint32_t chunks = (w1 - w0 + kChunkNodes - 1) / kChunkNodes;
    std::atomic<size_t> next_block{0};
    std::atomic<uint32_t> next_chunk{0};
    int round_threads = std::max(1, std::min<int>(threads, static_cast<int>(blocks.size() + chunks)));
    RunOnThreads(round_threads, [&](int t) {
      for (size_t i; (i = next_block.fetch_add(1)) < blocks.size();) packers->Pack(t, &blocks[i]);
      if (t >= fill_threads) return;
      // Reused from node to node: FillDetail overwrites it in place.
      NodeDetail d;
      compare::PairMetrics metrics;
      ProtobufLogCapture log;
      for (uint32_t c; (c = next_chunk.fetch_add(1)) < chunks;) {
        SerializedRange& r = (*fill)[c];
        r.bytes.clear();
        if (size_t hint = chunk_bytes.load(std::memory_order_relaxed); r.bytes.capacity() < hint) {
          r.bytes.reserve(hint + hint / 8);
        }
        r.begin.clear();
        r.end.clear();
        r.size.clear();
        uint32_t a = w0 + c * kChunkNodes, b = std::min(w1, a + kChunkNodes);
        for (uint32_t n = a; n < b; ++n) {
          if (n % kDetailBlockNodes == 0) AppendBlockHead(n, &r.bytes);
          r.begin.push_back(r.bytes.size());
          size_t size;
          bool compared = comparing && g.matched[n] != graph::kNoNode;
          if (!compared && direct.Append(*side, n, 2, &r.bytes, &size)) {
            r.end.push_back(r.bytes.size());
            r.size.push_back(size);
            continue;
          }
          if (compared) {
            // The compare reads both sides' dumps; what it gives is written
            // beside the dump's items.
            req.compare_pair(n, &metrics);
            // Distinct nodes on distinct threads: each slot has one writer.
            if (req.kept_metrics) req.kept_metrics->Keep(n, metrics);
            if (direct.Append(*side, n, 2, &r.bytes, &size, &metrics)) {
              r.end.push_back(r.bytes.size());
              r.size.push_back(size);
              continue;
            }
          }
          FillDetail(*side, n, &d);
          if (compared) compare::StoreMetrics(metrics, &d);
          AppendDetail(d, 2, &r.bytes, &size);
          r.end.push_back(r.bytes.size());
          r.size.push_back(size);
        }
        r.problem = log.Take();
        for (size_t seen = chunk_bytes.load(std::memory_order_relaxed);
             r.bytes.size() > seen && !chunk_bytes.compare_exchange_weak(seen, r.bytes.size());) {
        }
      }
    });
    return chunks;
  };
  int set = 0;
  for (uint32_t w0 = 0; w0 < g.size(); w0 += kWindowNodes, set ^= 1) {
    uint32_t w1 = std::min<uint32_t>(g.size(), w0 + kWindowNodes);
    std::vector<SerializedRange>& filled = ranges[set];
    uint32_t chunks = round(w0, w1, &filled);
    GA_RETURN_IF_ERROR(WriteBlocks(w, SECTION_NODE_DETAILS, "node details", side_id, &blocks));
    for (uint32_t c = 0; c < chunks; ++c) {
      if (!filled[c].problem.empty()) {
        return MakeError(w->path(), "node details section", "cannot be written: " + filled[c].problem);
      }
    }
    cutter.Cut(filled, w0, chunks, &blocks);
    if (req.progress) req.progress(progress_base + progress_span * w1 / g.size());
  }
  cutter.Finish(&blocks);
  round(0, 0, nullptr);
  return WriteBlocks(w, SECTION_NODE_DETAILS, "node details", side_id, &blocks);
}

// WriteRequest::details false: the compare of each matched NPU node, its
// metrics kept, and no detail written; chunks claimed in node order (one
// thread for a serial compare), as WriteDetails claims them.
void CompareWithoutDetails(const graph::Side& side, const WriteRequest& req, int threads) {
  const graph::Graph& g = *side.graph;
  if (!req.compare_pair) return;
  std::atomic<uint32_t> next_chunk{0};
  const uint32_t chunks = (g.size() + kChunkNodes - 1) / kChunkNodes;
  RunOnThreads(req.serial_compare ? 1 : threads, [&](int) {
    compare::PairMetrics metrics;
    for (uint32_t c; (c = next_chunk.fetch_add(1)) < chunks;) {
      for (uint32_t n = c * kChunkNodes, end = std::min(g.size(), n + kChunkNodes); n < end; ++n) {
        if (g.matched[n] == graph::kNoNode) continue;
        req.compare_pair(n, &metrics);
        if (req.kept_metrics) req.kept_metrics->Keep(n, metrics);
      }
    }
  });
}

Status WriteIndex(VisWriter* w, Packers* packers, Side side_id, const graph::Side& side) {
  const graph::Graph& g = *side.graph;
  uint32_t chunks = (g.size() + kIndexChunkNodes - 1) / kIndexChunkNodes;
  return WriteSections(w, packers, SECTION_NODE_INDEX, "node index", side_id, chunks, [&](uint32_t i, PackedBlock* b) {
    uint32_t first = i * kIndexChunkNodes;
    uint32_t end = std::min(g.size(), first + kIndexChunkNodes);
    b->first = first;
    b->count = end - first;
    b->raw.clear();
    if (!AppendIndexChunkWire(side, first, end, &b->raw)) Serialize(IndexChunkOf(side, first, end), b);
  });
}

Status WriteStacks(VisWriter* w, Packers* packers, Side side_id, const graph::Side& side) {
  const graph::StackTable& t = side.graph->stacks;
  uint32_t total = static_cast<uint32_t>(t.stacks.size());
  uint32_t chunks = (total + kStackChunk - 1) / kStackChunk;
  return WriteSections(w, packers, SECTION_STACKS, "stacks", side_id, chunks, [&](uint32_t i, PackedBlock* b) {
    uint32_t first = i * kStackChunk;
    uint32_t end = std::min(total, first + kStackChunk);
    StackChunk c;
    c.set_first(first);
    for (uint32_t s = first; s < end; ++s) {
      Stack* st = c.add_stack();
      const graph::StackTable::Range& r = t.stacks[s];
      for (uint32_t k = 0; k < r.count; ++k) {
        std::string_view line = side.pool->Get(t.lines[r.first + k]);
        st->add_frame(line.data(), line.size());
      }
    }
    b->first = first;
    b->count = end - first;
    Serialize(c, b);
  });
}

}  // namespace

namespace {

// Items that details of this thread no longer hold, kept whole for the
// next node that needs more (a cleared item would free all its values).
thread_local std::vector<std::unique_ptr<Item>> spare_items;

// Element i of `r`, reusing the one it already holds.
template <typename T>
T* Slot(google::protobuf::RepeatedPtrField<T>* r, int i) {
  return i < r->size() ? r->Mutable(i) : r->Add();
}
Item* Slot(google::protobuf::RepeatedPtrField<Item>* r, int i) {
  if (i < r->size()) return r->Mutable(i);
  if (spare_items.empty()) return r->Add();
  r->AddAllocated(spare_items.back().release());
  spare_items.pop_back();
  return r->Mutable(r->size() - 1);
}

// Drops the elements from n on (kept, cleared, for a later Add).
template <typename T>
void Trim(google::protobuf::RepeatedPtrField<T>* r, int n) {
  while (r->size() > n) r->RemoveLast();
}
void Trim(google::protobuf::RepeatedPtrField<Item>* r, int n) {
  while (r->size() > n) spare_items.emplace_back(r->ReleaseLast());
}

}  // namespace

void FillDetail(const graph::Side& side, uint32_t node, NodeDetail* out) {
  const graph::Graph& g = *side.graph;
  out->set_stack_id(g.stack[node]);
  out->clear_suggestions();
  out->clear_md5_result();
  out->clear_distributed();
  out->set_distributed_is_list(false);
  if (node < side.distributed_first.size() && side.distributed_first[node] != graph::kNoNode) {
    const auto& links = side.distributed;
    for (int32_t i = side.distributed_first[node]; i != graph::kNoNode; i = links[i].next) {
      DistributedLink* l = out->add_distributed();
      l->set_communications_type(links[i].type);
      l->set_rank(links[i].rank);
      l->set_peer_node(links[i].peer_node);
      l->set_peer_index(links[i].peer_index);
    }
    out->set_distributed_is_list(side.distributed_is_list.count(node) != 0);
  }
  out->clear_parallel_merge_info();
  if (!side.parallel_merge_info.empty()) {
    auto info = side.parallel_merge_info.find(node);
    if (info != side.parallel_merge_info.end()) {
      for (const std::string& line : info->second) out->add_parallel_merge_info(line);
    }
  }
  if (g.entry[node] == graph::kNoNode) {
    Trim(out->mutable_input(), 0);
    Trim(out->mutable_output(), 0);
    return;
  }
  const dump::DumpData& d = side.dump;
  const dump::DumpEntry& e = d.entries[g.entry[node]];
  for (uint32_t k = 0; k < e.input_count + e.output_count; ++k) {
    const dump::DumpItem& it = d.items[e.first_item + k];
    Item* item = k < e.input_count ? Slot(out->mutable_input(), static_cast<int>(k))
                                   : Slot(out->mutable_output(), static_cast<int>(k - e.input_count));
    // As stored: a key under the node's name as its suffix (vis::ResolveKeys makes it whole).
    std::string_view key = side.pool->Get(it.key);
    if (it.flags & dump::kItemFullKey) {
      item->mutable_key()->assign(key.data(), key.size());
      item->clear_key_suffix();
    } else {
      item->clear_key();
      item->mutable_key_suffix()->assign(key.data(), key.size());
    }
    item->set_state(static_cast<ItemState>(it.state));
    item->set_is_null((it.flags & dump::kItemNull) != 0);
    item->clear_metric();
    int f = 0;
    for (; f < static_cast<int>(it.field_count); ++f) {
      const dump::Field& in = d.fields[it.first_field + f];
      Field* field = Slot(item->mutable_field(), f);
      std::string_view field_name = side.pool->Get(in.name);
      field->mutable_name()->assign(field_name.data(), field_name.size());
      SetValue(*side.pool, in.value, field->mutable_value());
    }
    Trim(item->mutable_field(), f);
  }
  Trim(out->mutable_input(), static_cast<int>(e.input_count));
  Trim(out->mutable_output(), static_cast<int>(e.output_count));
}

void KeptDetail(const graph::Side& side, const compare::KeptMetrics* kept, uint32_t node, NodeDetail* out) {
  FillDetail(side, node, out);
  // As WriteDetails stores them: a compared node's items get the metrics and md5 result of the compare.
  if (kept != nullptr && kept->kept(node)) {
    thread_local compare::PairMetrics metrics;  // reused from node to node
    kept->Get(node, &metrics);
    compare::StoreMetrics(metrics, out);
  }
  ResolveKeys(side.graph->Name(node), out);
}

Status WriteVis(const std::string& path, WriteRequest& req) {
  auto writer = VisWriter::Create(path);
  if (!writer.ok()) return writer.error();
  VisWriter* w = writer->get();
  bool compare = req.bench != nullptr;
  Packers packers(*w, std::max(1, req.threads > 0 ? req.threads : DefaultThreads()));
  // Both sides of a compare share one pool: its plain strings are noted once.
  SideDetailWriter direct(*req.npu->pool);
  if (req.kept_metrics) req.kept_metrics->Reset(req.npu->graph->size());
  auto chunks = std::make_unique<DetailChunks>();
  if (!req.details) {
    if (compare) CompareWithoutDetails(*req.npu, req, packers.threads());
  } else {
    GA_RETURN_IF_ERROR(
        WriteDetails(w, &packers, chunks.get(), direct, SIDE_NPU, req.npu, req.bench, req, 0, compare ? 0.5 : 0.9));
  }
  auto done = [&req](const char* what) {
    if (req.stage_done) req.stage_done(what);
  };
  if (req.details) {
    done(compare ? "compared and wrote the npu details" : "wrote the details");
  } else if (compare) {
    done("compared");
  }
  if (req.after_compare) req.after_compare();
  if (compare && req.rank_divergence) {
    DivergenceRanking ranking = req.rank_divergence();
    GA_RETURN_IF_ERROR(w->WriteDivergence(ranking));
    req.meta.set_divergence_ranked(true);
    req.meta.set_divergence_count(static_cast<uint32_t>(ranking.entry_size()));
    if (ranking.entry_size() > 0) {
      const DivergenceEntry& first = ranking.entry(0);
      const graph::Graph& g = *req.npu->graph;
      std::string_view name = g.Name(first.node());
      req.meta.set_first_divergence(std::string(name));
      req.meta.set_first_divergence_reason(first.reason());
      // A receive or collective: the data came from the ranks it talks to.
      bool comm = name.rfind("Distributed.", 0) == 0;
      req.meta.set_first_divergence_is_communication(comm);
      const auto& links = req.npu->distributed_first;
      if (comm && first.node() < links.size()) {
        for (int32_t l = links[first.node()]; l >= 0; l = req.npu->distributed[l].next) {
          req.meta.add_first_divergence_peers(req.npu->distributed[l].rank);
        }
      }
    }
    if (req.summarize) req.summarize(ranking, &req.meta);
    done("ranked the divergences");
  }
  if (req.ckpt) GA_RETURN_IF_ERROR(w->WriteCkpt(*req.ckpt));
  if (compare && req.details) {
    std::unique_ptr<SideDetailWriter> own;
    if (req.bench->pool != req.npu->pool) own = std::make_unique<SideDetailWriter>(*req.bench->pool);
    GA_RETURN_IF_ERROR(
        WriteDetails(w, &packers, chunks.get(), own ? *own : direct, SIDE_BENCH, req.bench, nullptr, req, 0.5, 0.4));
    done("wrote the bench details");
  }
  chunks.reset();
  GA_RETURN_IF_ERROR(WriteIndex(w, &packers, SIDE_NPU, *req.npu));
  GA_RETURN_IF_ERROR(WriteStacks(w, &packers, SIDE_NPU, *req.npu));
  req.meta.mutable_npu()->set_node_count(req.npu->graph->size());
  req.meta.mutable_npu()->set_stack_count(static_cast<uint32_t>(req.npu->graph->stacks.stacks.size()));
  if (compare) {
    GA_RETURN_IF_ERROR(WriteIndex(w, &packers, SIDE_BENCH, *req.bench));
    GA_RETURN_IF_ERROR(WriteStacks(w, &packers, SIDE_BENCH, *req.bench));
    req.meta.mutable_bench()->set_node_count(req.bench->graph->size());
    req.meta.mutable_bench()->set_stack_count(static_cast<uint32_t>(req.bench->graph->stacks.stacks.size()));
  }
  done("wrote the index and stacks");
  GA_RETURN_IF_ERROR(w->WriteMeta(req.meta));
  GA_RETURN_IF_ERROR(w->Commit());
  done("committed the file");
  if (req.progress) req.progress(1.0);
  return Status::Ok();
}

}  // namespace graph_ascend::vis
