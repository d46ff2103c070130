#include <unistd.h>

#include <cstdio>
#include <string>

#include "base/mapped_file.h"
#include "base/temp_files.h"
#include "base/time_stamp.h"
#include "cli/commands.h"
#include "formats/foreign_file.h"

namespace graph_ascend::cli {

namespace {
const char* kImportUsage =
    "usage: graph-ascend import FILE -o OUT_DIR\n"
    "       graph-ascend import FILE -o OUT.vis\n"
    "\n"
    "Converts a graph file of msprobe into graph-ascend .vis files: a JSON .vis (msprobe 1.2-8.2.0)\n"
    "or a .vis.db (msprobe 8.2-26.x).\n"
    "\n"
    "  -o, --output OUT   a folder (created if missing) that receives one .vis per graph, named as\n"
    "                    'graph' names its files (compare_<time>.vis, compare_step0_rank1_<time>.vis\n"
    "                    for a .vis.db of several steps or ranks); a name ending in .vis is the file\n"
    "                    of a one-graph FILE itself\n";

// -o OUT: a name ending in ".vis" is the file itself; anything else a folder.
bool NamesAFile(const std::string& out) { return out.size() > 4 && out.compare(out.size() - 4, 4, ".vis") == 0; }


}  // namespace

int ImportCommand(const std::vector<std::string>& args) {
  std::string input, output;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-h" || args[i] == "--help") {
      fputs(kImportUsage, stdout);
      return 0;
    }
    if ((args[i] == "-o" || args[i] == "--output") && i + 1 < args.size()) {
      output = args[++i];
    } else if (input.empty() && !args[i].empty() && args[i][0] != '-') {
      input = args[i];
    } else {
      return Fail("unexpected argument '" + args[i] + "'", kImportUsage);
    }
  }
  if (input.empty() || output.empty()) return Fail("import needs FILE and -o OUT", kImportUsage);
  // A folder unless OUT names a .vis (docs/FORMAT.md, "import"); a file
  // name for several graphs is an error before anything is written.
  std::string stamp = LocalTimeStamp();
  Status made = Status::Ok();
  bool as_file = NamesAFile(output);
  if (as_file && IsDirectory(output)) as_file = false;  // an existing folder named x.vis stays a folder
  size_t graphs = 0;
  auto out_path = [&](const vis::FileMeta& meta) -> std::string {
    if (as_file) {
      if (++graphs > 1 && made.ok()) {
        made = Error{input, "", "holds several graphs (steps or ranks): -o must name a folder, not " + output};
      }
      return made.ok() ? output : "";
    }
    // Made (with missing parents) and registered: a failed run removes what is left empty.
    if (made.ok() && !IsDirectory(output)) made = MakeOutputFolders(output);
    return made.ok() ? output + "/" + formats::BatchFileName(meta, stamp) : "";
  };
  auto written = formats::ConvertGraphs(input, out_path);
  if (!made.ok()) {
    if (written.ok()) {
      for (const std::string& path : *written) unlink(path.c_str());
    }
    return Fail(made.error().ToString());
  }
  if (!written.ok()) return Fail(written.error().ToString());
  for (const std::string& path : *written) printf("%s\n", path.c_str());
  return 0;
}

}  // namespace graph_ascend::cli
