#include <filesystem>

#include "base/strings.h"
#include "op_generate/op_generate.h"

namespace graph_ascend::op_generate {

extern const char kPyTorchRuntime[];

namespace {

namespace fs = std::filesystem;

const JsonValue* Entry(const ApiEntries& e, const char* direction) {
  return e.entries.Find(e.api_name + "." + direction);
}

// The Python callable: Functional.x -> torch.nn.functional.x, Tensor.x ->
// torch.Tensor.x, Torch.x -> torch.x (middle parts kept: Torch.linalg.norm).
std::string PythonApi(const std::string& api_name) {
  std::vector<std::string> parts = SplitDotsCopy(api_name);
  std::string module = parts[0] == "Functional" ? "torch.nn.functional" : parts[0] == "Tensor" ? "torch.Tensor" : "torch";
  return module + "." + JoinDots(parts, 1, parts.size() - 1);
}

bool SupportedType(const std::string& api_name) {
  return StartsWith(api_name, "Functional.") || StartsWith(api_name, "Tensor.") || StartsWith(api_name, "Torch.");
}

bool IsTensor(const JsonValue& v) {
  std::string t = v.StringOr("type");
  return t == "torch.Tensor" || t == "torch.nn.parameter.Parameter" || t == "mindspore.Tensor";
}

// Every tensor input needs a file in real_data mode.
Status CheckTensorFiles(const ApiEntries& e, const JsonValue& v, const std::string& where) {
  if (v.is_array()) {
    for (size_t i = 0; i < v.items.size(); ++i) {
      GA_RETURN_IF_ERROR(CheckTensorFiles(e, v.items[i], where + "[" + std::to_string(i) + "]"));
    }
  } else if (v.is_object() && IsTensor(v)) {
    std::string name = v.StringOr("data_name");
    if (name.empty()) {
      return MakeError(e.source, "key " + where,
                       "real_data needs a tensor dump (msprobe task \"tensor\"): this tensor has no data_name");
    }
    std::error_code ec;
    if (!fs::is_regular_file(name, ec)) {
      return MakeError(name, "key " + where + ".data_name", "real_data: the tensor file does not exist");
    }
  } else if (v.is_object()) {
    for (const auto& [key, value] : v.members) GA_RETURN_IF_ERROR(CheckTensorFiles(e, value, where + "." + key));
  }
  return Status::Ok();
}

JsonValue Number(int64_t n) {
  JsonValue v;
  v.type = JsonValue::Type::kNumber;
  v.text = std::to_string(n);
  return v;
}

}  // namespace

Status CheckRequest(const ApiEntries& e, const OpConfig& config, const std::string& framework) {
  if (framework == "mindspore" ? !MindSporeApiType(e.api_name) : !SupportedType(e.api_name)) {
    return MakeError(e.source, "key data." + e.api_name + ".forward",
                     std::string(framework == "mindspore" ? "only Mint, MintFunctional, Functional and Tensor"
                                                          : "only Functional, Tensor and Torch") +
                         " APIs can be reproduced alone, not '" + e.api_name + "'");
  }
  const JsonValue* forward = Entry(e, "forward");
  if (forward == nullptr) {
    return MakeError(e.source, "key data." + e.api_name + ".forward",
                     "missing: the script rebuilds the inputs from the forward entry");
  }
  const JsonValue* backward = Entry(e, "backward");
  if (config.propagation == "backward") {
    if (backward == nullptr) {
      return MakeError(e.source, "key data." + e.api_name + ".backward",
                       "propagation is backward but the dump has no backward entry for " + e.api_name);
    }
    if (backward->Find("grad_input") == nullptr && backward->Find("input") == nullptr) {
      return MakeError(e.source, "key data." + e.api_name + ".backward", "has no input gradients (input)");
    }
  }
  if (config.data_mode == "real_data") {
    std::string base = "data." + e.api_name;
    for (const char* list : {"input_args", "input_kwargs"}) {
      if (const JsonValue* v = forward->Find(list)) GA_RETURN_IF_ERROR(CheckTensorFiles(e, *v, base + ".forward." + list));
    }
    if (config.propagation == "backward") {
      for (const char* list : {"grad_input", "input"}) {
        if (const JsonValue* v = backward->Find(list)) {
          GA_RETURN_IF_ERROR(CheckTensorFiles(e, *v, base + ".backward." + list));
          break;
        }
      }
    }
  }
  return Status::Ok();
}

std::string ScriptName(const ApiEntries& e, const OpConfig& config) {
  return e.api_name + "." + config.propagation + ".py";
}

std::string ScriptText(const ApiEntries& e, const OpConfig& config, const std::string& python_api,
                       const char* runtime, const std::string& options) {
  JsonValue spec;
  spec.type = JsonValue::Type::kObject;
  spec.members.emplace_back("api_name", JsonValue::String(e.api_name));
  spec.members.emplace_back("api", JsonValue::String(python_api));
  spec.members.emplace_back("propagation", JsonValue::String(config.propagation));
  spec.members.emplace_back("data_mode", JsonValue::String(config.data_mode));
  spec.members.emplace_back("random_seed", Number(config.random_seed));
  spec.members.emplace_back("iter_times", Number(config.iter_times));
  spec.members.emplace_back("forward", *Entry(e, "forward"));
  const JsonValue* backward = Entry(e, "backward");
  spec.members.emplace_back("backward", config.propagation == "backward" && backward ? *backward : JsonValue{});

  std::string out = "#!/usr/bin/env python3\n";
  out += "# Reproduces " + e.api_name + " (" + config.propagation + ") from " + fs::path(e.source).filename().string() +
         ", written by graph-ascend op_generate.\n";
  out += "# Run: python3 " + ScriptName(e, config) + " " + options + "\n";
  out += "# The dumped entry is SPEC at the end of the file.\n";
  out += runtime;
  out += "\n\nSPEC = ";
  spec.WritePython(&out);
  out += "\n\nif __name__ == \"__main__\":\n    sys.exit(main(SPEC))\n";
  return out;
}

std::string PyTorchScript(const ApiEntries& e, const OpConfig& config) {
  return ScriptText(e, config, PythonApi(e.api_name), kPyTorchRuntime,
                    "[--device cpu|cuda|npu] [--save-metrics FILE] [--against FILE]");
}

}  // namespace graph_ascend::op_generate
