// Running work on other threads. Nothing that runs on a thread of its own may
// end the process: an exception there (std::bad_alloc) reaches the thread
// that joins it, and when no thread can be started (a thread or address-space
// limit: std::system_error) the work runs on the joining thread instead.
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <thread>

#include "base/status.h"

namespace graph_ascend {

// The threads a parallel phase uses: the machine's cores (at least 1, at
// most 16).
int DefaultThreads();

// The CPU seconds every thread of the process has used so far (user and
// system), for stage timings.
double ProcessCpuSeconds();

// Calls fn(0) .. fn(threads - 1) at once, fn(0) on the calling thread, and
// returns when all have returned. An exception of any call is rethrown here
// (the first one) once all have returned; a call whose thread cannot be
// started runs on the calling thread.
void RunOnThreads(int threads, const std::function<void(int)>& fn);

// One piece of work on a thread of its own, beside the caller's:
//
//   BackgroundWork bench([&] { bench_result = ReadBench(); });
//   auto npu = ReadNpu();
//   Status st = bench.Join();  // then bench_result may be used
//
// Join() waits for the work and returns an Error when it threw (naming
// `file`). When its thread could not be started the work runs in Join(), on
// the caller's thread. The destructor joins work never joined (the caller
// left early, e.g. by an exception), without running work that never started.
class BackgroundWork {
 public:
  explicit BackgroundWork(std::function<void()> work);
  ~BackgroundWork();
  BackgroundWork(const BackgroundWork&) = delete;
  BackgroundWork& operator=(const BackgroundWork&) = delete;

  // Once. `file` names the input the work read, for the Error.
  Status Join(const std::string& file = "");

 private:
  void Run();

  std::function<void()> work_;
  std::exception_ptr failed_;
  std::thread thread_;
  bool started_ = false;
  bool joined_ = false;
};

// The Error of an exception caught at a thread's edge: "out of memory" for
// std::bad_alloc, else its what().
Error ErrorOfException(const std::exception_ptr& e, const std::string& file);

}  // namespace graph_ascend
