#include "weights/ckpt_similarity.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "base/mapped_file.h"
#include "json/json_reader.h"

namespace graph_ascend::weights {
namespace {

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Reads l2 or cos: a number, or null.
Status ReadMeasure(json::JsonReader& r, bool* has, double* value) {
  auto t = r.Peek();
  if (!t.ok()) return t.error();
  if (*t == json::JsonType::kNull) return r.ReadNull();
  if (*t != json::JsonType::kNumber) return r.ErrorHere("expected a number or null");
  auto n = r.ReadNumber();
  if (!n.ok()) return n.error();
  *has = true;
  *value = n->number;
  return Status::Ok();
}

Result<vis::CkptParam> ReadParam(json::JsonReader& r, std::string_view name) {
  vis::CkptParam p;
  p.set_name(std::string(name));
  p.set_module(-1);
  size_t at = r.offset();
  GA_RETURN_IF_ERROR(r.EnterObject());
  bool seen_l2 = false, seen_cos = false;
  std::string_view key;
  for (;;) {
    auto more = r.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) break;
    if (key == "l2") {
      bool has = false;
      double v = 0;
      GA_RETURN_IF_ERROR(ReadMeasure(r, &has, &v));
      p.set_has_l2(has);
      p.set_l2(v);
      seen_l2 = true;
    } else if (key == "cos") {
      bool has = false;
      double v = 0;
      GA_RETURN_IF_ERROR(ReadMeasure(r, &has, &v));
      p.set_has_cos(has);
      p.set_cos(v);
      seen_cos = true;
    } else if (key == "numel") {
      GA_RETURN_IF_ERROR(r.ReadCompact(p.mutable_numel()));
    } else if (key == "shape") {
      GA_RETURN_IF_ERROR(r.ReadCompact(p.mutable_shape()));
    } else {
      GA_RETURN_IF_ERROR(r.Skip());
    }
  }
  if (!seen_l2 || !seen_cos) {
    return r.ErrorAt(at, "parameter '" + p.name() + "' has no " + (seen_l2 ? "cos" : "l2"));
  }
  return p;
}

// Most different first: no measure, then the lowest cos, then the largest l2.
bool Worse(const vis::CkptModule& a, const vis::CkptModule& b) {
  if (a.incomparable() != b.incomparable()) return a.incomparable();
  double ca = a.has_cos() ? a.worst_cos() : -2, cb = b.has_cos() ? b.worst_cos() : -2;
  if (ca != cb) return ca < cb;
  return a.max_l2() > b.max_l2();
}

}  // namespace

Result<std::vector<vis::CkptParam>> ParseCkptJson(std::string_view text, const std::string& file) {
  json::JsonReader r(text, file);
  auto type = r.Peek();
  if (!type.ok()) return type.error();
  if (*type != json::JsonType::kObject) return r.ErrorHere("expected ckpt_compare's {param: {l2, cos, numel, shape}}");
  GA_RETURN_IF_ERROR(r.EnterObject());
  std::vector<vis::CkptParam> params;
  std::string_view key;
  for (;;) {
    auto more = r.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) break;
    std::string name(key);
    auto t = r.Peek();
    if (!t.ok()) return t.error();
    if (*t != json::JsonType::kObject) return r.ErrorHere("parameter '" + name + "' is not an object");
    auto p = ReadParam(r, name);
    if (!p.ok()) return p.error();
    params.push_back(std::move(*p));
  }
  GA_RETURN_IF_ERROR(r.ExpectEnd());
  std::sort(params.begin(), params.end(), [](const auto& a, const auto& b) { return a.name() < b.name(); });
  return params;
}

Result<std::vector<vis::CkptParam>> ReadCkptJson(const std::string& path) {
  auto text = ReadFileToString(path, size_t{1} << 30);
  if (!text.ok()) return text.error();
  return ParseCkptJson(*text, path);
}

std::optional<std::string> ModulePathOf(std::string_view name) {
  std::vector<std::string_view> parts;
  for (size_t at = 0;;) {
    size_t dot = name.find('.', at);
    parts.push_back(name.substr(at, dot == std::string_view::npos ? dot : dot - at));
    if (dot == std::string_view::npos) break;
    at = dot + 1;
  }
  // Module . [path...] . Class . forward|backward . N
  if (parts.size() < 4 || parts[0] != "Module") return std::nullopt;
  size_t n = parts.size();
  if (!AllDigits(parts[n - 1]) || (parts[n - 2] != "forward" && parts[n - 2] != "backward")) return std::nullopt;
  size_t first = 1, end = n - 3;
  // Module.<chunk>.module... : a model list's chunk index, told from an nn.Sequential child by the wrapper after it.
  if (first + 1 < end && AllDigits(parts[first]) && parts[first + 1] == "module") ++first;
  while (first < end && parts[first] == "module") ++first;
  std::string path;
  for (size_t i = first; i < end; ++i) {
    if (!path.empty()) path += '.';
    path.append(parts[i]);
  }
  return path;
}

vis::CkptSimilarity MapOntoModules(std::vector<vis::CkptParam> params, uint32_t node_count,
                                   const std::function<std::string_view(uint32_t)>& module_name) {
  vis::CkptSimilarity out;
  std::unordered_map<std::string, uint32_t> by_path;  // module path -> index into out.module
  for (uint32_t n = 0; n < node_count; ++n) {
    std::string_view name = module_name(n);
    if (name.empty()) continue;
    std::optional<std::string> path = ModulePathOf(name);
    if (!path) continue;
    auto [it, fresh] = by_path.emplace(*path, static_cast<uint32_t>(out.module_size()));
    if (fresh) out.add_module()->set_path(*path);
    out.mutable_module(static_cast<int>(it->second))->add_node(n);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = params[i].name();
    size_t dot = name.rfind('.');
    std::string path = dot == std::string::npos ? "" : name.substr(0, dot);
    auto it = by_path.find(path);
    static const std::string kNorm = "input_layernorm";
    if (it == by_path.end() && path.size() >= kNorm.size() &&
        path.compare(path.size() - kNorm.size(), kNorm.size(), kNorm) == 0) {
      it = by_path.find(path.substr(0, path.size() - kNorm.size()) + "self_attention.linear_qkv");
    }
    if (it == by_path.end()) continue;
    params[i].set_module(static_cast<int32_t>(it->second));
    vis::CkptModule* m = out.mutable_module(static_cast<int>(it->second));
    m->add_param(static_cast<uint32_t>(i));
    const vis::CkptParam& p = params[i];
    if (!p.has_l2()) m->set_incomparable(true);
    if (p.has_l2() && (!m->has_l2() || p.l2() > m->max_l2() || std::isnan(p.l2()))) {
      m->set_has_l2(true);
      m->set_max_l2(p.l2());
    }
    if (p.has_cos() && (!m->has_cos() || p.cos() < m->worst_cos() || std::isnan(p.cos()))) {
      m->set_has_cos(true);
      m->set_worst_cos(p.cos());
    }
  }
  // Keep only the modules that hold parameters, renumbered.
  vis::CkptSimilarity kept;
  std::vector<int32_t> renumber(static_cast<size_t>(out.module_size()), -1);
  for (int i = 0; i < out.module_size(); ++i) {
    if (out.module(i).param_size() == 0) continue;
    renumber[static_cast<size_t>(i)] = kept.module_size();
    *kept.add_module() = std::move(*out.mutable_module(i));
  }
  for (vis::CkptParam& p : params) {
    if (p.module() >= 0) p.set_module(renumber[static_cast<size_t>(p.module())]);
    *kept.add_param() = std::move(p);
  }
  return kept;
}

bool Differs(const vis::CkptParam& p, const Tolerance& t) {
  if (!p.has_l2()) return true;
  if (!(p.l2() <= t.l2)) return true;  // NaN differs
  return p.has_cos() && !(p.cos() >= 1 - t.cos);
}

bool Differs(const vis::CkptModule& m, const Tolerance& t) {
  if (m.incomparable()) return true;
  if (m.has_l2() && !(m.max_l2() <= t.l2)) return true;
  return m.has_cos() && !(m.worst_cos() >= 1 - t.cos);
}

std::vector<uint32_t> WorstModules(const vis::CkptSimilarity& s, const Tolerance& t, size_t limit) {
  std::vector<uint32_t> order;
  for (int i = 0; i < s.module_size(); ++i)
    if (Differs(s.module(i), t)) order.push_back(static_cast<uint32_t>(i));
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return Worse(s.module(static_cast<int>(a)), s.module(static_cast<int>(b))); });
  if (order.size() > limit) order.resize(limit);
  return order;
}

void Summarize(const vis::CkptSimilarity& s, vis::FileMeta* meta) {
  meta->set_ckpt_compared(true);
  meta->set_ckpt_param_count(static_cast<uint32_t>(s.param_size()));
  uint32_t unmapped = 0, differing = 0;
  for (const vis::CkptParam& p : s.param())
    if (p.module() < 0) ++unmapped;
  for (const vis::CkptModule& m : s.module())
    if (Differs(m, Tolerance{})) ++differing;
  meta->set_ckpt_unmapped_count(unmapped);
  meta->set_ckpt_differing_modules(differing);
}

}  // namespace graph_ascend::weights
