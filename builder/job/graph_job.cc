#include "job/graph_job.h"
#include "job/runs_job.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "base/temp_files.h"
#include "base/time_stamp.h"
#include "formats/vis_db/vis_db.h"
#include "graph/dump_export.h"
#include "job/batch_run.h"
#include "job/pair_runner.h"
#include "job/shard_job.h"
#include "plan/folder_plan.h"

namespace graph_ascend::job {
namespace {

// The parallel parameters of the --rank_size/--tp/--pp/--vpp/--order flags:
// one value each for a build, two ("npu bench") for a compare.
Status ParallelFromFlags(const ParallelFlags& f, bool compare, ParallelParams* npu, ParallelParams* bench) {
  size_t want = compare ? 2 : 1;
  const char* counted = compare ? "two values (npu bench) in a compare" : "one value in a build";
  auto check = [&](const char* flag, size_t n, bool required) -> Status {
    if (n == 0 && !required) return Status::Ok();
    if (n == 0) {
      return Error{"", std::string("flag --") + flag,
                   "missing: parallel merge needs --rank_size, --tp and --pp (" + std::string(counted) + ")"};
    }
    if (n != want) {
      return Error{"", std::string("flag --") + flag,
                   "got " + std::to_string(n) + " value" + (n == 1 ? "" : "s") + ", expected " + counted};
    }
    return Status::Ok();
  };
  GA_RETURN_IF_ERROR(check("rank_size", f.rank_size.size(), true));
  GA_RETURN_IF_ERROR(check("tp", f.tp.size(), true));
  GA_RETURN_IF_ERROR(check("pp", f.pp.size(), true));
  GA_RETURN_IF_ERROR(check("vpp", f.vpp.size(), false));
  GA_RETURN_IF_ERROR(check("order", f.order.size(), false));
  for (size_t i = 0; i < want; ++i) {
    ParallelParams& p = i == 0 ? *npu : *bench;
    p = ParallelParams();
    p.from_flags = true;
    p.side = i == 0 ? "npu" : "bench";
    p.rank_size = f.rank_size[i];
    p.tp = f.tp[i];
    p.pp = f.pp[i];
    if (!f.vpp.empty()) p.vpp = f.vpp[i];
    if (!f.order.empty()) p.order = f.order[i];
    const std::pair<const char*, int> values[] = {{"rank_size", p.rank_size}, {"tp", p.tp}, {"pp", p.pp}, {"vpp", p.vpp}};
    for (const auto& [flag, v] : values) {
      if (v <= 0) return Error{"", p.Where(flag), std::to_string(v) + ": expected a positive integer"};
    }
  }
  return Status::Ok();
}

// --file_type json: each merged graph of each step written back as a dump
// directory, <output>/<step, or step0>/rank<main rank>/, as msprobe 26.x does.
Status RunMergedDump(const CompareConfig& config, const GraphOptions& options, const std::string& output_dir,
                     GraphResult* result) {
  if (!config.bench_path.empty()) {
    return Error{config.path, "", "--file_type json writes the merged dump of a build: it takes no golden run"};
  }
  auto plan = PlanMerged(config, options);
  if (!plan.ok()) return plan.error();
  GA_RETURN_IF_ERROR(MakeOutputDir(output_dir));
  JobRunner runner(config, options, output_dir);
  for (const MergeStepJob& step : *plan) {
    StringPool pool;
    std::string label = "merging " + (step.step.empty() ? std::string() : step.step + " ") + "npu";
    auto merged = runner.BuildMerged(step.npu_ranks, config.npu_parallel, &pool, label);
    if (!merged.ok()) return merged.error();
    std::string step_dir = output_dir + "/" + (step.step.empty() ? std::string("step0") : step.step);
    if (mkdir(step_dir.c_str(), 0755) == 0) {
      RegisterCreatedFolder(step_dir);
    } else if (errno != EEXIST) {
      return Error{step_dir, "", std::string("cannot make the folder: ") + strerror(errno)};
    }
    if (options.stage) options.stage("writing");
    for (const merge::MergedSide& m : *merged) {
      std::string dir = step_dir + "/rank" + std::to_string(m.rank);
      GA_RETURN_IF_ERROR(graph::WriteDumpDirectory(*m.side, dir));
      result->outputs.push_back(dir);
    }
    if (options.run_progress) options.run_progress(double(&step - plan->data() + 1) / plan->size());
  }
  return Status::Ok();
}

// Removes what RunMergedDump wrote (the folders it made stay if not empty).
void RemoveMergedDump(const GraphResult& result) {
  for (const std::string& dir : result.outputs) {
    for (const char* f : {"/construct.json", "/dump.json", "/stack.json"}) unlink((dir + f).c_str());
    if (rmdir(dir.c_str()) == 0) rmdir(dir.substr(0, dir.rfind('/')).c_str());
  }
}

// A parallel-merge run (§9), step by step.
Status RunMerged(const CompareConfig& config, const GraphOptions& options, const std::string& output_dir,
                 const std::string& ts, GraphResult* result) {
  auto plan = PlanMerged(config, options);
  if (!plan.ok()) return plan.error();
  GA_RETURN_IF_ERROR(MakeOutputDir(output_dir));
  JobRunner runner(config, options, output_dir);
  for (const MergeStepJob& step : *plan) {
    GA_RETURN_IF_ERROR(RunMergedStep(&runner, config, step, ts, &result->outputs));
    if (options.run_progress) options.run_progress(double(&step - plan->data() + 1) / plan->size());
  }
  return Status::Ok();
}

}  // namespace

Result<GraphResult> RunGraph(const std::string& compare_json, const std::string& output_dir,
                             const GraphOptions& options) {
  auto config = ReadCompareConfig(compare_json);
  if (!config.ok()) return config.error();
  return RunGraph(std::move(*config), output_dir, options);
}

namespace {

using Plan = std::vector<std::vector<PairJob>>;

// `planned`, in these three: the jobs PlanJobs gave for the config, or null to plan them here (a parallel
// merge plans its own).
Result<GraphResult> RunGraphVis(CompareConfig config_value, const std::string& output_dir,
                                const GraphOptions& options, const Plan* planned);

// --output_format db: the .vis files are written into a private folder inside
// output_dir, and one build_/compare_<ts>.vis.db holds every step and rank
// (as msprobe 26.x names it); the folder is removed in every case. Each
// pair's rows are written right after its .vis, from the graph still in
// memory (GraphOptions::pair_written: the file's index and stacks read back,
// the details made again, so no detail block is read). A batch whose ranks
// are linked after it (the links rewrite the files) streams each finished
// file instead, block by block (formats::VisDbWriter::AddVis).
Result<GraphResult> RunGraphDb(CompareConfig config, const std::string& output_dir, const GraphOptions& options,
                               const Plan* planned) {
  GA_RETURN_IF_ERROR(MakeOutputDir(output_dir));
  std::string scratch = output_dir + "/.graph-ascend-vis-XXXXXX";
  if (mkdtemp(scratch.data()) == nullptr) {
    return Error{output_dir, "", std::string("cannot make a temporary folder: ") + strerror(errno)};
  }
  RegisterCreatedFolder(scratch);
  GraphOptions vis_options = options;
  vis_options.output_format = OutputFormat::kVis;
  if (vis_options.timestamp.empty()) vis_options.timestamp = LocalTimeStamp();
  bool compare = !config.bench_path.empty();
  std::string db = output_dir + "/" + (compare ? "compare_" : "build_") + vis_options.timestamp + ".vis.db";
  auto created = formats::VisDbWriter::Create(db);
  if (!created.ok()) {
    rmdir(scratch.c_str());
    return created.error();
  }
  std::unique_ptr<formats::VisDbWriter> writer = std::move(*created);
  std::mutex mu;                  // one pair's rows at a time (RunBatch also orders them)
  std::vector<std::string> rowed;  // the files whose rows are written, in order
  vis_options.pair_written = [&](const std::string& path, const formats::VisDbWriter::NodeDetails& details) -> Status {
    std::lock_guard<std::mutex> lock(mu);
    GA_RETURN_IF_ERROR(writer->AddVis(path, std::nullopt, details));
    rowed.push_back(path);
    return Status::Ok();
  };
  auto written = RunGraphVis(std::move(config), scratch, vis_options, planned);
  Result<GraphResult> result = Error{};
  if (!written.ok()) {
    result = written.error();
  } else {
    if (options.stage) options.stage("writing .vis.db");
    Status st = Status::Ok();
    if (rowed.empty()) {
      // No file's rows from memory (linked ranks): each whole file streamed in order instead.
      for (const std::string& p : written->outputs) {
        if (!st.ok()) break;
        st = writer->AddVis(p);
      }
    } else if (rowed != written->outputs) {
      // The files whose rows were written hold no details (WriteRequest::details): they cannot be streamed again.
      st = Error{db, "", "internal error: the rows of " + std::to_string(rowed.size()) + " of " +
                             std::to_string(written->outputs.size()) + " graphs were written from memory"};
    }
    if (st.ok()) st = writer->Commit();
    if (st.ok()) {
      result = GraphResult{.outputs = {db}, .summary = {}};
    } else {
      result = st.error();
    }
    for (const std::string& p : written->outputs) unlink(p.c_str());
  }
  writer.reset();  // uncommitted, it leaves nothing
  rmdir(scratch.c_str());
  return result;
}

// The npu_path/bench_path form of compare.json: RunGraph but for more than two runs.
Result<GraphResult> RunNpuBench(CompareConfig config, const std::string& output_dir, const GraphOptions& options,
                                const Plan* planned) {
  if (options.parallel.given()) {
    if (config.parallel_merge) {
      return Error{config.path, "key parallel_merge",
                   "parallel parameters are given twice, as flags (--rank_size ...) and in compare.json: keep one"};
    }
    bool compare = !config.bench_path.empty();
    GA_RETURN_IF_ERROR(ParallelFromFlags(options.parallel, compare, &config.npu_parallel, &config.bench_parallel));
    config.parallel_merge = true;
    config.has_bench_parallel = compare;
  }
  GA_RETURN_IF_ERROR(CheckGraphOptions(config, options));
  if (options.output_format == OutputFormat::kVisDb) return RunGraphDb(std::move(config), output_dir, options, planned);
  return RunGraphVis(std::move(config), output_dir, options, planned);
}

}  // namespace

Result<GraphResult> RunGraph(CompareConfig config, const std::string& output_dir, const GraphOptions& options) {
  if (!config.runs.empty()) return RunRuns(config, output_dir, options);
  return RunNpuBench(std::move(config), output_dir, options, nullptr);
}

Result<GraphResult> RunGraph(CompareConfig config, const std::vector<std::vector<PairJob>>& plan,
                             const std::string& output_dir, const GraphOptions& options) {
  return RunNpuBench(std::move(config), output_dir, options, &plan);
}

namespace {

Result<GraphResult> RunGraphVis(CompareConfig config_value, const std::string& output_dir,
                                const GraphOptions& options, const Plan* planned) {
  CompareConfig* config = &config_value;
  const std::string& compare_json = config->path;
  std::string ts = options.timestamp.empty() ? LocalTimeStamp() : options.timestamp;
  if (options.shard.given()) return RunShard(*config, output_dir, options);
  if (options.output_format == OutputFormat::kMergedDump) {
    if (!config->parallel_merge) {
      return Error{compare_json, "", "--file_type json writes the merged dump of a parallel-merge build: give "
                                     "--rank_size, --tp and --pp"};
    }
    GraphResult result;
    Status st = RunMergedDump(*config, options, output_dir, &result);
    if (!st.ok()) {
      RemoveMergedDump(result);
      return st.error();
    }
    return result;
  }
  if (config->parallel_merge) {
    GraphResult result;
    Status st = RunMerged(*config, options, output_dir, ts, &result);
    if (!st.ok()) {
      for (const std::string& p : result.outputs) unlink(p.c_str());
      return st.error();
    }
    return result;
  }
  Plan own;
  if (planned == nullptr) {
    auto plan = PlanJobs(*config, ts);
    if (!plan.ok()) return plan.error();
    own = std::move(*plan);
    planned = &own;
  }
  GA_RETURN_IF_ERROR(MakeOutputDir(output_dir));
  return RunBatch(*config, *planned, output_dir, options);
}

}  // namespace

}  // namespace graph_ascend::job
