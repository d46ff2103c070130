// `graph-ascend graph_visualize`: msprobe 26's command line (-tp/-gp/-o ...)
// over the same planner and jobs as `graph`.
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "job/graph_job.h"
#include "plan/compare_config.h"

namespace graph_ascend::cli {
namespace {

const char* kVisualizeUsage =
    "usage: graph-ascend graph_visualize -tp TARGET_DIR [-gp GOLDEN_DIR] -o OUTPUT_DIR [-lm [YAML]] [-oc] [-fm]\n"
    "                                    [-tensor_log] [-progress_log] [--rank_size N [B] --tp N [B] --pp N [B]\n"
    "                                    [--vpp N [B]] [--order S [B]]] [--file_type db|json]\n"
    "                                    [--output_format vis|db] [--progress_json] [-v]\n"
    "                                    [--jobs N] [--max-memory SIZE] [--shard I/N]\n"
    "\n"
    "msprobe 26's graph_visualize arguments. Builds TARGET_DIR (or compares it with GOLDEN_DIR)\n"
    "into .vis files in OUTPUT_DIR. Each directory holds the dump files of one rank, rank<N>\n"
    "folders (ranks common to both sides are compared), step<N>/rank<N> folders, or one\n"
    "proc<pid> folder.\n"
    "\n"
    "  -tp, --target_path DIR         the dump to debug (npu side)\n"
    "  -gp, --golden_path DIR         the baseline dump (bench side); makes it a compare\n"
    "  -o, --output_path DIR          output directory (created if missing)\n"
    "  -lm, --layer_mapping [YAML]    match by name mapping (across suites or frameworks)\n"
    "  -oc, --overflow_check          mark nodes whose inputs or outputs overflow\n"
    "  -fm, --fuzzy_match             match modules by name and their APIs by call order\n"
    "  -tensor_log, --is_print_compare_log\n"
    "                                 print each compared node of a tensor compare\n"
    "  -progress_log, --is_print_progress_log\n"
    "                                 print PROGRESS: {...} lines on stdout (as msprobe 26)\n"
    "  --rank_size/--tp/--pp/--vpp/--order N [B]\n"
    "                                 merge the ranks of a tensor/pipeline-parallel run (one value\n"
    "                                 for a build, two, target golden, for a compare)\n"
    "  --file_type db|json            db (default): graph files; json (with --rank_size): each merged graph\n"
    "                                 as a dump folder OUT/step<N>/rank<R>/{construct,dump,stack}.json\n"
    "  --output_format vis|db         vis (default): graph-ascend .vis files; db: msprobe's .vis.db\n"
    "  --code_mapping CSV [BENCH_CSV] MindSpore static graph: a code_mapping result as the stack source\n"
    "                                 of the Cell nodes (a second file: the golden side)\n"
    "  --progress_json                print stage and progress as JSON lines on stderr (for programs)\n"
    "  -v, --verbose                  print what is being done (stderr)\n"
    "  --jobs N                       build N (step, rank) pairs at once (default: the cores the process\n"
    "                                 may use, by taskset and cgroup); the files are the same for any N\n"
    "  --max-memory SIZE              start a pair only while the pairs in flight fit in SIZE (8G, 512M;\n"
    "                                 default 3/4 of the free memory, by MemAvailable and cgroup)\n"
    "  --shard I/N|auto|auto/N        build only shard I of N of the (step, rank) pairs, then run\n"
    "                                 graph-ascend link OUTPUT_DIR once (docs/SCALE.md)\n"
    "  -h, --help                     this help\n";

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

// argparse also takes "--flag=value".
std::vector<std::string> SplitEquals(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const std::string& a : args) {
    size_t eq = a.find('=');
    if (a.compare(0, 2, "--") == 0 && eq != std::string::npos) {
      out.push_back(a.substr(0, eq));
      out.push_back(a.substr(eq + 1));
    } else {
      out.push_back(a);
    }
  }
  return out;
}

}  // namespace

int VisualizeCommand(const std::vector<std::string>& raw_args, const std::vector<std::string>& argv) {
  std::vector<std::string> args = SplitEquals(raw_args);
  std::string target, golden, output, file_type = "db", output_format = "vis";
  bool verbose = false, progress_log = false, compare_log = false, progress_json = false;
  job::GraphOptions options;
  options.argv = argv;
  options.complete_stack = true;  // msprobe 26 keeps whole stacks (no -cs any more)
  options.grading = vis::GRADING_26;
  options.backward_inplace = true;  // msprobe 26's hierarchy (docs/COMPATIBILITY.md C26-backward)
  options.p2p_peers_only = true;    // msprobe 26's send/recv links (C26-p2p)
  options.dialect = job::Dialect::kVisualize;
  ArgReader reader(args);
  while (reader.Next()) {
    const std::string& a = reader.flag();
    std::string parallel_error;
    if (a == "-h" || a == "--help") {
      fputs(kVisualizeUsage, stdout);
      return 0;
    } else if (a == "-tp" || a == "--target_path") {
      if (!reader.Value(&target)) return Fail(a + " needs the target dump directory");
    } else if (a == "-gp" || a == "--golden_path") {
      if (!reader.Value(&golden)) return Fail(a + " needs the golden dump directory");
    } else if (a == "-o" || a == "--output_path") {
      if (!reader.Value(&output)) return Fail(a + " needs an output directory");
    } else if (a == "-oc" || a == "--overflow_check") {
      options.overflow_check = true;
    } else if (a == "-fm" || a == "--fuzzy_match") {
      options.fuzzy_match = true;
    } else if (a == "-lm" || a == "--layer_mapping") {
      options.layer_mapping = true;
      reader.Value(&options.layer_mapping_file);
    } else if (a == "-tensor_log" || a == "--is_print_compare_log") {
      compare_log = true;
    } else if (a == "-progress_log" || a == "--is_print_progress_log") {
      progress_log = true;
    } else if (a == "--file_type") {
      if (!reader.Value(&file_type) || (file_type != "db" && file_type != "json")) {
        return Fail("--file_type takes db or json");
      }
    } else if (a == "--output_format") {
      if (!reader.Value(&output_format) || (output_format != "vis" && output_format != "db")) {
        return Fail("--output_format takes vis or db");
      }
    } else if (a == "-v" || a == "--verbose") {
      verbose = true;
    } else if (a == "--progress_json") {
      progress_json = true;
    } else if (reader.CodeMapping(&options, &parallel_error)) {
      if (!parallel_error.empty()) return Fail(parallel_error);
    } else if (reader.Batch(&options, &parallel_error)) {
      if (!parallel_error.empty()) return Fail(parallel_error);
    } else if (reader.Shard(&options.shard, &parallel_error)) {
      if (!parallel_error.empty()) return Fail(parallel_error);
    } else if (reader.Parallel(&options.parallel, &parallel_error)) {
      if (!parallel_error.empty()) return Fail(parallel_error);
    } else {
      return Fail("unknown option '" + a + "' (graph-ascend graph_visualize --help lists the options)");
    }
  }
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

  ProgressBar bar;
  ProgressLog progress(progress_log);
  options.progress = [&bar](const std::string& name, double f) { bar.Update(name, f); };
  options.run_progress = [&progress](double f) { progress.Update(f); };
  ProgressLines lines;
  if (progress_json) lines.Attach(&options);
  if (verbose) {
    options.log = [&bar](const std::string& s) {
      bar.Done();
      fprintf(stderr, "graph-ascend: %s\n", s.c_str());
    };
  }
  options.warn = [&bar](const Error& w) {
    bar.Done();
    Warn(w.ToString());
  };
  if (compare_log) options.compare_log = [](const std::string& s) { printf("%s\n", s.c_str()); };
  auto config = job::VisualizeConfig(target, golden);
  auto result = config.ok() ? job::RunGraph(std::move(*config), output, options) : Result<job::GraphResult>(config.error());
  bar.Done();
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
