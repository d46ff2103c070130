// The colour legend and tooltips of a compare mode (reference §6.10).
#pragma once

#include "vis.pb.h"

namespace graph_ascend::compare {

// Fills meta->legend and meta->tooltips for meta->mode().
void SetLegendAndTooltips(vis::FileMeta* meta);

// msprobe's task string written for a mode: summary / md5 / all / structure.
const char* TaskName(vis::CompareMode mode);

}  // namespace graph_ascend::compare
