// graph-ascend: the command line. Parses arguments, runs one command and is
// the one place that prints errors.
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "base/confine.h"
#include "base/temp_files.h"
#include "base/version.h"
#include "cli/commands.h"

namespace {

const char* kUsage =
    "usage: graph-ascend <command> [options]\n"
    "\n"
    "commands:\n"
    "  graph   build or compare msprobe dumps into .vis files (msprobe graph)\n"
    "  graph_visualize  the same with msprobe 26's flags (-tp TARGET [-gp GOLDEN] -o OUT)\n"
    "  link    after graph --shard I/N: add the cross-rank links to the shards' files\n"
    "  info    summarise a .vis file: nodes, matches, colour buckets, overflow, worst nodes\n"
    "  check   a CI gate: exit 1 when a compare diverges beyond noise, 0 when it does not\n"
    "  report  a compare as one self-contained HTML file: verdict, path, table, layer profile\n"
    "  export  write a .vis as msprobe's JSON .vis or .vis.db for msprobe's own viewers\n"
    "  import  convert msprobe's JSON .vis or .vis.db into .vis files\n"
    "  op_generate   a single-API reproduction script from a dump (msprobe op_generate)\n"
    "  code_mapping  tie MindSpore static-graph dump data to code stacks (msprobe code_mapping)\n"
    "  ckpt_compare  compare two Megatron / MindSpeed checkpoints parameter by parameter\n"
    "  config_check  compare two msprobe config_check packs (env, pip, hyperparameters, statistics)\n"
    "\n"
    "  --confine DIR (before the command): read no input whose real path leaves DIR\n"
    "\n"
    "Run 'graph-ascend <command> --help' for a command's options.\n";

int Run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // Options before the command: msprobe's framework flag ("-f pytorch graph ...")
  // and --confine DIR (base/confine.h; the graph service's conversions).
  while (args.size() >= 2 && (args[0] == "-f" || args[0] == "--framework" || args[0] == "--confine")) {
    if (args[0] == "--confine") {
      if (graph_ascend::Status st = graph_ascend::ConfineReadsTo(args[1]); !st.ok()) {
        return graph_ascend::cli::Fail(st.error().ToString());
      }
    }
    args.erase(args.begin(), args.begin() + 2);
  }
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    printf("graph-ascend %s\n", graph_ascend::kVersion);
    return 0;
  }
  std::string command = args[0];
  args.erase(args.begin());
  std::vector<std::string> full(argv, argv + argc);
  if (command == "graph") return graph_ascend::cli::GraphCommand(args, full);
  if (command == "graph_visualize") return graph_ascend::cli::VisualizeCommand(args, full);
  if (command == "link") return graph_ascend::cli::LinkCommand(args);
  if (command == "info") return graph_ascend::cli::InfoCommand(args);
  if (command == "check") return graph_ascend::cli::CheckCommand(args);
  if (command == "report") return graph_ascend::cli::ReportCommand(args);
  if (command == "export") return graph_ascend::cli::ExportCommand(args);
  if (command == "import") return graph_ascend::cli::ImportCommand(args);
  if (command == "op_generate") return graph_ascend::cli::OpGenerateCommand(args);
  if (command == "code_mapping") return graph_ascend::cli::CodeMappingCommand(args);
  if (command == "ckpt_compare") return graph_ascend::cli::CkptCompareCommand(args);
  if (command == "config_check") return graph_ascend::cli::ConfigCheckCommand(args);
  return graph_ascend::cli::Fail("unknown command '" + command + "'", kUsage);
}

}  // namespace

int main(int argc, char** argv) {
  // A build grows and frees large arrays phase after phase. By default glibc
  // hands big blocks back to the kernel and maps fresh zeroed pages on the
  // next growth. Keeping freed memory for reuse (the process is short-lived)
  // saves a quarter of the page faults and 4 % of the CPU of a 10^5-node
  // compare, for a peak about 5 % higher (docs/PERFORMANCE.md).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
  // A signal during a write (SIGINT, SIGTERM, SIGPIPE, SIGXFSZ, ...) must not
  // leave "*.tmp-<pid>" or an empty output folder behind.
  graph_ascend::RemoveTemporariesOnSignals();
  // An exception (std::bad_alloc on an input too large for the machine, here
  // or brought back from a worker thread) is one line and exit 2, not an
  // abort; unwinding to here removes the temporary files being written.
  int status = 2;
  try {
    status = Run(argc, argv);
  } catch (const std::bad_alloc&) {
    graph_ascend::cli::Fail("out of memory");
  } catch (const std::exception& e) {
    graph_ascend::cli::Fail(e.what());
  }
  // A failed run leaves no empty output folder it made (base/temp_files).
  if (status != 0) graph_ascend::RemoveEmptyCreatedFolders();
  return status;
}
