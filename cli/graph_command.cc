#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "job/graph_job.h"

namespace graph_ascend::cli {
namespace {

const char* kGraphUsage =
    "usage: graph-ascend graph -i COMPARE_JSON -o OUTPUT_DIR [-oc] [-cs] [-f] [-lm [YAML]] [-v] [--progress_json]\n"
    "                          [--jobs N] [--max-memory SIZE] [--shard I/N]\n"
    "                          [--ckpt CKPT_A CKPT_B | --ckpt-json FILE]\n"
    "                          [--code_mapping CSV [BENCH_CSV]]\n"
    "                          [--rank_size N [B] --tp N [B] --pp N [B] [--vpp N [B]] [--order N [B]]]\n"
    "\n"
    "Builds (npu_path only) or compares (npu_path and bench_path) msprobe dumps named in\n"
    "COMPARE_JSON into .vis files in OUTPUT_DIR: build_<time>.vis, compare_<time>.vis, or one\n"
    "file per rank (and step) for rank*/ and step*/rank*/ layouts. Same flags as msprobe graph.\n"
    "\n"
    "  -i, --input_path FILE      compare.json: {\"npu_path\": DIR, \"bench_path\": DIR}\n"
    "  -o, --output_path DIR      output directory (created if missing)\n"
    "  -oc, --overflow_check      mark nodes whose inputs or outputs overflow (medium/high/critical)\n"
    "  -cs, --complete_stack      keep whole call stacks instead of the user's line\n"
    "  -f, --fuzzy_match          match modules by name and their APIs by call order\n"
    "  -lm, --layer_mapping [YAML]  match by name mapping (across suites or frameworks)\n"
    "  -v, --verbose              print what is being done\n"
    "  --progress_json            print progress as JSON lines on stderr (for programs)\n"
    "  --jobs N                   build N (step, rank) pairs at once (default: the cores the process may\n"
    "                             use, by taskset and cgroup); the files are the same for any N\n"
    "  --max-memory SIZE          start a pair only while the pairs in flight fit in SIZE (8G, 512M;\n"
    "                             default 3/4 of the free memory, by MemAvailable and cgroup)\n"
    "  --shard I/N|auto|auto/N    build only shard I of N of a batch's (step, rank) pairs; auto takes I\n"
    "                             and N from Slurm arrays, Open MPI, PMI or srun, auto/N takes I from\n"
    "                             JOB_COMPLETION_INDEX too; then run graph-ascend link OUTPUT_DIR once\n"
    "                             (docs/SCALE.md)\n"
    "  --ckpt CKPT_A CKPT_B       compare two Megatron checkpoints (A of the npu run, B of the bench run;\n"
    "                             as ckpt_compare) and show each module's parameter similarity (worst\n"
    "                             cos, largest l2) on its NPU nodes\n"
    "  --ckpt-json FILE           the same from a ckpt_compare JSON (graph-ascend's or msprobe's)\n"
    "  --code_mapping CSV [BENCH_CSV]  MindSpore static graph: a code_mapping result (code_mapping_<time>.csv\n"
    "                             or a statistic.csv with its columns) as the stack source of the Cell\n"
    "                             nodes, whose stack.json stacks are empty (a second file: the bench side)\n"
    "\n"
    "Parallel merge (msprobe 26 flags; or compare.json's \"parallel_merge\" section, not both): merge\n"
    "the rank<N> folders of a tensor/pipeline-parallel run into one graph per data-parallel replica,\n"
    "written as build[_step]_merged<i>_<time>.vis or compare[_step]_merged<i>_<time>.vis. One value\n"
    "each for a build, two (npu bench) for a compare; merged compares match fuzzily.\n"
    "  --rank_size N [B]          number of ranks (rank folders)\n"
    "  --tp N [B]                 tensor-parallel size\n"
    "  --pp N [B]                 pipeline-parallel size\n"
    "  --vpp N [B]                virtual-pipeline chunks (default 1)\n"
    "  --order N [B]              Megatron's rank order (default tp-cp-ep-dp-pp)\n"
    "  -h, --help                 this help\n";

}  // namespace

int Fail(const std::string& message, const char* usage) {
  // The one place errors are printed: always one line (a path may hold a newline).
  fprintf(stderr, "graph-ascend: error: %s\n", OneLine(message).c_str());
  if (usage != nullptr) fprintf(stderr, "\n%s", usage);
  return 2;
}

void Warn(const std::string& message) { fprintf(stderr, "graph-ascend: warning: %s\n", OneLine(message).c_str()); }

int GraphCommand(const std::vector<std::string>& args, const std::vector<std::string>& argv) {
  std::string input, output, ckpt_a, ckpt_b, ckpt_json;
  bool verbose = false, progress_json = false;
  job::GraphOptions options;
  options.argv = argv;
  ArgReader reader(args);
  while (reader.Next()) {
    const std::string& a = reader.flag();
    std::string parallel_error;
    if (a == "-h" || a == "--help") {
      fputs(kGraphUsage, stdout);
      return 0;
    } else if (a == "-i" || a == "--input_path") {
      if (!reader.Value(&input)) return Fail(a + " needs a compare.json path");
    } else if (a == "-o" || a == "--output_path") {
      if (!reader.Value(&output)) return Fail(a + " needs an output directory");
    } else if (a == "-oc" || a == "--overflow_check") {
      options.overflow_check = true;
    } else if (a == "-cs" || a == "--complete_stack") {
      options.complete_stack = true;
    } else if (a == "-f" || a == "--fuzzy_match") {
      options.fuzzy_match = true;
    } else if (a == "-lm" || a == "--layer_mapping") {
      options.layer_mapping = true;
      reader.Value(&options.layer_mapping_file);
    } else if (a == "-v" || a == "--verbose") {
      verbose = true;
    } else if (a == "--progress_json") {
      progress_json = true;
    } else if (a == "--ckpt") {
      if (!reader.Value(&ckpt_a) || !reader.Value(&ckpt_b)) {
        return Fail("--ckpt needs two checkpoint folders (of the npu run, then of the bench run)");
      }
    } else if (a == "--ckpt-json") {
      if (!reader.Value(&ckpt_json)) return Fail("--ckpt-json needs a ckpt_compare JSON file");
    } else if (reader.CodeMapping(&options, &parallel_error)) {
      if (!parallel_error.empty()) return Fail(parallel_error);
    } else if (reader.Batch(&options, &parallel_error)) {
      if (!parallel_error.empty()) return Fail(parallel_error);
    } else if (reader.Shard(&options.shard, &parallel_error)) {
      if (!parallel_error.empty()) return Fail(parallel_error);
    } else if (reader.Parallel(&options.parallel, &parallel_error)) {
      if (!parallel_error.empty()) return Fail(parallel_error);
    } else {
      return Fail("unknown option '" + a + "'", kGraphUsage);
    }
  }
  if (input.empty() || output.empty()) return Fail("-i and -o are required", kGraphUsage);
  if (!ckpt_a.empty() && !ckpt_json.empty()) return Fail("--ckpt and --ckpt-json cannot be used together: pick one");
  if (!ckpt_a.empty() || !ckpt_json.empty()) {
    auto ckpt = CkptOption(ckpt_a, ckpt_b, ckpt_json);
    if (!ckpt.ok()) return Fail(ckpt.error().ToString());
    options.ckpt = *ckpt;
  }
  ProgressBar bar;
  options.progress = [&bar](const std::string& name, double f) { bar.Update(name, f); };
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
  auto result = job::RunGraph(input, output, options);
  bar.Done();
  if (!result.ok()) return Fail(result.error().ToString());
  for (const std::string& p : result->outputs) printf("%s\n", p.c_str());
  return 0;
}

}  // namespace graph_ascend::cli
