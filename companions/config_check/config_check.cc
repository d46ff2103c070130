#include "config_check/config_check.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "base/py_format.h"
#include "zip/zip_archive.h"

namespace graph_ascend::config_check {
namespace {

using Json = nlohmann::ordered_json;

const char* const kPass = "pass";
const char* const kWarning = "warning";
const char* const kError = "error";

bool StartsWith(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

bool EndsWith(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

Result<Json> ParseJson(const Pack& pack, const std::string& member) {
  auto it = pack.files.find(member);
  if (it == pack.files.end()) return Error{pack.path, member, "missing pack member"};
  try {
    return Json::parse(it->second);
  } catch (const Json::parse_error& e) {
    return Error{pack.path, member + " byte " + std::to_string(e.byte), "bad JSON"};
  }
}

bool HasPrefix(const Pack& p, const std::string& prefix) {
  for (const auto& [name, text] : p.files)
    if (StartsWith(name, prefix)) return true;
  return false;
}

// msprobe's verdict of a sheet: error if any error, else warning if any warning, else pass.
std::string Verdict(const std::vector<std::string>& levels) {
  if (std::find(levels.begin(), levels.end(), kError) != levels.end()) return kError;
  if (std::find(levels.begin(), levels.end(), kWarning) != levels.end()) return kWarning;
  return kPass;
}

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
    if (!used.count(k)) rows.push_back({file, "Only in comparison", k, "", ParamText(v), "", kWarning});
  auto text = [](const Cell& c) { return std::holds_alternative<std::string>(c) ? std::get<std::string>(c) : ""; };
  std::sort(rows.begin(), rows.end(), [&](const auto& x, const auto& y) {
    for (size_t i = 0; i < x.size(); ++i)
      if (text(x[i]) != text(y[i])) return text(x[i]) < text(y[i]);
    return false;
  });
  for (auto& r : rows) s->rows.push_back(std::move(r));
}

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

// ---- weights and dataset statistics ---------------------------------------

const char* const kStats[] = {"max", "min", "mean", "norm"};

// |bench - cmp| / |bench| (msprobe divides by the signed bench value), none for a zero bench value.
Cell RelativeDiff(const Json& b, const Json& c) {
  if (!b.is_number() || !c.is_number()) return std::monostate{};
  double x = b.get<double>(), y = c.get<double>();
  if (x == 0) return std::monostate{};
  return std::fabs(x - y) / std::fabs(x);
}

bool IsStats(const Json& v) {
  if (!v.is_object() || v.size() != 4) return false;
  for (const char* k : kStats)
    if (!v.contains(k)) return false;
  return true;
}

// "weights/step3/rank1/weight.json" -> step 3, rank 1.
bool StepRank(const std::string& member, const std::string& prefix, int64_t* step, int64_t* rank) {
  if (!StartsWith(member, prefix + "/step")) return false;
  size_t a = prefix.size() + 5, b = member.find('/', a);
  if (b == std::string::npos || member.compare(b + 1, 4, "rank") != 0) return false;
  size_t c = member.find('/', b + 5);
  if (c == std::string::npos) return false;
  try {
    *step = std::stoll(member.substr(a, b - a));
    *rank = std::stoll(member.substr(b + 5, c - b - 5));
  } catch (...) {
    return false;
  }
  return true;
}

Result<Sheet> CompareWeights(const Pack& bench, const Pack& cmp) {
  Sheet s{"weights",
          {"step", "rank", "weight_name", "equal", "max_relative_diff", "min_relative_diff", "mean_relative_diff",
           "norm_relative_diff"},
          {}};
  struct Row {
    int64_t step, rank;
    std::vector<Cell> cells;
  };
  std::vector<Row> rows;
  for (const auto& [member, text] : bench.files) {
    int64_t step, rank;
    if (!EndsWith(member, ".json") || !StepRank(member, "weights", &step, &rank)) continue;
    auto b = ParseJson(bench, member);
    if (!b.ok()) return b.error();
    if (!b->is_object()) return Error{bench.path, member, "expected a JSON object of weight statistics"};
    Json c = Json::object();
    bool have = cmp.files.count(member);
    if (have) {
      auto parsed = ParseJson(cmp, member);
      if (!parsed.ok()) return parsed.error();
      c = *parsed;
      if (!c.is_object()) return Error{cmp.path, member, "expected a JSON object of weight statistics"};
    }
    std::set<std::string> names;
    for (const auto& [k, v] : b->items()) names.insert(k);
    if (have)
      for (const auto& [k, v] : c.items()) names.insert(k);
    for (const std::string& name : names) {
      std::vector<Cell> r = {step, rank, name};
      if (!b->contains(name) || !c.contains(name)) {
        r.push_back(std::string(b->contains(name) ? "only bench have" : "only cmp have"));
        r.resize(8);
      } else {
        Json bv = (*b)[name].is_object() ? (*b)[name] : Json::object();
        Json cv = c[name].is_object() ? c[name] : Json::object();
        bool equal = true;
        for (const char* k : kStats) equal = equal && bv.value(k, Json()) == cv.value(k, Json());
        r.push_back(equal);
        for (const char* k : kStats) r.push_back(RelativeDiff(bv.value(k, Json()), cv.value(k, Json())));
      }
      rows.push_back({step, rank, std::move(r)});
    }
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& x, const Row& y) { return std::tie(x.step, x.rank) < std::tie(y.step, y.rank); });
  for (auto& r : rows) s.rows.push_back(std::move(r.cells));
  return s;
}

void CompareDatasetDicts(const Json& b, const Json& c, const std::string& tag, std::vector<std::vector<Cell>>* out) {
  for (const auto& [k, v] : b.items()) {
    std::string t = tag.empty() ? k : tag + "." + k;
    if (!c.contains(k)) {
      out->push_back({t, false, std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{}});
      continue;
    }
    if (!v.is_object()) continue;
    if (IsStats(v)) {
      std::vector<Cell> r = {t, v == c[k]};
      for (const char* s : kStats) r.push_back(RelativeDiff(v[s], c[k].is_object() ? c[k].value(s, Json()) : Json()));
      out->push_back(std::move(r));
    } else if (c[k].is_object()) {
      CompareDatasetDicts(v, c[k], t, out);
    }
  }
  for (const auto& [k, v] : c.items()) {
    if (!b.contains(k)) {
      std::string t = tag.empty() ? k : tag + "." + k;
      out->push_back({t, false, std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{}});
    }
  }
}

Result<Sheet> CompareDataset(const Pack& bench, const Pack& cmp) {
  Sheet s{"dataset",
          {"step", "rank", "tag", "equal", "max_relative_diff", "min_relative_diff", "mean_relative_diff",
           "norm_relative_diff"},
          {}};
  std::vector<std::tuple<int64_t, int64_t, std::vector<Cell>>> rows;
  for (const auto& [member, text] : bench.files) {
    int64_t step, rank;
    if (!EndsWith(member, "/dataset.json") || !StepRank(member, "dataset", &step, &rank)) continue;
    if (!cmp.files.count(member)) continue;
    auto b = ParseJson(bench, member);
    if (!b.ok()) return b.error();
    auto c = ParseJson(cmp, member);
    if (!c.ok()) return c.error();
    if (!b->is_object() || !c->is_object()) return Error{bench.path, member, "expected a JSON object"};
    std::vector<std::vector<Cell>> found;
    CompareDatasetDicts(*b, *c, "", &found);
    for (auto& f : found) {
      std::vector<Cell> r = {step, rank};
      r.insert(r.end(), f.begin(), f.end());
      rows.emplace_back(step, rank, std::move(r));
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    return std::tie(std::get<0>(x), std::get<1>(x)) < std::tie(std::get<0>(y), std::get<1>(y));
  });
  for (auto& r : rows) s.rows.push_back(std::move(std::get<2>(r)));
  return s;
}

// ---- random-op call stacks -------------------------------------------------

// "File {path}, line {n}, in {func}, {code}" -> path, func, code.
std::array<std::string, 3> ParseFrame(const std::string& frame) {
  std::vector<std::string> parts;
  for (size_t a = 0, b; a <= frame.size(); a = b + 1) {
    b = frame.find(' ', a);
    if (b == std::string::npos) b = frame.size();
    parts.push_back(frame.substr(a, b - a));
  }
  if (parts.size() <= 6) return {"", "", ""};
  std::string code;
  for (size_t i = 6; i < parts.size(); ++i) code += (i > 6 ? " " : "") + parts[i];
  auto chop = [](const std::string& s) { return s.empty() ? s : s.substr(0, s.size() - 1); };
  return {chop(parts[1]), chop(parts[5]), code};
}

std::string Basename(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// Same depth, and each frame scores 0.8 or more on file name, function and code (a third each).
bool StackMatch(const Json& s1, const Json& s2) {
  if (!s1.is_array() || !s2.is_array() || s1.size() != s2.size()) return false;
  for (size_t i = 0; i < s1.size(); ++i) {
    auto a = ParseFrame(s1[i].is_string() ? s1[i].get<std::string>() : "");
    auto b = ParseFrame(s2[i].is_string() ? s2[i].get<std::string>() : "");
    double path = !a[0].empty() && !b[0].empty() && Basename(a[0]) == Basename(b[0]) ? 1.0 : 0.0;
    double func = a[1] == b[1] ? 1.0 : 0.0;
    if ((path + func + SequenceRatio(a[2], b[2])) / 3.0 < 0.8) return false;
  }
  return true;
}

std::string StackText(const Json& stack) {
  std::string out;
  for (const Json& f : stack) out += (out.empty() ? "" : "\n") + (f.is_string() ? f.get<std::string>() : f.dump());
  return out;
}

Result<std::map<int64_t, Json>> RandomRanks(const Pack& pack) {
  std::map<int64_t, Json> out;
  for (const auto& [member, text] : pack.files) {
    if (!StartsWith(member, "random/rank") || !EndsWith(member, ".json")) continue;
    std::string id = member.substr(11, member.size() - 16);
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
      return Error{pack.path, member, "cannot read a rank id from the name"};
    }
    auto j = ParseJson(pack, member);
    if (!j.ok()) return j.error();
    if (!j->is_object()) return Error{pack.path, member, "expected {op: [{count, stack}]}"};
    out[std::stoll(id)] = *j;
  }
  return out;
}

Result<Sheet> CompareRandom(const Pack& bench, const Pack& cmp) {
  auto b = RandomRanks(bench);
  if (!b.ok()) return b.error();
  auto c = RandomRanks(cmp);
  if (!c.ok()) return c.error();
  Sheet s{"random", {"op", "rank", "bench_stack", "cmp_stack", "bench_count", "cmp_count", "check_result"}, {}};
  std::set<int64_t> ranks;
  for (const auto& [r, j] : *b) ranks.insert(r);
  for (const auto& [r, j] : *c) ranks.insert(r);
  for (int64_t rank : ranks) {
    Json bd = b->count(rank) ? (*b)[rank] : Json::object(), cd = c->count(rank) ? (*c)[rank] : Json::object();
    std::set<std::string> ops;
    for (const auto& [op, v] : bd.items()) ops.insert(op);
    for (const auto& [op, v] : cd.items()) ops.insert(op);
    for (const std::string& op : ops) {
      Json bs = bd.value(op, Json::array()), cs = cd.value(op, Json::array());
      auto count = [](const Json& e) -> int64_t {
        return e.is_object() && e.value("count", Json()).is_number_integer() ? e["count"].get<int64_t>() : 0;
      };
      auto stack = [](const Json& e) { return e.is_object() ? e.value("stack", Json::array()) : Json::array(); };
      for (const Json& be : bs) {
        const Json* match = nullptr;
        for (const Json& ce : cs)
          if (!match && StackMatch(stack(ce), stack(be))) match = &ce;
        if (match) {
          s.rows.push_back({op, rank, StackText(stack(be)), StackText(stack(*match)), count(be), count(*match),
                            count(be) == count(*match)});
        } else {
          s.rows.push_back({op, rank, StackText(stack(be)), "no match stack", count(be), int64_t{0}, false});
        }
      }
      for (const Json& ce : cs) {
        bool seen = false;
        for (const Json& be : bs) seen = seen || StackMatch(stack(be), stack(ce));
        if (!seen) s.rows.push_back({op, rank, "no match stack", StackText(stack(ce)), int64_t{0}, count(ce), false});
      }
    }
  }
  return s;
}

// Sheets whose "equal"/"check_result" column decides: error if any false.
std::string BoolVerdict(const Sheet& s, size_t column) {
  for (const auto& r : s.rows)
    if (column < r.size() && std::holds_alternative<bool>(r[column]) && !std::get<bool>(r[column])) return kError;
  return kPass;
}

std::string LevelVerdict(const Sheet& s) {
  std::vector<std::string> levels;
  for (const auto& r : s.rows)
    if (!r.empty() && std::holds_alternative<std::string>(r.back())) levels.push_back(std::get<std::string>(r.back()));
  return Verdict(levels);
}

}  // namespace

Result<Pack> ReadPack(const std::string& zip_path) {
  auto zip = zip::ZipArchive::Open(zip_path);
  if (!zip.ok()) return zip.error();
  Pack p;
  p.path = zip_path;
  for (const std::string& name : zip->Names()) {
    if (name.empty() || name.back() == '/') continue;
    auto text = zip->Read(name, size_t{1} << 28);
    if (!text.ok()) return text.error();
    p.files[name] = std::move(*text);
  }
  bool any = p.files.count("env") || p.files.count("pip");
  for (const char* dir : {"hyperparameters/", "weights/", "dataset/", "random/"}) any = any || HasPrefix(p, dir);
  if (!any) {
    return Error{zip_path, "",
                 "not a config_check pack (no env, pip, hyperparameters/, weights/, dataset/ or random/ member)"};
  }
  return p;
}

namespace {

Result<std::vector<Sheet>> CompareAll(const Pack& bench, const Pack& cmp) {
  Sheet summary{"summary", {"filename", "pass_check"}, {}};
  std::vector<Sheet> sheets;
  auto both = [&](const std::string& member, bool dir) {
    return dir ? HasPrefix(bench, member + "/") && HasPrefix(cmp, member + "/")
               : bench.files.count(member) && cmp.files.count(member);
  };
  auto add = [&](Result<Sheet> s, std::string verdict_kind) -> Status {
    if (!s.ok()) return s.error();
    std::string verdict = verdict_kind == "level"   ? LevelVerdict(*s)
                          : verdict_kind == "equal" ? BoolVerdict(*s, 3)
                                                    : BoolVerdict(*s, 6);
    summary.rows.push_back({s->name, verdict});
    sheets.push_back(std::move(*s));
    return Status::Ok();
  };
  // msprobe's order of checks.
  if (both("env", false)) GA_RETURN_IF_ERROR(add(CompareEnv(bench, cmp), "level"));
  if (both("pip", false)) GA_RETURN_IF_ERROR(add(ComparePip(bench, cmp), "level"));
  if (both("dataset", true)) GA_RETURN_IF_ERROR(add(CompareDataset(bench, cmp), "equal"));
  if (both("weights", true)) GA_RETURN_IF_ERROR(add(CompareWeights(bench, cmp), "equal"));
  if (both("hyperparameters", true)) GA_RETURN_IF_ERROR(add(CompareHyperparameters(bench, cmp), "level"));
  if (both("random", true)) GA_RETURN_IF_ERROR(add(CompareRandom(bench, cmp), "check"));
  sheets.insert(sheets.begin(), std::move(summary));
  return sheets;
}

}  // namespace

Result<std::vector<Sheet>> ComparePacks(const Pack& bench, const Pack& cmp) {
  try {
    return CompareAll(bench, cmp);
  } catch (const nlohmann::json::exception& e) {
    // A member of an unexpected shape (e.g. a number where statistics belong).
    return Error{bench.path + " / " + cmp.path, "", std::string("unexpected pack content: ") + e.what()};
  }
}

}  // namespace graph_ascend::config_check
