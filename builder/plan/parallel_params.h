// The parallel layout of a run whose per-rank graphs are merged (reference
// §9.1–§9.3): its parameters, their validation, the merge strategy they
// select, and Megatron's default rank groups.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace graph_ascend::merge {

struct ParallelParams {
  int rank_size = 0;  // 0: not given
  int tp = 0;         // 0: not given
  int pp = 0;         // 0: not given
  int vpp = 1;
  std::string order = "tp-cp-ep-dp-pp";

  // Where the values came from, for error messages: compare.json's
  // "parallel_merge.<side>" section (`file` is compare.json) or the
  // command-line flags (`from_flags`, `file` empty).
  std::string file;
  std::string side = "npu";  // "npu" or "bench"
  bool from_flags = false;

  // "key parallel_merge.npu.tp" or "flag --tp (npu value)".
  std::string Where(std::string_view key) const;
};

// §9.1: checks `p` against the number of rank folders of the run
// (`rank_dir` names them in messages). Every failure names the
// compare.json key or the flag.
Status ValidateParallelParams(const ParallelParams& p, size_t rank_folders, const std::string& rank_dir);

// §9.2.
enum class Strategy { kNoParallel, kTp, kPp, kVpp, kTpPp, kFull };
Strategy SelectStrategy(const ParallelParams& p);
const char* StrategyName(Strategy s);

using RankGroups = std::vector<std::vector<int>>;

// §9.3: Megatron's RankGroupGenerator with cp = ep = 1 and dp =
// rank_size / (tp * pp): the TP and the PP groups of `order`.
struct DefaultGroups {
  RankGroups tp;
  RankGroups pp;
};
Result<DefaultGroups> MakeDefaultGroups(const ParallelParams& p);

// §9.3: the PP chains of a send map (rank -> the peer it sends to), keys in
// the order given: each chain follows the map from a key not yet visited.
// {0:2, 1:3, 2:4, 3:5, 4:6, 5:7, 6:4, 7:5} -> [[0, 2, 4, 6], [1, 3, 5, 7]].
RankGroups TraceP2PChains(const std::vector<std::pair<int, int>>& sends);

// "[0, 1]" as Python prints a list of ints.
std::string PyList(const std::vector<int>& v);

}  // namespace graph_ascend::merge
