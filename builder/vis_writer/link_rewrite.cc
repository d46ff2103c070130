#include "vis_writer/link_rewrite.h"

#include <algorithm>
#include <memory>
#include <set>

#include "vis/vis_file.h"

namespace graph_ascend::vis {
namespace {

// The nodes of a side whose details change: those with links now and
// those that get some.
Result<std::set<uint32_t>> TouchedNodes(const VisReader& reader, Side side, const SideLinks& links) {
  std::set<uint32_t> touched;
  for (const auto& entry : links) touched.insert(entry.first);
  Status st = reader.ReadIndex(side, [&](NodeIndexChunk& c) -> Status {
    for (int i = 0; i < c.flags_size(); ++i) {
      if (c.flags(i) & FLAG_DISTRIBUTED) touched.insert(c.first() + i);
    }
    return Status::Ok();
  });
  if (!st.ok()) return st.error();
  return touched;
}

bool AnyIn(const std::set<uint32_t>& nodes, uint32_t first, uint32_t count) {
  auto it = nodes.lower_bound(first);
  return it != nodes.end() && *it < static_cast<uint64_t>(first) + count;
}

// Writes a side's detail blocks: untouched blocks are copied while the
// blocking still agrees with the file's; from a touched block on, nodes are
// re-blocked until a block ends where one of the file's ends.
Status RewriteDetails(const VisReader& reader, VisWriter* writer, Side side, const SideLinks& links,
                      const std::set<uint32_t>& touched) {
  NodeDetailBlock open;
  size_t bytes = 0;
  std::string frame;
  uint32_t next = 0;
  for (const SectionRef* ref : reader.Sections(SECTION_NODE_DETAILS, side)) {
    if (ref->first() != next) {
      return Error{reader.path(), "node details from " + std::to_string(ref->first()),
                   "damaged: detail blocks do not continue node " + std::to_string(next)};
    }
    next = ref->first() + ref->count();
    if (open.detail_size() == 0 && !AnyIn(touched, ref->first(), ref->count())) {
      GA_RETURN_IF_ERROR(reader.ReadFrame(*ref, &frame));
      GA_RETURN_IF_ERROR(writer->CopySection(*ref, frame));
      continue;
    }
    NodeDetailBlock block;
    GA_RETURN_IF_ERROR(reader.ReadSection(*ref, &block));
    if (block.first() != ref->first() || static_cast<uint32_t>(block.detail_size()) != ref->count()) {
      return Error{reader.path(), "node details from " + std::to_string(ref->first()),
                   "damaged: the block does not hold the nodes its table entry names"};
    }
    for (int i = 0; i < block.detail_size(); ++i) {
      uint32_t node = ref->first() + i;
      if (open.detail_size() == 0) open.set_first(node);
      NodeDetail* d = open.add_detail();
      d->Swap(block.mutable_detail(i));
      if (touched.count(node)) {
        d->clear_distributed();
        d->clear_distributed_is_list();
        auto it = links.find(node);
        if (it != links.end()) {
          for (const DistributedLink& l : it->second.links) *d->add_distributed() = l;
          d->set_distributed_is_list(it->second.is_list);
        }
      }
      bytes += d->ByteSizeLong();
      if (DetailBlockFull(open.detail_size(), bytes)) {
        GA_RETURN_IF_ERROR(writer->WriteDetailBlock(side, open));
        open.Clear();
        bytes = 0;
      }
    }
  }
  if (open.detail_size() > 0) GA_RETURN_IF_ERROR(writer->WriteDetailBlock(side, open));
  return Status::Ok();
}

Status RewriteIndex(const VisReader& reader, VisWriter* writer, const SectionRef& ref, const SideLinks& links) {
  NodeIndexChunk chunk;
  GA_RETURN_IF_ERROR(reader.ReadSection(ref, &chunk));
  bool changed = false;
  for (int i = 0; i < chunk.flags_size(); ++i) {
    uint32_t want = links.count(chunk.first() + i) ? FLAG_DISTRIBUTED : 0;
    if ((chunk.flags(i) & FLAG_DISTRIBUTED) == want) continue;
    chunk.set_flags(i, (chunk.flags(i) & ~static_cast<uint32_t>(FLAG_DISTRIBUTED)) | want);
    changed = true;
  }
  if (changed) return writer->WriteIndexChunk(ref.side(), chunk);
  std::string frame;
  GA_RETURN_IF_ERROR(reader.ReadFrame(ref, &frame));
  return writer->CopySection(ref, frame);
}

}  // namespace

Status RewriteLinks(const std::string& path, const SideLinks& npu, const SideLinks& bench) {
  auto opened = VisReader::Open(path);
  if (!opened.ok()) return opened.error();
  const VisReader& reader = **opened;
  FileMeta meta = reader.meta();
  if (meta.first_divergence_is_communication()) {
    auto ranking = reader.ReadDivergence();
    if (!ranking.ok()) return ranking.error();
    meta.clear_first_divergence_peers();
    if (ranking->entry_size() > 0) {
      auto it = npu.find(ranking->entry(0).node());
      if (it != npu.end()) {
        for (const DistributedLink& l : it->second.links) meta.add_first_divergence_peers(l.rank());
      }
    }
  }
  std::set<uint32_t> touched[2];
  const SideLinks* links[2] = {&npu, &bench};
  for (Side side : {SIDE_NPU, SIDE_BENCH}) {
    if (!reader.has_side(side)) {
      if (!links[side]->empty()) return Error{path, "", "has no bench graph to link"};
      continue;
    }
    uint32_t nodes = side == SIDE_NPU ? meta.npu().node_count() : meta.bench().node_count();
    if (!links[side]->empty() && links[side]->rbegin()->first >= nodes) {
      return Error{path, side == SIDE_NPU ? "npu graph" : "bench graph",
                   "the shard's summary links node " + std::to_string(links[side]->rbegin()->first) +
                       " but the graph has " + std::to_string(nodes) + " nodes: the file is not the one the summary "
                       "describes (run its shard again)"};
    }
    auto t = TouchedNodes(reader, side, *links[side]);
    if (!t.ok()) return t.error();
    touched[side] = std::move(*t);
  }
  auto created = VisWriter::Create(path);
  if (!created.ok()) return created.error();
  VisWriter* writer = created->get();
  bool details_done[2] = {false, false};
  std::string frame;
  for (const SectionRef& ref : reader.toc().sections()) {
    Side side = ref.side() == SIDE_BENCH ? SIDE_BENCH : SIDE_NPU;
    switch (ref.kind()) {
      case SECTION_NODE_DETAILS:
        // All of a side's blocks at its first one: the writer puts them together, in node order.
        if (!details_done[side]) {
          GA_RETURN_IF_ERROR(RewriteDetails(reader, writer, side, *links[side], touched[side]));
          details_done[side] = true;
        }
        break;
      case SECTION_NODE_INDEX:
        GA_RETURN_IF_ERROR(RewriteIndex(reader, writer, ref, *links[side]));
        break;
      case SECTION_META:
        GA_RETURN_IF_ERROR(writer->WriteMeta(meta));
        break;
      default:
        GA_RETURN_IF_ERROR(reader.ReadFrame(ref, &frame));
        GA_RETURN_IF_ERROR(writer->CopySection(ref, frame));
        break;
    }
  }
  return writer->Commit();
}

}  // namespace graph_ascend::vis
