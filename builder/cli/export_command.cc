#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "vis/json_export.h"

namespace graph_ascend::cli {

namespace {
const char* kExportUsage =
    "usage: graph-ascend export FILE.vis -o FILE.json\n"
    "\n"
    "Writes the graph in msprobe's JSON .vis structure (msprobe 1.2-8.1), which older tools\n"
    "such as tb_graph_ascend 8.x read.\n";
}

int ExportCommand(const std::vector<std::string>& args) {
  std::string input, output;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-h" || args[i] == "--help") {
      fputs(kExportUsage, stdout);
      return 0;
    }
    if ((args[i] == "-o" || args[i] == "--output") && i + 1 < args.size()) {
      output = args[++i];
    } else if (input.empty() && args[i][0] != '-') {
      input = args[i];
    } else {
      return Fail("unexpected argument '" + args[i] + "'\n\n" + kExportUsage);
    }
  }
  if (input.empty() || output.empty()) return Fail(std::string("export needs FILE.vis and -o FILE.json\n\n") + kExportUsage);
  Status st = vis::ExportJson(input, output);
  if (!st.ok()) return Fail(st.error().ToString());
  printf("%s\n", output.c_str());
  return 0;
}

}  // namespace graph_ascend::cli
