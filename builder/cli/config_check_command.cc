#include <cstdio>
#include <string>

#include "ckpt/ckpt_compare.h"
#include "cli/commands.h"
#include "config_check/config_check.h"

namespace graph_ascend::cli {

namespace {
const char* kConfigCheckUsage =
    "usage: graph-ascend config_check -c BENCH.zip CMP.zip [-o DIR]\n"
    "       graph-ascend config_check -c CKPT_A CKPT_B [-o OUT.json] [--force]\n"
    "\n"
    "Compares two packs written by msprobe's ConfigChecker (env, pip, hyperparameters, weights,\n"
    "dataset and random-op statistics) with msprobe's rules into DIR/result.xlsx (a summary sheet\n"
    "and one sheet per check) and DIR/result.json (default DIR ./config_check_result; nothing in\n"
    "it is deleted). Two folders instead of zips compare checkpoints, as 'ckpt_compare' does.\n";
}

int ConfigCheckCommand(const std::vector<std::string>& args) {
  std::vector<std::string> compare;
  std::string output;
  bool force = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-h" || args[i] == "--help") {
      fputs(kConfigCheckUsage, stdout);
      return 0;
    }
    if ((args[i] == "-c" || args[i] == "--compare") && i + 2 < args.size() && compare.empty()) {
      compare = {args[i + 1], args[i + 2]};
      i += 2;
    } else if ((args[i] == "-o" || args[i] == "--output") && i + 1 < args.size()) {
      output = args[++i];
    } else if (args[i] == "--force") {
      force = true;
    } else {
      return Fail("unexpected argument '" + args[i] + "'\n\n" + kConfigCheckUsage);
    }
  }
  if (compare.empty()) return Fail(std::string("config_check needs -c BENCH CMP\n\n") + kConfigCheckUsage);
  // msprobe's rule: a first argument ending in "zip" is a pack, anything else a checkpoint.
  if (compare[0].size() < 3 || compare[0].compare(compare[0].size() - 3, 3, "zip") != 0) {
    std::vector<std::string> ckpt_args = {compare[0], compare[1], "-o",
                                          output.empty() ? "ckpt_similarity.json" : output};
    if (force) ckpt_args.push_back("--force");
    return CkptCompareCommand(ckpt_args);
  }
  auto bench = config_check::ReadPack(compare[0]);
  if (!bench.ok()) return Fail(bench.error().ToString());
  auto cmp = config_check::ReadPack(compare[1]);
  if (!cmp.ok()) return Fail(cmp.error().ToString());
  auto sheets = config_check::ComparePacks(*bench, *cmp);
  if (!sheets.ok()) return Fail(sheets.error().ToString());
  if (output.empty()) output = "config_check_result";
  Status st = config_check::WriteResult(*sheets, output);
  if (!st.ok()) return Fail(st.error().ToString());
  for (const auto& row : sheets->front().rows) {
    printf("%-16s %s\n", std::get<std::string>(row[0]).c_str(), std::get<std::string>(row[1]).c_str());
  }
  printf("%s/result.xlsx\n", output.c_str());
  return 0;
}

}  // namespace graph_ascend::cli
