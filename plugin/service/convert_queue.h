// Conversions started from the page: dump folders under the log directory
// turned into .vis files by the graph-ascend executable, one job at a time.
//
// A job belongs to the session that started it; only that session sees,
// watches and cancels it. The builder writes into a private folder
// "<logdir>/.graph-ascend-convert-<pid>-<id>" (never listed as runs); only
// when it has succeeded are its files renamed into the output folder, so a
// failed or cancelled job leaves nothing in the log directory. Cancel sends
// SIGTERM to the builder (it removes its temporaries and dies of it), SIGKILL
// a second later. A queued or running job that no page has watched
// (ConvertProgress) for `orphan_seconds` is cancelled: a closed browser
// leaves no job behind.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "graph_service.pb.h"
#include "log_dir.h"

namespace graph_ascend::service {

struct ConvertQueueOptions {
  bool allowed = true;
  std::string not_allowed_reason;
  std::string builder;            // the graph-ascend executable
  int64_t orphan_seconds = 30;    // without a watcher, then cancelled
  // After SIGTERM, the builder has this long to remove its temporaries before SIGKILL.
  std::chrono::milliseconds term_grace{800};
  size_t max_session_jobs = 8;    // queued or running, per session
  size_t max_jobs = 32;           // queued or running, in all
  size_t kept_jobs = 50;          // finished jobs remembered (oldest dropped)
};

// The status codes are gRPC's: INVALID_ARGUMENT (request, path), NOT_FOUND
// (job of another session or none), PERMISSION_DENIED (conversion off),
// RESOURCE_EXHAUSTED (queue full), FAILED_PRECONDITION (plan impossible).
struct ConvertStatus {
  int code = 0;  // grpc::StatusCode
  std::string message;
  bool ok() const { return code == 0; }
};

class ConvertQueue {
 public:
  ConvertQueue(const LogDir& logdir, ConvertQueueOptions options);
  ~ConvertQueue();  // cancels every job and waits for the worker
  ConvertQueue(const ConvertQueue&) = delete;
  ConvertQueue& operator=(const ConvertQueue&) = delete;

  bool allowed() const { return options_.allowed; }
  const std::string& not_allowed_reason() const { return options_.not_allowed_reason; }

  // What the request would write (the builder's own planner), or why it cannot run.
  ConvertStatus Plan(const ConvertRequest& request, ConvertPlanReply* reply) const;
  ConvertStatus Start(const ConvertRequest& request, ConvertJob* job);
  ConvertStatus Cancel(const std::string& session, const std::string& id, ConvertJob* job);
  // Blocks until the job differs from `*version` or `wait` has passed; sets
  // `*version` and `*job`. Counts as watching.
  ConvertStatus WaitChange(const std::string& session, const std::string& id, uint64_t* version,
                           std::chrono::milliseconds wait, ConvertJob* job);
  void List(const std::string& session, ConvertListReply* reply);

 private:
  struct Job;

  void Work();
  void Run(const std::shared_ptr<Job>& job);
  void Finish(const std::shared_ptr<Job>& job, ConvertState state, const std::string& error);
  // Under mu_: cancels jobs nobody watches, drops old finished ones.
  void Sweep(std::chrono::steady_clock::time_point now);
  std::shared_ptr<Job> Find(const std::string& session, const std::string& id, ConvertStatus* status);
  void Fill(const Job& job, ConvertJob* out) const;
  void Changed(Job* job);
  void RemoveStaleStaging() const;

  const LogDir& logdir_;
  const ConvertQueueOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::shared_ptr<Job>> jobs_;  // by id
  std::deque<std::shared_ptr<Job>> queue_;
  uint64_t next_id_ = 1;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace graph_ascend::service
