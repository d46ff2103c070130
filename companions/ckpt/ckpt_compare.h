// Similarity of two Megatron checkpoints, parameter by parameter, in the
// form of msprobe's checkpoint compare: {param: {l2, cos, numel, shape}}.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace graph_ascend::ckpt {

struct ParamSimilarity {
  std::string name;
  std::optional<double> l2;   // ||a - b||; none when the shapes differ
  std::optional<double> cos;  // none when the shapes differ or exactly one side is all zeros
  int64_t numel_a = 0, numel_b = 0;
  std::vector<int64_t> shape_a, shape_b;
};

struct CheckpointComparison {
  std::vector<ParamSimilarity> params;  // the parameters both have, by name
  std::vector<std::string> only_a, only_b;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;  // e.g. the two layouts differ and were merged before comparing
};

// Loads both checkpoints (save folder or iteration folder) and compares them.
// Different layouts (TP 2 against TP 1, PP, VPP or EP) are compared after
// merging, with a note; when the merged models then differ in their
// parameters, the layouts cannot be matched and the answer is an Error.
Result<CheckpointComparison> CompareCheckpoints(const std::string& a, const std::string& b);

// The JSON msprobe writes (indent 4), parameters in name order.
std::string ComparisonJson(const CheckpointComparison& c);

}  // namespace graph_ascend::ckpt
