#include "formats/model/foreign_item.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "compare/legend.h"
#include "formats/model/item_json.h"

namespace graph_ascend::formats {
namespace {

bool IsMetricName(std::string_view k) {
  static const char* const kMetrics[] = {
      "Max diff",         "Min diff",        "Mean diff",      "L2norm diff",     "MaxRelativeErr",
      "MinRelativeErr",   "MeanRelativeErr", "NormRelativeErr", "Cosine",         "EucDist",
      "MaxAbsErr",        "One Thousandth Err Ratio",           "Five Thousandths Err Ratio",
      "Requires_grad Consistent",            "Result",          "Err_message",    "Accuracy Reached or Not"};
  for (const char* m : kMetrics) {
    if (k == m) return true;
  }
  return false;
}

// Python's float() on msprobe's number texts: decimals, exponents, inf, nan.
bool ParseNumber(const std::string& s, double* out, bool* integer) {
  if (s.empty()) return false;
  if (s == "inf" || s == "Infinity") return *out = INFINITY, *integer = false, true;
  if (s == "-inf" || s == "-Infinity") return *out = -INFINITY, *integer = false, true;
  if (s == "nan" || s == "NaN") return *out = NAN, *integer = false, true;
  char* end = nullptr;
  errno = 0;
  double v = strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || errno == ERANGE) return false;
  if (s.find_first_of("xXpP") != std::string::npos) return false;  // strtod accepts hex, Python does not
  *out = v;
  *integer = s.find_first_of(".eEn") == std::string::npos;
  return true;
}

// One distributed dict: {"communications_type": t, "nodes_info": {rank: [index, node]}}.
void AppendDistributed(const vis::NodeDetail& d, int first, int last, std::string* out) {
  out->append("{\"communications_type\": ");
  json::AppendQuoted(d.distributed(first).communications_type(), out, true);
  out->append(", \"nodes_info\": {");
  for (int i = first; i < last; ++i) {
    const vis::DistributedLink& l = d.distributed(i);
    if (i > first) out->append(", ");
    json::AppendQuoted(std::to_string(l.rank()), out, true);
    out->append(": [");
    json::AppendQuoted(l.peer_index(), out, true);
    out->append(", ");
    json::AppendQuoted(l.peer_node(), out, true);
    out->append("]");
  }
  out->append("}}");
}

Status ReadDistributedDict(json::JsonReader& r, vis::NodeDetail* d) {
  GA_RETURN_IF_ERROR(r.EnterObject());
  std::string type;
  std::vector<vis::DistributedLink> links;
  std::string_view key;
  for (;;) {
    auto more = r.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) break;
    if (key == "communications_type") {
      auto s = r.ReadString();
      if (!s.ok()) return s.error();
      type = std::string(*s);
    } else if (key == "nodes_info") {
      GA_RETURN_IF_ERROR(r.EnterObject());
      for (;;) {
        auto m = r.NextMember(&key);
        if (!m.ok()) return m.error();
        if (!*m) break;
        vis::DistributedLink l;
        l.set_rank(atoi(std::string(key).c_str()));
        GA_RETURN_IF_ERROR(r.EnterArray());
        for (int i = 0;; ++i) {
          auto e = r.NextElement();
          if (!e.ok()) return e.error();
          if (!*e) break;
          std::string text;
          auto t = r.Peek();
          if (!t.ok()) return t.error();
          if (*t == json::JsonType::kString) {
            auto s = r.ReadString();
            if (!s.ok()) return s.error();
            text = std::string(*s);
          } else {
            GA_RETURN_IF_ERROR(r.ReadCompact(&text));
          }
          if (i == 0) l.set_peer_index(text);
          if (i == 1) l.set_peer_node(text);
        }
        links.push_back(std::move(l));
      }
    } else {
      GA_RETURN_IF_ERROR(r.Skip());
    }
  }
  for (vis::DistributedLink& l : links) {
    l.set_communications_type(type);
    *d->add_distributed() = std::move(l);
  }
  return Status::Ok();
}

}  // namespace

void ItemFromStrings(std::string_view key, bool output, const StringPairs& values, vis::Item* out) {
  vis::Item& item = *out;
  if (key.find("parameters_grad") != std::string::npos) {
    item.set_state(vis::STATE_PARAMETERS_GRAD);
  } else if (key.find(".parameters.") != std::string::npos) {
    item.set_state(vis::STATE_PARAMETERS);
  } else {
    item.set_state(output ? vis::STATE_OUTPUT : vis::STATE_INPUT);
  }
  item.set_key(key.data(), key.size());
  if (values.size() == 1 && values[0].first == "value" && values[0].second == "null") {
    item.set_is_null(true);
    return;
  }
  for (const auto& [k, v] : values) {
    double number = 0;
    bool integer = false;
    if (IsMetricName(k)) {
      vis::Metric* m = item.add_metric();
      m->set_name(k);
      m->set_text(v);
      std::string body = !v.empty() && v.back() == '%' ? v.substr(0, v.size() - 1) : v;
      if (v == "True" || v == "False") {
        m->set_value(v == "True" ? 1 : 0);
        m->set_has_value(true);
      } else if (ParseNumber(body, &number, &integer) && std::isfinite(number)) {
        m->set_value(body.size() == v.size() ? number : number / 100);
        m->set_has_value(true);
      }
      continue;
    }
    vis::Field* f = item.add_field();
    f->set_name(k);
    vis::Value* value = f->mutable_value();
    if (v == "null" || v == "None") {
      value->set_null(true);
    } else if ((k == "Max" || k == "Min" || k == "Mean" || k == "Norm") && ParseNumber(v, &number, &integer)) {
      if (integer && std::fabs(number) < 9e18) {
        value->set_integer(static_cast<int64_t>(number));
      } else {
        value->set_number(number);
      }
    } else {
      value->set_text(v);
    }
  }
}

Status ReadItems(json::JsonReader& r, bool output, google::protobuf::RepeatedPtrField<vis::Item>* out) {
  GA_RETURN_IF_ERROR(r.EnterObject());
  std::string_view key;
  StringPairs values;
  for (;;) {
    auto more = r.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) break;
    std::string item_key(key);
    values.clear();
    auto t = r.Peek();
    if (!t.ok()) return t.error();
    if (*t != json::JsonType::kObject) {
      return r.ErrorHere("item '" + item_key + "' is not an object");
    }
    GA_RETURN_IF_ERROR(r.EnterObject());
    for (;;) {
      auto m = r.NextMember(&key);
      if (!m.ok()) return m.error();
      if (!*m) break;
      std::string field(key), text;
      auto vt = r.Peek();
      if (!vt.ok()) return vt.error();
      if (*vt == json::JsonType::kString) {
        auto s = r.ReadString();
        if (!s.ok()) return s.error();
        text = std::string(*s);
      } else if (*vt == json::JsonType::kNull) {
        GA_RETURN_IF_ERROR(r.ReadNull());
        text = "null";
      } else {
        GA_RETURN_IF_ERROR(r.ReadCompact(&text));
      }
      values.emplace_back(std::move(field), std::move(text));
    }
    ItemFromStrings(item_key, output, values, out->Add());
  }
  return Status::Ok();
}

void AppendItemsJson(const google::protobuf::RepeatedPtrField<vis::Item>& items, vis::CompareMode mode,
                     std::string_view node, std::string* out) {
  out->push_back('{');
  for (int i = 0; i < items.size(); ++i) {
    if (i) out->append(", ");
    json::AppendQuoted(items[i].key(), out, true);
    out->append(": ");
    vis::AppendItemJson(items[i], mode, node, out);
  }
  out->push_back('}');
}

std::string ItemsJson(const google::protobuf::RepeatedPtrField<vis::Item>& items, vis::CompareMode mode,
                      const std::string& node) {
  std::string out;
  AppendItemsJson(items, mode, node, &out);
  return out;
}

std::string DistributedJson(const vis::NodeDetail& d) {
  if (d.distributed_size() == 0) return "{}";
  std::string out;
  if (d.distributed_is_list()) {
    out.push_back('[');
    for (int i = 0; i < d.distributed_size(); ++i) {
      if (i) out.append(", ");
      AppendDistributed(d, i, i + 1, &out);
    }
    out.push_back(']');
  } else {
    AppendDistributed(d, 0, d.distributed_size(), &out);
  }
  return out;
}

Status ReadDistributed(json::JsonReader& r, vis::NodeDetail* d) {
  auto t = r.Peek();
  if (!t.ok()) return t.error();
  if (*t == json::JsonType::kObject) return ReadDistributedDict(r, d);
  if (*t != json::JsonType::kArray) return r.Skip();
  d->set_distributed_is_list(true);
  GA_RETURN_IF_ERROR(r.EnterArray());
  for (;;) {
    auto e = r.NextElement();
    if (!e.ok()) return e.error();
    if (!*e) break;
    GA_RETURN_IF_ERROR(ReadDistributedDict(r, d));
  }
  return Status::Ok();
}

std::string StringListJson(const std::vector<std::string>& list) {
  std::string out = "[";
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) out.append(", ");
    json::AppendQuoted(list[i], &out, true);
  }
  out.push_back(']');
  return out;
}

Result<std::vector<std::string>> ReadStringList(json::JsonReader& r) {
  std::vector<std::string> out;
  GA_RETURN_IF_ERROR(r.EnterArray());
  for (;;) {
    auto e = r.NextElement();
    if (!e.ok()) return e.error();
    if (!*e) break;
    auto t = r.Peek();
    if (!t.ok()) return t.error();
    if (*t == json::JsonType::kString) {
      auto s = r.ReadString();
      if (!s.ok()) return s.error();
      out.emplace_back(*s);
    } else {
      std::string text;
      GA_RETURN_IF_ERROR(r.ReadCompact(&text));
      out.push_back(std::move(text));
    }
  }
  return out;
}

Status ReadLegend(json::JsonReader& r, vis::FileMeta* meta) {
  GA_RETURN_IF_ERROR(r.EnterObject());
  std::string_view key;
  for (;;) {
    auto more = r.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) return Status::Ok();
    vis::ColorBucket* b = meta->add_legend();
    b->set_color(std::string(key));
    GA_RETURN_IF_ERROR(r.EnterObject());
    for (;;) {
      auto m = r.NextMember(&key);
      if (!m.ok()) return m.error();
      if (!*m) break;
      if (key == "value") {
        // tb_graph_ascend writes the grey entry's value as text ("无匹配节点"), msprobe as [].
        auto type = r.Peek();
        if (!type.ok()) return type.error();
        if (*type == json::JsonType::kString) {
          auto text = r.ReadString();
          if (!text.ok()) return text.error();
          b->set_unmatched(true);
          continue;
        }
        std::vector<double> bounds;
        GA_RETURN_IF_ERROR(r.EnterArray());
        for (;;) {
          auto e = r.NextElement();
          if (!e.ok()) return e.error();
          if (!*e) break;
          auto n = r.ReadNumber();
          if (!n.ok()) return n.error();
          bounds.push_back(n->number);
        }
        b->set_unmatched(bounds.size() < 2);
        if (bounds.size() >= 2) {
          b->set_lo(bounds[0]);
          b->set_hi(bounds[1]);
        }
      } else if (key == "description" || key == "accuracy_level") {
        bool description = key == "description";
        auto v = r.ReadString();
        if (!v.ok()) return v.error();
        if (description) {
          b->set_description(std::string(*v));
        } else {
          b->set_name(std::string(*v));
        }
      } else {
        GA_RETURN_IF_ERROR(r.Skip());
      }
    }
  }
}

Status ReadTooltips(json::JsonReader& r, vis::FileMeta* meta) {
  GA_RETURN_IF_ERROR(r.EnterObject());
  std::string_view key;
  for (;;) {
    auto more = r.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) return Status::Ok();
    vis::Tooltip* t = meta->add_tooltips();
    t->set_key(std::string(key));
    auto type = r.Peek();
    if (!type.ok()) return type.error();
    std::string text;
    if (*type == json::JsonType::kString) {
      auto v = r.ReadString();
      if (!v.ok()) return v.error();
      text = std::string(*v);
    } else {
      GA_RETURN_IF_ERROR(r.ReadCompact(&text));
    }
    t->set_text(std::move(text));
  }
}

void NameLegend(vis::FileMeta* meta) {
  vis::FileMeta ours;
  ours.set_mode(meta->mode());
  compare::SetLegendAndTooltips(&ours);
  for (vis::ColorBucket& b : *meta->mutable_legend()) {
    if (!b.name().empty()) continue;
    for (const vis::ColorBucket& o : ours.legend()) {
      if (o.color() == b.color()) b.set_name(o.name());
    }
    if (!b.name().empty()) continue;
    char buf[64];
    if (b.unmatched()) {
      snprintf(buf, sizeof(buf), "unmatched");
    } else if (b.lo() == b.hi()) {
      snprintf(buf, sizeof(buf), "%g", b.lo());
    } else {
      snprintf(buf, sizeof(buf), "%g-%g", b.lo(), b.hi());
    }
    b.set_name(buf);
  }
}

uint32_t OverflowFromName(std::string_view name) {
  if (name == "medium") return vis::OVERFLOW_MEDIUM;
  if (name == "high") return vis::OVERFLOW_HIGH;
  if (name == "critical") return vis::OVERFLOW_CRITICAL;
  return vis::OVERFLOW_NONE;
}

const char* OverflowName(uint32_t level) {
  switch (level) {
    case vis::OVERFLOW_MEDIUM: return "medium";
    case vis::OVERFLOW_HIGH: return "high";
    case vis::OVERFLOW_CRITICAL: return "critical";
    default: return nullptr;
  }
}

}  // namespace graph_ascend::formats
