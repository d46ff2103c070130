#include "job/batch_run.h"

#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>

#include "base/cores.h"
#include "base/parallel.h"
#include "distributed/comm_linker.h"
#include "job/pair_runner.h"
#include "job/shard_state.h"

namespace graph_ascend::job {
namespace {

uint64_t DumpBytes(const std::string& dir) {
  struct stat st;
  return !dir.empty() && stat((dir + "/dump.json").c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// One pair of the batch and what is kept of it once written.
struct Unit {
  const PairJob* job = nullptr;
  size_t step = 0;
  bool linked = false;  // its step has several ranks
  uint64_t estimate = 0;
  std::string written;
  std::optional<Error> error;
  distributed::RankComm npu, bench;
  bool has_bench = false;
};

// The options each pair's runner sees: the callbacks of the run, called one
// at a time; the run's progress summed over the runners.
class SharedCallbacks {
 public:
  SharedCallbacks(const GraphOptions& options, int runners) : options_(options), progress_(runners, 0.0) {}

  GraphOptions For(int runner, int threads) {
    GraphOptions o = options_;
    o.threads = threads;
    auto locked = [this](auto fn) {
      return [this, fn](auto&&... args) {
        std::lock_guard<std::mutex> lock(mu_);
        fn(std::forward<decltype(args)>(args)...);
      };
    };
    if (options_.progress) o.progress = locked(options_.progress);
    if (options_.stage) o.stage = locked(options_.stage);
    if (options_.log) o.log = locked(options_.log);
    if (options_.compare_log) o.compare_log = locked(options_.compare_log);
    if (options_.warn) o.warn = locked(options_.warn);
    if (options_.run_progress) {
      // A runner reports (its files done + the current one's fraction) / all
      // files: the sum over runners is the run's.
      o.run_progress = [this, runner](double f) {
        std::lock_guard<std::mutex> lock(mu_);
        progress_[runner] = f;
        double sum = 0;
        for (double p : progress_) sum += p;
        options_.run_progress(std::min(sum, 1.0));
      };
    }
    return o;
  }

 private:
  const GraphOptions& options_;
  std::mutex mu_;
  std::vector<double> progress_;
};

}  // namespace

int BatchJobs(int jobs, int cores, size_t pairs) {
  size_t n = jobs > 0 ? static_cast<size_t>(jobs) : static_cast<size_t>(std::max(cores, 1));
  return static_cast<int>(std::max<size_t>(1, std::min(n, pairs)));
}

Result<GraphResult> RunBatch(const CompareConfig& config, const std::vector<std::vector<PairJob>>& plan,
                             const std::string& output_dir, const GraphOptions& options) {
  std::vector<Unit> units;
  for (size_t s = 0; s < plan.size(); ++s) {
    for (const PairJob& job : plan[s]) {
      Unit u;
      u.job = &job;
      u.step = s;
      u.linked = plan[s].size() > 1;
      u.estimate = static_cast<uint64_t>(kPeakPerDumpByte * (DumpBytes(job.npu_dir) + DumpBytes(job.bench_dir)));
      units.push_back(std::move(u));
    }
  }
  int cores = UsableCores();
  int jobs = BatchJobs(options.jobs, cores, units.size());
  uint64_t budget = options.max_memory > 0 ? options.max_memory
                                           : static_cast<uint64_t>(kFreeShare * static_cast<double>(AvailableMemory()));
  if (options.log) {
    options.log("batch: " + std::to_string(units.size()) + " pairs, up to " + std::to_string(jobs) +
                " at once within " + std::to_string(budget >> 20) + " MiB");
  }
  // Each pair in flight gets its share of the cores for comparing and writing.
  int threads = options.threads > 0 ? options.threads : std::max(1, std::min(cores, 16) / jobs);
  SharedCallbacks callbacks(options, jobs);

  std::mutex mu;
  std::condition_variable room;
  size_t next = 0;
  uint64_t in_flight = 0;
  int running = 0;
  bool failed = false;
  // pair_written, in plan order: a pair written before those ahead of it waits
  // for its turn, its graphs in memory (within the budget: it is in flight).
  // Ranks linked after the batch (WriteStepLinks rewrites their files) get none.
  bool rows_in_order = static_cast<bool>(options.pair_written) &&
                       std::none_of(units.begin(), units.end(), [](const Unit& u) { return u.linked; });
  size_t turn = 0;  // the unit whose pair_written comes next
  auto work = [&](int worker) {
    GraphOptions worker_options = callbacks.For(worker, threads);
    size_t current = 0;    // the unit this worker runs
    bool stopped = false;  // its turn never came: another pair failed
    worker_options.pair_written = nullptr;
    if (rows_in_order) {
      worker_options.pair_written = [&](const std::string& path, const auto& details) -> Status {
        {
          std::unique_lock<std::mutex> lock(mu);
          room.wait(lock, [&] { return failed || turn == current; });
          if (turn != current) {
            stopped = true;
            return Error{output_dir, "", "the batch stopped"};
          }
        }
        Status st = options.pair_written(path, details);
        std::lock_guard<std::mutex> lock(mu);
        ++turn;
        room.notify_all();
        return st;
      };
    }
    JobRunner runner(config, worker_options, output_dir);
    runner.set_files(units.size());
    for (;;) {
      Unit* u = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu);
        // The next pair in plan order, once the budget has room for it (or
        // nothing runs).
        room.wait(lock, [&] {
          return failed || next == units.size() || running == 0 || in_flight + units[next].estimate <= budget;
        });
        if (failed || next == units.size()) return;
        current = next;
        stopped = false;
        u = &units[next++];
        in_flight += u->estimate;
        ++running;
      }
      auto run = [&]() -> Status {
        auto pair = runner.Prepare(*u->job);
        if (!pair.ok()) return pair.error();
        GA_RETURN_IF_ERROR(runner.Write(pair->get(), &u->written));
        if (u->linked) {
          PreparedPair& p = **pair;
          u->npu = distributed::ScanRank(u->job->rank_number, *p.npu, options.overflow_check);
          if (p.bench) u->bench = distributed::ScanRank(u->job->rank_number, *p.bench, options.overflow_check);
          u->has_bench = p.bench != nullptr;
        }
        Release(std::move(*pair));
        // main.cc keeps freed memory in each thread's arena (no trimming): with
        // several workers, hand a finished pair's back, or each worker's arena
        // keeps its largest pair (16 ranks at --jobs 2: 2.9x one pair, 2.1x so).
        if (jobs > 1) malloc_trim(0);
        return Status::Ok();
      };
      Status st = Status::Ok();
      try {
        st = run();
      } catch (...) {  // out of memory in one pair: that pair's error, the others stop
        st = ErrorOfException(std::current_exception(), u->job->npu_dir);
      }
      std::lock_guard<std::mutex> lock(mu);
      // A pair that ended without writing its rows (no file of its own) passes its turn on.
      if (rows_in_order && st.ok() && turn == current) ++turn;
      if (!st.ok()) {
        // The first error in plan order is the batch's: not a pair stopped waiting for its turn.
        if (!stopped) u->error = st.error();
        failed = true;
      }
      in_flight -= u->estimate;
      --running;
      room.notify_all();
    }
  };
  RunOnThreads(jobs, work);
  GraphResult result;
  for (const Unit& u : units) {
    if (!u.written.empty()) result.outputs.push_back(u.written);
  }
  auto undo = [&]() {
    for (const std::string& p : result.outputs) unlink(p.c_str());
  };
  if (failed) {
    undo();
    for (const Unit& u : units) {
      if (u.error) return *u.error;  // the first in plan order: every pair before it ran
    }
    return Error{output_dir, "", "the batch stopped"};
  }
  // The cross-rank links, step by step, from what each rank kept.
  const distributed::P2PRule p2p =
      options.p2p_peers_only ? distributed::P2PRule::kPeersOnly : distributed::P2PRule::kOutputsAgree;
  bool staged = false;
  for (size_t first = 0; first < units.size();) {
    size_t end = first;
    while (end < units.size() && units[end].step == units[first].step) ++end;
    if (units[first].linked) {
      if (!staged && options.stage) options.stage("linking ranks");
      staged = true;
      std::vector<distributed::RankComm> npu, bench;
      std::vector<std::vector<std::string>> files;
      for (size_t k = first; k < end; ++k) {
        npu.push_back(std::move(units[k].npu));
        bench.push_back(std::move(units[k].bench));
        files.push_back({units[k].written.substr(units[k].written.rfind('/') + 1)});
      }
      uint32_t npu_count = 0, bench_count = 0;
      Status st = WriteStepLinks(output_dir, npu, units[first].has_bench ? &bench : nullptr, p2p, files, &npu_count,
                                 &bench_count);
      if (!st.ok()) {
        undo();
        return st.error();
      }
      if (options.log) {
        options.log("linked " + std::to_string(npu_count + bench_count) + " communication nodes across ranks");
      }
    }
    first = end;
  }
  return result;
}

}  // namespace graph_ascend::job
