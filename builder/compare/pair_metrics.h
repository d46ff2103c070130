// The metrics a compare gives the NPU items of one matched pair, held
// compactly (no protobuf message per metric, texts in one buffer that a
// thread reuses from pair to pair). vis/detail_wire writes them straight
// into a detail's wire bytes, msprobe 26's grade and the divergence evidence
// read them, and the graph service stores them into a vis::NodeDetail.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "vis.pb.h"

namespace graph_ascend::compare {

// The metrics the readers of a compare look up, by name.
enum class MetricKind : uint8_t {
  kOther,
  kMaxDiff,
  kMinDiff,
  kMeanDiff,
  kNormDiff,
  kMaxRelative,   // MaxRelativeErr
  kMinRelative,   // MinRelativeErr
  kMeanRelative,  // MeanRelativeErr
  kNormRelative,  // NormRelativeErr
  kRequiresGrad,  // Requires_grad Consistent
  kResult,        // md5 mode
  kCosine,
  kThousandth,  // One Thousandth Err Ratio
};
MetricKind MetricKindOf(std::string_view name);

// One metric, as a vis::Metric would hold it.
struct PairMetric {
  std::string_view name;  // outlives the list (the compare's names are constants)
  MetricKind kind = MetricKind::kOther;
  bool has_value = false;
  double value = 0;
  uint32_t text_at = 0;  // into the list's texts
  uint32_t text_size = 0;
};

class PairMetrics {
 public:
  // Empties the list for a node of `items` items (NPU input then output
  // items, as compare::NodeItems orders them).
  void Reset(uint32_t items);

  // Appends a metric to item `item`, which is not before the item of any
  // metric appended since Reset.
  void Add(uint32_t item, std::string_view name, MetricKind kind, std::string_view text, double value, bool has_value) {
    uint32_t at = text_size_;
    if (text.size() > texts_.size() - at) GrowTexts(text.size());
    memcpy(texts_.data() + at, text.data(), text.size());
    text_size_ += static_cast<uint32_t>(text.size());
    if (filled_ <= item) Open(item);
    if (count_ == metrics_.size()) metrics_.resize(metrics_.size() * 2 + 16);
    PairMetric& m = metrics_[count_++];
    m.name = name;
    m.kind = kind;
    m.has_value = has_value;
    m.value = value;
    m.text_at = at;
    m.text_size = static_cast<uint32_t>(text.size());
  }

  // Appends n metrics to item `item` (as Add does) for the caller to fill
  // in: each its name, kind, value, and its text through TextRoom and
  // SetText (texts may be written in any order).
  PairMetric* AddEmpty(uint32_t item, uint32_t n) {
    if (filled_ <= item) Open(item);
    if (metrics_.size() - count_ < n) metrics_.resize(metrics_.size() * 2 + n + 16);
    PairMetric* m = metrics_.data() + count_;
    count_ += n;
    return m;
  }
  // Room for a text of up to n chars, valid until the next Add or TextRoom.
  char* TextRoom(size_t n) {
    if (n > texts_.size() - text_size_) GrowTexts(n);
    return texts_.data() + text_size_;
  }
  // Makes the `size` chars written at TextRoom m's text.
  void SetText(PairMetric* m, size_t size) {
    m->text_at = text_size_;
    m->text_size = static_cast<uint32_t>(size);
    text_size_ += static_cast<uint32_t>(size);
  }

  uint32_t items() const { return items_; }
  // The metrics of item k, in the order they were added.
  const PairMetric* begin(uint32_t k) const { return metrics_.data() + First(k); }
  const PairMetric* end(uint32_t k) const { return metrics_.data() + First(k + 1); }
  std::string_view text(const PairMetric& m) const { return {texts_.data() + m.text_at, m.text_size}; }
  // The texts of all the metrics, one after the other.
  std::string_view texts() const { return {texts_.data(), text_size_}; }
  // The first metric of item k of that kind, or null.
  const PairMetric* Find(uint32_t k, MetricKind kind) const;

  // MODE_MD5: the node's md5 result ("pass" or "Different"); empty otherwise.
  std::string_view md5_result;

 private:
  uint32_t First(uint32_t k) const { return k < filled_ ? first_[k] : count_; }
  // Items [filled_, item] begin where the list ends now.
  void Open(uint32_t item);
  void GrowTexts(size_t more);

  uint32_t items_ = 0;
  // first_[k] for k < filled_: where item k's metrics begin; the items from
  // filled_ on begin at the end of the list (they have none yet).
  std::vector<uint32_t> first_;
  uint32_t filled_ = 0;
  // The list is metrics_[0, count_) and its texts texts_[0, text_size_):
  // both keep their storage from node to node.
  std::vector<PairMetric> metrics_;
  uint32_t count_ = 0;
  std::string texts_;
  uint32_t text_size_ = 0;
};

// Replaces the metrics of detail's items and its md5 result by `metrics`
// (item k is the k-th of the detail's input then output items).
void StoreMetrics(const PairMetrics& metrics, vis::NodeDetail* detail);

// The metrics stored in `detail`, for reading them back; names point into
// the detail.
void MetricsOf(const vis::NodeDetail& detail, PairMetrics* out);

}  // namespace graph_ascend::compare
