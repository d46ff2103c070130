#include "job/runs_job.h"

#include <unistd.h>

#include <map>
#include <tuple>
#include <utility>

#include "base/temp_files.h"
#include "base/time_stamp.h"
#include "plan/folder_plan.h"
#include "runs/run_spread.h"

namespace graph_ascend::job {
namespace {

void RemoveOutputs(const std::vector<std::string>& paths) {
  for (const std::string& p : paths) unlink(p.c_str());
}

}  // namespace

Result<GraphResult> RunRuns(const CompareConfig& config, const std::string& output_dir, const GraphOptions& options) {
  if (options.shard.given() || options.output_format == OutputFormat::kMergedDump) {
    return Error{config.path, "key runs", "more than two runs cannot be combined with --shard or --file_type json"};
  }
  const int k = static_cast<int>(config.runs.size());
  const std::string& reference = config.runs[config.reference];
  GraphOptions run_options = options;
  if (run_options.timestamp.empty()) run_options.timestamp = LocalTimeStamp();

  // Plan every run against the reference first, so a layout error leaves nothing written.
  std::vector<CompareConfig> configs;
  std::vector<std::vector<std::vector<PairJob>>> plans;  // each run is written on this plan
  std::vector<int> run_of;
  // (stage, step, rank) -> the dump folder of each run.
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::string>> folders;
  for (int i = 0; i < k; ++i) {
    if (i == config.reference) continue;
    CompareConfig c = config;
    c.runs.clear();
    c.npu_path = config.runs[i];
    c.bench_path = reference;
    GA_RETURN_IF_ERROR(CheckGraphOptions(c, options));
    auto plan = PlanJobs(c, run_options.timestamp);
    if (!plan.ok()) {
      Error e = plan.error();
      e.message = "run " + std::to_string(i) + " against the reference (run " + std::to_string(config.reference) +
                  ", \"npu\" and \"bench\" below): " + e.message;
      return e;
    }
    for (const auto& step : *plan) {
      for (const PairJob& job : step) {
        std::vector<std::string>& dirs = folders[{job.stage, job.step, job.rank}];
        dirs.resize(k);
        dirs[i] = job.npu_dir;
        dirs[config.reference] = job.bench_dir;
      }
    }
    configs.push_back(std::move(c));
    plans.push_back(std::move(*plan));
    run_of.push_back(i);
  }
  std::vector<runs::GraphSpread> graphs;
  for (auto& [where, dirs] : folders) {
    const auto& [stage, step, rank] = where;
    for (int i = 0; i < k; ++i) {
      if (dirs[i].empty()) {
        std::string what = stage + (stage.empty() ? "" : " ") + step + (step.empty() ? "" : " ") + rank;
        return Error{config.runs[i], "", "has no folder for " + what + ", which another run has"};
      }
    }
    auto g = runs::FirstDisagreement(dirs, config.reference);
    if (!g.ok()) return g.error();
    g->stage = stage;
    g->step = step;
    g->rank = rank;
    graphs.push_back(std::move(*g));
  }

  GraphResult result;
  for (size_t c = 0; c < configs.size(); ++c) {
    std::string dir = output_dir + "/run" + std::to_string(run_of[c]);
    auto written = RunGraph(std::move(configs[c]), plans[c], dir, run_options);
    if (!written.ok()) {
      RemoveOutputs(result.outputs);
      return written.error();
    }
    result.outputs.insert(result.outputs.end(), written->outputs.begin(), written->outputs.end());
  }
  std::string summary = output_dir + "/runs.json";
  Status st = WriteFileReplacing(summary, runs::SummaryJson(config.runs, config.reference, graphs));
  if (!st.ok()) {
    RemoveOutputs(result.outputs);
    return st.error();
  }
  result.outputs.push_back(summary);
  for (const runs::GraphSpread& g : graphs) result.summary.push_back(runs::Describe(g, config.reference));
  return result;
}

}  // namespace graph_ascend::job
