// Statistics of the same tensor on several ranks (reference §9.5, §9.6): are
// they the same, and merging the shards of a tensor-parallel tensor into the
// statistics of the whole tensor, with the formula msprobe records in
// parallel_merge_info.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dump/dump_data.h"

namespace graph_ascend::merge {

enum class Stat { kMax, kMin, kMean, kNorm };
inline constexpr Stat kStats[] = {Stat::kMax, Stat::kMin, Stat::kMean, Stat::kNorm};
const char* StatName(Stat s);  // "Max", "Min", "Mean", "Norm"

// msprobe's _compare_value_same: values that are not numbers count as the
// same; with `uncertainty` (Mean and Norm of the PP comparison) a relative
// difference below 1e-6 (absolute when `main` is 0) counts as the same.
bool SameValue(const dump::Value& main, const dump::Value& other, bool uncertainty);

// Merges statistic `stat` of the shards `values` (the main rank's first):
// Max = max, Min = min, Mean = arithmetic mean, Norm = sqrt(sum of squares),
// with Python's int/float arithmetic. Sets `merged` and appends the formula,
// "The Max value merging method for input.0 is: max(1, 2) = 2". Returns
// false, changing nothing, when a value is not a number (msprobe would stop
// with a TypeError).
bool MergeStat(Stat stat, std::string_view key, const std::vector<dump::Value>& values, dump::Value* merged,
               std::vector<std::string>* formulas);

// str() of a number as Python prints it ("2", "0.6", "1e-05", "nan").
std::string PyStr(const dump::Value& v);

}  // namespace graph_ascend::merge
