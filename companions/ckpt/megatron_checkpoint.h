// A Megatron-LM / MindSpeed checkpoint (torch_dist excluded): the iteration
// folder named by latest_checkpointed_iteration.txt (a number or "release")
// or given directly, one mp_rank_TT[_PPP][_EEE]/model_optim_rng.pt per
// tensor / pipeline / expert parallel rank. Loading reads only the pickles;
// the parameters of the whole model refer to their shards' bytes in the
// mapped files, so memory stays bounded by the pickles, not the weights.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "ckpt/torch_file.h"

namespace graph_ascend::ckpt {

struct ShardRef {
  const TorchFile* file = nullptr;
  TensorMeta meta;
};

// One parameter of the whole model: its TP shards concatenated along
// concat_dim, or (concat_dim < 0) the first of identical copies.
struct ModelParam {
  std::vector<int64_t> shape;
  int concat_dim = -1;
  std::vector<ShardRef> shards;
  int64_t numel() const;
};

struct MegatronCheckpoint {
  std::string dir;  // the iteration folder
  int tp = 1, pp = 1, ep = 1;
  int vpp = 1;  // model chunks per pipeline stage (model0, model1, ...)
  int64_t num_experts = 0;
  std::vector<std::unique_ptr<TorchFile>> files;
  std::map<std::string, ModelParam> params;  // global mcore names
  std::vector<std::string> warnings;         // e.g. replicated parameters that differ between TP ranks

  // "TP 2 x PP 2", "TP 1 x PP 2 x VPP 2 x EP 2": the parallel sizes above 1 (TP always).
  std::string Layout() const;
};

// Loads the layout and the parameter table of the checkpoint at `path` (the
// save folder or an iteration folder). Pipeline layers are numbered globally
// by the layers of the chunks before them (uneven stages included), experts
// by num_experts / EP per expert rank; a merge that would give one global
// name twice is an Error, as is anything missing from TP x PP x EP.
Result<MegatronCheckpoint> LoadMegatronCheckpoint(const std::string& path);

// msprobe's legacy -> mcore name mapping (its name_mapping.yaml, as data),
// applied in order as substring replacements.
std::string ToMcoreName(std::string name);

// Streams a parameter's elements in C order (of the merged tensor) as doubles.
class ParamReader {
 public:
  explicit ParamReader(const ModelParam& param) : param_(param) {}
  // Fills up to `max` values; returns how many (0 at the end) or an Error.
  Result<size_t> Read(double* out, size_t max);

 private:
  Status DecodeShard(const ShardRef& s, int64_t flat, size_t n, double* out);

  const ModelParam& param_;
  int64_t outer_ = 0;   // index over the dimensions before concat_dim
  size_t shard_ = 0;    // shard of the current outer index
  int64_t within_ = 0;  // elements of the current block already read
  bool done_ = false;
};

}  // namespace graph_ascend::ckpt
