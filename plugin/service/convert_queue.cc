#include "convert_queue.h"

#include <dirent.h>
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/parallel.h"
#include "base/strings.h"
#include "builder_child.h"
#include "convert_request.h"

namespace graph_ascend::service {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kLogLines = 200;
constexpr size_t kMaxLogLine = 1000;
constexpr char kErrorPrefix[] = "graph-ascend: error: ";
constexpr char kProgressPrefix[] = "graph-ascend: progress ";
constexpr char kStagingPrefix[] = ".graph-ascend-convert-";

ConvertStatus Bad(int code, std::string message) { return ConvertStatus{code, std::move(message)}; }
ConvertStatus Invalid(std::string message) { return Bad(grpc::StatusCode::INVALID_ARGUMENT, std::move(message)); }

bool Active(ConvertState s) { return s == CONVERT_QUEUED || s == CONVERT_RUNNING; }

}  // namespace

struct ConvertQueue::Job {
  ConvertJob state;
  std::string session;
  uint64_t version = 1;
  Clock::time_point created = Clock::now();
  Clock::time_point started;
  Clock::time_point last_watched = Clock::now();
  int watchers = 0;
  bool cancel = false;
  std::string cancel_reason;
  std::deque<std::string> log;
};

ConvertQueue::ConvertQueue(const LogDir& logdir, ConvertQueueOptions options)
    : logdir_(logdir), options_(std::move(options)) {
  if (options_.allowed) RemoveStaleStaging();
  worker_ = std::thread([this] { Work(); });
}

ConvertQueue::~ConvertQueue() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
    for (auto& [id, job] : jobs_) {
      if (Active(job->state.state())) {
        job->cancel = true;
        job->cancel_reason = "the server is stopping";
      }
    }
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

// Private folders of a server that died (its pid is gone) are removed at start.
void ConvertQueue::RemoveStaleStaging() const {
  DIR* d = opendir(logdir_.root().c_str());
  if (d == nullptr) return;
  std::vector<std::string> stale;
  while (struct dirent* ent = readdir(d)) {
    std::string name = ent->d_name;
    if (!StartsWith(name, kStagingPrefix)) continue;
    long pid = std::atol(name.c_str() + strlen(kStagingPrefix));
    if (pid > 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM)) continue;
    stale.push_back(logdir_.root() + "/" + name);
  }
  closedir(d);
  for (const std::string& s : stale) {
    std::error_code ec;
    std::filesystem::remove_all(s, ec);
  }
}

ConvertStatus ConvertQueue::Plan(const ConvertRequest& r, ConvertPlanReply* reply) const {
  return PlanRequest(logdir_, options_.builder, r, reply);
}

ConvertStatus ConvertQueue::Start(const ConvertRequest& r, ConvertJob* out) {
  if (!options_.allowed) return Bad(grpc::StatusCode::PERMISSION_DENIED, options_.not_allowed_reason);
  if (r.session().empty() || r.session().size() > 128) {
    return Invalid("session must be a non-empty id of at most 128 characters");
  }
  Resolved paths;
  ConvertStatus st = ResolveRequest(logdir_, r, &paths);
  if (!st.ok()) return st;
  std::lock_guard<std::mutex> l(mu_);
  size_t mine = 0, all = 0;
  for (const auto& [id, job] : jobs_) {
    if (!Active(job->state.state())) continue;
    ++all;
    if (job->session == r.session()) ++mine;
  }
  if (mine >= options_.max_session_jobs || all >= options_.max_jobs) {
    return Bad(grpc::StatusCode::RESOURCE_EXHAUSTED,
               "too many conversions queued (" + std::to_string(mine) + " of this page, " + std::to_string(all) +
                   " in all): wait for one to end or cancel one");
  }
  auto job = std::make_shared<Job>();
  job->session = r.session();
  job->state.set_id(std::to_string(next_id_++));
  job->state.set_state(CONVERT_QUEUED);
  job->state.set_stage("queued");
  job->state.set_created_unix(static_cast<int64_t>(time(nullptr)));
  *job->state.mutable_request() = r;
  jobs_[job->state.id()] = job;
  queue_.push_back(job);
  Sweep(Clock::now());
  Fill(*job, out);
  cv_.notify_all();
  return ConvertStatus{};
}

std::shared_ptr<ConvertQueue::Job> ConvertQueue::Find(const std::string& session, const std::string& id,
                                                      ConvertStatus* status) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second->session != session) {
    *status = Bad(grpc::StatusCode::NOT_FOUND, "no conversion " + id + " of this page");
    return nullptr;
  }
  return it->second;
}

ConvertStatus ConvertQueue::Cancel(const std::string& session, const std::string& id, ConvertJob* out) {
  std::unique_lock<std::mutex> l(mu_);
  ConvertStatus st;
  std::shared_ptr<Job> job = Find(session, id, &st);
  if (!job) return st;
  if (Active(job->state.state()) && !job->cancel) {
    job->cancel = true;
    job->cancel_reason = "cancelled from the page";
    if (job->state.state() == CONVERT_QUEUED) {
      queue_.erase(std::remove(queue_.begin(), queue_.end(), job), queue_.end());
      l.unlock();
      Finish(job, CONVERT_CANCELLED, job->cancel_reason);
      l.lock();
    }
    cv_.notify_all();
  }
  // A running job ends within a second: answer with its final state.
  cv_.wait_for(l, std::chrono::seconds(3), [&] { return !Active(job->state.state()); });
  Fill(*job, out);
  return ConvertStatus{};
}

ConvertStatus ConvertQueue::WaitChange(const std::string& session, const std::string& id, uint64_t* version,
                                       std::chrono::milliseconds wait, ConvertJob* out) {
  std::unique_lock<std::mutex> l(mu_);
  ConvertStatus st;
  std::shared_ptr<Job> job = Find(session, id, &st);
  if (!job) return st;
  ++job->watchers;
  cv_.wait_for(l, wait, [&] { return job->version != *version || stopping_; });
  --job->watchers;
  job->last_watched = Clock::now();
  *version = job->version;
  Fill(*job, out);
  return ConvertStatus{};
}

void ConvertQueue::List(const std::string& session, ConvertListReply* reply) {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<std::shared_ptr<Job>> mine;
  for (const auto& [id, job] : jobs_) {
    if (job->session == session) mine.push_back(job);
  }
  std::sort(mine.begin(), mine.end(), [](const auto& a, const auto& b) { return a->created > b->created; });
  for (const auto& job : mine) Fill(*job, reply->add_jobs());
}

void ConvertQueue::Fill(const Job& job, ConvertJob* out) const {
  *out = job.state;
  if (job.state.state() == CONVERT_QUEUED) {
    uint32_t before = 0;
    for (const auto& q : queue_) {
      if (q.get() == &job) break;
      ++before;
    }
    // The running job counts too.
    for (const auto& [id, j] : jobs_) before += j->state.state() == CONVERT_RUNNING;
    out->set_queue_position(before);
  }
  if (job.state.state() == CONVERT_RUNNING) {
    out->set_seconds(std::chrono::duration<double>(Clock::now() - job.started).count());
  }
  for (const std::string& line : job.log) out->add_log(line);
}

void ConvertQueue::Changed(Job* job) {
  ++job->version;
  cv_.notify_all();
}

void ConvertQueue::Sweep(Clock::time_point now) {
  const auto orphan = std::chrono::seconds(options_.orphan_seconds);
  for (auto& [id, job] : jobs_) {
    if (!Active(job->state.state()) || job->cancel || job->watchers > 0 || now - job->last_watched < orphan) continue;
    job->cancel = true;
    job->cancel_reason = "no page watched the conversion for " + std::to_string(options_.orphan_seconds) + " s";
    if (job->state.state() == CONVERT_QUEUED) {
      queue_.erase(std::remove(queue_.begin(), queue_.end(), job), queue_.end());
      job->state.set_state(CONVERT_CANCELLED);
      job->state.set_stage("cancelled");
      job->state.set_error_message(job->cancel_reason);
      Changed(job.get());
    }
  }
  // Finished jobs beyond the kept number go, oldest first.
  std::vector<std::shared_ptr<Job>> done;
  for (const auto& [id, job] : jobs_) {
    if (!Active(job->state.state())) done.push_back(job);
  }
  if (done.size() <= options_.kept_jobs) return;
  std::sort(done.begin(), done.end(), [](const auto& a, const auto& b) { return a->created < b->created; });
  for (size_t i = 0; i + options_.kept_jobs < done.size(); ++i) jobs_.erase(done[i]->state.id());
}

void ConvertQueue::Finish(const std::shared_ptr<Job>& job, ConvertState state, const std::string& error) {
  std::lock_guard<std::mutex> l(mu_);
  job->state.set_state(state);
  job->state.set_stage(state == CONVERT_DONE ? "done" : state == CONVERT_CANCELLED ? "cancelled" : "failed");
  if (state == CONVERT_DONE) job->state.set_fraction(1);
  job->state.set_error_message(OneLine(error));  // one line, whoever wrote it
  if (job->started != Clock::time_point()) {
    job->state.set_seconds(std::chrono::duration<double>(Clock::now() - job->started).count());
  }
  Changed(job.get());
}

void ConvertQueue::Work() {
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    cv_.wait_for(l, std::chrono::seconds(1), [&] { return stopping_ || !queue_.empty(); });
    Sweep(Clock::now());
    if (stopping_) {
      for (auto& job : queue_) {
        job->state.set_state(CONVERT_CANCELLED);
        job->state.set_error_message(job->cancel_reason);
      }
      queue_.clear();
      return;
    }
    if (queue_.empty()) continue;
    std::shared_ptr<Job> job = queue_.front();
    queue_.pop_front();
    job->state.set_state(CONVERT_RUNNING);
    job->state.set_stage("starting");
    job->started = Clock::now();
    Changed(job.get());
    l.unlock();
    // An exception (std::bad_alloc) fails the job, not the server; a staging
    // folder it leaves is removed by the next server (RemoveStaleStaging).
    try {
      Run(job);
    } catch (...) {
      Finish(job, CONVERT_FAILED, ErrorOfException(std::current_exception(), "").ToString());
    }
    l.lock();
  }
}

namespace {

// Moves the builder's outputs from `staging` into `final_dir` (created),
// never over an existing file; on failure none of them stays there.
Status Publish(const std::string& staging, const std::string& final_dir, const std::vector<std::string>& names) {
  std::error_code ec;
  std::filesystem::create_directories(final_dir, ec);
  if (ec) return Error{final_dir, "", "cannot create the output folder: " + ec.message()};
  std::vector<std::string> moved;
  for (const std::string& name : names) {
    std::string from = staging + "/" + name, to = final_dir + "/" + name;
    if (renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) != 0) {
      std::string why = errno == EEXIST ? "exists already" : strerror(errno);
      for (const std::string& m : moved) unlink(m.c_str());
      return Error{to, "", "cannot move the result there: " + why};
    }
    moved.push_back(to);
  }
  return Status::Ok();
}

}  // namespace

void ConvertQueue::Run(const std::shared_ptr<Job>& job) {
  const std::string& root = logdir_.root();
  ConvertRequest request;
  {
    std::lock_guard<std::mutex> l(mu_);
    request = job->state.request();
  }
  std::string staging = root + "/" + kStagingPrefix + std::to_string(getpid()) + "-" + job->state.id();
  auto cleanup = [&](const ConvertCommand& launch) {
    std::error_code ec;
    std::filesystem::remove_all(staging, ec);
    if (!launch.config_dir.empty()) std::filesystem::remove_all(launch.config_dir, ec);
  };
  ConvertCommand launch;
  if (mkdir(staging.c_str(), 0750) != 0) {
    Finish(job, CONVERT_FAILED, "cannot make a folder in the log directory: " + std::string(strerror(errno)));
    return;
  }
  ConvertStatus st = CommandOf(logdir_, options_.builder, request, staging, &launch);
  if (st.ok() && access(options_.builder.c_str(), X_OK) != 0) {
    st = Bad(grpc::StatusCode::INTERNAL, options_.builder + ": the graph-ascend executable is missing");
  }
  Result<BuilderChild> child = st.ok() ? BuilderChild::Start(launch.argv, root) : Result<BuilderChild>(Error{});
  if (!st.ok() || !child.ok()) {
    cleanup(launch);
    Finish(job, CONVERT_FAILED, st.ok() ? child.error().ToString() : st.message);
    return;
  }
  std::vector<std::string> outputs;
  std::string error;
  const std::string& output_dir = request.output_dir();
  auto on_line = [&](bool err, const std::string& raw) {
    std::lock_guard<std::mutex> l(mu_);
    if (err && StartsWith(raw, kProgressPrefix)) {
      auto p = nlohmann::json::parse(raw.substr(strlen(kProgressPrefix)), nullptr, false);
      if (p.is_object()) {
        std::string stage = p.value("stage", std::string());
        const auto& seen = job->state.stages();
        if (!stage.empty() && (seen.empty() || seen[seen.size() - 1] != stage)) job->state.add_stages(stage);
        job->state.set_stage(stage);
        job->state.set_file(p.value("file", std::string()));
        job->state.set_file_fraction(p.value("file_fraction", 0.0));
        job->state.set_fraction(std::min(p.value("fraction", 0.0), 0.99));  // 100 % once published
        Changed(job.get());
      }
      return;
    }
    if (!err && StartsWith(raw, staging + "/")) {
      outputs.push_back(raw.substr(staging.size() + 1));
      return;
    }
    std::string line = OneLine(Relative(raw, root, staging, output_dir));
    if (err && StartsWith(line, kErrorPrefix) && error.empty()) error = line.substr(strlen(kErrorPrefix));
    line = QuoteBytes(line, kMaxLogLine);  // cut between characters
    job->log.push_back(std::move(line));
    while (job->log.size() > kLogLines) job->log.pop_front();
    Changed(job.get());
  };
  Clock::time_point terminated;
  bool open = true, killed = false;
  while (open) {
    open = child->Read(100, on_line);
    std::lock_guard<std::mutex> l(mu_);
    Sweep(Clock::now());
    if (job->cancel && terminated == Clock::time_point()) {
      child->Terminate();
      terminated = Clock::now();
    } else if (terminated != Clock::time_point() && Clock::now() - terminated > options_.term_grace && !killed) {
      child->Kill();
      killed = true;
      // Says which way it ended (the builder's own "stopped by SIGTERM" line otherwise).
      job->log.push_back("the builder did not stop within " + std::to_string(options_.term_grace.count()) +
                         " ms of SIGTERM: killed (SIGKILL)");
      while (job->log.size() > kLogLines) job->log.pop_front();
      Changed(job.get());
    }
  }
  int status = child->Wait();
  bool cancelled;
  std::string reason;
  {
    std::lock_guard<std::mutex> l(mu_);
    cancelled = job->cancel;
    reason = job->cancel_reason;
  }
  if (cancelled) {
    cleanup(launch);
    Finish(job, CONVERT_CANCELLED, reason);
    return;
  }
  if (status != 0) {
    cleanup(launch);
    Finish(job, CONVERT_FAILED,
           error.empty() ? "the builder exited with status " + std::to_string(status) + " (see its log)" : error);
    return;
  }
  auto final_dir = logdir_.ResolveNewDir(output_dir);
  Status published = final_dir.ok() ? Publish(staging, *final_dir, outputs) : Status(final_dir.error());
  cleanup(launch);
  if (!published.ok()) {
    Finish(job, CONVERT_FAILED, Relative(published.error().ToString(), root, "", ""));
    return;
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    std::string rel = Relative(*final_dir + "/", root, "", "");
    job->state.clear_outputs();
    for (const std::string& o : outputs) job->state.add_outputs(rel + o);
  }
  Finish(job, CONVERT_DONE, "");
}

}  // namespace graph_ascend::service
