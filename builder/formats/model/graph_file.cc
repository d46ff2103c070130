#include "formats/model/graph_file.h"

#include <cmath>

#include "vis/vis_file.h"

namespace graph_ascend::formats {
namespace {

Status ReadSide(const vis::VisReader& reader, vis::Side side, GraphSide* out) {
  auto index = vis::LoadSideIndex(reader, side);
  if (!index.ok()) return index.error();
  out->index = std::move(*index);
  out->details.reserve(out->index.size());
  for (const vis::SectionRef* ref : reader.Sections(vis::SECTION_NODE_DETAILS, side)) {
    vis::NodeDetailBlock block;
    GA_RETURN_IF_ERROR(reader.ReadSection(*ref, &block));
    if (block.first() != out->details.size()) {
      return Error{reader.path(), "detail block at node " + std::to_string(block.first()),
                   "damaged .vis file (detail blocks out of order)"};
    }
    const vis::SideIndex& index = out->index;
    vis::ResolveKeys([&index](uint32_t n) { return n < index.size() ? index.Name(n) : std::string_view(); }, &block);
    for (vis::NodeDetail& d : *block.mutable_detail()) out->details.push_back(std::move(d));
  }
  if (out->details.size() != out->index.size()) {
    return Error{reader.path(), "node details",
                 "damaged .vis file (" + std::to_string(out->details.size()) + " details for " +
                     std::to_string(out->index.size()) + " nodes)"};
  }
  for (const vis::SectionRef* ref : reader.Sections(vis::SECTION_STACKS, side)) {
    vis::StackChunk chunk;
    GA_RETURN_IF_ERROR(reader.ReadSection(*ref, &chunk));
    for (const vis::Stack& s : chunk.stack()) out->stacks.emplace_back(s.frame().begin(), s.frame().end());
  }
  return Status::Ok();
}

// The details of a side in blocks, moved out of `take` when given (no copy).
Status WriteDetails(vis::VisWriter* w, vis::Side side_id, const GraphSide& side, GraphSide* take) {
  uint32_t count = side.index.size();
  vis::NodeDetailBlock block;
  size_t bytes = 0;
  for (uint32_t n = 0; n < count; ++n) {
    if (block.detail_size() == 0) block.set_first(n);
    const vis::NodeDetail& d = side.details[n];
    bytes += d.ByteSizeLong();
    if (take != nullptr) {
      *block.add_detail() = std::move(take->details[n]);
    } else {
      *block.add_detail() = d;
    }
    if (block.detail_size() >= static_cast<int>(vis::kDetailBlockNodes) || bytes >= vis::kDetailBlockBytes ||
        n + 1 == count) {
      GA_RETURN_IF_ERROR(w->WriteDetailBlock(side_id, block));
      block.Clear();
      bytes = 0;
    }
  }
  return Status::Ok();
}

Status WriteIndex(vis::VisWriter* w, vis::Side side_id, const GraphSide& side) {
  const vis::SideIndex& idx = side.index;
  for (uint32_t first = 0; first < idx.size(); first += vis::kIndexChunkNodes) {
    uint32_t end = std::min(idx.size(), first + vis::kIndexChunkNodes);
    vis::NodeIndexChunk c;
    c.set_first(first);
    for (uint32_t n = first; n < end; ++n) {
      c.add_name(std::string(idx.Name(n)));
      c.add_node_type(idx.node_type[n]);
      c.add_parent(idx.parent[n]);
      c.add_child_count(idx.child_offset[n + 1] - idx.child_offset[n]);
      for (uint32_t i = idx.child_offset[n]; i < idx.child_offset[n + 1]; ++i) c.add_children(idx.children[i]);
      c.add_micro_step(idx.micro_step[n]);
      c.add_precision_index(idx.precision[n]);
      c.add_overflow_level(idx.overflow[n]);
      c.add_matched(idx.matched[n]);
      c.add_flags(idx.flags[n]);
    }
    GA_RETURN_IF_ERROR(w->WriteIndexChunk(side_id, c));
  }
  uint32_t total = static_cast<uint32_t>(side.stacks.size());
  for (uint32_t first = 0; first < total; first += vis::kStackChunk) {
    vis::StackChunk c;
    c.set_first(first);
    for (uint32_t s = first; s < std::min(total, first + vis::kStackChunk); ++s) {
      vis::Stack* st = c.add_stack();
      for (const std::string& line : side.stacks[s]) st->add_frame(line);
    }
    GA_RETURN_IF_ERROR(w->WriteStackChunk(side_id, c));
  }
  return Status::Ok();
}

// `take` is `graph` when its details may be moved out.
Status WriteGraph(const GraphFile& graph, GraphFile* take, const std::string& path) {
  auto writer = vis::VisWriter::Create(path);
  if (!writer.ok()) return writer.error();
  vis::FileMeta meta = graph.meta;
  GA_RETURN_IF_ERROR(WriteDetails(writer->get(), vis::SIDE_NPU, graph.npu, take ? &take->npu : nullptr));
  if (graph.compare()) {
    GA_RETURN_IF_ERROR(WriteDetails(writer->get(), vis::SIDE_BENCH, graph.bench, take ? &take->bench : nullptr));
  }
  GA_RETURN_IF_ERROR(WriteIndexAndStacks(graph, writer->get(), &meta));
  GA_RETURN_IF_ERROR((*writer)->WriteMeta(meta));
  return (*writer)->Commit();
}

}  // namespace

Result<GraphFile> ReadVisFile(const std::string& path) {
  auto reader = vis::VisReader::Open(path);
  if (!reader.ok()) return reader.error();
  GraphFile g;
  g.meta = (*reader)->meta();
  GA_RETURN_IF_ERROR(ReadSide(**reader, vis::SIDE_NPU, &g.npu));
  if (g.compare()) GA_RETURN_IF_ERROR(ReadSide(**reader, vis::SIDE_BENCH, &g.bench));
  return g;
}

Status WriteVisFile(const GraphFile& graph, const std::string& path) { return WriteGraph(graph, nullptr, path); }

Status WriteVisFile(GraphFile&& graph, const std::string& path) { return WriteGraph(graph, &graph, path); }

Status WriteIndexAndStacks(const GraphFile& graph, vis::VisWriter* writer, vis::FileMeta* meta) {
  meta->mutable_npu()->set_node_count(graph.npu.index.size());
  meta->mutable_npu()->set_stack_count(static_cast<uint32_t>(graph.npu.stacks.size()));
  GA_RETURN_IF_ERROR(WriteIndex(writer, vis::SIDE_NPU, graph.npu));
  if (graph.compare()) {
    meta->mutable_bench()->set_node_count(graph.bench.index.size());
    meta->mutable_bench()->set_stack_count(static_cast<uint32_t>(graph.bench.stacks.size()));
    GA_RETURN_IF_ERROR(WriteIndex(writer, vis::SIDE_BENCH, graph.bench));
  }
  return Status::Ok();
}

namespace {
uint64_t HashName(std::string_view name) { return std::hash<std::string_view>()(name); }
}  // namespace

size_t SideBuilder::Probe(std::string_view name, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.node == 0 || (s.hash == static_cast<uint32_t>(hash >> 32) && node(s.node - 1).name == name)) return i;
  }
}

void SideBuilder::Rehash(size_t slots) {
  size_t size = 16;
  while (size < slots) size *= 2;
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(size, Slot{});
  for (const Slot& s : old) {
    if (s.node == 0) continue;
    size_t i = HashName(node(s.node - 1).name) & (size - 1);
    while (slots_[i].node != 0) i = (i + 1) & (size - 1);
    slots_[i] = s;
  }
}

int64_t SideBuilder::Added(std::string_view name) const {
  if (slots_.empty()) return -1;
  const Slot& s = slots_[Probe(name, HashName(name))];
  return s.node == 0 ? -1 : static_cast<int64_t>(s.node - 1);
}

ForeignNode& SideBuilder::Add(std::string name) {
  if ((count_ + 1) * 2 > slots_.size()) Rehash((count_ + 1) * 4);
  const uint64_t hash = HashName(name);
  Slot& slot = slots_[Probe(name, hash)];
  if (slot.node != 0) return node(slot.node - 1);  // a repeated name: the later record wins field by field
  if ((count_ >> kChunkBits) == chunks_.size()) chunks_.push_back(std::make_unique<ForeignNode[]>(1u << kChunkBits));
  ForeignNode& fresh = node(count_);
  fresh.name = std::move(name);
  fresh.precision = std::nan("");
  slot = Slot{static_cast<uint32_t>(hash >> 32), ++count_};
  return fresh;
}

int64_t SideBuilder::IndexOf(std::string_view name) const {
  int64_t at = Added(name);
  // Not one ?: expression: its type would be position_'s uint32_t, and -1 would read as 4294967295.
  if (at < 0 || static_cast<size_t>(at) >= position_.size()) return -1;
  return position_[at];
}

int32_t SideBuilder::Stack(std::vector<std::string> frames) {
  if (frames.empty()) return -1;
  std::string key;
  for (const std::string& f : frames) key.append(f).push_back('\n');
  auto [it, inserted] = stack_ids_.emplace(std::move(key), static_cast<int32_t>(stacks_.size()));
  if (inserted) stacks_.push_back(std::move(frames));
  return it->second;
}

Result<GraphSide> SideBuilder::Finish(const std::string& root, const std::string& file) {
  GraphSide side;
  uint32_t count = count_;
  if (count == 0) return side;
  int64_t root_found = Added(root);
  uint32_t root_at = root_found < 0 ? 0 : static_cast<uint32_t>(root_found);
  // Insertion order (the order of the file), the root first. Every child
  // name must be a node: each is looked up once, into `child_at`.
  std::vector<uint32_t> order;
  order.reserve(count);
  order.push_back(root_at);
  std::vector<uint32_t> child_at;
  for (uint32_t n = 0; n < count; ++n) {
    if (n != root_at) order.push_back(n);
    for (const std::string& c : node(n).children) {
      int64_t found = Added(c);
      if (found < 0) return Error{file, "node " + node(n).name, "child '" + c + "' is not a node of the graph"};
      child_at.push_back(static_cast<uint32_t>(found));
    }
  }
  // child_at holds the children in insertion order; where each node's start.
  std::vector<uint32_t> child_start(count + 1, 0);
  for (uint32_t n = 0; n < count; ++n) {
    child_start[n + 1] = child_start[n] + static_cast<uint32_t>(node(n).children.size());
  }
  std::vector<uint32_t>& position = position_;
  position.assign(count, 0);
  for (uint32_t i = 0; i < count; ++i) position[order[i]] = i;

  vis::SideIndex& idx = side.index;
  idx.name_offset.push_back(0);
  idx.child_offset.push_back(0);
  idx.names.reserve(count * 32);
  idx.children.reserve(child_at.size());
  side.details.reserve(count);
  matched_names_.clear();
  matched_names_.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t at = order[i];
    ForeignNode& node = this->node(at);
    // What the .vis reader refuses is refused here, so that a converted
    // file always reads back.
    if (!vis::NodeType_IsValid(static_cast<int>(node.node_type)) || node.node_type > 255) {
      return Error{file, "node " + node.name, "unknown node type " + std::to_string(node.node_type)};
    }
    if (node.overflow > vis::OVERFLOW_CRITICAL) {
      return Error{file, "node " + node.name, "overflow level " + std::to_string(node.overflow) + " out of range"};
    }
    if (node.micro_step < -1) {
      return Error{file, "node " + node.name, "negative micro step " + std::to_string(node.micro_step)};
    }
    idx.names += node.name;
    idx.name_offset.push_back(idx.names.size());
    idx.node_type.push_back(static_cast<uint8_t>(node.node_type));
    int32_t parent = -1;
    if (!node.parent.empty()) {
      int64_t p = Added(node.parent);
      if (p < 0) return Error{file, "node " + node.name, "parent '" + node.parent + "' is not a node"};
      parent = static_cast<int32_t>(position[p]);
    }
    idx.parent.push_back(parent);
    for (uint32_t c = child_start[at]; c < child_start[at + 1]; ++c) idx.children.push_back(position[child_at[c]]);
    idx.child_offset.push_back(static_cast<uint32_t>(idx.children.size()));
    idx.micro_step.push_back(node.micro_step);
    idx.precision.push_back(node.precision);
    idx.overflow.push_back(static_cast<uint8_t>(node.overflow));
    idx.matched.push_back(-1);
    uint32_t flags = 0;
    if (node.has_data) flags |= vis::FLAG_HAS_DATA;
    if (node.precision_float && !std::isnan(node.precision)) flags |= vis::FLAG_PRECISION_FLOAT;
    if (node.distributed || node.detail.distributed_size() > 0) flags |= vis::FLAG_DISTRIBUTED;
    idx.flags.push_back(flags);
    side.details.push_back(std::move(node.detail));
    matched_names_.push_back(std::move(node.matched));
  }
  if (std::optional<vis::ForestFault> fault = vis::FindForestFault(idx)) {
    return Error{file, "node " + std::string(idx.Name(fault->node)), fault->what};
  }
  side.stacks = std::move(stacks_);
  return side;
}

Status ResolveMatches(const std::string& file, const SideBuilder& npu_builder, GraphSide* npu,
                      const SideBuilder& bench_builder, GraphSide* bench) {
  auto resolve = [&file](const SideBuilder& from, GraphSide* side, const char* side_name, const SideBuilder& to,
                         GraphSide* other, const char* other_name) -> Status {
    const auto& names = from.matched_names();
    if (names.size() != side->index.size() || to.size() != other->index.size()) {
      return Error{file, std::string(side_name) + " graph", "its nodes and the links read disagree"};
    }
    for (uint32_t n = 0; n < names.size(); ++n) {
      if (names[n].empty()) continue;
      int64_t peer = to.IndexOf(names[n]);
      if (peer < 0 || static_cast<uint64_t>(peer) >= other->index.size()) {
        return Error{file, std::string(side_name) + " node " + std::string(side->index.Name(n)),
                     "matched_node_link names '" + names[n] + "', which is not a node of the " + other_name + " graph"};
      }
      side->index.matched[n] = static_cast<int32_t>(peer);
      // A link written on one side only holds for both.
      if (other->index.matched[peer] < 0) other->index.matched[peer] = static_cast<int32_t>(n);
    }
    return Status::Ok();
  };
  GA_RETURN_IF_ERROR(resolve(npu_builder, npu, "NPU", bench_builder, bench, "Bench"));
  return resolve(bench_builder, bench, "Bench", npu_builder, npu, "NPU");
}

}  // namespace graph_ascend::formats
