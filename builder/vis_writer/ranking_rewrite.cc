#include "vis_writer/ranking_rewrite.h"

#include <algorithm>
#include <numeric>
#include <span>

#include "divergence/overview_counts.h"
#include "divergence/pair_evidence.h"
#include "vis/vis_file.h"
#include "vis/vis_index.h"

namespace graph_ascend::vis {
namespace {

// The details of `nodes` of `side`, each detail block read once: the nodes in
// index order, a block dropped when the next node lies beyond it.
divergence::ReadDetails DetailsOf(const VisReader& reader, const SideIndex* index[2]) {
  return [&reader, index](Side side, const std::vector<uint32_t>& nodes, std::vector<NodeDetail>* out) -> Status {
    const SideIndex& idx = *index[side];
    std::vector<uint32_t> order(nodes.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return nodes[a] < nodes[b]; });
    out->resize(nodes.size());
    NodeDetailBlock block;
    bool have = false;
    NodeNames names = [&idx](uint32_t n) { return n < idx.size() ? idx.Name(n) : std::string_view(); };
    for (size_t k = 0; k < order.size(); ++k) {
      const uint32_t i = order[k], n = nodes[i];
      // A node asked for twice (a node matched by two): the copy of the first.
      if (k > 0 && nodes[order[k - 1]] == n) {
        (*out)[i] = (*out)[order[k - 1]];
        continue;
      }
      if (!have || n < block.first() || n - block.first() >= static_cast<uint32_t>(block.detail_size())) {
        auto read = reader.ReadDetailBlock(side, n, names);
        if (!read.ok()) return read.error();
        block = std::move(*read);
        have = true;
        if (n < block.first() || n - block.first() >= static_cast<uint32_t>(block.detail_size())) {
          return Error{reader.path(), std::string(side == SIDE_NPU ? "NPU" : "Bench") + " node " + std::to_string(n),
                       "damaged: its detail block does not hold it"};
        }
      }
      // Taken out of the block, not copied: each node of it is read once (copies were most of the time).
      (*out)[i].Swap(block.mutable_detail(static_cast<int>(n - block.first())));
    }
    return Status::Ok();
  };
}

// FileMeta's summary of the ranking, as the build writes it (vis_writer/graph_writer).
Status Summarize(const VisReader& reader, const SideIndex& npu, const graph::Graph& g,
                 const DivergenceRanking& ranking, FileMeta* meta) {
  meta->set_divergence_ranked(true);
  meta->clear_divergence_unranked();
  meta->set_divergence_count(static_cast<uint32_t>(ranking.entry_size()));
  if (ranking.entry_size() > 0) {
    const DivergenceEntry& first = ranking.entry(0);
    std::string_view name = npu.Name(first.node());
    meta->set_first_divergence(std::string(name));
    meta->set_first_divergence_reason(first.reason());
    // A receive or collective: the data came from the ranks it talks to.
    bool comm = name.rfind("Distributed.", 0) == 0;
    meta->set_first_divergence_is_communication(comm);
    meta->clear_first_divergence_peers();
    if (comm) {
      auto detail = reader.ReadDetail(SIDE_NPU, first.node(), name);
      if (!detail.ok()) return detail.error();
      for (const DistributedLink& l : detail->distributed()) meta->add_first_divergence_peers(l.rank());
    }
  }
  *meta->mutable_overview() = divergence::CountForOverview(g, *meta, ranking);
  return Status::Ok();
}

// The file again with `meta` and, when given, the ranking; every other section copied as it is.
Status Rewrite(const std::string& path, const VisReader& reader, const FileMeta& meta,
               const DivergenceRanking* ranking) {
  auto created = VisWriter::Create(path);
  if (!created.ok()) return created.error();
  VisWriter* writer = created->get();
  std::string frame;
  for (const SectionRef& ref : reader.toc().sections()) {
    if (ref.kind() == SECTION_META) {
      GA_RETURN_IF_ERROR(writer->WriteMeta(meta));
    } else if (ref.kind() != SECTION_DIVERGENCE) {
      GA_RETURN_IF_ERROR(reader.ReadFrame(ref, &frame));
      GA_RETURN_IF_ERROR(writer->CopySection(ref, frame));
    }
  }
  if (ranking != nullptr) GA_RETURN_IF_ERROR(writer->WriteDivergence(*ranking));
  return writer->Commit();
}

}  // namespace

Result<AddedRanking> AddRanking(const std::string& path) {
  auto opened = VisReader::Open(path);
  if (!opened.ok()) return opened.error();
  const VisReader& reader = **opened;
  FileMeta meta = reader.meta();
  AddedRanking out;
  if (meta.kind() != GRAPH_COMPARE) return out;
  if (meta.divergence_ranked()) {
    out.ranked = true;
    return out;
  }
  auto npu = LoadSideIndex(reader, SIDE_NPU);
  if (!npu.ok()) return npu.error();
  auto bench = LoadSideIndex(reader, SIDE_BENCH);
  if (!bench.ok()) return bench.error();
  if (auto fault = FindForestFault(*npu)) {
    return Error{path, "NPU node " + std::to_string(fault->node), "damaged index: " + fault->what};
  }
  const SideIndex& idx = *npu;
  for (uint32_t n = 0; n < idx.size(); ++n) {
    if (idx.matched[n] >= static_cast<int32_t>(bench->size())) {
      return Error{path, "NPU node " + std::to_string(n), "matched node out of range"};
    }
  }
  divergence::HierarchyView view;
  view.size = idx.size();
  view.name = [&idx](uint32_t n) { return idx.Name(n); };
  view.node_type = [&idx](uint32_t n) { return idx.node_type[n]; };
  view.children = [&idx](uint32_t n) {
    return std::span<const uint32_t>(idx.children.data() + idx.child_offset[n],
                                     idx.child_offset[n + 1] - idx.child_offset[n]);
  };
  StringPool pool;
  std::unique_ptr<graph::Graph> g = divergence::GraphOf(view, &pool);
  for (uint32_t n = 0; n < idx.size(); ++n) {
    g->matched[n] = idx.matched[n];
    g->precision[n] = idx.precision[n];
    if (n < idx.grade.size()) g->grade[n] = idx.grade[n];
    g->overflow[n] = static_cast<dump::OverflowLevel>(idx.overflow[n]);
  }
  out.why_not = divergence::UnrankableReason(*g);
  if (out.why_not.empty() && reader.Sections(SECTION_NODE_DETAILS, SIDE_NPU).empty()) {
    out.why_not = "the file holds no node details, so no pair's metrics say where the runs part";
  }
  if (!out.why_not.empty()) {
    meta.set_divergence_unranked(out.why_not);
    GA_RETURN_IF_ERROR(Rewrite(path, reader, meta, nullptr));
    return out;
  }
  const SideIndex* sides[2] = {&*npu, &*bench};
  auto ranking = divergence::RankFromDetails(*g, meta.mode(), DetailsOf(reader, sides));
  if (!ranking.ok()) {
    Error e = ranking.error();
    if (e.file.empty()) e.file = path;
    return e;
  }
  GA_RETURN_IF_ERROR(Summarize(reader, idx, *g, *ranking, &meta));
  GA_RETURN_IF_ERROR(Rewrite(path, reader, meta, &*ranking));
  out.ranked = true;
  return out;
}

}  // namespace graph_ascend::vis
