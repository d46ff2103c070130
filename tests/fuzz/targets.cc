// The fuzz targets: every reader of user input in the builder. Seeds are the
// real msprobe files of samples/ (and .vis files built from them).
#include <filesystem>
#include <fstream>
#include <memory>

#include "base/string_pool.h"
#include "compare/tensor_compare.h"
#include "dump/dump_data.h"
#include "fuzz.h"
#include "graph/graph_builder.h"
#include "job/compare_config.h"
#include "job/graph_job.h"
#include "match/layer_mapping.h"
#include "vis/json_export.h"
#include "vis/protobuf_log.h"
#include "vis/vis_file.h"
#include "vis/vis_index.h"

namespace graph_ascend::fuzz {
namespace {

namespace fs = std::filesystem;

#define GA_JSON_TOKENS "{", "}", "[", "]", "\"", ",", ":", "null", "true", "NaN", "-Infinity", "\\ud800", \
                       "\\udc00\\ud800", "\xff", "\xc0\x80", "\xed\xa0\x80", "{\"type\": \"torch.Tensor\"}", "\"\": "

// .vis files built from samples/ by the builder itself, once per process.
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

// Everything info and export read of a .vis: index columns, details, stacks.
Status ReadWholeVis(const std::string& path) {
  auto reader = vis::VisReader::Open(path);
  if (!reader.ok()) return reader.error();
  for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
    if (!(*reader)->has_side(side)) continue;
    auto index = vis::LoadSideIndex(**reader, side);
    if (!index.ok()) return index.error();
    for (uint32_t n : index->PreOrder()) index->Ancestors(n);
    for (uint32_t n = 0; n < index->size(); n += 7) {
      auto detail = (*reader)->ReadDetail(side, n);
      if (detail.ok() && detail->stack_id() >= 0) (void)(*reader)->ReadStack(side, detail->stack_id());
    }
  }
  return vis::ExportJson(path, ScratchDir() + "/export.json");
}

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

GA_FUZZ_TARGET(pt, ".pt (torch.save zip + pickle)", [] { return SampleFiles(".pt", 64 << 10); }, "PK\x05\x06",
               "PK\x01\x02", "\x8a\x08", "J\xff\xff\xff\xff", "K\x00", "t", "\x87", "R", "Q",
               "ctorch\nFloatStorage\n") {
  return compare::ParsePt(input.bytes(), "input.pt").status();
}

// (msprobe's PyTorch dumps write .pt; the .npy of MindSpore dumps are the unit tests' files.)
GA_FUZZ_TARGET(npy, ".npy", [] { return SampleFiles(".npy", 64 << 10, "tests/builder/testdata/tensors"); },
               "\x93NUMPY", "'descr': '<f4'",
               "'shape': (", "'fortran_order': True", "4294967296,") {
  return compare::ReadNpy(input.File("input.npy")).status();
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

}  // namespace graph_ascend::fuzz
