#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "op_generate/op_generate.h"

namespace graph_ascend::cli {

namespace {
const char* kOpGenerateUsage =
    "usage: graph-ascend op_generate -i config_op.json -o DIR [-f pytorch|mindspore]\n"
    "\n"
    "Extracts one API call (forward and backward) from an msprobe dump.json into the config's\n"
    "extract_api_path and writes DIR/<api>.<forward|backward>.py, a script that rebuilds the inputs,\n"
    "runs the API on the device under test (CUDA, NPU or CPU) and on a CPU bench in higher precision,\n"
    "and prints msprobe's new-precision-standard metrics (msprobe op_generate).\n"
    "\n"
    "config_op.json keys: dump_json_path, api_name (e.g. Functional.linear.0), extract_api_path,\n"
    "propagation (forward|backward), data_mode (random_data|real_data), random_seed, iter_times (1-1000).\n";
}

int OpGenerateCommand(const std::vector<std::string>& args) {
  std::string config_path, out_dir, framework;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      fputs(kOpGenerateUsage, stdout);
      return 0;
    }
    bool has_value = i + 1 < args.size();
    if ((a == "-i" || a == "--config_input") && has_value) {
      config_path = args[++i];
    } else if ((a == "-o" || a == "--api_output_path") && has_value) {
      out_dir = args[++i];
    } else if ((a == "-f" || a == "--framework") && has_value) {
      framework = args[++i];
      if (framework != "pytorch" && framework != "mindspore") {
        return Fail("-f must be pytorch or mindspore, not '" + framework + "'");
      }
    } else {
      return Fail("unexpected argument '" + a + "'", kOpGenerateUsage);
    }
  }
  if (config_path.empty() || out_dir.empty()) {
    return Fail("op_generate needs -i config_op.json and -o DIR", kOpGenerateUsage);
  }
  auto config = op_generate::ReadOpConfig(config_path);
  if (!config.ok()) return Fail(config.error().ToString());
  auto out = op_generate::Generate(*config, out_dir, framework);
  if (!out.ok()) return Fail(out.error().ToString());
  if (!out->extract_path.empty()) printf("extract=%s\n", out->extract_path.c_str());
  printf("script=%s\n", out->script_path.c_str());
  return 0;
}

}  // namespace graph_ascend::cli
