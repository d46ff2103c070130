// msprobe 26's grading of a matched pair: pass / warning / error (precision
// index 0 / 0.5 / 1), by the rules of its indicator analysis (statistics,
// md5 and tensor checkers, with the communication and redundant-API
// exceptions). The 8.x precision index (pair_compare.h) is computed beside it;
// a .vis stores both.
#pragma once

#include <string>
#include <string_view>

#include "compare/pair_compare.h"
#include "vis.pb.h"

namespace graph_ascend::compare {

inline constexpr double kGradePass = 0;
inline constexpr double kGradeWarning = 0.5;
inline constexpr double kGradeError = 1;

// The grade of the NPU node `node_name` matched with a Bench node. `npu`
// holds the metrics ComparePair stored. Items pair as in ComparePair
// (PairedItems); an NPU item without a Bench counterpart is a row with no
// bench values (msprobe grades it an error: its shape and dtype differ from
// nothing). `parallel_merge`: merged graphs (no shape rule, API names carry
// a _rank<N> suffix). Returns NaN for MODE_NONE and MODE_STRUCTURE, and for
// an NPU node without items (msprobe 26 grades no pair without a row).
double Grade26(vis::CompareMode mode, const std::string& node_name, const vis::NodeDetail& npu,
               const vis::NodeDetail& bench, bool parallel_merge);
// The same with the items already paired (PairItems) and the metrics
// ComparePair gave them.
double Grade26(vis::CompareMode mode, std::string_view node_name, const ItemPairing& pairing,
               const PairMetrics& metrics, bool parallel_merge);

// The API of a dump name, its second dot-separated component
// ("Torch.empty.0.forward" -> "empty"); `strip_rank` removes a _rank<N> suffix.
std::string ApiOfName(const std::string& name, bool strip_rank);

}  // namespace graph_ascend::compare
