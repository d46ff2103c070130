// The checks of a pack compare, one function per sheet, each with msprobe
// 26.2.0's rules (internal to companions/config_check; config_check.h is the
// library's contract).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "base/strings.h"
#include "config_check/config_check.h"

namespace graph_ascend::config_check {

using Json = nlohmann::ordered_json;

inline constexpr const char* kPass = "pass";
inline constexpr const char* kWarning = "warning";
inline constexpr const char* kError = "error";

// A member parsed as JSON; an Error names the pack, the member and the byte.
Result<Json> ParseJson(const Pack& pack, const std::string& member);
// "weights/step3/rank1/weight.json" with prefix "weights" -> step 3, rank 1.
bool StepRank(const std::string& member, const std::string& prefix, int64_t* step, int64_t* rank);

// setup_checks.cc: how the run was set up.
Result<Sheet> CompareEnv(const Pack& bench, const Pack& cmp);
Result<Sheet> ComparePip(const Pack& bench, const Pack& cmp);
Result<Sheet> CompareHyperparameters(const Pack& bench, const Pack& cmp);

// statistics_checks.cc: what the run computed.
Result<Sheet> CompareWeights(const Pack& bench, const Pack& cmp);
Result<Sheet> CompareDataset(const Pack& bench, const Pack& cmp);
Result<Sheet> CompareRandom(const Pack& bench, const Pack& cmp);

}  // namespace graph_ascend::config_check
