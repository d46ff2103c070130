// Output files of the companion commands, written whole or not at all: the
// text goes to a temporary file beside the target, renamed into place.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace graph_ascend::output {

// Writes `text` to `path`. Refuses an existing `path` unless `overwrite`.
Status WriteFileAtomically(const std::string& path, const std::string& text, bool overwrite);

// Writes every (path, text) or none: all are written to temporary files
// first, then renamed into place; when a write or a rename fails, the
// temporary files and the targets already renamed are removed. Existing
// targets are replaced.
Status WriteFilesAtomically(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace graph_ascend::output
