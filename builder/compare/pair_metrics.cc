#include "compare/pair_metrics.h"

#include <algorithm>

namespace graph_ascend::compare {

MetricKind MetricKindOf(std::string_view n) {
  switch (n.size()) {
    case 6: return n == "Result" ? MetricKind::kResult : n == "Cosine" ? MetricKind::kCosine : MetricKind::kOther;
    case 8: return n == "Max diff" ? MetricKind::kMaxDiff : n == "Min diff" ? MetricKind::kMinDiff : MetricKind::kOther;
    case 9: return n == "Mean diff" ? MetricKind::kMeanDiff : MetricKind::kOther;
    case 11: return n == "L2norm diff" ? MetricKind::kNormDiff : MetricKind::kOther;
    case 14:
      return n == "MaxRelativeErr"   ? MetricKind::kMaxRelative
             : n == "MinRelativeErr" ? MetricKind::kMinRelative
                                     : MetricKind::kOther;
    case 15:
      return n == "MeanRelativeErr"   ? MetricKind::kMeanRelative
             : n == "NormRelativeErr" ? MetricKind::kNormRelative
                                      : MetricKind::kOther;
    case 24:
      return n == "One Thousandth Err Ratio"   ? MetricKind::kThousandth
             : n == "Requires_grad Consistent" ? MetricKind::kRequiresGrad
                                               : MetricKind::kOther;
    default: return MetricKind::kOther;
  }
}

void PairMetrics::Reset(uint32_t items) {
  items_ = items;
  if (first_.size() < items) first_.resize(items);
  filled_ = 0;
  count_ = 0;
  text_size_ = 0;
  md5_result = {};
}

void PairMetrics::Open(uint32_t item) {
  while (filled_ <= item) first_[filled_++] = count_;
}

void PairMetrics::GrowTexts(size_t more) { texts_.resize(std::max(texts_.size() * 2, text_size_ + more + 256)); }

const PairMetric* PairMetrics::Find(uint32_t k, MetricKind kind) const {
  for (const PairMetric* m = begin(k); m != end(k); ++m) {
    if (m->kind == kind) return m;
  }
  return nullptr;
}

void StoreMetrics(const PairMetrics& metrics, vis::NodeDetail* detail) {
  uint32_t k = 0;
  for (auto* items : {detail->mutable_input(), detail->mutable_output()}) {
    for (vis::Item& item : *items) {
      item.clear_metric();
      if (k < metrics.items()) {
        for (const PairMetric* m = metrics.begin(k); m != metrics.end(k); ++m) {
          vis::Metric* out = item.add_metric();
          out->mutable_name()->assign(m->name.data(), m->name.size());
          std::string_view text = metrics.text(*m);
          out->mutable_text()->assign(text.data(), text.size());
          out->set_value(m->value);
          out->set_has_value(m->has_value);
        }
      }
      ++k;
    }
  }
  detail->mutable_md5_result()->assign(metrics.md5_result.data(), metrics.md5_result.size());
}

void MetricsOf(const vis::NodeDetail& detail, PairMetrics* out) {
  out->Reset(static_cast<uint32_t>(detail.input_size() + detail.output_size()));
  uint32_t k = 0;
  for (const auto* items : {&detail.input(), &detail.output()}) {
    for (const vis::Item& item : *items) {
      for (const vis::Metric& m : item.metric()) {
        out->Add(k, m.name(), MetricKindOf(m.name()), m.text(), m.value(), m.has_value());
      }
      ++k;
    }
  }
  out->md5_result = detail.md5_result();
}

}  // namespace graph_ascend::compare
