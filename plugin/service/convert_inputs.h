// What the conversion form offers: the dump folders and layer-mapping files
// under the log directory (proto ConvertInputsReply).
#pragma once

#include "graph_service.pb.h"
#include "log_dir.h"

namespace graph_ascend::service {

// Walks the log directory (at most 8 levels, 20000 folders; symlinked
// folders and ".graph-ascend-*" folders are not entered) and lists
//   * "files": a folder holding dump.json,
//   * "ranks": a folder whose rank<N> / rank / proc<pid> folders hold dump.json,
//   * "steps": a folder whose step<N> folders hold such rank folders,
// and every *.yaml / *.yml file, each in natural order of its path.
void ListConvertInputs(const LogDir& dir, ConvertInputsReply* reply);

}  // namespace graph_ascend::service
