#include "runs_info.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace graph_ascend::service {

namespace {

// The page sees paths relative to the log directory, never where it lies.
std::string InsideText(const LogDir& logdir, std::string text) {
  const std::string prefix = logdir.root() + "/";
  for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at)) text.erase(at, prefix.size());
  return text;
}

}  // namespace

Result<std::shared_ptr<const runs::Summary>> RunsSummaries::Get(const std::string& abs_path) {
  struct stat st;
  if (stat(abs_path.c_str(), &st) != 0) return MakeError(abs_path, "", std::string("cannot read: ") + strerror(errno));
  const int64_t mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = entries_.find(abs_path);
    if (it != entries_.end() && it->second.size == st.st_size && it->second.mtime_ns == mtime_ns &&
        it->second.inode == st.st_ino) {
      return it->second.summary;
    }
  }
  // Read outside the lock; a file changed during the read has a new mtime and is read again next time.
  auto read = runs::ReadSummaryJson(abs_path);
  if (!read.ok()) return read.error();
  auto summary = std::make_shared<const runs::Summary>(std::move(*read));
  std::lock_guard<std::mutex> l(mu_);
  if (entries_.size() >= kMaxEntries && entries_.count(abs_path) == 0) entries_.clear();
  entries_[abs_path] = Entry{st.st_size, mtime_ns, st.st_ino, summary};
  return summary;
}

void FillRunsInfo(const LogDir& logdir, RunsSummaries* summaries, const std::string& relative, RunsInfo* out) {
  std::optional<runs::RunFile> where = runs::RunFileOf(relative);
  if (!where) return;
  const std::string& parent = where->parent;
  const std::string& name = where->name;
  int run = where->run;
  // Resolve confines runs.json and every run's file to the log directory.
  bool missing = false;
  auto summary_path = logdir.Resolve(where->summary, true, &missing);
  if (!summary_path.ok()) {
    if (!missing) out->set_error(InsideText(logdir, summary_path.error().ToString()));
    return;
  }
  auto read = summaries->Get(*summary_path);
  if (!read.ok()) {
    out->set_error(InsideText(logdir, read.error().ToString()));
    return;
  }
  const runs::Summary* summary = read->get();
  if (run >= static_cast<int>(summary->runs.size())) return;  // a run<i>/ folder runs.json does not know
  for (const std::string& r : summary->runs) out->add_runs(r);
  out->set_reference(summary->reference);
  out->set_run(run);
  for (int j = 0; j < static_cast<int>(summary->runs.size()); ++j) {
    std::string file = parent + "run" + std::to_string(j) + "/" + name;
    bool ok = j != summary->reference && (j == run || logdir.Resolve(file).ok());
    out->add_files(ok ? file : "");
  }
  RunEntry entry;
  ParseRunName(name, &entry);
  for (const runs::SummaryGraph& g : summary->graphs) {
    if (g.step != entry.step || g.rank != entry.rank) continue;
    out->set_summary(g.line);
    out->set_first(g.first);
    break;
  }
}

}  // namespace graph_ascend::service
