#include "convert_request.h"

#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <cctype>
#include <regex>

#include "base/confine.h"

namespace graph_ascend::service {
namespace {

ConvertStatus Bad(int code, std::string message) { return ConvertStatus{code, std::move(message)}; }
ConvertStatus Invalid(std::string message) { return Bad(grpc::StatusCode::INVALID_ARGUMENT, std::move(message)); }

// The files of a dump folder the builder reads first; the tensors of
// dump_tensor_data are checked by the builder as it opens them.
constexpr const char* kDumpFiles[] = {"", "dump.json", "construct.json", "stack.json", "dump_tensor_data"};

bool SafeOrder(const std::string& s) {
  static const std::regex kOrder("^[A-Za-z]{1,8}(-[A-Za-z]{1,8}){0,7}$");
  return std::regex_match(s, kOrder);
}

}  // namespace

std::string Relative(std::string text, const std::string& root, const std::string& staging,
                     const std::string& output_dir) {
  auto replace = [&text](const std::string& from, const std::string& to) {
    for (size_t p = 0; (p = text.find(from, p)) != std::string::npos; p += to.size()) text.replace(p, from.size(), to);
  };
  if (!staging.empty()) {
    replace(staging + "-config/", "");  // the compare.json of a "graph" run
    replace(staging + "/", output_dir + "/");
  }
  replace(root + "/", "");
  // The log directory itself (a message naming the folder "."), never its absolute path.
  auto in_name = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/';
  };
  for (size_t p = 0; (p = text.find(root, p)) != std::string::npos;) {
    size_t end = p + root.size();
    bool whole = (p == 0 || !in_name(text[p - 1])) && (end == text.size() || !in_name(text[end]));
    if (whole) text.replace(p, root.size(), ".");
    p += whole ? 1 : root.size();
  }
  return text;
}

// Every dump folder of a plan and its files must resolve inside the log
// directory, as the builder will check under --confine: a symlinked step or
// rank folder or dump.json that leads out is refused before anything runs.
ConvertStatus CheckInside(const std::string& root, const std::vector<std::string>& dirs) {
  for (const std::string& dir : dirs) {
    if (dir.empty()) continue;
    for (const char* name : kDumpFiles) {
      std::string path = *name == '\0' ? dir : dir + "/" + name;
      char* real = realpath(path.c_str(), nullptr);
      if (real == nullptr) continue;  // missing: the builder says so
      bool inside = PathInside(real, root);
      free(real);
      if (!inside) {
        return Bad(grpc::StatusCode::FAILED_PRECONDITION,
                   Relative(path, root, "", "") + ": path leaves the log directory (symlink)");
      }
    }
  }
  return ConvertStatus{};
}

ConvertStatus ResolveRequest(const LogDir& logdir, const ConvertRequest& r, Resolved* out) {
  if (r.npu().empty()) return Invalid("npu: choose the dump folder to convert");
  auto npu = logdir.ResolveDir(r.npu());
  if (!npu.ok()) return Invalid("npu: " + npu.error().ToString());
  out->npu = *npu;
  if (!r.bench().empty()) {
    auto bench = logdir.ResolveDir(r.bench());
    if (!bench.ok()) return Invalid("bench: " + bench.error().ToString());
    out->bench = *bench;
  }
  if (r.output_dir().empty()) return Invalid("output_dir: name the folder the results go into");
  auto output = logdir.ResolveNewDir(r.output_dir());
  if (!output.ok()) return Invalid("output_dir: " + output.error().ToString());
  if (output->find("/" + std::string(kPrivateFolderPrefix)) != std::string::npos) {
    return Invalid("output_dir: " + r.output_dir() + ": folders named " + kPrivateFolderPrefix + "* are the server's");
  }
  out->output = *output;
  if (!r.layer_mapping_file().empty()) {
    bool missing = false;
    auto yaml = logdir.Resolve(r.layer_mapping_file(), true, &missing);
    if (!yaml.ok()) return Invalid("layer_mapping_file: " + yaml.error().ToString());
    out->mapping = *yaml;
  }
  if (r.command() != "" && r.command() != "graph_visualize" && r.command() != "graph") {
    return Invalid("command: \"" + r.command() + "\" is neither graph_visualize nor graph");
  }
  auto counted = [&](const char* name, int n) -> ConvertStatus {
    size_t want = r.bench().empty() ? 1 : 2;
    if (n != 0 && static_cast<size_t>(n) > want) {
      return Invalid(std::string(name) + ": " + std::to_string(n) + " values; " +
                     (want == 1 ? "a build takes one" : "a compare takes two (npu, bench)"));
    }
    return ConvertStatus{};
  };
  for (auto [name, n] : {std::pair{"rank_size", r.rank_size_size()}, {"tp", r.tp_size()}, {"pp", r.pp_size()},
                         {"vpp", r.vpp_size()}, {"order", r.order_size()}}) {
    ConvertStatus st = counted(name, n);
    if (!st.ok()) return st;
  }
  for (const std::string& o : r.order()) {
    if (!SafeOrder(o)) return Invalid("order: \"" + o + "\" is not a rank order like tp-cp-ep-dp-pp");
  }
  return ConvertStatus{};
}

bool Parallel(const ConvertRequest& r) {
  return r.rank_size_size() + r.tp_size() + r.pp_size() + r.vpp_size() + r.order_size() > 0;
}


}  // namespace graph_ascend::service
