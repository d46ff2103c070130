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
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/parallel.h"
#include "base/time_stamp.h"
#include "builder_child.h"
#include "convert_request.h"
#include "plan/compare_config.h"

namespace graph_ascend::service {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kLogLines = 200;
constexpr size_t kMaxLogLine = 1000;
constexpr size_t kMaxPlanNames = 100;
// After SIGTERM, the builder has this long to remove its temporaries before SIGKILL.
constexpr auto kTermGrace = std::chrono::milliseconds(800);
constexpr char kErrorPrefix[] = "graph-ascend: error: ";
constexpr char kProgressPrefix[] = "graph-ascend: progress ";
constexpr char kStagingPrefix[] = ".graph-ascend-convert-";

ConvertStatus Bad(int code, std::string message) { return ConvertStatus{code, std::move(message)}; }
ConvertStatus Invalid(std::string message) { return Bad(grpc::StatusCode::INVALID_ARGUMENT, std::move(message)); }

bool StartsWith(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

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

// The command line of one job and what it needs besides.
struct ConvertQueue::Launch {
  std::vector<std::string> argv;
  std::vector<std::string> display;  // the same with paths relative to the log directory
  std::string config_dir;            // a private temporary folder holding compare.json ("graph"), removed after
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


ConvertStatus ConvertQueue::Command(const ConvertRequest& r, const std::string& staging, Launch* launch) const {
  Resolved paths;
  ConvertStatus st = ResolveRequest(logdir_, r, &paths);
  if (!st.ok()) return st;
  const std::string& root = logdir_.root();
  auto shown = [&](const std::string& abs) { return abs == root ? "." : Relative(abs, root, "", ""); };
  auto add = [launch](const std::string& arg, const std::string& display) {
    launch->argv.push_back(arg);
    launch->display.push_back(display);
  };
  bool visualize = r.command() != "graph";
  add(options_.builder, "graph-ascend");
  // The builder reads nothing whose real path leaves the log directory (a
  // symlinked rank folder or dump.json): --confine, checked at every open.
  launch->argv.push_back("--confine");
  launch->argv.push_back(root);
  if (visualize) {
    add("graph_visualize", "graph_visualize");
    add("-tp", "-tp");
    add(paths.npu, shown(paths.npu));
    if (!paths.bench.empty()) {
      add("-gp", "-gp");
      add(paths.bench, shown(paths.bench));
    }
  } else {
    add("graph", "graph");
    add("-i", "-i");
    std::string compare_json = "compare.json";
    if (!staging.empty()) {
      // Beside the staging folder, inside the log directory (the builder reads
      // nothing outside it); a dead server's is removed as its staging is.
      std::string dir = staging + "-config";
      if (mkdir(dir.c_str(), 0700) != 0) {
        return Bad(grpc::StatusCode::INTERNAL,
                   "cannot make a folder in the log directory: " + std::string(strerror(errno)));
      }
      launch->config_dir = dir;
      compare_json = launch->config_dir + "/compare.json";
      nlohmann::json config = {{"npu_path", paths.npu}};
      if (!paths.bench.empty()) config["bench_path"] = paths.bench;
      std::ofstream(compare_json) << config.dump() << "\n";
    }
    add(compare_json, "compare.json");
  }
  add("-o", "-o");
  add(staging.empty() ? paths.output : staging, r.output_dir());
  if (r.overflow_check()) add("-oc", "-oc");
  if (r.fuzzy_match()) add(visualize ? "-fm" : "-f", visualize ? "-fm" : "-f");
  if (r.layer_mapping() || !paths.mapping.empty()) {
    add("-lm", "-lm");
    if (!paths.mapping.empty()) add(paths.mapping, r.layer_mapping_file());
  }
  if (r.complete_stack() && !visualize) add("-cs", "-cs");
  if (r.tensor_log() && visualize) add("-tensor_log", "-tensor_log");
  auto numbers = [&](const char* flag, const google::protobuf::RepeatedField<int32_t>& v) {
    if (v.empty()) return;
    add(flag, flag);
    for (int32_t n : v) add(std::to_string(n), std::to_string(n));
  };
  numbers("--rank_size", r.rank_size());
  numbers("--tp", r.tp());
  numbers("--pp", r.pp());
  numbers("--vpp", r.vpp());
  if (!r.order().empty()) {
    add("--order", "--order");
    for (const std::string& o : r.order()) add(o, o);
  }
  add("--progress_json", "--progress_json");
  return ConvertStatus{};
}

ConvertStatus ConvertQueue::Plan(const ConvertRequest& r, ConvertPlanReply* reply) const {
  Resolved paths;
  ConvertStatus st = ResolveRequest(logdir_, r, &paths);
  if (!st.ok()) return st;
  const std::string& root = logdir_.root();
  bool compare = !paths.bench.empty();
  job::CompareConfig config;
  if (r.command() == "graph") {
    config.path = "compare.json";
    config.npu_path = paths.npu;
    config.bench_path = paths.bench;
  } else {
    auto c = job::VisualizeConfig(paths.npu, paths.bench);
    if (!c.ok()) return Bad(grpc::StatusCode::FAILED_PRECONDITION, Relative(c.error().ToString(), root, "", ""));
    config = std::move(*c);
  }
  std::string ts = LocalTimeStamp();
  std::vector<std::string> names;
  std::string shape;
  if (Parallel(r)) {
    reply->set_kind("merge");
    auto steps = job::PlanMergeJobs(config);
    if (!steps.ok()) {
      return Bad(grpc::StatusCode::FAILED_PRECONDITION, Relative(steps.error().ToString(), root, "", ""));
    }
    int tp = r.tp_size() ? r.tp(0) : 0, pp = r.pp_size() ? r.pp(0) : 0;
    int rank_size = r.rank_size_size() ? r.rank_size(0) : 0;
    if (tp <= 0 || pp <= 0 || rank_size <= 0 || rank_size % (tp * pp) != 0) {
      return Bad(grpc::StatusCode::FAILED_PRECONDITION,
                 "parallel merge needs positive rank_size, tp and pp with rank_size a multiple of tp x pp");
    }
    size_t dp = static_cast<size_t>(rank_size / (tp * pp));
    std::vector<std::string> dirs;
    for (const job::MergeStepJob& s : *steps) {
      for (const auto* ranks : {&s.npu_ranks, &s.bench_ranks}) {
        for (const job::RankFolder& f : *ranks) dirs.push_back(f.dir);
      }
    }
    if (st = CheckInside(root, dirs); !st.ok()) return st;
    for (const job::MergeStepJob& s : *steps) {
      for (size_t i = 0; i < dp; ++i) names.push_back(job::MergedOutputName(compare, s.step, i, ts));
    }
    shape = std::to_string(steps->size()) + " step(s) x " + std::to_string(dp) + " data-parallel replica(s)";
  } else {
    reply->set_kind(compare ? "compare" : "build");
    auto plan = job::PlanJobs(config, ts);
    if (!plan.ok()) return Bad(grpc::StatusCode::FAILED_PRECONDITION, Relative(plan.error().ToString(), root, "", ""));
    std::vector<std::string> dirs;
    for (const auto& step : *plan) {
      for (const job::PairJob& j : step) {
        dirs.push_back(j.npu_dir);
        dirs.push_back(j.bench_dir);
      }
    }
    if (st = CheckInside(root, dirs); !st.ok()) return st;
    size_t ranks = 0;
    for (const auto& step : *plan) {
      ranks = std::max(ranks, step.size());
      for (const job::PairJob& j : step) names.push_back(j.output_name);
    }
    shape = std::to_string(plan->size()) + " step(s) x " + std::to_string(ranks) + " rank(s)";
  }
  reply->set_files(static_cast<uint32_t>(names.size()));
  for (size_t i = 0; i < names.size() && i < kMaxPlanNames; ++i) reply->add_outputs(r.output_dir() + "/" + names[i]);
  std::string what = reply->kind() == "merge" ? (compare ? "parallel-merge compare" : "parallel-merge build")
                                              : reply->kind();
  std::string count = std::to_string(names.size());
  reply->set_summary(names.size() == 1 ? what + ": 1 file" : what + ", batch of " + count + " files (" + shape + ")");
  Launch launch;
  st = Command(r, "", &launch);
  if (!st.ok()) return st;
  for (const std::string& a : launch.display) reply->add_argv(a);
  return ConvertStatus{};
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
  auto cleanup = [&](const Launch& launch) {
    std::error_code ec;
    std::filesystem::remove_all(staging, ec);
    if (!launch.config_dir.empty()) std::filesystem::remove_all(launch.config_dir, ec);
  };
  Launch launch;
  if (mkdir(staging.c_str(), 0750) != 0) {
    Finish(job, CONVERT_FAILED, "cannot make a folder in the log directory: " + std::string(strerror(errno)));
    return;
  }
  ConvertStatus st = Command(request, staging, &launch);
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
  bool open = true;
  while (open) {
    open = child->Read(100, on_line);
    std::lock_guard<std::mutex> l(mu_);
    Sweep(Clock::now());
    if (job->cancel && terminated == Clock::time_point()) {
      child->Terminate();
      terminated = Clock::now();
    } else if (terminated != Clock::time_point() && Clock::now() - terminated > kTermGrace) {
      child->Kill();
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
