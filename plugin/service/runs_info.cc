#include "runs_info.h"

#include "runs/run_spread.h"

namespace graph_ascend::service {

namespace {

// The page sees paths relative to the log directory, never where it lies.
std::string InsideText(const LogDir& logdir, std::string text) {
  const std::string prefix = logdir.root() + "/";
  for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at)) text.erase(at, prefix.size());
  return text;
}

}  // namespace

void FillRunsInfo(const LogDir& logdir, const std::string& relative, RunsInfo* out) {
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
  auto summary = runs::ReadSummaryJson(*summary_path);
  if (!summary.ok()) {
    out->set_error(InsideText(logdir, summary.error().ToString()));
    return;
  }
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
