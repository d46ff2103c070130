// For tests of work on threads: while a NoNewThreads is alive no thread can
// be started in this process, as at a thread or address-space limit
// (pthread_create fails, std::thread throws std::system_error). The default
// stack of new threads is made larger than the address space; threads that
// pass their own stack size are not affected. Only around calls that start
// threads through std::thread (not gRPC's, which abort when they cannot).
#pragma once

#include <pthread.h>

#include <cstddef>

namespace graph_ascend::testing {

class NoNewThreads {
 public:
  NoNewThreads() {
    ok_ = pthread_getattr_default_np(&saved_) == 0;
    pthread_attr_t huge;
    pthread_attr_init(&huge);
    ok_ = ok_ && pthread_attr_setstacksize(&huge, size_t{1} << 50) == 0 && pthread_setattr_default_np(&huge) == 0;
    pthread_attr_destroy(&huge);
  }
  ~NoNewThreads() {
    pthread_setattr_default_np(&saved_);
    pthread_attr_destroy(&saved_);
  }
  NoNewThreads(const NoNewThreads&) = delete;
  NoNewThreads& operator=(const NoNewThreads&) = delete;

  // Whether the limit is in place (for an ASSERT before relying on it).
  bool ok() const { return ok_; }

 private:
  pthread_attr_t saved_;
  bool ok_ = false;
};

}  // namespace graph_ascend::testing
