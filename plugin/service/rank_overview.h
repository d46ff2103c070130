// The rank overview of a run (docs/OVERVIEW.md): every (step, rank) compare
// file of one batch output with its first divergence, worst colour bucket and
// overflow counts, read from each file's FileMeta only (no graph is opened),
// and where the divergence started: following the cross-rank links of each
// rank's first divergence back to the rank that diverged by itself.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph_service.pb.h"
#include "log_dir.h"
#include "vis/vis_file.h"

namespace graph_ascend::service {

// One rank of a step as the origin trace sees it.
struct RankLink {
  int32_t rank = -1;           // the number of "rankN", -1 when the name has none
  bool diverges = false;       // the file names a first divergence
  bool communication = false;  // that first divergence is a receive or collective
  std::vector<int32_t> peers;  // the ranks it exchanges data with (its cross-rank links)
};

struct RankOrigin {
  int32_t caused_by = -1;  // the diverging rank its communication received from, -1
  int32_t origin = -1;     // where its divergence started (itself when it diverged by itself), -1
};

// For the ranks of one step, in the same order: a rank that diverges at no
// communication is its own origin; a rank whose first divergence is a
// communication with a rank already traced (nearest to an origin first,
// lower ranks first among equals) is caused by it and shares its origin; a
// diverging rank left over (its senders do not diverge, or their files are
// missing) is its own origin too.
std::vector<RankOrigin> TraceOrigins(const std::vector<RankLink>& ranks);

// The meta of a member that is no .vis of its own (a graph of msprobe's
// .vis.db, "run.vis.db#step0_rank1"), with its overview counts when it can
// give them; the service reads it from the graph's conversion.
using ForeignMetaFn = std::function<Result<vis::FileMeta>(const RunEntry& member)>;

// Whether `path` names a graph of a .vis.db ("run.vis.db" or "run.vis.db#step0_rank1").
bool IsForeignGraph(const std::string& path);

// The overviews of the runs asked for, each rebuilt when a file of its run
// was added, removed or rewritten (size or mtime). Thread-safe.
class OverviewCache {
 public:
  explicit OverviewCache(size_t max_runs = 8) : max_runs_(max_runs) {}

  // The overview of the run of `file` (a path relative to the log
  // directory, among `runs`, which list each graph of a .vis.db as the
  // service's ListRuns does). NOT_FOUND-like errors name the file. The
  // graphs of a .vis.db are read with `foreign` (without it they are refused).
  Result<std::shared_ptr<const OverviewReply>> Get(const LogDir& logdir, const std::vector<RunEntry>& runs,
                                                   const std::string& file, const ForeignMetaFn& foreign = {});

 private:
  struct Entry {
    std::string group;
    std::string signature;  // path, size and mtime of every member
    std::shared_ptr<const OverviewReply> reply;
  };
  const size_t max_runs_;
  std::mutex mu_;
  std::list<Entry> entries_;  // most recently used first
};

}  // namespace graph_ascend::service
