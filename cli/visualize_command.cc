// `graph-ascend graph_visualize`: msprobe 26's command line (-tp/-gp/-o ...)
// over the same planner and jobs as `graph`.
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/graph_flags.h"
#include "cli/commands.h"
#include "job/graph_job.h"
#include "plan/compare_config.h"

namespace graph_ascend::cli {
namespace {

// msprobe 26's progress lines: `PROGRESS: {"current_progress": N, ...}` on
// stdout, printed when a value changes (its plugin reads them).
class ProgressLog {
 public:
  explicit ProgressLog(bool enabled) : enabled_(enabled) {}
  void Update(double f) {
    int pct = static_cast<int>(f * 100);
    if (pct > 100) pct = 100;
    if (pct == pct_) return;
    pct_ = pct;
    Print();
  }
  void Error(const std::string& message) {
    errors_ += (errors_.empty() ? "" : ", ") + JsonString(message);
    Print();
  }
  void Finish() {
    running_ = false;
    Print();
  }

 private:
  void Print() {
    if (!enabled_) return;
    // msprobe 26 prints the running value as a float ("37.0") and the final 100 as an int.
    printf("PROGRESS: {\"current_progress\": %d%s, \"process_running\": %s, \"error_msg\": [%s]}\n", pct_,
           pct_ == 100 ? "" : ".0", running_ ? "true" : "false", errors_.c_str());
    fflush(stdout);
  }

  bool enabled_;
  bool running_ = true;
  int pct_ = 0;
  std::string errors_;
};

}  // namespace

int VisualizeCommand(const std::vector<std::string>& args, const std::vector<std::string>& argv) {
  GraphFlags flags;
  flags.dialect = job::Dialect::kVisualize;
  FlagParse parse = ParseGraphFlags(args, &flags);
  if (parse.outcome == FlagParse::kHelp) {
    fputs(GraphHelp(flags.dialect).c_str(), stdout);
    return 0;
  }
  if (parse.outcome == FlagParse::kError) return Fail(parse.error);
  job::GraphOptions options;
  options.argv = argv;
  options.complete_stack = true;  // msprobe 26 keeps whole stacks (no -cs any more)
  options.grading = vis::GRADING_26;
  options.backward_inplace = true;  // msprobe 26's hierarchy (docs/COMPATIBILITY.md C26-backward)
  options.p2p_peers_only = true;    // msprobe 26's send/recv links (C26-p2p)
  options.dialect = job::Dialect::kVisualize;
  if (std::string error = ApplyGraphFlags(flags, &options); !error.empty()) return Fail(error);
  const std::string &target = flags.target, &golden = flags.golden, &output = flags.output;
  std::string file_type = flags.file_type;
  const std::string& output_format = flags.output_format;
  if (target.empty() || output.empty()) {
    return Fail("-tp/--target_path and -o/--output_path are required (graph-ascend graph_visualize --help)");
  }
  if (file_type == "json") {
    if (!golden.empty()) {
      return Fail("--file_type json is not supported in graph comparison mode: remove -gp/--golden_path or use "
                  "--file_type db (as msprobe 26)");
    }
    if (!options.parallel.given()) {
      fputs("graph-ascend: warning: --file_type json is only for a graph merge build (--rank_size ...); writing "
            "graph files\n",
            stderr);
      file_type = "db";
    } else if (output_format == "db") {
      return Fail("--file_type json writes dump folders: it cannot be used with --output_format db");
    }
  }
  options.output_format = file_type == "json"   ? job::OutputFormat::kMergedDump
                          : output_format == "db" ? job::OutputFormat::kVisDb
                                                  : job::OutputFormat::kVis;

  ProgressLog progress(flags.progress_log);
  options.run_progress = [&progress](double f) { progress.Update(f); };
  RunConsole console;
  console.Attach(flags, &options);
  if (flags.compare_log) options.compare_log = [](const std::string& s) { printf("%s\n", s.c_str()); };
  auto config = job::VisualizeConfig(target, golden);
  auto result = config.ok() ? job::RunGraph(std::move(*config), output, options) : Result<job::GraphResult>(config.error());
  console.Done();
  if (!result.ok()) {
    progress.Error(result.error().ToString());
    progress.Finish();
    return Fail(result.error().ToString());
  }
  progress.Update(1);
  progress.Finish();
  for (const std::string& p : result->outputs) printf("%s\n", p.c_str());
  return 0;
}

}  // namespace graph_ascend::cli
