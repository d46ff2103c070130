// The fuzz targets: every reader of user input in the builder. Seeds are the
// real msprobe files of samples/ (and .vis files built from them).
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>

#include <sqlite3.h>

#include "base/string_pool.h"
#include "compare/element_compare.h"
#include "compare/tensor_compare.h"
#include "dump/dump_data.h"
#include "formats/foreign_file.h"
#include "formats/msprobe_json/json_export.h"
#include "formats/vis_db/vis_db.h"
#include "fuzz.h"
#include "graph/graph_builder.h"
#include "job/graph_job.h"
#include "match/layer_mapping.h"
#include "plan/compare_config.h"
#include "vis/protobuf_log.h"
#include "vis/vis_file.h"
#include "vis/vis_index.h"
#include "vis_db_cells.h"

namespace graph_ascend::fuzz {

namespace fs = std::filesystem;

const std::vector<std::string>& BuiltVis() {
  static const std::vector<std::string> files = [] {
    std::vector<std::string> out;
    for (const char* config : {"dist_gloo/compare.json", "structure/build.json", "overflow_nan/compare.json"}) {
      job::GraphOptions options;
      options.timestamp = "20260101000000";
      options.overflow_check = true;
      std::string dir = ScratchDir() + "/seed-vis-" + std::to_string(out.size());
      auto result = job::RunGraph(SourceDir() + "/samples/" + config, dir, options);
      if (!result.ok()) {
        fprintf(stderr, "ga_fuzz: cannot build a seed .vis: %s\n", result.error().ToString().c_str());
        continue;
      }
      for (const std::string& path : result->outputs) {
        std::ifstream in(path, std::ios::binary);
        out.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      }
    }
    return out;
  }();
  return files;
}

Status ReadWholeVis(const std::string& path) {
  auto reader = vis::VisReader::Open(path);
  if (!reader.ok()) return reader.error();
  for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
    if (!(*reader)->has_side(side)) continue;
    auto index = vis::LoadSideIndex(**reader, side);
    if (!index.ok()) return index.error();
    for (uint32_t n : index->PreOrder()) index->Ancestors(n);
    for (uint32_t n = 0; n < index->size(); n += 7) {
      auto detail = (*reader)->ReadDetail(side, n, index->Name(n));
      if (detail.ok() && detail->stack_id() >= 0) (void)(*reader)->ReadStack(side, detail->stack_id());
    }
  }
  return vis::ExportJson(path, ScratchDir() + "/export.json");
}

namespace {

// The build .vis of samples/structure (one side, one index chunk): the
// frame that vis_index puts its mutated chunk into.
const vis::VisReader& BaseVis() {
  static const std::unique_ptr<vis::VisReader> reader = [] {
    BuiltVis();
    for (const auto& e : fs::recursive_directory_iterator(ScratchDir())) {
      if (e.path().filename().string().rfind("build_", 0) != 0) continue;
      auto r = vis::VisReader::Open(e.path().string());
      if (r.ok() && (*r)->Sections(vis::SECTION_NODE_INDEX, vis::SIDE_NPU).size() == 1) return std::move(*r);
    }
    fprintf(stderr, "ga_fuzz: no build .vis with one index chunk among the seeds\n");
    exit(1);
  }();
  return *reader;
}

std::vector<std::string> IndexChunks() {
  vis::NodeIndexChunk chunk;
  Status st = BaseVis().ReadSection(*BaseVis().Sections(vis::SECTION_NODE_INDEX, vis::SIDE_NPU)[0], &chunk);
  if (!st.ok()) return {};
  return {chunk.SerializeAsString()};
}

// Rewrites BaseVis() with `chunk` as its node index.
Status WriteWithIndex(const std::string& path, const vis::NodeIndexChunk& chunk) {
  const vis::VisReader& base = BaseVis();
  auto writer = vis::VisWriter::Create(path);
  if (!writer.ok()) return writer.error();
  GA_RETURN_IF_ERROR((*writer)->WriteMeta(base.meta()));
  GA_RETURN_IF_ERROR((*writer)->WriteIndexChunk(vis::SIDE_NPU, chunk));
  for (const vis::SectionRef* ref : base.Sections(vis::SECTION_NODE_DETAILS, vis::SIDE_NPU)) {
    vis::NodeDetailBlock block;
    GA_RETURN_IF_ERROR(base.ReadSection(*ref, &block));
    GA_RETURN_IF_ERROR((*writer)->WriteDetailBlock(vis::SIDE_NPU, block));
  }
  for (const vis::SectionRef* ref : base.Sections(vis::SECTION_STACKS, vis::SIDE_NPU)) {
    vis::StackChunk stacks;
    GA_RETURN_IF_ERROR(base.ReadSection(*ref, &stacks));
    GA_RETURN_IF_ERROR((*writer)->WriteStackChunk(vis::SIDE_NPU, stacks));
  }
  return (*writer)->Commit();
}

// A foreign graph file read as info, export and import read it; a file that
// reads must convert into a .vis that reads back whole (never write what
// cannot be read).
Status ReadForeign(const std::string& path) {
  auto graphs = formats::ReadGraphs(path);
  if (!graphs.ok()) return graphs.error();
  for (const formats::GraphFile& g : *graphs) {
    std::string vis = ScratchDir() + "/converted.vis";
    GA_RETURN_IF_ERROR(formats::WriteVisFile(g, vis));
    Status back = ReadWholeVis(vis);
    if (!back.ok()) {
      fprintf(stderr, "ga_fuzz: %s read, but its .vis does not read back: %s\n", path.c_str(),
              back.error().ToString().c_str());
      abort();
    }
  }
  return Status::Ok();
}

std::vector<std::string> MsprobeFiles(const std::string& suffix) {
  return SampleFiles(suffix, 512 << 10, "tests/data/msprobe_outputs");
}

[[noreturn]] void Broken(const std::string& db, const std::string& what) {
  fprintf(stderr, "ga_fuzz: %s: %s\n", db.c_str(), what.c_str());
  abort();
}

// The node counts of a converted file, after reading every index column.
Result<std::pair<uint64_t, uint64_t>> IndexCounts(const std::string& path) {
  auto reader = vis::VisReader::Open(path);
  if (!reader.ok()) return reader.error();
  std::pair<uint64_t, uint64_t> n{0, 0};
  for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
    if (!(*reader)->has_side(side)) continue;
    auto index = vis::LoadSideIndex(**reader, side);
    if (!index.ok()) return index.error();
    (side == vis::SIDE_NPU ? n.first : n.second) = index->size();
  }
  return n;
}

// A .vis.db graph as the server opens it: the node index alone first
// (ConvertVisDbIndex), then the whole file behind it (ConvertVisDb). Either
// may refuse the file (damage in the details shows only in the second); what
// they write must read back, and the whole file must hold the nodes of the
// index file it completes (the server checks, but a converter that disagrees
// with itself is a bug).
Status ConvertStreaming(const std::string& db) {
  const std::string dir = ScratchDir() + "/stream";
  fs::remove_all(dir);
  fs::create_directories(dir);
  int made = 0;
  std::vector<bool> whole;
  auto index = formats::ConvertVisDbIndex(
      db, [&](const vis::FileMeta&) { return dir + "/" + std::to_string(made++) + ".index.vis"; }, [](double) {},
      &whole);
  if (!index.ok()) return index.error();
  if (whole.size() != index->size()) Broken(db, "ConvertVisDbIndex: one 'whole' flag per file expected");
  std::vector<std::pair<uint64_t, uint64_t>> counts;
  for (size_t i = 0; i < index->size(); ++i) {
    auto n = IndexCounts((*index)[i]);
    if (!n.ok()) Broken(db, "an index file written does not read back: " + n.error().ToString());
    if (whole[i]) {
      Status back = ReadWholeVis((*index)[i]);
      if (!back.ok()) Broken(db, "a file read whole does not read back: " + back.error().ToString());
    }
    counts.push_back(*n);
  }
  made = 0;
  auto full =
      formats::ConvertVisDb(db, [&](const vis::FileMeta&) { return dir + "/" + std::to_string(made++) + ".vis"; });
  if (!full.ok()) return full.error();
  if (full->size() != index->size()) Broken(db, "ConvertVisDb and ConvertVisDbIndex wrote different file counts");
  for (size_t i = 0; i < full->size(); ++i) {
    Status back = ReadWholeVis((*full)[i]);
    if (!back.ok()) Broken(db, "a converted file does not read back: " + back.error().ToString());
    auto n = IndexCounts((*full)[i]);
    if (!n.ok() || *n != counts[i]) Broken(db, "the whole file does not hold the nodes of its index file");
  }
  return Status::Ok();
}

}  // namespace

GA_FUZZ_TARGET(dump_json, "dump.json (with the overflow check)", [] { return SampleFiles("dump.json"); },
               GA_JSON_TOKENS, "\"input_args\": ", "\"Max\": ", "\"data\": ", "\"task\": \"tensor\"") {
  StringPool pool;
  dump::DumpOptions options;
  options.overflow_check = true;
  return dump::ReadDumpJson(input.File("dump.json"), &pool, options).status();
}

GA_FUZZ_TARGET(construct_json, "construct.json", [] { return SampleFiles("construct.json"); }, GA_JSON_TOKENS) {
  StringPool pool;
  return dump::ReadConstructJson(input.File("construct.json"), &pool).status();
}

GA_FUZZ_TARGET(stack_json, "stack.json (both formats)", [] { return SampleFiles("stack.json"); }, GA_JSON_TOKENS) {
  StringPool pool;
  return dump::ReadStackJson(input.File("stack.json"), &pool).status();
}

// construct.json through the graph builder (cycles, self-parents, orphans),
// beside a real dump.json and stack.json.
GA_FUZZ_TARGET(construct_graph, "construct.json built into a graph", [] {
      return SampleFiles("construct.json"); }, GA_JSON_TOKENS, "\"Module.conv1.Conv2d.forward.0\"",
               "\"Module.layer1.Sequential.forward.0\"") {
  static const bool copied = [] {
    std::string rank = SourceDir() + "/samples/cnn_statistics/npu/step0/rank0";
    fs::copy_file(rank + "/dump.json", ScratchDir() + "/dump.json", fs::copy_options::overwrite_existing);
    fs::copy_file(rank + "/stack.json", ScratchDir() + "/stack.json", fs::copy_options::overwrite_existing);
    return true;
  }();
  (void)copied;
  input.File("construct.json");
  StringPool pool;
  auto side = graph::BuildSide(ScratchDir(), &pool, {});
  if (!side.ok()) return side.error();
  // The graph must be a tree from the root: every node reached once.
  const graph::Graph& g = *(*side)->graph;
  std::vector<uint8_t> seen(g.size(), 0);
  std::vector<uint32_t> todo{0};
  size_t reached = 0;
  while (!todo.empty()) {
    uint32_t n = todo.back();
    todo.pop_back();
    if (seen[n]++) abort();
    ++reached;
    for (uint32_t c : g.Children(n)) todo.push_back(c);
  }
  if (reached != g.size()) abort();
  return Status::Ok();
}

std::vector<std::string> CompareConfigs() {
  std::vector<std::string> out;
  for (const char* name : {"compare.json", "build.json", "batch.json"}) {
    for (std::string& s : SampleFiles(name)) out.push_back(std::move(s));
  }
  return out;
}

GA_FUZZ_TARGET(compare_json, "compare.json", CompareConfigs, GA_JSON_TOKENS,
               "\"npu_path\": ", "\"bench_path\": ", "\"parallel_merge\": ", "\"rank_size\": ") {
  return job::ReadCompareConfig(input.File("compare.json")).status();
}

// The tensor view's pass (compare/element_compare) over a tensor and itself: the last two axes
// sliced, rows of axis 0 masked by value.
static Status ElementView(Result<compare::TensorFile> file) {
  if (!file.ok()) return file.status();
  compare::ElementOptions o;
  const int rank = static_cast<int>(file->shape().size());
  o.row_axis = rank >= 2 ? rank - 2 : -1;
  o.col_axis = rank >= 1 ? rank - 1 : -1;
  o.mask = rank >= 1 ? compare::ElementOptions::Mask::kValue : compare::ElementOptions::Mask::kNone;
  o.chunk = 7;
  return compare::CompareElements(*file, *file, o).status();
}

GA_FUZZ_TARGET(pt, ".pt (torch.save zip + pickle)", [] { return SampleFiles(".pt", 64 << 10); }, "PK\x05\x06",
               "PK\x01\x02", "\x8a\x08", "J\xff\xff\xff\xff", "K\x00", "t", "\x87", "R", "Q",
               "ctorch\nFloatStorage\n") {
  GA_RETURN_IF_ERROR(compare::ParsePt(input.bytes(), "input.pt").status());
  return ElementView(compare::TensorFile::FromPtBytes(input.bytes(), "input.pt"));
}

// (msprobe's PyTorch dumps write .pt; the .npy of MindSpore dumps are the unit tests' files.)
GA_FUZZ_TARGET(npy, ".npy", [] { return SampleFiles(".npy", 64 << 10, "tests/builder/testdata/tensors"); },
               "\x93NUMPY", "'descr': '<f4'",
               "'shape': (", "'fortran_order': True", "4294967296,") {
  GA_RETURN_IF_ERROR(compare::ReadNpy(input.File("input.npy")).status());
  return ElementView(compare::TensorFile::Open(input.File("input.npy")));
}

GA_FUZZ_TARGET(layer_mapping_yaml, "layer-mapping yaml", [] { return SampleFiles(".yaml"); }, "[a, b]: {x: y}\n",
               "{a: b}: {x: y}\n", "? - a\n: ~\n", "&a [*a]", "*a", "!!binary", "  ", "\n", ":", "- ", "{", "[",
               "\"\\ud800\"", "%YAML 1.2\n---\n") {
  return match::CheckLayerMappingYaml("input.yaml", std::string(input.bytes()));
}

GA_FUZZ_TARGET(vis, ".vis read whole by info/export", [] { return BuiltVis(); }, "GAVISEND", "\x89GAVIS\r\n",
               "\x28\xb5\x2f\xfd") {
  return ReadWholeVis(input.File("input.vis"));
}

// The columns of a node index chunk, inside an otherwise valid .vis (byte
// mutations of a whole file rarely get through zstd's framing).
GA_FUZZ_TARGET(vis_index, ".vis node index columns", [] { return IndexChunks(); }, "\x08\xff\xff\xff\xff\x0f",
               "\x22\x02\x01\x01", "\x4a\x01\xff", "\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "\x30\x00") {
  vis::NodeIndexChunk chunk;
  vis::ProtobufLogCapture quiet;  // a mutated string that is not UTF-8 is refused here, and logged
  if (!chunk.ParseFromArray(input.bytes().data(), static_cast<int>(input.bytes().size()))) {
    return Error{"input", "", "not a NodeIndexChunk"};
  }
  std::string path = ScratchDir() + "/index.vis";
  GA_RETURN_IF_ERROR(WriteWithIndex(path, chunk));
  return ReadWholeVis(path);
}

// msprobe's .vis.db, byte mutations of whole files (SQLite's pages and
// records as well as the cells).
GA_FUZZ_TARGET(vis_db, "msprobe .vis.db read whole (info, export, import)", [] { return MsprobeFiles(".vis.db"); },
               "SQLite format 3", "\x0d\x00\x00\x00", "\x05\x00\x00\x00", "\xff\xff\xff\xff",
               "\"DefaultModel\"", "[]", "{}", "NPU", "Bench") {
  return ReadForeign(input.File("input.vis.db"));
}

// One cell of a real .vis.db replaced by the mutated text (bytes 0-1 pick
// the column and row): the JSON inside cells, names and numbers.
GA_FUZZ_TARGET(vis_db_cell, "one cell of a msprobe .vis.db", DbCellSeeds, GA_VIS_DB_CELL_TOKENS) {
  return WithMutatedCell(input.bytes(), ReadForeign);
}

// The streaming converters the service and `import` use (formats::ConvertVisDbIndex,
// then ConvertVisDb), on whole mutated files and on mutated cells.
GA_FUZZ_TARGET(
    vis_db_stream, "msprobe .vis.db converted as the server and import do", [] { return MsprobeFiles(".vis.db"); },
    "SQLite format 3", "\x0d\x00\x00\x00", "\x05\x00\x00\x00", "\xff\xff\xff\xff", "\"DefaultModel\"", "[]", "{}",
    "NPU", "Bench") {
  return ConvertStreaming(input.File("input.vis.db"));
}

GA_FUZZ_TARGET(vis_db_stream_cell, "one cell of a msprobe .vis.db, converted as the server does", DbCellSeeds,
               GA_VIS_DB_CELL_TOKENS) {
  return WithMutatedCell(input.bytes(), ConvertStreaming);
}

// msprobe's JSON .vis (msprobe 8.1 build, compare and batch files).
GA_FUZZ_TARGET(msprobe_json, "msprobe JSON .vis read whole (info, export, import)", [] { return MsprobeFiles(".vis"); },
               GA_JSON_TOKENS, "\"NPU\": ", "\"Bench\": ", "\"node\": ", "\"root\": ", "\"upnode\": ",
               "\"subnodes\": ", "\"matched_node_link\": ", "\"precision_index\": ", "\"micro_step_id\": ",
               "\"Colors\": ", "\"npu_match_nodes\": ", "\"DefaultModel\"") {
  return ReadForeign(input.File("input.vis"));
}

}  // namespace graph_ascend::fuzz
