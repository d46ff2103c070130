// `graph-ascend link`: the cross-rank links of a batch built as shards, from the shards' summaries.
#include "job/link_job.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "job/shard_job.h"
#include "job/shard_state.h"
#include "shard.pb.h"

namespace graph_ascend::job {

Result<GraphResult> RunLink(const std::string& output_dir, const LinkOptions& options) {
  const std::string state = ShardStateDir(output_dir);
  const std::string batch_path = state + "/" + kShardBatchFile;
  struct stat st;
  if (stat(batch_path.c_str(), &st) != 0) {
    return Error{output_dir, "", "no sharded batch to link (no .graph-ascend-shards/batch): build it first with "
                                 "graph ... --shard I/N, into this folder"};
  }
  shard::ShardBatch batch;
  GA_RETURN_IF_ERROR(ReadShardState(batch_path, &batch));
  // Every unit's summary, in the batch's order.
  std::vector<std::vector<shard::ShardSummary>> steps(batch.steps_size());
  std::vector<std::string> missing;
  std::vector<uint64_t> weights;
  std::vector<std::string> keys;
  for (int s = 0; s < batch.steps_size(); ++s) {
    for (const shard::ShardUnit& u : batch.steps(s).units()) {
      weights.push_back(u.weight());
      keys.push_back(u.key());
      std::string path = state + "/" + u.key() + kShardSummarySuffix;
      shard::ShardSummary summary;
      if (stat(path.c_str(), &st) != 0) {
        missing.push_back(u.key());
      } else {
        GA_RETURN_IF_ERROR(ReadShardState(path, &summary));
        if (summary.key() != u.key()) return Error{path, "key", "names unit '" + summary.key() + "'"};
      }
      steps[s].push_back(std::move(summary));
    }
  }
  if (!missing.empty()) {
    std::set<uint32_t> shards;
    std::vector<uint32_t> owner = AssignShards(weights, std::max<uint32_t>(batch.shard_count(), 1));
    for (size_t k = 0; k < keys.size(); ++k) {
      if (std::find(missing.begin(), missing.end(), keys[k]) != missing.end()) shards.insert(owner[k]);
    }
    std::string which;
    for (uint32_t s : shards) which += (which.empty() ? "" : ", ") + std::to_string(s);
    return Error{state, "", std::to_string(missing.size()) + " of " + std::to_string(keys.size()) +
                                " work units have not been built (" + missing.front() +
                                (missing.size() > 1 ? ", ..." : "") + "; with " +
                                std::to_string(batch.shard_count()) + " shards: shard " + which +
                                "): run those shards again, then link"};
  }
  GraphResult result;
  std::set<std::string> outputs;
  for (const auto& step : steps) {
    for (const shard::ShardSummary& s : step) {
      for (const std::string& o : s.outputs()) {
        std::string path = output_dir + "/" + o;
        if (stat(path.c_str(), &st) != 0) {
          return Error{path, "", "missing (its unit's summary is there): run the shard that built it again"};
        }
        result.outputs.push_back(path);
        outputs.insert(o);
      }
    }
  }
  for (int s = 0; s < batch.steps_size(); ++s) {
    if (!batch.steps(s).linked()) continue;
    std::vector<distributed::RankComm> npu, bench;
    bool compare = true;
    for (const shard::ShardSummary& summary : steps[s]) {
      npu.push_back(CommFromProto(summary.npu()));
      bench.push_back(CommFromProto(summary.bench()));
      compare &= summary.has_bench();
    }
    uint32_t npu_count = 0, bench_count = 0;
    const distributed::P2PRule p2p =
        batch.p2p_peers_only() ? distributed::P2PRule::kPeersOnly : distributed::P2PRule::kOutputsAgree;
    std::vector<std::vector<std::string>> files;
    for (const shard::ShardSummary& summary : steps[s]) {
      files.emplace_back(summary.outputs().begin(), summary.outputs().end());
    }
    GA_RETURN_IF_ERROR(
        WriteStepLinks(output_dir, npu, compare ? &bench : nullptr, p2p, files, &npu_count, &bench_count));
    if (options.log) {
      options.log("linked " + std::to_string(npu_count + bench_count) + " communication nodes across " +
                  std::to_string(steps[s].size()) + " ranks");
    }
  }
  // What killed shards left: temporaries of the batch's files, then the state.
  if (DIR* d = opendir(output_dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      size_t tmp = name.rfind(".tmp-");
      if (tmp != std::string::npos && outputs.count(name.substr(0, tmp))) unlink((output_dir + "/" + name).c_str());
    }
    closedir(d);
  }
  if (DIR* d = opendir(state.c_str())) {
    std::vector<std::string> names;
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != ".." && name != kShardBatchFile) names.push_back(name);
    }
    closedir(d);
    for (const std::string& name : names) unlink((state + "/" + name).c_str());
  }
  // The batch record goes last: a link stopped before here can run again.
  unlink(batch_path.c_str());
  if (rmdir(state.c_str()) != 0) {
    return Error{state, "", std::string("linked, but the state folder cannot be removed: ") + strerror(errno)};
  }
  return result;
}

}  // namespace graph_ascend::job
