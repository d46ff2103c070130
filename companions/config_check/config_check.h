// Comparing two config_check packs (the zips msprobe's ConfigChecker writes:
// env, pip, hyperparameters/*.json, weights/step*/rank*/*.json,
// dataset/step*/rank*/dataset.json, random/rank*.json) with msprobe's rules,
// one sheet per check plus a summary, as msprobe's result.xlsx has them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "base/status.h"
#include "xlsx/xlsx_writer.h"

namespace graph_ascend::config_check {

// One cell: empty, text, number, integer or boolean.
// One sheet of result.xlsx ("summary", "env", "pip", "dataset", "weights",
// "hyperparameters", "random") and its cells.
using Cell = xlsx::Cell;
using Sheet = xlsx::Sheet;

// The files of a pack, by member name.
struct Pack {
  std::string path;
  std::map<std::string, std::string> files;
};

// Reads a pack; fails on a zip that holds none of the pack's members.
Result<Pack> ReadPack(const std::string& zip_path);

// The summary sheet first, then one sheet per check both packs have, then
// (when a member that a check reads is in one pack only) the members sheet:
// check, member (a folder "weights/" when the whole check is missing), only_in
// ("bench" or "cmp"), level. Such a check is at least a warning in the
// summary, and a check one pack lacks entirely is a summary row "warning"
// without a sheet (msprobe leaves it out without a word).
Result<std::vector<Sheet>> ComparePacks(const Pack& bench, const Pack& cmp);

inline constexpr const char* kMembersSheet = "members";

// difflib.SequenceMatcher(None, a, b).ratio(), which msprobe's fuzzy matches use.
double SequenceRatio(const std::string& a, const std::string& b);

// Writes `sheets` as DIR/result.xlsx and DIR/result.json ({sheet: [header, row...]}),
// each through a temporary file; creates DIR if needed and deletes nothing.
Status WriteResult(const std::vector<Sheet>& sheets, const std::string& dir);

}  // namespace graph_ascend::config_check
