#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "code_mapping/code_mapping.h"

namespace graph_ascend::cli {

namespace {
const char* kCodeMappingUsage =
    "usage: graph-ascend code_mapping --ir IR_FILE --dump_data FILE_OR_DIR [--output DIR] [--no-backup]\n"
    "\n"
    "Ties MindSpore static-graph dump data to its Python call stack and scope, read from a save_graphs\n"
    "IR file (anf_after_graph_build*.ir, graph_build_*.ir; msprobe code_mapping):\n"
    "  .npy tensor files      -> DIR/code_mapping_<timestamp>.csv (File Path, Code Stack, Scope Name)\n"
    "  statistic.csv files    -> rewritten in place with Code Stack and Scope Name columns; the original\n"
    "                            is kept as statistic.csv.orig unless --no-backup.\n"
    "--output defaults to the current folder.\n";
}

int CodeMappingCommand(const std::vector<std::string>& args) {
  code_mapping::MappingOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      fputs(kCodeMappingUsage, stdout);
      return 0;
    }
    bool has_value = i + 1 < args.size();
    if (a == "--ir" && has_value) {
      options.ir_path = args[++i];
    } else if (a == "--dump_data" && has_value) {
      options.dump_path = args[++i];
    } else if (a == "--output" && has_value) {
      options.output_dir = args[++i];
    } else if (a == "--no-backup") {
      options.keep_original = false;
    } else {
      return Fail("unexpected argument '" + a + "'", kCodeMappingUsage);
    }
  }
  if (options.ir_path.empty() || options.dump_path.empty()) {
    return Fail("code_mapping needs --ir and --dump_data", kCodeMappingUsage);
  }
  auto result = code_mapping::MapDumpToCode(options);
  if (!result.ok()) return Fail(result.error().ToString());
  if (!result->csv_path.empty()) printf("csv=%s\n", result->csv_path.c_str());
  for (const std::string& f : result->statistic_files) printf("statistic=%s\n", f.c_str());
  printf("rows=%zu matched=%zu\n", result->rows, result->matched);
  return 0;
}

}  // namespace graph_ascend::cli
