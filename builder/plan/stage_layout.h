// Stage folders above msprobe's layout: frameworks that dump several stages
// of one training step give each its own msprobe dump_path (verl:
// <save_path>/step_<N>/<stage>/step0/rank0, docs/FORMAT.md "Stages").
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace graph_ascend::job {

// The stages under a kStages folder: the paths, relative to `dir`, of the
// folders that hold msprobe's layout (files, ranks or steps), at most two
// levels down ("step_1/actor_update"), in natural order.
Result<std::vector<std::string>> StagePaths(const std::string& dir);

// A stage path as it appears in output names: '/' written '.'.
std::string StageLabel(const std::string& stage);

}  // namespace graph_ascend::job
