#include "base/strings.h"
#include "op_generate/op_generate.h"

namespace graph_ascend::op_generate {

extern const char kMindSporeRuntime[];

namespace {

// msprobe's MindSpore API prefixes and the module each names.
struct MindSporeModule {
  const char* prefix;
  const char* module;
};
constexpr MindSporeModule kModules[] = {
    {"MintFunctional.", "mindspore.mint.nn.functional"},
    {"Mint.", "mindspore.mint"},
    {"Functional.", "mindspore.ops"},
    {"Tensor.", "mindspore.Tensor"},
};

}  // namespace

bool MindSporeApiType(const std::string& api_name) {
  for (const MindSporeModule& m : kModules) {
    if (StartsWith(api_name, m.prefix)) return true;
  }
  return false;
}

std::string MindSporeScript(const ApiEntries& e, const OpConfig& config) {
  std::vector<std::string> parts = SplitDotsCopy(e.api_name);
  std::string module;
  for (const MindSporeModule& m : kModules) {
    if (StartsWith(e.api_name, m.prefix)) {
      module = m.module;
      break;
    }
  }
  return ScriptText(e, config, module + "." + JoinDots(parts, 1, parts.size() - 1), kMindSporeRuntime,
                    "[--device cpu|gpu|ascend] [--output DIR]");
}

}  // namespace graph_ascend::op_generate
