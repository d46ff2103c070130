// Reading a command's arguments, shared by graph and graph_visualize, and the
// terminal progress bar both show.
#pragma once

#include <string>
#include <vector>

#include "job/graph_job.h"

namespace graph_ascend::cli {

// Walks the arguments of one command. `flag()` is the current one; the
// readers consume the values that follow it.
class ArgReader {
 public:
  explicit ArgReader(const std::vector<std::string>& args) : args_(args) {}

  bool Next() { return ++i_ < args_.size(); }
  const std::string& flag() const { return args_[i_]; }

  // One value that does not start with '-'; false when there is none.
  bool Value(std::string* out);
  // The values up to the next option (a negative number is a value).
  std::vector<std::string> Values();
  // --rank_size, --tp, --pp, --vpp or --order into `p`. Returns false when
  // the current flag is none of them; `error` is set on a bad value.
  bool Parallel(job::ParallelFlags* p, std::string* error);
  // --shard [I/N|auto|auto/N] into `s` (auto from the environment). Returns
  // false when the current flag is another one; `error` is set on a bad value.
  bool Shard(job::ShardSpec* s, std::string* error);
  // --jobs N and --max-memory SIZE (job/batch_run.h) into `o`. Returns false
  // when the current flag is another one; `error` is set on a bad value.
  bool Batch(job::GraphOptions* o, std::string* error);
  // --code_mapping NPU_CSV [BENCH_CSV] into `o` (each file read with
  // dump::ReadCodeMapping). Returns false when the current flag is another
  // one; `error` is set on a missing value or a bad file.
  bool CodeMapping(job::GraphOptions* o, std::string* error);

 private:
  const std::vector<std::string>& args_;
  size_t i_ = static_cast<size_t>(-1);
};

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

}  // namespace graph_ascend::cli
