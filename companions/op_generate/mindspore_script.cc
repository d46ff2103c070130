#include "op_generate/op_generate.h"

namespace graph_ascend::op_generate {

extern const char kMindSporeRuntime[];

std::string MindSporeScript(const ApiEntries& e, const OpConfig& config, const ApiCall& call) {
  return ScriptText(e, config, call, "mindspore", kMindSporeRuntime, "[--device cpu|gpu|ascend] [--output DIR]");
}

}  // namespace graph_ascend::op_generate
