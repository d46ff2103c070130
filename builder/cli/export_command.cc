#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "vis/json_export.h"

namespace graph_ascend::cli {

namespace {
const char* kExportUsage =
    "usage: graph-ascend export FILE.vis -o FILE.json [--grading index|26]\n"
    "\n"
    "Writes the graph in msprobe's JSON .vis structure (msprobe 1.2-8.1), which older tools\n"
    "such as tb_graph_ascend 8.x read. --grading 26 writes msprobe 26's grades (pass 0,\n"
    "warning 0.5, error 1) as the precision_index (default: index, msprobe 8.x's).\n";
}

int ExportCommand(const std::vector<std::string>& args) {
  std::string input, output;
  vis::Grading grading = vis::GRADING_INDEX;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-h" || args[i] == "--help") {
      fputs(kExportUsage, stdout);
      return 0;
    }
    if ((args[i] == "-o" || args[i] == "--output") && i + 1 < args.size()) {
      output = args[++i];
    } else if (args[i] == "--grading" && i + 1 < args.size()) {
      std::string g = args[++i];
      if (g != "index" && g != "26") return Fail("--grading takes index or 26, got '" + g + "'");
      grading = g == "26" ? vis::GRADING_26 : vis::GRADING_INDEX;
    } else if (input.empty() && args[i][0] != '-') {
      input = args[i];
    } else {
      return Fail("unexpected argument '" + args[i] + "'\n\n" + kExportUsage);
    }
  }
  if (input.empty() || output.empty()) return Fail(std::string("export needs FILE.vis and -o FILE.json\n\n") + kExportUsage);
  Status st = vis::ExportJson(input, output, grading);
  if (!st.ok()) return Fail(st.error().ToString());
  printf("%s\n", output.c_str());
  return 0;
}

}  // namespace graph_ascend::cli
