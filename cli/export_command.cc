#include <cstdio>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "formats/foreign_file.h"
#include "formats/msprobe_json/json_export.h"

namespace graph_ascend::cli {

namespace {
const char* kExportUsage =
    "usage: graph-ascend export FILE.vis [--format json] [--grading index|26] -o FILE.json\n"
    "       graph-ascend export FILE.vis [FILE.vis ...] --format db [--grading index|26] -o FILE.vis.db\n"
    "\n"
    "json (the default): the graph in msprobe's JSON .vis structure (msprobe 1.2-8.1), which older\n"
    "tools such as tb_graph_ascend 8.x read. --grading 26 writes msprobe 26's grades (pass 0,\n"
    "warning 0.5, error 1) as the precision_index (default: index, msprobe 8.x's).\n"
    "db: the graphs in msprobe's SQLite .vis.db (26.x schema), which msprobe 26.x's own TensorBoard\n"
    "plugin reads; several .vis files of a batch (different steps or ranks) go into one file. Its\n"
    "precision_index is the file's default grading unless --grading is given.\n";
}

int ExportCommand(const std::vector<std::string>& args) {
  std::vector<std::string> inputs;
  std::string output, format = "json";
  vis::Grading grading = vis::GRADING_INDEX;
  bool grading_given = false;
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
      grading_given = true;
    } else if (args[i] == "--format" && i + 1 < args.size()) {
      format = args[++i];
    } else if (!args[i].empty() && args[i][0] != '-') {
      inputs.push_back(args[i]);
    } else {
      return Fail("unexpected argument '" + args[i] + "'", kExportUsage);
    }
  }
  if (format != "json" && format != "db") return Fail("--format is json or db, not '" + format + "'");
  if (inputs.empty() || output.empty()) return Fail("export needs FILE.vis and -o OUT", kExportUsage);
  if (format == "json" && inputs.size() > 1) return Fail("--format json takes one FILE.vis");
  std::optional<vis::Grading> db_grading;
  if (grading_given) db_grading = grading;
  Status st = format == "db" ? formats::ExportVisDb(inputs, output, db_grading) : vis::ExportJson(inputs[0], output, grading);
  if (!st.ok()) return Fail(st.error().ToString());
  printf("%s\n", output.c_str());
  return 0;
}

}  // namespace graph_ascend::cli
