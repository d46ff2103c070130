#include "job/shard_job.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <queue>
#include <set>

#include "base/time_stamp.h"
#include "distributed/comm_linker.h"
#include "job/pair_runner.h"
#include "job/shard_state.h"
#include "shard.pb.h"

namespace graph_ascend::job {
namespace {

uint64_t DumpBytes(const std::string& dir) {
  if (dir.empty()) return 0;
  struct stat st;
  return stat((dir + "/dump.json").c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// ---------------------------------------------------------------- the batch

// A work unit of this run, with what is needed to build it.
struct Unit {
  std::string key;
  int rank = 0;
  uint64_t weight = 0;
  size_t step = 0;   // index into the plan
  size_t index = 0;  // pair index in its step (pairs)
  std::string inputs;  // its folders, for the identity
};

std::string Flag(const char* name, bool v) { return std::string(" ") + name + "=" + (v ? "1" : "0"); }

std::string Params(const ParallelParams& p) {
  return std::to_string(p.rank_size) + "," + std::to_string(p.tp) + "," + std::to_string(p.pp) + "," +
         std::to_string(p.vpp) + "," + p.order;
}

// What makes two shards parts of one batch: inputs, options that change the
// files, and the units.
std::string Identity(const CompareConfig& config, const GraphOptions& o, const std::vector<Unit>& units) {
  std::string s = "graph-ascend shard batch 1\n";
  s += "config " + config.path + "\nnpu " + config.npu_path + "\nbench " + config.bench_path + "\n";
  s += "pairing " + std::to_string(static_cast<int>(config.pairing)) + "\n";
  if (config.parallel_merge) s += "merge " + Params(config.npu_parallel) + " " + Params(config.bench_parallel) + "\n";
  s += "options" + Flag("oc", o.overflow_check) + Flag("cs", o.complete_stack) + Flag("bi", o.backward_inplace) +
       Flag("p2p", o.p2p_peers_only) + Flag("f", o.fuzzy_match) + Flag("lm", o.layer_mapping) +
       " lm_file=" + o.layer_mapping_file + " grading=" + std::to_string(static_cast<int>(o.grading)) +
       " code_mapping=" + (o.code_mapping ? o.code_mapping->path : "") +
       " bench_code_mapping=" + (o.bench_code_mapping ? o.bench_code_mapping->path : "") + "\n";
  for (const Unit& u : units) s += "unit " + u.key + " " + u.inputs + "\n";
  return s;
}

// Records the batch, or checks that the one recorded is this one.
Result<shard::ShardBatch> OpenBatch(const std::string& state, shard::ShardBatch wanted) {
  if (mkdir(state.c_str(), 0750) != 0 && errno != EEXIST) {
    return Error{state, "", std::string("cannot create the shard state folder: ") + strerror(errno)};
  }
  std::string path = state + "/" + kShardBatchFile;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    Status written = WriteShardState(path, wanted, /*exclusive=*/true);
    if (written.ok()) return wanted;
    if (written.error().message != "exists") return written.error();
  }
  shard::ShardBatch batch;
  GA_RETURN_IF_ERROR(ReadShardState(path, &batch));
  if (batch.identity() != wanted.identity()) {
    return Error{path, "", "records another batch (other inputs, options or rank folders, started " +
                               batch.timestamp() + "): link it (graph-ascend link), or remove " + state +
                               ", or build into another folder"};
  }
  return batch;
}

// The units of the batch and its steps as recorded.
struct BatchPlan {
  std::vector<Unit> units;
  shard::ShardBatch batch;
};

BatchPlan PlanUnits(const CompareConfig& config, const std::vector<std::vector<PairJob>>* pairs,
                    const std::vector<MergeStepJob>* merged) {
  BatchPlan plan;
  if (merged != nullptr) {
    for (size_t s = 0; s < merged->size(); ++s) {
      const MergeStepJob& step = (*merged)[s];
      Unit u;
      u.key = std::string(config.bench_path.empty() ? "build" : "compare") +
              (step.step.empty() ? "" : "_" + step.step) + "_merged";
      u.step = s;
      for (const auto* ranks : {&step.npu_ranks, &step.bench_ranks}) {
        for (const RankFolder& r : *ranks) {
          u.weight += DumpBytes(r.dir);
          u.inputs += r.dir + " ";
        }
      }
      shard::ShardStep* st = plan.batch.add_steps();
      shard::ShardUnit* su = st->add_units();
      su->set_key(u.key);
      su->set_weight(u.weight);
      plan.units.push_back(u);
    }
    return plan;
  }
  for (size_t s = 0; s < pairs->size(); ++s) {
    shard::ShardStep* st = plan.batch.add_steps();
    st->set_linked((*pairs)[s].size() > 1);
    for (size_t i = 0; i < (*pairs)[s].size(); ++i) {
      const PairJob& job = (*pairs)[s][i];
      Unit u;
      // The output name without its time stamp: "compare_step0_rank1", "compare_step0_rank0__step_1.actor_update"
      // (a stage follows the time stamp).
      u.key = job.output_name.substr(0, job.output_name.size() - std::string(".vis").size());
      if (!u.key.empty() && u.key.back() == '_') u.key.pop_back();
      u.rank = job.rank_number;
      u.step = s;
      u.index = i;
      u.weight = DumpBytes(job.npu_dir) + DumpBytes(job.bench_dir);
      u.inputs = job.npu_dir + " " + job.bench_dir;
      shard::ShardUnit* su = st->add_units();
      su->set_key(u.key);
      su->set_rank(u.rank);
      su->set_weight(u.weight);
      plan.units.push_back(u);
    }
  }
  return plan;
}

std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

std::string ShardStateDir(const std::string& output_dir) { return output_dir + "/.graph-ascend-shards"; }

std::vector<uint32_t> AssignShards(const std::vector<uint64_t>& weights, uint32_t count) {
  std::vector<uint32_t> shard(weights.size(), 0);
  if (count <= 1) return shard;
  std::vector<size_t> order(weights.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weights[a] > weights[b]; });
  // (load, shard): the least loaded first, the lower shard on ties. Every
  // unit counts at least 1 so that empty dumps spread too.
  using Load = std::pair<uint64_t, uint32_t>;
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> loads;
  for (uint32_t s = 0; s < count; ++s) loads.push({0, s});
  for (size_t u : order) {
    Load l = loads.top();
    loads.pop();
    shard[u] = l.second;
    l.first += std::max<uint64_t>(weights[u], 1);
    loads.push(l);
  }
  return shard;
}

Result<GraphResult> RunShard(const CompareConfig& config, const std::string& output_dir, const GraphOptions& options) {
  std::vector<std::vector<PairJob>> pairs;
  std::vector<MergeStepJob> merged;
  if (config.parallel_merge) {
    auto plan = PlanMerged(config, options);
    if (!plan.ok()) return plan.error();
    merged = std::move(*plan);
  } else {
    auto plan = PlanJobs(config, "");  // named without a time stamp until the batch gives it
    if (!plan.ok()) return plan.error();
    pairs = std::move(*plan);
  }
  BatchPlan plan =
      PlanUnits(config, config.parallel_merge ? nullptr : &pairs, config.parallel_merge ? &merged : nullptr);
  GA_RETURN_IF_ERROR(MakeOutputDir(output_dir));
  const std::string state = ShardStateDir(output_dir);
  plan.batch.set_timestamp(options.timestamp.empty() ? LocalTimeStamp() : options.timestamp);
  plan.batch.set_identity(Identity(config, options, plan.units));
  plan.batch.set_shard_count(options.shard.count);
  plan.batch.set_p2p_peers_only(options.p2p_peers_only);
  auto batch = OpenBatch(state, plan.batch);
  if (!batch.ok()) return batch.error();
  const std::string& ts = batch->timestamp();
  if (!config.parallel_merge) {
    auto named = PlanJobs(config, ts);
    if (!named.ok()) return named.error();
    pairs = std::move(*named);
  }
  // The recorded weights, so that every shard splits alike.
  std::vector<uint64_t> weights;
  for (const shard::ShardStep& st : batch->steps()) {
    for (const shard::ShardUnit& u : st.units()) weights.push_back(u.weight());
  }
  std::vector<uint32_t> owner = AssignShards(weights, options.shard.count);
  const std::string shard_name = std::to_string(options.shard.index) + "/" + std::to_string(options.shard.count);

  GraphResult result;
  std::vector<std::string> summaries;
  JobRunner runner(config, options, output_dir);
  size_t mine = 0;
  for (uint32_t o : owner) mine += o == options.shard.index;
  runner.set_files(mine);
  auto build = [&](const Unit& u) -> Status {
    shard::ShardSummary summary;
    summary.set_key(u.key);
    summary.set_shard(shard_name);
    if (config.parallel_merge) {
      std::vector<std::string> written;
      Status st = RunMergedStep(&runner, config, merged[u.step], ts, &written);
      result.outputs.insert(result.outputs.end(), written.begin(), written.end());
      GA_RETURN_IF_ERROR(st);
      for (const std::string& w : written) summary.add_outputs(BaseName(w));
    } else {
      const std::vector<PairJob>& step = pairs[u.step];
      auto pair = runner.Prepare(step[u.index]);
      if (!pair.ok()) return pair.error();
      std::string written;
      GA_RETURN_IF_ERROR(runner.Write(pair->get(), &written));
      result.outputs.push_back(written);
      summary.add_outputs(BaseName(written));
      if (step.size() > 1) {
        PreparedPair& p = **pair;
        CommToProto(distributed::ScanRank(u.rank, *p.npu, options.overflow_check), summary.mutable_npu());
        if (p.bench) {
          CommToProto(distributed::ScanRank(u.rank, *p.bench, options.overflow_check), summary.mutable_bench());
        }
      }
    }
    std::string path = state + "/" + u.key + kShardSummarySuffix;
    GA_RETURN_IF_ERROR(WriteShardState(path, summary, /*exclusive=*/false));
    summaries.push_back(path);
    return Status::Ok();
  };
  for (size_t k = 0; k < plan.units.size(); ++k) {
    if (owner[k] != options.shard.index) continue;
    Status st = build(plan.units[k]);
    if (!st.ok()) {
      for (const std::string& p : result.outputs) unlink(p.c_str());
      for (const std::string& p : summaries) unlink(p.c_str());
      return st.error();
    }
  }
  return result;
}

}  // namespace graph_ascend::job
