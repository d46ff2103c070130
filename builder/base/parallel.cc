#include "base/parallel.h"

#include <time.h>

#include <algorithm>
#include <new>
#include <system_error>
#include <vector>

#include "base/cores.h"

namespace graph_ascend {

int DefaultThreads() {
  static const int n = std::clamp(UsableCores(), 1, 16);  // the affinity mask and cgroup, not the host's cores
  return n;
}

double ProcessCpuSeconds() {
  timespec t{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0) return 0;
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

void RunOnThreads(int threads, const std::function<void(int)>& fn) {
  std::vector<std::exception_ptr> failed(static_cast<size_t>(std::max(threads, 1)));
  auto guarded = [&](int t) {
    try {
      fn(t);
    } catch (...) {
      failed[static_cast<size_t>(t)] = std::current_exception();
    }
  };
  std::vector<std::thread> others;
  std::vector<int> inline_calls;  // those whose thread could not be started
  for (int t = 1; t < threads; ++t) {
    try {
      others.emplace_back(guarded, t);
    } catch (const std::system_error&) {
      inline_calls.push_back(t);
    }
  }
  guarded(0);
  for (int t : inline_calls) guarded(t);
  for (std::thread& t : others) t.join();
  for (const std::exception_ptr& e : failed) {
    if (e) std::rethrow_exception(e);
  }
}

BackgroundWork::BackgroundWork(std::function<void()> work) : work_(std::move(work)) {
  try {
    thread_ = std::thread([this] { Run(); });
    started_ = true;
  } catch (const std::system_error&) {
    started_ = false;  // Join() runs the work
  }
}

BackgroundWork::~BackgroundWork() {
  if (thread_.joinable()) thread_.join();
}

void BackgroundWork::Run() {
  try {
    work_();
  } catch (...) {
    failed_ = std::current_exception();
  }
}

Status BackgroundWork::Join(const std::string& file) {
  if (joined_) return Status::Ok();
  joined_ = true;
  if (started_) {
    thread_.join();
  } else {
    Run();
  }
  if (failed_) return ErrorOfException(failed_, file);
  return Status::Ok();
}

Error ErrorOfException(const std::exception_ptr& e, const std::string& file) {
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    return Error{file, "", "out of memory (std::bad_alloc)"};
  } catch (const std::exception& x) {
    return Error{file, "", std::string("failed: ") + x.what()};
  } catch (...) {
    return Error{file, "", "failed: unknown exception"};
  }
}

}  // namespace graph_ascend
