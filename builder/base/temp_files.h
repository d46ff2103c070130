// Temporary output files and output folders that must not outlive a failed
// or interrupted run.
//
// Writers create "<target>.tmp-<pid>" and rename it on success; their
// destructors remove it on every error path. A signal that ends the process
// runs no destructor, so writers also register the temporary here, and the
// handler installed by RemoveTemporariesOnSignals() unlinks every registered
// path before the process dies of the signal. The signals are those whose
// default action ends the process and that a user meets: SIGINT, SIGTERM,
// SIGHUP, SIGPIPE (progress or results piped into `head`), SIGXFSZ
// (`ulimit -f`), SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF. A signal the
// process was started with ignored (nohup's SIGHUP) stays ignored.
//
// Output folders a run makes (MakeOutputFolders) are registered too: a run
// that fails (the command line's exit status 2) or dies of one of the signals
// removes each of them that is still empty.
#pragma once

#include <string>

#include "base/status.h"

namespace graph_ascend {

// Installs the handlers (once; the command line does it at start).
void RemoveTemporariesOnSignals();

// Unlinks every registered temporary now (async-signal-safe): for a process
// that handles termination itself and leaves with _exit() while writers may
// still run (the graph service).
void RemoveTemporariesNow();

// Creates `dir` and its missing parents (mode 0755 & umask, or `mode`),
// registering each folder made here. An Error names the part that could not
// be made or is not a folder.
Status MakeOutputFolders(const std::string& dir, unsigned mode = 0755);

// Registers a folder this process has just created (mkdir succeeded).
void RegisterCreatedFolder(const std::string& dir);

// Removes the registered folders that are empty, the last made first
// (async-signal-safe: rmdir only). For a run that failed.
void RemoveEmptyCreatedFolders();

// Writes `text` to "<path>.tmp-<pid>" and renames it to `path`: readers see
// the old file or the whole new one, never a part.
Status WriteFileReplacing(const std::string& path, const std::string& text);

// A registered temporary path; unregisters on destruction or Release().
// Registration may fail silently when too many temporaries are open at once
// (the writer's own clean-up still runs on errors).
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::string& path);
  ~TemporaryFile() { Release(); }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  // Forgets the path (after it was renamed or removed).
  void Release();

 private:
  int slot_ = -1;
};

}  // namespace graph_ascend
