// More than two runs on the page (issue 33 point 4): `graph` with a list of
// runs writes OUT/run<i>/compare_*.vis (run i against the reference) and
// OUT/runs.json. When the open file lies in such a run<i>/ folder, FileInfo
// carries which run it shows, the other runs' files of the same step and rank,
// and where the runs first disagree there, so the page can show a run picker.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "graph_service.pb.h"
#include "log_dir.h"
#include "runs/run_spread.h"

namespace graph_ascend::service {

// The runs.json files read so far, each read again only when its size,
// modification time or inode changed: FileInfo comes with every edit and
// legend change, and a runs.json lists every graph of every run.
class RunsSummaries {
 public:
  // The summary at `abs_path` (read errors are not kept: the next call reads again).
  Result<std::shared_ptr<const runs::Summary>> Get(const std::string& abs_path);

 private:
  struct Entry {
    off_t size = 0;
    int64_t mtime_ns = 0;
    ino_t inode = 0;
    std::shared_ptr<const runs::Summary> summary;
  };
  static constexpr size_t kMaxEntries = 64;  // runs outputs of a log directory; then the cache starts over
  std::mutex mu_;
  std::map<std::string, Entry> entries_;
};

// Fills `out` when `relative` (a file under the log directory) is
// "[OUT/]run<i>/<name>" with "[OUT/]runs.json" beside run<i>/; leaves it empty
// otherwise. A runs.json that cannot be read sets out->error.
void FillRunsInfo(const LogDir& logdir, RunsSummaries* summaries, const std::string& relative, RunsInfo* out);

}  // namespace graph_ascend::service
