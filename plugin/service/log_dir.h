// The log directory the service serves, and the only files it ever touches.
//
// Every path a client names is relative to the log directory. Resolve() turns
// it into an absolute path after checking that it cannot leave the directory:
// no absolute paths, no "..", no NUL, and the realpath of the result (symlinks
// followed) must still lie inside the realpath of the log directory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace graph_ascend::service {

// One .vis file found under the log directory.
struct RunEntry {
  std::string path;   // relative, '/'-separated
  std::string dir;    // relative directory, "" for the log directory itself
  std::string name;   // file name
  std::string group;  // dir + "/" + kind + "_" + timestamp for batch outputs
  std::string step;   // "step0", "" when the name has none
  std::string rank;   // "rank1", "rank", "merged0", ""
  std::string stage;  // "step_1.actor_update" after the time stamp (stages layout), ""
  std::string kind;   // "build", "compare" or ""
  uint64_t size = 0;
  int64_t mtime_unix = 0;
};

// Splits a msprobe/graph-ascend output name ("compare_step0_rank1_20250101120000.vis")
// into kind, step, rank and a group key (without the directory). Whatever
// follows the time stamp is the stage (docs/FORMAT.md, "Stages"), and part
// of the group: each stage is a run of its own.
void ParseRunName(const std::string& name, RunEntry* entry);

class LogDir {
 public:
  // Fails when `path` is not an existing directory.
  static Result<LogDir> Open(const std::string& path);

  const std::string& root() const { return root_; }

  // The absolute path of `relative` (see the file comment). `must_exist`:
  // the target must exist and be a regular file. `missing` (may be null) is
  // set when the only problem is that the file does not exist.
  Result<std::string> Resolve(const std::string& relative, bool must_exist = true, bool* missing = nullptr) const;
  // The same checks for an existing directory; "" and "." name the log directory itself.
  Result<std::string> ResolveDir(const std::string& relative) const;
  // A folder to be created (any missing part of it): the same checks on the
  // name, and its deepest existing ancestor must resolve inside. Returns the
  // absolute path (not created).
  Result<std::string> ResolveNewDir(const std::string& relative) const;

  // Every regular file ending in ".vis" or ".vis.db" under the log directory, recursively,
  // in natural order of the relative path. Symlinked directories are not
  // followed; symlinked files are listed only when they resolve inside.
  // Folders named ".graph-ascend-*" (conversions being written) are skipped.
  // A batch of one graph (compare_rank_<time>.vis of a -tp/-gp pair of one
  // rank folder, compare_step0_rank0_<time>.vis) is listed as a single graph:
  // no step or rank, so the page offers no pickers and no rank overview.
  std::vector<RunEntry> ListRuns() const;

 private:
  explicit LogDir(std::string root) : root_(std::move(root)) {}
  bool Inside(const std::string& real) const;
  // The checks on the name alone: not empty, not absolute, no "..", no NUL.
  Status CheckName(const std::string& relative) const;

  std::string root_;  // realpath, no trailing '/'
};

// Folders of the log directory that ListRuns skips start with this.
inline constexpr char kPrivateFolderPrefix[] = ".graph-ascend-";

// "file_2" < "file_10": digit runs compare by value.
bool NaturalLess(const std::string& a, const std::string& b);

}  // namespace graph_ascend::service
