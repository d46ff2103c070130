// Fuzz targets of the companion tools' readers (companions/ckpt,
// companions/config_check). Seeds are the real files of samples/ckpt
// (torch.save checkpoints) and samples/config_check (msprobe's packs).
#include <filesystem>
#include <fstream>

#include "ckpt/ckpt_compare.h"
#include "ckpt/megatron_checkpoint.h"
#include "torch_save/pickle.h"
#include "ckpt/torch_file.h"
#include "config_check/config_check.h"
#include "config_check/pack_writer.h"
#include "fuzz.h"
#include "xlsx/xlsx_writer.h"
#include "torch_save/zip_archive.h"

namespace graph_ascend::fuzz {
namespace {

namespace fs = std::filesystem;

// Pickle opcodes and the globals torch.save writes, for the mutator to splice in.
#define GA_PICKLE_TOKENS                                                                                              \
  "\x80\x02", "}q\x00", "(", ")", "]", "t", "s", "u", "e", "a", "b", "R", "Q", ".", "N", "\x88", "\x89", "\x85",      \
      "\x86", "\x87", "\x94", "h\x01", "q\x01", "r\x00\x00\x00\x00", "j\xff\xff\xff\xff", "K\xff", "M\xff\xff",       \
      "J\xff\xff\xff\x7f", "\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f", "G\x7f\xf0\0\0\0\0\0\0",                       \
      "X\x05\x00\x00\x00model", "\x8c\x04args", "ctorch._utils\n_rebuild_tensor_v2\n", "ccollections\nOrderedDict\n", \
      "ctorch\nFloatStorage\n", "ctorch\nBFloat16Storage\n", "X\x07\x00\x00\x00storage", "cargparse\nNamespace\n",    \
      "c_codecs\nencode\n", "\x93", "\x95", "0", "1", "2"

// The data.pkl of every torch.save file under samples/ckpt.
std::vector<std::string> PickleSeeds() {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(SourceDir() + "/samples/ckpt")) {
    if (e.path().extension() != ".pt") continue;
    auto zip = zip::ZipArchive::Open(e.path().string());
    if (!zip.ok()) continue;
    for (const auto& [name, bytes] : zip->members())
      if (name.size() > 9 && name.compare(name.size() - 9, 9, "/data.pkl") == 0) out.emplace_back(bytes);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Every tensor of an unpickled tree, read whole through the checks of
// TorchFile::TensorBytes and ParamReader (at most a few million elements).
Status ReadTensors(const ckpt::TorchFile& file, const torch_save::PickleValue& v, int depth, size_t* budget) {
  if (depth > 80 || *budget == 0) return Status::Ok();
  if (v.kind == torch_save::PickleValue::Kind::kTensor) {
    ckpt::ModelParam param;
    param.shape = v.tensor.shape;
    param.shards = {ckpt::ShardRef{&file, v.tensor}};
    ckpt::ParamReader reader(param);
    double values[4096];
    for (;;) {
      auto n = reader.Read(values, std::min<size_t>(4096, *budget));
      if (!n.ok()) return n.error();
      if (*n == 0) break;
      *budget -= *n;
      if (*budget == 0) break;
    }
    return Status::Ok();
  }
  for (const auto& item : v.items) GA_RETURN_IF_ERROR(ReadTensors(file, *item, depth + 1, budget));
  for (const auto& [k, x] : v.dict) GA_RETURN_IF_ERROR(ReadTensors(file, *x, depth + 1, budget));
  if (v.state) GA_RETURN_IF_ERROR(ReadTensors(file, *v.state, depth + 1, budget));
  return Status::Ok();
}

GA_FUZZ_TARGET(ckpt_pickle, "checkpoint data.pkl (restricted unpickler)", PickleSeeds, GA_PICKLE_TOKENS) {
  auto root = torch_save::Unpickle(input.bytes(), "data.pkl");
  if (!root.ok()) return root.error();
  // What the checkpoint loader asks of the tree.
  if (const torch_save::PickleValue* args = (*root)->Get("args")) (void)args->Get("tensor_model_parallel_size");
  (void)(*root)->Get("model");
  return Status::Ok();
}

GA_FUZZ_TARGET(
    ckpt_torch_file, "torch.save checkpoint (zip, pickle, storages)",
    [] { return SampleFiles(".pt", 128 << 10, "samples/ckpt"); }, "PK\x03\x04", "PK\x01\x02", "PK\x05\x06",
    "PK\x06\x06", "PK\x06\x07", "archive/data/0", "archive/data.pkl", GA_PICKLE_TOKENS) {
  auto file = ckpt::TorchFile::Open(input.File("model_optim_rng.pt"));
  if (!file.ok()) return file.error();
  size_t budget = size_t{4} << 20;
  return ReadTensors(*file, file->root(), 0, &budget);
}

// The rank files of the one-rank samples (TP 1 x PP 1: the layout a lone file can have).
std::vector<std::string> OneRankSeeds() {
  std::vector<std::string> out;
  for (const char* dir : {"samples/ckpt/tp1pp1_b", "samples/ckpt/release_b"}) {
    for (std::string& s : SampleFiles(".pt", 128 << 10, dir)) out.push_back(std::move(s));
  }
  return out;
}

// The input as the one rank file of a Megatron checkpoint, compared with itself.
GA_FUZZ_TARGET(ckpt_megatron, "a one-rank Megatron checkpoint compared with itself", OneRankSeeds, "PK\x05\x06",
               "Xtensor_model_parallel_size", "Xpipeline_model_parallel_size", "Xnum_experts", "model0", "layers.0.",
               "experts.0.", "linear_qkv", "linear_proj.weight", GA_PICKLE_TOKENS) {
  static const std::string dir = ScratchDir() + "/megatron";
  static const std::string file = dir + "/iter_0000001/mp_rank_00/model_optim_rng.pt";
  static const bool made = [] {
    fs::create_directories(fs::path(file).parent_path());
    std::ofstream(dir + "/latest_checkpointed_iteration.txt") << "1\n";
    return true;
  }();
  (void)made;
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(input.bytes().data(), static_cast<std::streamsize>(input.bytes().size()));
  }
  auto result = ckpt::CompareCheckpoints(dir, dir);
  if (!result.ok()) return result.error();
  (void)ckpt::ComparisonJson(*result);
  return Status::Ok();
}

// The sample packs, read once.
const std::vector<config_check::Pack>& SamplePacks() {
  static const std::vector<config_check::Pack> packs = [] {
    std::vector<config_check::Pack> out;
    for (const char* name : {"bench.zip", "cmp.zip"}) {
      auto p = config_check::ReadPack(SourceDir() + "/samples/config_check/" + name);
      if (p.ok()) out.push_back(std::move(*p));
    }
    return out;
  }();
  return packs;
}

// A pack against each sample pack, both ways, and the result files.
Status ComparePack(const config_check::Pack& pack) {
  for (const config_check::Pack& other : SamplePacks()) {
    for (int order = 0; order < 2; ++order) {
      auto sheets = order == 0 ? config_check::ComparePacks(pack, other) : config_check::ComparePacks(other, pack);
      if (!sheets.ok()) return sheets.error();
      // result.xlsx and result.json, as the command writes them.
      GA_RETURN_IF_ERROR(config_check::WriteResult(*sheets, ScratchDir() + "/result"));
    }
  }
  return Status::Ok();
}

GA_FUZZ_TARGET(
    config_check_pack, "config_check pack zip (read and compared)",
    [] { return SampleFiles(".zip", 64 << 10, "samples/config_check"); }, "PK\x03\x04", "PK\x01\x02", "PK\x05\x06",
    "env", "pip", "weights/step0/rank0/weight.json", "dataset/step0/rank0/dataset.json", "random/rank0.json",
    "hyperparameters/hyperparameters_static.json") {
  auto pack = config_check::ReadPack(input.File("pack.zip"));
  if (!pack.ok()) return pack.error();
  return ComparePack(*pack);
}

// One member of the bench sample pack replaced: "<member name>\n<content>".
// (Pack members are deflated; this reaches the checks with intact zips.)
std::vector<std::string> MemberSeeds() {
  std::vector<std::string> out;
  if (SamplePacks().empty()) return out;
  for (const auto& [name, text] : SamplePacks().front().files) out.push_back(name + "\n" + text);
  return out;
}

GA_FUZZ_TARGET(config_check_member, "one config_check pack member (JSON, pip list) compared", MemberSeeds, "{", "}",
               "[", "]", "\"", ",", ":", "null", "true", "NaN", "-Infinity", "1e308", "\"max\": ", "\"min\": ",
               "\"mean\": ", "\"norm\": ", "{\"count\": 1, \"stack\": [\"File a.py, line 1, in f, x\"]}",
               "File /a/b.py, line 3, in main, ", "==", "=", "\n", "torch=", "weights/step1/rank0/",
               "dataset/step0/rank1/", "random/rank7.json", "hyperparameters/hyperparameters_dynamic.json") {
  if (SamplePacks().empty()) return Error{"samples/config_check", "", "no sample packs"};
  std::string_view in = input.bytes();
  size_t nl = in.find('\n');
  if (nl == std::string_view::npos) return Error{"input", "", "no member name"};
  config_check::Pack pack = SamplePacks().front();
  pack.files[std::string(in.substr(0, nl))] = std::string(in.substr(nl + 1));
  return ComparePack(pack);
}

GA_FUZZ_TARGET(
    config_check_script, "launch script read by config_check -d",
    [] { return SampleFiles(".sh", 64 << 10, "samples/config_check"); }, "torchrun ", "msrun ", "python train.py ",
    "python -m torch.distributed.launch ", "--lr ", "--bf16 ", "--x=", "$GPT_ARGS", "GPT_ARGS=\"", "\"", "${LR}",
    "LR=", "\\\n", "|", "#", "\n") {
  return config_check::ParseLaunchScript(input.File("train.sh")).status();
}

GA_FUZZ_TARGET(
    config_check_yaml, "yaml config read by config_check -d", [] { return SampleFiles(".yaml", 64 << 10); },
    "a: ", "- ", "[", "]", "{", "}", "&x ", "*x", "!!str ", "? ", "\n  ", "'", "\"", "1.0e-4", "yes", "~") {
  return config_check::ParseYamlConfig(input.File("config.yaml")).status();
}

}  // namespace
}  // namespace graph_ascend::fuzz
