// The frame of the fuzz targets that write one mutated cell into a real
// msprobe 26 .vis.db (tests/data/msprobe_outputs/dist_gloo_compare_26.2.0.vis.db,
// a compare of 102 nodes with matches and stacks) before a reader reads it.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fuzz.h"

namespace graph_ascend::fuzz {

// Tokens for the mutator: JSON's and the values a cell holds.
#define GA_VIS_DB_CELL_TOKENS                                                                                   \
  GA_JSON_TOKENS, "\"DefaultModel\"", "\"Apis_Between_Modules.0\"", "\"Max diff\": ", "\"MaxRelativeErr\": \"", \
      "NPU_0_0_1", "9223372036854775807", "-1", "1e308"

// Seeds: byte 0 picks the cell's column, byte 1 its row, the rest is the
// cell's text; the real cells of rows 0-7 of the base file.
std::vector<std::string> DbCellSeeds();
// Such an input written into a copy of the base file, then given to `read`
// (the copy's path). A value a constraint of the table refuses is an Error.
Status WithMutatedCell(std::string_view bytes, const std::function<Status(const std::string&)>& read);

}  // namespace graph_ascend::fuzz
