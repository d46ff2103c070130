// Temporary output files that must not outlive an interrupted run.
//
// Writers create "<target>.tmp-<pid>" and rename it on success; their
// destructors remove it on every error path. A signal that ends the process
// (SIGINT, SIGTERM, SIGHUP) runs no destructor, so writers also register the
// temporary here, and the handler installed by RemoveTemporariesOnSignals()
// unlinks every registered path before the process dies of the signal.
#pragma once

#include <string>

namespace graph_ascend {

// Installs the handlers (once; the command line does it at start).
void RemoveTemporariesOnSignals();

// Unlinks every registered temporary now (async-signal-safe): for a process
// that handles termination itself and leaves with _exit() while writers may
// still run (the graph service).
void RemoveTemporariesNow();

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
