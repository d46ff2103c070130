// Several output files replaced together, all or none (code_mapping rewrites
// every statistic.csv of a dump and its .orig copies in one go).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace graph_ascend::code_mapping {

struct OutputFile {
  std::string path, text;
};

// rename(2) by default; a test passes one that fails on a chosen call.
using RenameFn = int (*)(const char* from, const char* to);

// Writes each text to "<path>.tmp-<pid>" (registered for removal on a
// signal), then renames them into place in order. A path that already holds
// a file keeps it as a hard link (or a copy) "<path>.bak-<pid>" until every
// rename has succeeded. When any step fails, the paths renamed so far get
// their originals back (or are removed when they had none), no temporary or
// backup is left, and the error names the file and the step.
Status WriteFileSet(const std::vector<OutputFile>& files, RenameFn rename_fn = nullptr);

}  // namespace graph_ascend::code_mapping
