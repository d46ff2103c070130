// What graph and graph_visualize share besides their flag table: the options from the flags, and what both
// show while they run (a progress bar, --progress_json lines, -v lines, warnings).
#pragma once

#include <string>
#include <vector>

#include "cli/graph_flags.h"
#include "job/graph_job.h"

namespace graph_ascend::cli {

// The options of a run from its flags: the switches, the parallel, shard and batch values, and the
// --code_mapping files read (dump::ReadCodeMapping). Returns an error message, or "".
std::string ApplyGraphFlags(const GraphFlags& flags, job::GraphOptions* options);

// A progress bar on stderr when it is a terminal.
class ProgressBar {
 public:
  ProgressBar();
  ~ProgressBar() { Done(); }
  void Update(const std::string& name, double f);
  void Done();

 private:
  bool enabled_;
  bool shown_ = false;
  int last_pct_ = -1;
  std::string last_name_;
};

// `s` as a JSON string literal (quotes, backslashes and control characters escaped).
std::string JsonString(const std::string& s);

// --progress_json: one line per change on stderr, for a program running the
// command (the graph service's conversions):
//   graph-ascend: progress {"stage": "...", "file": "...", "file_fraction": F, "fraction": F}
// `fraction` is the whole run's; fractions move in steps of 1 %.
class ProgressLines {
 public:
  // Sets the callbacks of `options` (stage, progress, run_progress); those
  // already set are still called. `this` must outlive the run.
  void Attach(job::GraphOptions* options);

 private:
  void Print();

  std::string stage_, file_, last_;
  int file_pct_ = -1, run_pct_ = -1;
  bool run_reported_ = false;
};

// What a graph run shows on the terminal: the progress bar, --progress_json lines (ProgressLines), -v lines and
// the warnings (repaired input). Attach sets the callbacks of `options`; `this` must outlive the run.
class RunConsole {
 public:
  void Attach(const GraphFlags& flags, job::GraphOptions* options);
  void Done() { bar_.Done(); }

 private:
  ProgressBar bar_;
  ProgressLines lines_;
};

}  // namespace graph_ascend::cli
