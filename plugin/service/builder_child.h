// The graph-ascend executable run as a child of the server for a conversion:
// no shell, its own process group, its output read line by line.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace graph_ascend::service {

class BuilderChild {
 public:
  // Starts argv[0] with `argv` in `cwd`, stdin from /dev/null, stdout and
  // stderr into pipes, every other descriptor closed, no signal blocked or
  // ignored whatever the server's mask. The child gets SIGTERM when the
  // starting thread ends (the server died).
  static Result<BuilderChild> Start(const std::vector<std::string>& argv, const std::string& cwd);

  BuilderChild(BuilderChild&& other) noexcept;
  BuilderChild& operator=(BuilderChild&&) = delete;
  ~BuilderChild();  // kills and reaps a child still running

  // Reads what is available for up to `timeout_ms` and calls `line` for
  // every complete line (stderr = true for stderr). Returns false once both
  // pipes are closed (the child has exited or closed them).
  bool Read(int timeout_ms, const std::function<void(bool stderr, const std::string&)>& line);

  // SIGTERM to the group (the builder removes its temporaries and dies of it).
  void Terminate();
  void Kill();
  // Waits for the exit; the exit status (128 + signal when killed).
  int Wait();
  pid_t pid() const { return pid_; }

 private:
  BuilderChild(pid_t pid, int out, int err) : pid_(pid), fds_{out, err} {}

  pid_t pid_ = -1;
  int fds_[2] = {-1, -1};
  std::string pending_[2];
  bool reaped_ = false;
  int status_ = 0;
};

}  // namespace graph_ascend::service
