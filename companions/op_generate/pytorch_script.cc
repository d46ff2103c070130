#include <algorithm>
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

bool IsTensor(const JsonValue& v) {
  std::string t = v.StringOr("type");
  return t == "torch.Tensor" || t == "torch.nn.parameter.Parameter" || t == "mindspore.Tensor" ||
         t == "mindspore.common.tensor.Tensor" || t == "mindspore.Parameter";
}

// Every tensor input needs a file in real_data mode. Under a read root, a
// file outside it gets the answer of a missing one: the same error, whether
// or not it exists.
Status CheckTensorFiles(const ApiEntries& e, const JsonValue& v, const std::string& where,
                        const std::string& read_root) {
  if (v.is_array()) {
    for (size_t i = 0; i < v.items.size(); ++i) {
      GA_RETURN_IF_ERROR(CheckTensorFiles(e, v.items[i], where + "[" + std::to_string(i) + "]", read_root));
    }
  } else if (v.is_object() && IsTensor(v)) {
    std::string name = v.StringOr("data_name");
    if (name.empty()) {
      return MakeError(Printable(e.source), "key " + Printable(where),
                       "real_data needs a tensor dump (msprobe task \"tensor\"): this tensor has no data_name");
    }
    std::string real = read_root.empty() ? name : RealPathInside(read_root, name);
    std::error_code ec;
    if (real.empty() || !fs::is_regular_file(real, ec)) {
      return MakeError(Printable(name), "key " + Printable(where) + ".data_name",
                       read_root.empty() ? "real_data: the tensor file does not exist"
                                         : "real_data: no such tensor file inside the log directory");
    }
  } else if (v.is_object()) {
    for (const auto& [key, value] : v.members) {
      GA_RETURN_IF_ERROR(CheckTensorFiles(e, value, where + "." + key, read_root));
    }
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

Status CheckRequest(const ApiEntries& e, const OpConfig& config) {
  // ReadOpConfig and the service check these; they reach the script's name and header too.
  if (config.propagation != "forward" && config.propagation != "backward") {
    return MakeError(Printable(config.file), "key propagation", "must be forward or backward");
  }
  if (config.data_mode != "random_data" && config.data_mode != "real_data") {
    return MakeError(Printable(config.file), "key data_mode", "must be random_data or real_data");
  }
  const JsonValue* forward = Entry(e, "forward");
  if (forward == nullptr) {
    return MakeError(Printable(e.source), "key data." + e.api_name + ".forward",
                     "missing: the script rebuilds the inputs from the forward entry");
  }
  const JsonValue* backward = Entry(e, "backward");
  if (config.propagation == "backward") {
    if (backward == nullptr) {
      return MakeError(Printable(e.source), "key data." + e.api_name + ".backward",
                       "propagation is backward but the dump has no backward entry for " + e.api_name);
    }
    if (backward->Find("grad_input") == nullptr && backward->Find("input") == nullptr) {
      return MakeError(Printable(e.source), "key data." + e.api_name + ".backward", "has no input gradients (input)");
    }
  }
  if (config.data_mode == "real_data") {
    std::string base = "data." + e.api_name;
    for (const char* list : {"input_args", "input_kwargs"}) {
      if (const JsonValue* v = forward->Find(list)) {
        GA_RETURN_IF_ERROR(CheckTensorFiles(e, *v, base + ".forward." + list, config.read_root));
      }
    }
    if (config.propagation == "backward") {
      for (const char* list : {"grad_input", "input"}) {
        if (const JsonValue* v = backward->Find(list)) {
          GA_RETURN_IF_ERROR(CheckTensorFiles(e, *v, base + ".backward." + list, config.read_root));
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

std::string ScriptText(const ApiEntries& e, const OpConfig& config, const ApiCall& call,
                       const std::string& framework, const char* runtime, const std::string& options) {
  JsonValue spec;
  spec.type = JsonValue::Type::kObject;
  spec.members.emplace_back("api_name", JsonValue::String(e.api_name));
  spec.members.emplace_back("api", JsonValue::String(call.python_api()));
  spec.members.emplace_back("source", JsonValue::String(fs::path(e.source).filename().string()));
  spec.members.emplace_back("propagation", JsonValue::String(config.propagation));
  spec.members.emplace_back("data_mode", JsonValue::String(config.data_mode));
  spec.members.emplace_back("random_seed", Number(config.random_seed));
  spec.members.emplace_back("iter_times", Number(config.iter_times));
  spec.members.emplace_back("forward", *Entry(e, "forward"));
  const JsonValue* backward = Entry(e, "backward");
  spec.members.emplace_back("backward", config.propagation == "backward" && backward ? *backward : JsonValue{});

  // The comments hold only checked text: the API name is on msprobe's list
  // (ResolveApi), propagation one of two words, the dump's file name shown
  // only when plain; the rest is in SPEC's literals.
  std::string source = fs::path(e.source).filename().string();
  bool plain = !source.empty() && std::all_of(source.begin(), source.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
  std::string out = "#!/usr/bin/env python3\n";
  out += "# Reproduces " + e.api_name + " (" + config.propagation + ") from " + (plain ? source : "the dump") +
         ", written by graph-ascend op_generate.\n";
  out += "# Run: python3 " + ScriptName(e, config) + " " + options + "\n";
  out += "# The dumped entry is SPEC at the end of the file.\n";
  out += runtime;
  out += "\n\n";
  out += SupportedApisPython(framework);
  out += "\nSPEC = ";
  spec.WritePython(&out);
  out += "\n\nif __name__ == \"__main__\":\n    sys.exit(main(SPEC))\n";
  return out;
}

std::string PyTorchScript(const ApiEntries& e, const OpConfig& config, const ApiCall& call) {
  return ScriptText(e, config, call, "pytorch", kPyTorchRuntime,
                    "[--device cpu|cuda|npu] [--save-metrics FILE] [--against FILE]");
}

}  // namespace graph_ascend::op_generate
