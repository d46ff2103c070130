#include <cstdio>
#include <string>

#include "ckpt/ckpt_compare.h"
#include "cli/commands.h"
#include "config_check/config_check.h"
#include "config_check/pack_writer.h"
#include "zip/zip_writer.h"

extern char** environ;

namespace graph_ascend::cli {

namespace {
const char* kConfigCheckUsage =
    "usage: graph-ascend config_check -c BENCH.zip CMP.zip [-o DIR]\n"
    "       graph-ascend config_check -d [SCRIPT.sh|CONFIG.yaml ...] [-o PACK.zip] [--python PY] [--force]\n"
    "       graph-ascend config_check -c CKPT_A CKPT_B [-o OUT.json] [--force]\n"
    "\n"
    "Compares two packs written by msprobe's ConfigChecker (env, pip, hyperparameters, weights,\n"
    "dataset and random-op statistics) with msprobe's rules into DIR/result.xlsx (a summary sheet\n"
    "and one sheet per check) and DIR/result.json (default DIR ./config_check_result; nothing in\n"
    "it is deleted). Two folders instead of zips compare checkpoints, as 'ckpt_compare' does.\n"
    "\n"
    "-d writes the static part of a pack without importing torch: this environment, the packages\n"
    "installed for PY (default python3) and the hyperparameters of the launch scripts / yaml configs\n"
    "(default ./config_check_pack.zip; the weights, dataset and random parts need msprobe's\n"
    "ConfigChecker inside the training process).\n";
}

int ConfigCheckCommand(const std::vector<std::string>& args) {
  std::vector<std::string> compare, dump;
  std::string output, python = "python3";
  bool force = false, dumping = false;
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
    } else if (args[i] == "-d" || args[i] == "--dump") {
      dumping = true;
      while (i + 1 < args.size() && !args[i + 1].empty() && args[i + 1][0] != '-') dump.push_back(args[++i]);
    } else if (args[i] == "--python" && i + 1 < args.size()) {
      python = args[++i];
    } else {
      return Fail("unexpected argument '" + args[i] + "'", kConfigCheckUsage);
    }
  }
  if (dumping && !compare.empty()) {
    return Fail("-d and -c cannot be used together", kConfigCheckUsage);
  }
  if (dumping) {
    if (output.empty()) output = "config_check_pack.zip";
    if (output.size() < 4 || output.compare(output.size() - 4, 4, ".zip") != 0) {
      return Fail(output + ": the pack must be a .zip file");
    }
    auto members = config_check::StaticPack(dump, python, environ);
    if (!members.ok()) return Fail(members.error().ToString());
    Status st = zip::WriteZip(output, *members, force);
    if (!st.ok()) return Fail(st.error().ToString());
    printf("%s\n", output.c_str());
    return 0;
  }
  if (compare.empty()) return Fail("config_check needs -c BENCH CMP or -d", kConfigCheckUsage);
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
  if (sheets->back().name == config_check::kMembersSheet) {
    printf("%-16s %zu pack members are in one pack only\n", config_check::kMembersSheet, sheets->back().rows.size());
  }
  printf("%s/result.xlsx\n", output.c_str());
  return 0;
}

}  // namespace graph_ascend::cli
