// Output files of the companion commands, written whole or not at all: the
// text goes to a temporary file beside the target, renamed into place. The
// temporary file never outlives the command: it is removed on every error
// path, and, registered with base/temp_files.h, by SIGINT, SIGTERM and SIGHUP
// (bin/graph-ascend installs the handler), as the builder's own writers do.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/temp_files.h"

namespace graph_ascend::output {

// One output written to "<path>.tmp-<pid>" and renamed to `path` by Commit();
// destroyed before that (an error elsewhere, an exception), the temporary
// file is removed. Several staged files committed one after the other give a
// command's outputs together.
class StagedFile {
 public:
  // Writes `text` to the temporary file. Errors name `path`.
  static Result<std::unique_ptr<StagedFile>> Write(const std::string& path, const std::string& text);
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  // Renames the temporary file to `path` (replacing what is there).
  Status Commit();

  const std::string& path() const { return path_; }
  const std::string& temporary() const { return temp_; }

 private:
  explicit StagedFile(const std::string& path);

  std::string path_, temp_;
  TemporaryFile registered_;  // before the file exists: no moment a signal could miss it
  bool committed_ = false;
};

// Writes `text` to `path`. Refuses an existing `path` unless `overwrite`.
Status WriteFileAtomically(const std::string& path, const std::string& text, bool overwrite);

// Writes every (path, text) or none: all are written to temporary files
// first, then renamed into place; when a write or a rename fails, the
// temporary files and the targets already renamed are removed. Existing
// targets are replaced.
Status WriteFilesAtomically(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace graph_ascend::output
