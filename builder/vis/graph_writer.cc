#include "vis/graph_writer.h"

#include <google/protobuf/arena.h>

#include <cmath>

#include "vis/vis_file.h"

namespace graph_ascend::vis {
namespace {

void SetValue(const StringPool& pool, const dump::Value& in, Value* out) {
  switch (in.kind) {
    case dump::ValueKind::kNull: out->set_null(true); break;
    case dump::ValueKind::kBool: out->set_boolean(in.boolean); break;
    case dump::ValueKind::kInteger: out->set_integer(in.integer); break;
    case dump::ValueKind::kNumber: out->set_number(in.number); break;
    case dump::ValueKind::kString: {
      std::string_view t = pool.Get(in.string);
      out->set_text(t.data(), t.size());
      break;
    }
    case dump::ValueKind::kJson: {
      std::string_view t = pool.Get(in.string);
      out->set_json(t.data(), t.size());
      break;
    }
  }
}

Status WriteDetails(VisWriter* w, Side side_id, graph::Side* side, graph::Side* other,
                    const WriteRequest& req, double progress_base, double progress_span) {
  graph::Graph& g = *side->graph;
  // Each block's messages live in an arena that is reset after the block is
  // written: no per-item heap traffic.
  google::protobuf::ArenaOptions arena_options;
  arena_options.start_block_size = 1u << 20;
  arena_options.max_block_size = 4u << 20;
  google::protobuf::Arena arena(arena_options);
  NodeDetailBlock* block = google::protobuf::Arena::CreateMessage<NodeDetailBlock>(&arena);
  size_t bytes = 0;
  NodeDetail peer;
  auto flush = [&]() -> Status {
    if (block->detail_size() == 0) return Status::Ok();
    GA_RETURN_IF_ERROR(w->WriteDetailBlock(side_id, *block));
    arena.Reset();
    block = google::protobuf::Arena::CreateMessage<NodeDetailBlock>(&arena);
    bytes = 0;
    return Status::Ok();
  };
  for (uint32_t n = 0; n < g.size(); ++n) {
    if (block->detail_size() == 0) block->set_first(n);
    NodeDetail* d = block->add_detail();
    FillDetail(*side, n, d);
    if (other != nullptr && req.compare_pair && g.matched[n] != graph::kNoNode) {
      peer.Clear();
      FillDetail(*other, static_cast<uint32_t>(g.matched[n]), &peer);
      req.compare_pair(n, d, peer);
    }
    bytes += d->ByteSizeLong();
    if (block->detail_size() >= static_cast<int>(kDetailBlockNodes) || bytes >= kDetailBlockBytes) {
      GA_RETURN_IF_ERROR(flush());
    }
    if (req.progress && (n & 4095) == 0) req.progress(progress_base + progress_span * n / g.size());
  }
  return flush();
}

Status WriteIndex(VisWriter* w, Side side_id, const graph::Side& side) {
  const graph::Graph& g = *side.graph;
  for (uint32_t first = 0; first < g.size(); first += kIndexChunkNodes) {
    uint32_t end = std::min(g.size(), first + kIndexChunkNodes);
    NodeIndexChunk c;
    c.set_first(first);
    for (uint32_t n = first; n < end; ++n) {
      c.add_name(std::string(g.Name(n)));
      c.add_node_type(static_cast<uint32_t>(g.op[n]));
      c.add_parent(g.parent[n]);
      c.add_child_count(g.child_count[n]);
      for (int32_t ch = g.first_child[n]; ch != graph::kNoNode; ch = g.next_sibling[ch]) {
        c.add_children(static_cast<uint32_t>(ch));
      }
      c.add_micro_step(g.micro_step[n]);
      c.add_precision_index(g.precision[n]);
      c.add_grade_index(n < g.grade.size() ? g.grade[n] : std::nan(""));
      c.add_overflow_level(static_cast<uint32_t>(g.overflow[n]));
      c.add_matched(g.matched[n]);
      uint32_t flags = 0;
      if (g.entry[n] != graph::kNoNode) flags |= FLAG_HAS_DATA;
      if (g.precision_float[n]) flags |= FLAG_PRECISION_FLOAT;
      if (n < side.distributed_first.size() && side.distributed_first[n] != graph::kNoNode) flags |= FLAG_DISTRIBUTED;
      c.add_flags(flags);
    }
    GA_RETURN_IF_ERROR(w->WriteIndexChunk(side_id, c));
  }
  return Status::Ok();
}

Status WriteStacks(VisWriter* w, Side side_id, const graph::Side& side) {
  const graph::StackTable& t = side.graph->stacks;
  uint32_t total = static_cast<uint32_t>(t.stacks.size());
  for (uint32_t first = 0; first < total; first += kStackChunk) {
    StackChunk c;
    c.set_first(first);
    for (uint32_t s = first; s < std::min(total, first + kStackChunk); ++s) {
      Stack* st = c.add_stack();
      const graph::StackTable::Range& r = t.stacks[s];
      for (uint32_t i = 0; i < r.count; ++i) st->add_frame(std::string(side.pool->Get(t.lines[r.first + i])));
    }
    GA_RETURN_IF_ERROR(w->WriteStackChunk(side_id, c));
  }
  return Status::Ok();
}

}  // namespace

void FillDetail(const graph::Side& side, uint32_t node, NodeDetail* out) {
  const graph::Graph& g = *side.graph;
  out->set_stack_id(g.stack[node]);
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
  if (!side.parallel_merge_info.empty()) {
    auto info = side.parallel_merge_info.find(node);
    if (info != side.parallel_merge_info.end()) {
      for (const std::string& line : info->second) out->add_parallel_merge_info(line);
    }
  }
  if (g.entry[node] == graph::kNoNode) return;
  const dump::DumpData& d = side.dump;
  const dump::DumpEntry& e = d.entries[g.entry[node]];
  std::string_view name = g.Name(node);
  for (uint32_t k = 0; k < e.input_count + e.output_count; ++k) {
    const dump::DumpItem& it = d.items[e.first_item + k];
    Item* item = k < e.input_count ? out->add_input() : out->add_output();
    std::string_view key = side.pool->Get(it.key);
    if (it.flags & dump::kItemFullKey) {
      item->set_key(key.data(), key.size());
    } else {
      std::string* full = item->mutable_key();
      full->reserve(name.size() + key.size());
      full->append(name).append(key);
    }
    item->set_state(static_cast<ItemState>(it.state));
    if (it.flags & dump::kItemNull) item->set_is_null(true);
    for (uint32_t f = it.first_field; f < it.first_field + it.field_count; ++f) {
      Field* field = item->add_field();
      std::string_view field_name = side.pool->Get(d.fields[f].name);
      field->set_name(field_name.data(), field_name.size());
      SetValue(*side.pool, d.fields[f].value, field->mutable_value());
    }
  }
}

Status WriteVis(const std::string& path, WriteRequest& req) {
  auto writer = VisWriter::Create(path);
  if (!writer.ok()) return writer.error();
  VisWriter* w = writer->get();
  bool compare = req.bench != nullptr;
  GA_RETURN_IF_ERROR(WriteDetails(w, SIDE_NPU, req.npu, req.bench, req, 0, compare ? 0.5 : 0.9));
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
  }
  if (compare) GA_RETURN_IF_ERROR(WriteDetails(w, SIDE_BENCH, req.bench, nullptr, req, 0.5, 0.4));
  GA_RETURN_IF_ERROR(WriteIndex(w, SIDE_NPU, *req.npu));
  GA_RETURN_IF_ERROR(WriteStacks(w, SIDE_NPU, *req.npu));
  req.meta.mutable_npu()->set_node_count(req.npu->graph->size());
  req.meta.mutable_npu()->set_stack_count(static_cast<uint32_t>(req.npu->graph->stacks.stacks.size()));
  if (compare) {
    GA_RETURN_IF_ERROR(WriteIndex(w, SIDE_BENCH, *req.bench));
    GA_RETURN_IF_ERROR(WriteStacks(w, SIDE_BENCH, *req.bench));
    req.meta.mutable_bench()->set_node_count(req.bench->graph->size());
    req.meta.mutable_bench()->set_stack_count(static_cast<uint32_t>(req.bench->graph->stacks.stacks.size()));
  }
  GA_RETURN_IF_ERROR(w->WriteMeta(req.meta));
  GA_RETURN_IF_ERROR(w->Commit());
  if (req.progress) req.progress(1.0);
  return Status::Ok();
}

}  // namespace graph_ascend::vis
