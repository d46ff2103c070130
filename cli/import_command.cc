#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/temp_files.h"
#include "base/time_stamp.h"
#include "cli/commands.h"
#include "formats/foreign_file.h"

namespace graph_ascend::cli {

namespace {
const char* kImportUsage =
    "usage: graph-ascend import FILE -o OUT\n"
    "\n"
    "Converts a graph file of msprobe into graph-ascend .vis files: a JSON .vis (msprobe 1.2-8.2.0)\n"
    "or a .vis.db (msprobe 8.2-26.x). A file with one graph is written to OUT; a .vis.db with\n"
    "several steps or ranks is written into the directory OUT, one .vis per step and rank, named\n"
    "as 'graph' names a batch (compare_step0_rank1_<time>.vis).\n";

bool IsDirectory(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

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
  // Several graphs (a .vis.db of many steps or ranks, whose graphs carry their
  // step and rank) or an existing directory: batch-named files in it.
  std::string stamp = LocalTimeStamp();
  Status made = Status::Ok();
  bool created = false;
  auto out_path = [&](const vis::FileMeta& meta) {
    bool many = !meta.step().empty() || !meta.rank().empty();
    if (!many && !IsDirectory(output)) return output;
    if (!IsDirectory(output)) {
      if (mkdir(output.c_str(), 0755) == 0) {
        created = true;
        RegisterCreatedFolder(output);  // a signal before the end removes it when empty
      } else if (made.ok()) {
        made = Error{output, "", std::string("cannot create directory: ") + strerror(errno)};
      }
    }
    return output + "/" + formats::BatchFileName(meta, stamp);
  };
  auto written = formats::ConvertGraphs(input, out_path);
  if (!written.ok() && created) rmdir(output.c_str());  // its files are gone already
  if (!made.ok()) return Fail(made.error().ToString());
  if (!written.ok()) return Fail(written.error().ToString());
  for (const std::string& path : *written) printf("%s\n", path.c_str());
  return 0;
}

}  // namespace graph_ascend::cli
