// Fuzz targets of the graph service's own .vis loading (plugin/service): what
// graph-ascend-server does with a file a client opens, then the first requests
// on it (layout of expanded nodes, search, filter, details, stacks, manual
// matching). Built into ga_fuzz when the server is built.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "formats/vis_db/vis_db.h"
#include "fuzz.h"
#include "layout.h"
#include "manual_match.h"
#include "node_query.h"
#include "open_graph.h"
#include "side_graph.h"
#include "vis/protobuf_log.h"
#include "vis/vis_file.h"
#include "vis_db_cells.h"

namespace graph_ascend::fuzz {
namespace {

using service::OpenGraph;
using service::SideGraph;

// The requests of a page on one side: every node expanded into the layout
// (the first few hundred), a cut of it, search and filter, the ancestors,
// details and stacks of every 5th node.
void Browse(const OpenGraph& f, vis::Side side) {
  const SideGraph* g = f.side(side);
  if (g == nullptr) return;
  service::ViewState view(-1);
  for (uint32_t n = 0; n < g->size() && n < 400; ++n) {
    if (g->reachable(n)) (void)view.Expand(*g, n);
  }
  view.Update(*g);
  (void)view.Cut(*g, service::Viewport{0, 0, 2000, 1500});
  (void)service::SearchNodes(*g, {"forward", false, true, -1});
  (void)service::SearchNodes(*g, {"^Module\\..*\\.0$", true, false, -1});
  service::FilterSpec filter;
  filter.buckets = {0, 1, 2, 3, 4, 5};
  filter.unmatched = true;
  filter.overflow = {1, 2, 3};
  (void)service::FilterNodes(*g, f.is_compare(), filter);
  (void)f.DivergenceMarks(side);
  for (uint32_t n = 0; n < g->size(); n += 5) {
    (void)g->Ancestors(n, 100);
    auto d = f.Detail(side, n);
    if (d.ok() && d->stack_id() >= 0) (void)f.Stack(side, d->stack_id());
  }
}

// A .vis as the server opens and serves it.
Status ServeVis(const std::string& path) {
  // The loaders unguarded first: OpenGraph::Open turns an exception into an
  // Error ("damaged .vis file (...)"), which would hide a size used before it
  // was checked.
  auto reader = vis::VisReader::Open(path);
  if (!reader.ok()) return reader.error();
  for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
    if (!(*reader)->has_side(side)) continue;
    auto g = SideGraph::Load(**reader, side, [](double) {});
    if (!g.ok()) return g.error();
  }
  auto opened = OpenGraph::Open(path, "input.vis", [](double, const std::string&) {});
  if (!opened.ok()) return opened.error();
  OpenGraph& f = **opened;
  (void)f.Info();
  Browse(f, vis::SIDE_NPU);
  Browse(f, vis::SIDE_BENCH);
  if (service::MatchingUnsupported(f).empty()) {
    // Unmatch and match the root with all its children (reads details, edits the index in memory).
    std::unique_lock<std::shared_mutex> lock(f.mutex());
    OpenGraph::DetailCache cache;
    service::PrefetchForMatch(f, 0, 0, true, false, &cache);
    (void)service::UnmatchNodes(&f, 0, 0, true, &cache);
    OpenGraph::DetailCache again;
    service::PrefetchForMatch(f, 0, 0, true, true, &again);
    (void)service::MatchNodes(&f, 0, 0, true, &again);
  }
  return Status::Ok();
}

// A msprobe .vis.db as graph-ascend-server opens a big one: its opening
// screen read straight from SQLite (formats::WriteVisDbOpening), the sides
// built from that partial index and served, then the node queries the
// service answers from the db while the conversion runs (formats::VisDbNodes:
// search, ancestors, details).
Status ServeDbOpening(const std::string& db) {
  const std::string dir = ScratchDir() + "/opening";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string opening = dir + "/graph.opening.vis";
  auto written = formats::WriteVisDbOpening(db, "", 0, opening);
  if (!written.ok()) return written.error();
  if (written->has_value()) {
    auto sides = std::make_shared<service::SideIndexes>();
    sides->npu = std::move((*written)->npu);
    sides->bench = std::move((*written)->bench);
    auto opened = OpenGraph::Open(opening, "input.vis.db", [](double, const std::string&) {}, {}, {}, sides);
    if (!opened.ok()) return opened.error();
    (void)(*opened)->Info();
    Browse(**opened, vis::SIDE_NPU);
    Browse(**opened, vis::SIDE_BENCH);
  }
  const std::string converted = dir + "/graph.index.vis";
  bool taken = false;  // the first graph only, as the opening's
  std::vector<bool> whole;
  auto index = formats::ConvertVisDbIndex(
      db,
      [&](const vis::FileMeta&) {
        if (taken) return std::string();
        taken = true;
        return converted;
      },
      {}, &whole);
  if (!index.ok()) return index.error();
  if (!taken) return Status::Ok();
  auto nodes = formats::VisDbNodes::Open(db, converted);
  if (!nodes.ok()) return nodes.error();
  for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
    auto hits = (*nodes)->Find(side, [](std::string_view) { return true; });
    if (!hits.ok()) continue;
    for (size_t i = 0; i < hits->size(); i += 3) {
      const std::string& name = (*hits)[i].name;
      (void)(*nodes)->Detail(side, name);
      uint32_t omitted = 0;
      (void)(*nodes)->Ancestors(side, name, 8, &omitted);
    }
  }
  return Status::Ok();
}

// A compare .vis among the built seeds whose NPU node index is one chunk:
// the frame service_vis_index puts its mutated chunk into.
const vis::VisReader& BaseCompare() {
  static const std::unique_ptr<vis::VisReader> reader = [] {
    int i = 0;
    for (const std::string& bytes : BuiltVis()) {
      std::string path = ScratchDir() + "/service-base-" + std::to_string(i++) + ".vis";
      FILE* f = fopen(path.c_str(), "wb");
      if (f == nullptr) continue;
      fwrite(bytes.data(), 1, bytes.size(), f);
      fclose(f);
      auto r = vis::VisReader::Open(path);
      if (r.ok() && (*r)->meta().kind() == vis::GRAPH_COMPARE &&
          (*r)->Sections(vis::SECTION_NODE_INDEX, vis::SIDE_NPU).size() == 1) {
        return std::move(*r);
      }
    }
    fprintf(stderr, "ga_fuzz: no compare .vis with one NPU index chunk among the seeds\n");
    exit(1);
  }();
  return *reader;
}

std::vector<std::string> CompareIndexChunks() {
  vis::NodeIndexChunk chunk;
  Status st = BaseCompare().ReadSection(*BaseCompare().Sections(vis::SECTION_NODE_INDEX, vis::SIDE_NPU)[0], &chunk);
  if (!st.ok()) return {};
  return {chunk.SerializeAsString()};
}

// BaseCompare() rewritten with `chunk` as its NPU node index, every other section as it was.
Status WriteCompareWithIndex(const std::string& path, const vis::NodeIndexChunk& chunk) {
  const vis::VisReader& base = BaseCompare();
  auto writer = vis::VisWriter::Create(path);
  if (!writer.ok()) return writer.error();
  GA_RETURN_IF_ERROR((*writer)->WriteMeta(base.meta()));
  for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
    for (const vis::SectionRef* ref : base.Sections(vis::SECTION_NODE_INDEX, side)) {
      vis::NodeIndexChunk own;
      if (side == vis::SIDE_NPU) {
        own = chunk;
      } else {
        GA_RETURN_IF_ERROR(base.ReadSection(*ref, &own));
      }
      GA_RETURN_IF_ERROR((*writer)->WriteIndexChunk(side, own));
    }
    for (const vis::SectionRef* ref : base.Sections(vis::SECTION_NODE_DETAILS, side)) {
      vis::NodeDetailBlock block;
      GA_RETURN_IF_ERROR(base.ReadSection(*ref, &block));
      GA_RETURN_IF_ERROR((*writer)->WriteDetailBlock(side, block));
    }
    for (const vis::SectionRef* ref : base.Sections(vis::SECTION_STACKS, side)) {
      vis::StackChunk stacks;
      GA_RETURN_IF_ERROR(base.ReadSection(*ref, &stacks));
      GA_RETURN_IF_ERROR((*writer)->WriteStackChunk(side, stacks));
    }
  }
  auto ranking = base.ReadDivergence();
  if (ranking.ok() && ranking->entry_size() > 0) GA_RETURN_IF_ERROR((*writer)->WriteDivergence(*ranking));
  return (*writer)->Commit();
}

}  // namespace

GA_FUZZ_TARGET(
    service_vis, ".vis opened and served by graph-ascend-server", [] { return BuiltVis(); }, "GAVISEND",
    "\x89GAVIS\r\n", "\x28\xb5\x2f\xfd") {
  return ServeVis(input.File("input.vis"));
}

// The NPU node index of a compare (matched links into the Bench side, types,
// overflow, micro steps, the hierarchy) inside an otherwise valid file.
GA_FUZZ_TARGET(service_vis_index, "compare .vis NPU node index served by graph-ascend-server", CompareIndexChunks,
               "\x08\xff\xff\xff\xff\x0f", "\x22\x02\x01\x01", "\x4a\x01\xff",
               "\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "\x30\x00") {
  vis::NodeIndexChunk chunk;
  vis::ProtobufLogCapture quiet;  // a mutated string that is not UTF-8 is refused here, and logged
  if (!chunk.ParseFromArray(input.bytes().data(), static_cast<int>(input.bytes().size()))) {
    return Error{"input", "", "not a NodeIndexChunk"};
  }
  std::string path = ScratchDir() + "/service-index.vis";
  GA_RETURN_IF_ERROR(WriteCompareWithIndex(path, chunk));
  return ServeVis(path);
}

// One cell of a msprobe 26 .vis.db, opened as the service opens a big one.
GA_FUZZ_TARGET(service_vis_db_opening_cell, "one cell of a msprobe .vis.db, its opening screen served from SQLite",
               DbCellSeeds, GA_VIS_DB_CELL_TOKENS) {
  return WithMutatedCell(input.bytes(), ServeDbOpening);
}

}  // namespace graph_ascend::fuzz
