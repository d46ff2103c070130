// The colour legend and tooltips of a compare mode (reference §6.10).
#pragma once

#include "vis.pb.h"

namespace graph_ascend::compare {

// Fills meta->legend and meta->tooltips for meta->mode().
void SetLegendAndTooltips(vis::FileMeta* meta);

// Fills meta->grade_legend for meta->mode(): msprobe 26's pass [0, 0.3),
// warning [0.3, 0.6), error [0.6, 1] and unmatched (none without a compare).
void SetGradeLegend(vis::FileMeta* meta);

// msprobe's task string written for a mode: summary / md5 / all / structure.
const char* TaskName(vis::CompareMode mode);

}  // namespace graph_ascend::compare
