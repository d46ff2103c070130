#include "ckpt/ckpt_compare.h"

#include <cmath>

#include "base/py_format.h"
#include "ckpt/megatron_checkpoint.h"
#include "json/json_writer.h"

namespace graph_ascend::ckpt {
namespace {

std::string Number(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  return PyRepr(x);
}

Status Measure(const ModelParam& a, const ModelParam& b, ParamSimilarity* out) {
  out->shape_a = a.shape;
  out->shape_b = b.shape;
  out->numel_a = a.numel();
  out->numel_b = b.numel();
  if (a.shape != b.shape) return Status::Ok();
  ParamReader ra(a), rb(b);
  std::vector<double> va(1 << 15), vb(1 << 15);
  double diff2 = 0, dot = 0, aa = 0, bb = 0;
  for (;;) {
    auto na = ra.Read(va.data(), va.size());
    if (!na.ok()) return na.error();
    auto nb = rb.Read(vb.data(), vb.size());
    if (!nb.ok()) return nb.error();
    if (*na == 0 || *nb == 0) break;
    for (size_t k = 0; k < *na; ++k) {
      double d = va[k] - vb[k];
      diff2 += d * d;
      dot += va[k] * vb[k];
      aa += va[k] * va[k];
      bb += vb[k] * vb[k];
    }
  }
  out->l2 = std::sqrt(diff2);
  if (aa == 0 && bb == 0) {
    out->cos = 1.0;
  } else if (aa != 0 && bb != 0) {
    out->cos = dot / (std::sqrt(aa) * std::sqrt(bb));
  }
  return Status::Ok();
}

void Shape(json::JsonWriter& w, const std::vector<int64_t>& s) {
  w.BeginArray();
  for (int64_t d : s) w.Raw(std::to_string(d));
  w.EndArray();
}

}  // namespace

Result<CheckpointComparison> CompareCheckpoints(const std::string& a, const std::string& b) {
  auto ca = LoadMegatronCheckpoint(a);
  if (!ca.ok()) return ca.error();
  auto cb = LoadMegatronCheckpoint(b);
  if (!cb.ok()) return cb.error();
  CheckpointComparison out;
  out.warnings = ca->warnings;
  out.warnings.insert(out.warnings.end(), cb->warnings.begin(), cb->warnings.end());
  for (const auto& [name, pa] : ca->params)
    if (!cb->params.count(name)) out.only_a.push_back(name);
  for (const auto& [name, pb] : cb->params)
    if (!ca->params.count(name)) out.only_b.push_back(name);
  if (ca->Layout() != cb->Layout()) {
    if (!out.only_a.empty() || !out.only_b.empty()) {
      bool in_a = !out.only_a.empty();
      const std::string& first = in_a ? out.only_a.front() : out.only_b.front();
      return Error{in_a ? ca->dir : cb->dir, "key " + first,
                   "no partner after merging " + ca->Layout() + " (" + ca->dir + ") and " + cb->Layout() + " (" +
                       cb->dir + "): " + std::to_string(out.only_a.size()) + " parameters only in the first, " +
                       std::to_string(out.only_b.size()) +
                       " only in the second; the two layouts do not merge into the same model"};
    }
    out.notes.push_back(ca->dir + " is " + ca->Layout() + ", " + cb->dir + " is " + cb->Layout() +
                        ": both were merged into whole models (TP shards joined, layers and experts numbered "
                        "globally) before comparing");
  }
  for (const auto& [name, pa] : ca->params) {
    auto it = cb->params.find(name);
    if (it == cb->params.end()) continue;
    ParamSimilarity s;
    s.name = name;
    GA_RETURN_IF_ERROR(Measure(pa, it->second, &s));
    out.params.push_back(std::move(s));
    // Bounded memory: the pages of this parameter go back to the kernel.
    for (const ShardRef& r : pa.shards) r.file->Release(r.meta);
    for (const ShardRef& r : it->second.shards) r.file->Release(r.meta);
  }
  return out;
}

std::string ComparisonJson(const CheckpointComparison& c) {
  std::string text;
  json::JsonWriter w(&text, 4);
  w.BeginObject();
  for (const ParamSimilarity& p : c.params) {
    w.Key(p.name);
    w.BeginObject();
    w.Key("l2");
    p.l2 ? w.Raw(Number(*p.l2)) : w.Null();
    w.Key("cos");
    p.cos ? w.Raw(Number(*p.cos)) : w.Null();
    w.Key("numel");
    if (p.numel_a == p.numel_b) {
      w.Raw(std::to_string(p.numel_a));
    } else {
      w.BeginArray();
      w.Raw(std::to_string(p.numel_a));
      w.Raw(std::to_string(p.numel_b));
      w.EndArray();
    }
    w.Key("shape");
    if (p.shape_a == p.shape_b) {
      Shape(w, p.shape_a);
    } else {
      w.BeginArray();
      Shape(w, p.shape_a);
      Shape(w, p.shape_b);
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndObject();
  return text;
}

}  // namespace graph_ascend::ckpt
