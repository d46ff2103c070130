// Writes a small zip archive of stored (uncompressed) members, through a
// temporary file renamed into place when complete.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace graph_ascend::zip {

// `members` are (name, content) pairs, written in order. Fails rather than
// replace an existing `path` unless `overwrite`.
Status WriteZip(const std::string& path, const std::vector<std::pair<std::string, std::string>>& members,
                bool overwrite);
// The bytes of that archive (`path` only names it in errors).
Result<std::string> ZipBytes(const std::string& path, const std::vector<std::pair<std::string, std::string>>& members);

}  // namespace graph_ascend::zip
