#include "formats/model/item_text.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "compare/item_view.h"
#include "formats/model/value_text.h"

namespace graph_ascend::vis {

using compare::PyStr;

// An ordered dict of formatted strings whose storage outlives it: emptied
// and refilled item after item, its strings keep their buffers.
std::string* ItemText::Slot(std::string_view k) {
  for (size_t i = 0; i < size_; ++i) {
    if (kv_[i].first == k) return &kv_[i].second;
  }
  if (size_ == kv_.size()) kv_.emplace_back();
  kv_[size_].first.assign(k);
  return &kv_[size_++].second;
}

const std::string* ItemText::Get(std::string_view k) const {
  for (size_t i = 0; i < size_; ++i) {
    if (kv_[i].first == k) return &kv_[i].second;
  }
  return nullptr;
}

void ItemText::Erase(std::string_view k) {
  for (size_t i = 0; i < size_; ++i) {
    if (kv_[i].first == k) {
      // The erased pair moves past the end, its buffers kept for the next item.
      std::rotate(kv_.begin() + static_cast<long>(i), kv_.begin() + static_cast<long>(i) + 1,
                  kv_.begin() + static_cast<long>(size_));
      --size_;
      return;
    }
  }
}

void ItemText::KeepOnly(std::initializer_list<std::string_view> keys) {
  // The kept pairs in the order of `keys`, as a new dict filled in that order.
  size_t kept = 0;
  for (std::string_view k : keys) {
    for (size_t i = kept; i < size_; ++i) {
      if (kv_[i].first == k) {
        std::swap(kv_[i], kv_[kept++]);
        break;
      }
    }
  }
  size_ = kept;
}

void FormatItemTo(const Item& item, CompareMode mode, std::string_view node_name, ItemText* row) {
  row->Clear();
  if (item.is_null()) {
    row->Set("value", "null");
    return;
  }
  // §4.2: the leaf, normalised.
  const Value* value = nullptr;
  const Value* type = nullptr;
  const Value* group_ranks = nullptr;
  bool has_dtype = false;
  for (const Field& f : item.field()) {
    if (f.name() == "value") value = &f.value();
    if (f.name() == "type") type = &f.value();
    if (f.name() == "group_ranks") group_ranks = &f.value();
    if (f.name() == "dtype" && !compare::IsNull(&f.value()) &&
        !(f.value().kind_case() == Value::kText && f.value().text().empty())) {
      has_dtype = true;
    }
    FormatValueTo(&f.value(), row->Slot(f.name()));
  }
  const std::string* dn = row->Get("data_name");
  if (dn == nullptr || *dn == "null" || dn->empty()) row->Set("data_name", "-1");
  if (!row->Has("requires_grad")) row->Set("requires_grad", "null");
  static const char* const kStats[] = {"Max", "Min", "Mean", "Norm"};
  for (const char* s : kStats) {
    if (!row->Has(s)) row->Set(s, "null");
  }
  std::string_view type_text =
      type != nullptr && type->kind_case() == Value::kText ? std::string_view(type->text()) : std::string_view();
  std::string_view last = std::string_view(item.key()).substr(item.key().rfind('.') + 1);
  if (!has_dtype) {
    auto stats = [&](const std::string& v) {
      for (const char* s : kStats) row->Set(s, v);
    };
    if (type_text == "torch.Size") {
      row->Set("dtype", "torch.Size");
      FormatTextTo(PyStr(value), row->Slot("shape"));
    } else if (type_text == "slice") {
      row->Set("dtype", "slice");
      size_t n = 0;
      if (value != nullptr && value->kind_case() == Value::kJson) {
        int depth = 0;
        for (char c : value->json()) {
          if (c == '[') ++depth;
          else if (c == ']') --depth;
          else if (c == ',' && depth == 1) ++n;
        }
        if (value->json() != "[]") ++n;
      }
      row->Set("shape", "(" + std::to_string(n) + ",)");
    } else if (type_text == "ellipsis") {
      row->Set("dtype", "ellipsis");
      row->Set("shape", "[]");
      std::string v;
      FormatValueTo(value, &v);
      stats(v);
    } else if (last == "src" || last == "dst" || last == "group_src" || last == "group_dst") {
      FormatTextTo(type_text, row->Slot("dtype"));
      row->Set("shape", "[]");
      std::string v = FormatText(PyStr(value));
      stats(v);
      row->Set("md5", v);
    } else if (type_text == "torch.ProcessGroup") {
      row->Set("dtype", type_text);
      row->Set("shape", "[]");
      std::string v = FormatText(PyStr(group_ranks));
      stats(v);
      row->Set("md5", v);
    } else {
      FormatTextTo(PyTypeName(value), row->Slot("dtype"));
      row->Set("shape", "[]");
      std::string v;
      FormatValueTo(value, &v);
      stats(v);
    }
  }
  // §10.5: export removes md5 outside md5 mode (added last when missing, so
  // nothing else moves: it is only computed where it stays).
  if (mode == MODE_MD5) {
    if (!row->Has("md5")) row->Set("md5", compare::ItemMd5(item));
  } else {
    row->Erase("md5");
  }
  if (node_name.find("batch_isend_irecv") != std::string_view::npos) {
    for (const char* k : {"op", "peer", "tag", "group_id"}) row->Erase(k);
  }
  // Metrics were copied into the item before export formats it, so the
  // process-group trim below removes them too.
  for (const Metric& m : item.metric()) FormatMetricTo(m, row->Slot(m.name()));
  if (type_text == "torch.ProcessGroup") row->KeepOnly({"type", "group_ranks", "group_id", "data_name"});
  const std::string* max = row->Get("Max");
  if (max != nullptr && *max == "null") {
    row->Clear();
    row->Set("value", "null");
  }
}

std::vector<std::pair<std::string, std::string>> FormatItem(const Item& item, CompareMode mode,
                                                            const std::string& node_name) {
  ItemText row;
  FormatItemTo(item, mode, node_name, &row);
  return {row.begin(), row.end()};
}

}  // namespace graph_ascend::vis

