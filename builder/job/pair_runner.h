// Building, matching, comparing and writing one output file of a run: what
// every run of `graph` shares (one process, parallel merge, shards). Internal
// to job/.
#pragma once

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/parallel.h"
#include "base/status.h"
#include "compare/tensor_compare.h"
#include "divergence/divergence.h"
#include "graph/graph_builder.h"
#include "job/graph_job.h"
#include "merge/graph_merger.h"
#include "plan/folder_plan.h"
#include "vis.pb.h"

namespace graph_ascend::job {

// Creates `dir` and its parents; checks that it is a writable directory.
Status MakeOutputDir(const std::string& dir);

using graph::Side;

// One output file on its way: both sides built and matched, ready to be
// compared and written.
struct PreparedPair {
  const PairJob* job = nullptr;
  std::shared_ptr<StringPool> pool;  // shared by the merged graphs of a parallel-merge step
  bool parallel_merge = false;
  std::unique_ptr<Side> npu;
  std::unique_ptr<Side> bench;
  vis::CompareMode mode = vis::MODE_NONE;
  vis::FileMeta meta;
  std::unique_ptr<compare::DumpTensorSource> tensors;
  std::vector<divergence::Evidence> evidence;  // per NPU node, filled while comparing
};

// Frees a pair that is done with, its two sides on two threads (at 10^6
// nodes a side freeing them is a few hundred milliseconds on one core).
void Release(std::unique_ptr<PreparedPair> pair);

class JobRunner {
 public:
  JobRunner(const CompareConfig& config, const GraphOptions& options, std::string output_dir)
      : config_(config), options_(options), output_dir_(std::move(output_dir)) {}

  // Builds both sides, detects the mode, matches, assigns micro steps and
  // overflow levels.
  Result<std::unique_ptr<PreparedPair>> Prepare(const PairJob& job);
  // The same for the merged graphs of a parallel-merge run (§9): fuzzy
  // matching without the shape check (§6.3.2).
  Result<std::unique_ptr<PreparedPair>> PrepareMerged(const PairJob& job, std::shared_ptr<StringPool> pool,
                                                      std::unique_ptr<Side> npu, std::unique_ptr<Side> bench);
  // Builds every rank of one side of a parallel-merge step and merges them.
  Result<std::vector<merge::MergedSide>> BuildMerged(const std::vector<RankFolder>& ranks,
                                                     const ParallelParams& params, StringPool* pool,
                                                     const std::string& label);
  // Computes every matched NPU node's precision index (needed before the
  // cross-rank links, which show the peers' indices).
  void ComputePrecision(PreparedPair* pair);
  Status Write(PreparedPair* pair, std::string* written);
  // The number of files of the run, for the run's progress (0: not reported
  // per file).
  void set_files(size_t n) { files_ = n; }

 private:
  // Logs `what` with the wall seconds since the last Timed call and the
  // process's CPU seconds in that time (every thread's: with several pairs in
  // flight, theirs too).
  void Timed(const std::string& what) {
    auto now = std::chrono::steady_clock::now();
    double cpu = ProcessCpuSeconds();
    if (options_.log) {
      double s = std::chrono::duration<double>(now - last_).count();
      char buf[48];
      snprintf(buf, sizeof(buf), " (%.2f s, %.2f s CPU)", s, cpu - last_cpu_);
      options_.log(what + buf);
    }
    last_ = now;
    last_cpu_ = cpu;
  }
  void Warn(const graph::Side& side) const {
    if (!options_.warn) return;
    for (const Error& w : side.warnings) options_.warn(w);
  }
  void Stage(const std::string& what) const {
    if (options_.stage) options_.stage(what);
  }
  void Report(const PairJob& job, double f) const {
    if (options_.progress) options_.progress(job.output_name, f);
    if (options_.run_progress && files_ > 0) options_.run_progress((files_done_ + f) / files_);
  }
  // Compares NPU node n with its match, from both sides' dumps: its metrics
  // into `metrics`, its precision, grade and divergence evidence into the pair.
  void ComparePair(PreparedPair* pair, uint32_t n, compare::PairMetrics* metrics) const;
  // Prepare() from the built sides on: mode, meta, matching, micro steps, overflow.
  Status Finish(PreparedPair* pair);

  const CompareConfig& config_;
  const GraphOptions& options_;
  std::string output_dir_;
  size_t files_ = 0;
  size_t files_done_ = 0;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  double last_cpu_ = ProcessCpuSeconds();
};

// One step of a parallel merge (§9): each side's ranks merged into dp graphs,
// the i-th npu graph built or compared with the i-th bench graph; appends
// the files written to `outputs`.
Status RunMergedStep(JobRunner* runner, const CompareConfig& config, const MergeStepJob& step, const std::string& ts,
                     std::vector<std::string>* outputs);

// The steps of a parallel-merge run, checked against its parameters.
Result<std::vector<MergeStepJob>> PlanMerged(const CompareConfig& config, const GraphOptions& options);

}  // namespace graph_ascend::job
