#include "legend_choice.h"

#include "config_files.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

namespace graph_ascend::service {
namespace {

const char* const kMetricNames[4] = {"MaxRelativeErr", "MinRelativeErr", "MeanRelativeErr", "NormRelativeErr"};
// tb_graph_ascend's text of the grey entry's value.
const char* const kUnmatchedValue = "无匹配节点";

bool IsColourKey(const std::string& k) {
  if (k.size() != 7 || k[0] != '#') return false;
  for (size_t i = 1; i < 7; ++i) {
    if (!isxdigit(static_cast<unsigned char>(k[i]))) return false;
  }
  return true;
}

// A relative error's text: 1 for a non-finite one, NaN for none ("N/A", "", "unsupported").
double RelativeValue(const std::string& text) {
  if (text == "Nan" || text == "nan" || text == "NaN") return 1;
  std::string t = text.substr(0, text.find(','));  // "0.0%, ..." notes after the number
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.pop_back();
  bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  char* end = nullptr;
  double v = strtod(t.c_str(), &end);
  if (t.empty() || end == t.c_str() || *end != '\0') return std::numeric_limits<double>::quiet_NaN();
  if (!std::isfinite(v)) return 1;
  return percent ? v / 100 : v;
}

}  // namespace

Result<uint32_t> ParseMetrics(const std::vector<std::string>& names, const std::string& file,
                              const std::string& where) {
  uint32_t mask = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    int bit = -1;
    for (int k = 0; k < 4; ++k) {
      if (names[i] == kMetricNames[k]) bit = k;
    }
    if (bit < 0) {
      return MakeError(file, where + "[" + std::to_string(i) + "]",
                       "unknown metric \"" + names[i].substr(0, 64) +
                           "\" (MaxRelativeErr, MinRelativeErr, MeanRelativeErr or NormRelativeErr)");
    }
    mask |= 1u << bit;
  }
  return mask;
}

std::vector<std::string> MetricNames(uint32_t mask) {
  std::vector<std::string> out;
  for (int k = 0; k < 4; ++k) {
    if (mask & (1u << k)) out.emplace_back(kMetricNames[k]);
  }
  return out;
}

double MetricIndex(const vis::NodeDetail& npu, uint32_t mask) {
  if (npu.output_size() == 0) return std::numeric_limits<double>::quiet_NaN();
  double worst = 0;
  for (const vis::Item& it : npu.output()) {
    for (const vis::Metric& m : it.metric()) {
      for (int k = 0; k < 4; ++k) {
        if (!(mask & (1u << k)) || m.name() != kMetricNames[k]) continue;
        double v = RelativeValue(m.text());
        if (!std::isnan(v) && v > worst) worst = v;
      }
    }
    if (worst >= 1) return 1;
  }
  return worst;
}

Result<LegendChoice> ReadLegendChoice(const std::string& abs_path, const std::string& display_path) {
  auto read = ReadConfigJson(abs_path, display_path, 1u << 20, "legend file");
  if (!read.ok()) return read.error();
  nlohmann::ordered_json doc = std::move(*read);
  if (!doc.is_object()) return MakeError(display_path, "", "a saved legend is a JSON object {\"Colors\": {...}}");
  LegendChoice out;
  const nlohmann::ordered_json* colors = nullptr;
  if (doc.contains("Colors")) {
    colors = &doc["Colors"];
  } else if (!doc.empty() && IsColourKey(doc.begin().key())) {
    colors = &doc;
  }
  if (colors != nullptr) {
    if (!colors->is_object()) return MakeError(display_path, "key \"Colors\"", "not an object");
    for (auto it = colors->begin(); it != colors->end(); ++it) {
      const std::string where = "Colors[\"" + it.key().substr(0, 64) + "\"]";
      if (!IsColourKey(it.key())) return MakeError(display_path, where, "a colour is #RRGGBB");
      if (!it.value().is_object()) return MakeError(display_path, where, "not an object");
      vis::ColorBucket* b = out.legend.Add();
      b->set_color(it.key());
      const auto& v = it.value();
      auto value = v.find("value");
      if (value == v.end()) return MakeError(display_path, where, "no \"value\"");
      if (value->is_string() || (value->is_array() && value->empty())) {
        b->set_unmatched(true);
      } else if (value->is_array() && value->size() == 2 && (*value)[0].is_number() && (*value)[1].is_number()) {
        b->set_lo((*value)[0].get<double>());
        b->set_hi((*value)[1].get<double>());
      } else {
        return MakeError(display_path, where + ".value", "is [lo, hi] or \"" + std::string(kUnmatchedValue) + "\"");
      }
      auto d = v.find("description");
      if (d != v.end() && d->is_string()) b->set_description(d->get<std::string>());
      auto n = v.find("accuracy_level");
      if (n != v.end() && n->is_string()) b->set_name(n->get<std::string>());
    }
  }
  auto metrics = doc.find("metrics");
  if (metrics != doc.end() && colors != &doc) {
    if (!metrics->is_array()) return MakeError(display_path, "key \"metrics\"", "not a list of names");
    std::vector<std::string> names;
    for (const auto& m : *metrics) {
      if (!m.is_string()) return MakeError(display_path, "key \"metrics\"", "not a list of names");
      names.push_back(m.get<std::string>());
    }
    auto mask = ParseMetrics(names, display_path, "metrics");
    if (!mask.ok()) return mask.error();
    out.metrics = *mask;
  }
  return out;
}

std::string LegendChoiceText(const google::protobuf::RepeatedPtrField<vis::ColorBucket>& legend, uint32_t metrics) {
  nlohmann::ordered_json colors = nlohmann::ordered_json::object();
  for (const vis::ColorBucket& b : legend) {
    nlohmann::ordered_json e = nlohmann::ordered_json::object();
    if (b.unmatched()) {
      e["value"] = kUnmatchedValue;
    } else {
      e["value"] = nlohmann::ordered_json::array({b.lo(), b.hi()});
    }
    e["description"] = b.description();
    if (!b.name().empty()) e["accuracy_level"] = b.name();
    colors[b.color()] = std::move(e);
  }
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  doc["Colors"] = std::move(colors);
  doc["metrics"] = MetricNames(metrics);
  return doc.dump(4, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace graph_ascend::service
