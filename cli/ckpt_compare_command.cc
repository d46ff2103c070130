#include <cstdio>
#include <filesystem>
#include <string>

#include "ckpt/ckpt_compare.h"
#include "cli/commands.h"
#include "output/output_file.h"
#include "weights/ckpt_similarity.h"

namespace graph_ascend::cli {

namespace {
const char* kCkptUsage =
    "usage: graph-ascend ckpt_compare CKPT_A CKPT_B [-o OUT.json] [--force]\n"
    "\n"
    "Compares two Megatron-LM / MindSpeed checkpoints (a save folder with\n"
    "latest_checkpointed_iteration.txt, or an iter_NNNNNNN / release folder) parameter by\n"
    "parameter after merging tensor-parallel shards and renumbering pipeline layers and experts.\n"
    "Writes {param: {l2, cos, numel, shape}} (msprobe's checkpoint compare JSON).\n"
    "\n"
    "  -o, --output FILE  result file (default ./ckpt_similarity.json); must not exist\n"
    "  --force            overwrite an existing result file\n";
}

Result<std::shared_ptr<const vis::CkptSimilarity>> CkptOption(const std::string& a, const std::string& b,
                                                              const std::string& json) {
  auto out = std::make_shared<vis::CkptSimilarity>();
  std::error_code ec;
  Result<std::vector<vis::CkptParam>> params = std::vector<vis::CkptParam>{};
  if (!json.empty()) {
    out->set_json(std::filesystem::weakly_canonical(json, ec).string());
    params = weights::ReadCkptJson(json);
  } else {
    out->set_checkpoint_a(std::filesystem::weakly_canonical(a, ec).string());
    out->set_checkpoint_b(std::filesystem::weakly_canonical(b, ec).string());
    auto result = ckpt::CompareCheckpoints(a, b);
    if (!result.ok()) return result.error();
    for (const std::string& w : result->warnings) Warn(w);
    for (const std::string& n : result->notes) fprintf(stderr, "graph-ascend: note: %s\n", OneLine(n).c_str());
    // The JSON ckpt_compare writes is the one form of a result (the same reader as --ckpt-json).
    params = weights::ParseCkptJson(ckpt::ComparisonJson(*result), a + " vs " + b);
  }
  if (!params.ok()) return params.error();
  for (vis::CkptParam& p : *params) *out->add_param() = std::move(p);
  return std::shared_ptr<const vis::CkptSimilarity>(std::move(out));
}

int CkptCompareCommand(const std::vector<std::string>& args) {
  std::vector<std::string> inputs;
  std::string output = "ckpt_similarity.json";
  bool force = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-h" || args[i] == "--help") {
      fputs(kCkptUsage, stdout);
      return 0;
    }
    if ((args[i] == "-o" || args[i] == "--output") && i + 1 < args.size()) {
      output = args[++i];
    } else if (args[i] == "--force") {
      force = true;
    } else if (!args[i].empty() && args[i][0] != '-' && inputs.size() < 2) {
      inputs.push_back(args[i]);
    } else {
      return Fail("unexpected argument '" + args[i] + "'", kCkptUsage);
    }
  }
  if (inputs.size() != 2) return Fail("ckpt_compare needs two checkpoints", kCkptUsage);
  std::error_code ec;
  if (!force && std::filesystem::exists(output, ec)) {
    return Fail(output + ": output exists; remove it or pass --force to overwrite");
  }
  auto result = ckpt::CompareCheckpoints(inputs[0], inputs[1]);
  if (!result.ok()) return Fail(result.error().ToString());
  for (const std::string& w : result->warnings) Warn(w);
  for (const std::string& n : result->notes) fprintf(stderr, "graph-ascend: note: %s\n", OneLine(n).c_str());
  if (!result->only_a.empty() || !result->only_b.empty()) {
    Warn(std::to_string(result->only_a.size()) + " parameters only in " + inputs[0] + ", " +
         std::to_string(result->only_b.size()) + " only in " + inputs[1] + " (not compared)");
  }
  Status st = output::WriteFileAtomically(output, ckpt::ComparisonJson(*result), force);
  if (!st.ok()) return Fail(st.error().ToString());
  printf("%s: %zu parameters compared\n", output.c_str(), result->params.size());
  return 0;
}

}  // namespace graph_ascend::cli
