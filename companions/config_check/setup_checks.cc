// The env, pip and hyperparameters checks (msprobe's env_args_checker,
// pip_checker and hyperparameter_checker rules).
#include <algorithm>
#include <set>

#include "base/py_format.h"
#include "config_check/checks.h"

namespace graph_ascend::config_check {
namespace {

// ---- env -----------------------------------------------------------------

// Derived from msprobe 26.2.0's resource/env.yaml (data): the variable checked on
// NPU and its GPU counterpart, with the value assumed when it is unset.
struct EnvRule {
  const char* npu;
  const char* npu_default;
  const char* gpu;  // nullptr: no GPU counterpart
  const char* gpu_default;
};
const EnvRule kEnvRules[] = {
    {"HCCL_DETERMINISTIC", "False", "NCCL_DETERMINISTIC", "False"},
    {"HCCL_ALGO", "None", "NCCL_ALGO", "None"},
    {"HCCL_INTRA_ROCE_ENABLE", "0", nullptr, nullptr},
    // msprobe's yaml names HCCL_INTRA_ROCE_ENABLE a second time here (with default 1).
    {"HCCL_INTRA_PCIE_ENABLE", "1", nullptr, nullptr},
    {"ASCEND_LAUNCH_BLOCKING", "0", "CUDA_LAUNCH_BLOCKING", "0"},
    {"ASCEND_RT_VISIBLE_DEVICES", "None", "CUDA_VISIBLE_DEVICES", "None"},
};

std::string EnvText(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

Result<Sheet> CompareEnv(const Pack& bench, const Pack& cmp) {
  auto b = ParseJson(bench, "env");
  if (!b.ok()) return b.error();
  auto c = ParseJson(cmp, "env");
  if (!c.ok()) return c.error();
  if (!b->is_object()) return Error{bench.path, "env", "expected a JSON object of environment variables"};
  if (!c->is_object()) return Error{cmp.path, "env", "expected a JSON object of environment variables"};
  // NPU variables when any variable name contains ASCEND, GPU ones otherwise.
  auto npu = [](const Json& env) {
    for (const auto& [k, v] : env.items())
      if (k.find("ASCEND") != std::string::npos) return true;
    return false;
  };
  bool bn = npu(*b), cn = npu(*c);
  Sheet s{"env", {"bench_env_name", "cmp_env_name", "bench_value", "cmp_value", "level"}, {}};
  auto value = [](const Json& env, const char* name, const char* fallback) {
    return env.contains(name) ? EnvText(env[name]) : std::string(fallback);
  };
  for (const EnvRule& r : kEnvRules) {
    const char* bname = bn ? r.npu : r.gpu;
    const char* cname = cn ? r.npu : r.gpu;
    const char* bdef = bn ? r.npu_default : r.gpu_default;
    const char* cdef = cn ? r.npu_default : r.gpu_default;
    if (!bname && !cname) continue;
    if (bname && cname) {
      std::string bv = value(*b, bname, bdef), cv = value(*c, cname, cdef);
      if (bv != cv) s.rows.push_back({bname, cname, bv, cv, kError});
    } else if (cname) {
      s.rows.push_back({"only cmp has this env", cname, "", value(*c, cname, cdef), kWarning});
    } else {
      s.rows.push_back({bname, "only bench has this env", value(*b, bname, bdef), "", kWarning});
    }
  }
  return s;
}

namespace {

// ---- pip -----------------------------------------------------------------

// Derived from msprobe 26.2.0's resource/dependency.yaml (data).
const char* const kDependencies[] = {"transformers", "deepspeed", "megatron", "numpy",
                                     "datasets",     "peft",      "mindspore", "torch"};

// PEP 503 normalised distribution name: lower case, runs of -_. as one -.
std::string Normalized(const std::string& name) {
  std::string out;
  for (char ch : name) {
    if (ch == '-' || ch == '_' || ch == '.') {
      if (out.empty() || out.back() != '-') out += '-';
    } else {
      out += static_cast<char>(tolower(static_cast<unsigned char>(ch)));
    }
  }
  return out;
}

std::map<std::string, std::string> PipVersions(const std::string& text) {
  std::map<std::string, std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    while (!line.empty() && isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (line.empty()) continue;
    size_t eq = line.find('=');
    bool two = eq != std::string::npos && line.find('=', eq + 1) == std::string::npos;
    out[Normalized(line.substr(0, eq))] = two ? line.substr(eq + 1) : "";
  }
  return out;
}

}  // namespace

Result<Sheet> ComparePip(const Pack& bench, const Pack& cmp) {
  auto b = PipVersions(bench.files.at("pip")), c = PipVersions(cmp.files.at("pip"));
  Sheet s{"pip", {"package", "bench version", "cmp version", "level"}, {}};
  for (const char* dep : kDependencies) {
    auto bi = b.find(dep), ci = c.find(dep);
    std::string bv = bi == b.end() || bi->second.empty() ? "None" : bi->second;
    std::string cv = ci == c.end() || ci->second.empty() ? "None" : ci->second;
    if (bv != cv) s.rows.push_back({std::string(dep), bv, cv, kError});
  }
  return s;
}

namespace {

// ---- hyperparameters -------------------------------------------------------

// Derived from msprobe 26.2.0's resource/hyperparameter.yaml (data): canonical name -> aliases.
const std::vector<std::pair<std::string, std::vector<std::string>>> kAliases = {
    {"learning_rate", {"lr", "learningrate"}},
    {"batch_size", {"batch", "bs", "batch_size_per_gpu"}},
    {"epochs", {"num_epochs", "max_epochs", "epoch"}},
    {"weight_decay", {"wd", "weightdecay"}},
    {"dropout_rate", {"dropout", "drop_rate"}},
    {"compute_dtype", {"bf16", "fp32"}},
    {"residual_dtype", {"fp32_residual_connection"}},
    {"softmax_compute_dtype", {"attention_softmax_in_fp32"}},
};

// A value as msprobe compares it: numbers (and booleans) as Python's str(), text as is.
std::string ParamText(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_number_integer()) return v.dump();
  if (v.is_number_float()) return PyRepr(v.get<double>());
  if (v.is_null()) return "None";
  return v.dump();
}

// The value itself, as msprobe shows a parameter only cmp has (numbers stay numbers).
Cell RawCell(const Json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) return v.get<double>();
  return ParamText(v);
}

// "a.b.num-layers" -> "num_layers".
std::string Refined(const std::string& key) {
  std::string r = key.substr(key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1);
  std::replace(r.begin(), r.end(), '-', '_');
  return r;
}

// The cmp parameter (refined name) a bench one matches, and how: same name, alias, or similar name.
std::pair<std::string, std::string> MatchParam(const std::string& name, const std::map<std::string, std::string>& cmp,
                                               const std::vector<std::string>& cmp_order) {
  if (cmp.count(name)) return {name, "pure name"};
  for (const auto& [canonical, aliases] : kAliases) {
    if (name != canonical && std::find(aliases.begin(), aliases.end(), name) == aliases.end()) continue;
    if (cmp.count(canonical)) return {canonical, "mapping"};
    for (const std::string& a : aliases)
      if (cmp.count(a)) return {a, "mapping"};
    break;
  }
  std::string best;
  double best_ratio = 0.8;
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  for (const std::string& candidate : cmp_order) {
    if (!cmp.count(candidate)) continue;
    std::string l = candidate;
    std::transform(l.begin(), l.end(), l.begin(), ::tolower);
    double r = SequenceRatio(lower, l);
    if (r > best_ratio) {
      best_ratio = r;
      best = candidate;
    }
  }
  if (best.empty()) return {"", ""};
  return {best, "similarity:" + PyRepr(best_ratio)};
}

void CompareParams(const Json& bench, const Json& cmp, const std::string& file, Sheet* s) {
  std::map<std::string, std::string> bench_refined, cmp_refined;  // refined -> original key
  std::vector<std::string> bench_order, cmp_order;
  for (const auto& [k, v] : bench.items()) {
    if (!bench_refined.count(Refined(k))) bench_order.push_back(Refined(k));
    bench_refined[Refined(k)] = k;
  }
  for (const auto& [k, v] : cmp.items()) {
    if (!cmp_refined.count(Refined(k))) cmp_order.push_back(Refined(k));
    cmp_refined[Refined(k)] = k;
  }
  std::set<std::string> used;  // cmp originals already matched
  std::vector<std::vector<Cell>> rows;
  for (const std::string& refined : bench_order) {
    const std::string& bname = bench_refined[refined];
    std::string bv = ParamText(bench[bname]);
    auto [match, how] = MatchParam(refined, cmp_refined, cmp_order);
    if (!match.empty()) {
      std::string cname = cmp_refined[match];
      std::string cv = ParamText(cmp[cname]);
      if (bv != cv) rows.push_back({file, bname, cname, bv, cv, how, kError});
      used.insert(cname);
      cmp_refined.erase(match);  // msprobe keeps it matchable, then fails on a second match
    } else {
      rows.push_back({file, bname, "Only in benchmark", bv, "", "", kWarning});
    }
  }
  for (const auto& [k, v] : cmp.items())
    if (!used.count(k)) rows.push_back({file, "Only in comparison", k, "", RawCell(v), "", kWarning});
  auto text = [](const Cell& c) { return std::holds_alternative<std::string>(c) ? std::get<std::string>(c) : ""; };
  std::sort(rows.begin(), rows.end(), [&](const auto& x, const auto& y) {
    for (size_t i = 0; i < x.size(); ++i)
      if (text(x[i]) != text(y[i])) return text(x[i]) < text(y[i]);
    return false;
  });
  for (auto& r : rows) s->rows.push_back(std::move(r));
}

}  // namespace

Result<Sheet> CompareHyperparameters(const Pack& bench, const Pack& cmp) {
  Sheet s{"hyperparameters",
          {"file_name", "bench_para", "cmp_para", "bench_value", "cmp_value", "matched_with", "level"},
          {}};
  for (const char* file : {"hyperparameters_static.json", "hyperparameters_dynamic.json"}) {
    std::string member = std::string("hyperparameters/") + file;
    if (!bench.files.count(member) || !cmp.files.count(member)) continue;
    auto b = ParseJson(bench, member);
    if (!b.ok()) return b.error();
    auto c = ParseJson(cmp, member);
    if (!c.ok()) return c.error();
    if (!b->is_object()) return Error{bench.path, member, "expected a JSON object"};
    if (!c->is_object()) return Error{cmp.path, member, "expected a JSON object"};
    CompareParams(*b, *c, file, &s);
  }
  return s;
}

}  // namespace graph_ascend::config_check
