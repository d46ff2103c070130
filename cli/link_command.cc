// `graph-ascend link OUTPUT_DIR`: after the shards of a batch (graph ...
// --shard I/N), adds the cross-rank links to their files.
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "job/link_job.h"

namespace graph_ascend::cli {
namespace {

const char* kLinkUsage =
    "usage: graph-ascend link OUTPUT_DIR [-v]\n"
    "\n"
    "Run once after every shard of a batch (graph ... --shard I/N, or graph_visualize ... --shard)\n"
    "has written into OUTPUT_DIR: links the communication nodes across the ranks of each step from\n"
    "the shards' summaries, writes the links into the .vis files and removes OUTPUT_DIR/.graph-ascend-shards.\n"
    "The files then hold what the one-process batch writes. Prints the batch's files (docs/SCALE.md).\n"
    "\n"
    "  -v, --verbose   print what is being done\n"
    "  -h, --help      this help\n";

}  // namespace

int LinkCommand(const std::vector<std::string>& args) {
  std::string dir;
  job::LinkOptions options;
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") {
      fputs(kLinkUsage, stdout);
      return 0;
    } else if (a == "-v" || a == "--verbose") {
      options.log = [](const std::string& s) { fprintf(stderr, "graph-ascend: %s\n", s.c_str()); };
    } else if (a.size() > 1 && a[0] == '-') {
      return Fail("unknown option '" + a + "'", kLinkUsage);
    } else if (dir.empty()) {
      dir = a;
    } else {
      return Fail("link takes one OUTPUT_DIR (got '" + dir + "' and '" + a + "')");
    }
  }
  if (dir.empty()) return Fail("OUTPUT_DIR is required", kLinkUsage);
  auto result = job::RunLink(dir, options);
  if (!result.ok()) return Fail(result.error().ToString());
  for (const std::string& p : result->outputs) printf("%s\n", p.c_str());
  return 0;
}

}  // namespace graph_ascend::cli
