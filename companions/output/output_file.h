// Output files of the companion commands, written whole or not at all: the
// text goes to a temporary file beside the target, renamed into place.
#pragma once

#include <string>

#include "base/status.h"

namespace graph_ascend::output {

// Writes `text` to `path`. Refuses an existing `path` unless `overwrite`.
Status WriteFileAtomically(const std::string& path, const std::string& text, bool overwrite);

}  // namespace graph_ascend::output
