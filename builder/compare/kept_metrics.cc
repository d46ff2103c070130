#include "compare/kept_metrics.h"

#include <cstring>

namespace graph_ascend::compare {
namespace {

// The name MetricKindOf gives `kind`; empty for kOther.
std::string_view CanonicalName(MetricKind kind) {
  switch (kind) {
    case MetricKind::kOther: return {};
    case MetricKind::kMaxDiff: return "Max diff";
    case MetricKind::kMinDiff: return "Min diff";
    case MetricKind::kMeanDiff: return "Mean diff";
    case MetricKind::kNormDiff: return "L2norm diff";
    case MetricKind::kMaxRelative: return "MaxRelativeErr";
    case MetricKind::kMinRelative: return "MinRelativeErr";
    case MetricKind::kMeanRelative: return "MeanRelativeErr";
    case MetricKind::kNormRelative: return "NormRelativeErr";
    case MetricKind::kRequiresGrad: return "Requires_grad Consistent";
    case MetricKind::kResult: return "Result";
    case MetricKind::kCosine: return "Cosine";
    case MetricKind::kThousandth: return "One Thousandth Err Ratio";
  }
  return {};
}

constexpr uint8_t kKindMask = 0x0f;
static_assert(static_cast<int>(MetricKind::kThousandth) <= kKindMask);
constexpr uint8_t kCanonical = 0x10;
constexpr uint8_t kHasValue = 0x20;
constexpr uint8_t kValueStored = 0x40;

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

uint64_t GetVarint(const char** p) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    uint8_t b = static_cast<uint8_t>(*(*p)++);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) return v;
  }
}

void PutText(std::string_view s, std::string* out) {
  PutVarint(s.size(), out);
  out->append(s.data(), s.size());
}

std::string_view GetText(const char** p) {
  size_t n = GetVarint(p);
  std::string_view s(*p, n);
  *p += n;
  return s;
}

}  // namespace

void KeptMetrics::Reset(uint32_t nodes) {
  nodes_.clear();
  nodes_.shrink_to_fit();
  nodes_.resize(nodes);
}

void KeptMetrics::Keep(uint32_t node, const PairMetrics& m) {
  std::string out;
  PutVarint(m.items(), &out);
  for (uint32_t k = 0; k < m.items(); ++k) {
    PutVarint(static_cast<uint64_t>(m.end(k) - m.begin(k)), &out);
    for (const PairMetric* x = m.begin(k); x != m.end(k); ++x) {
      uint64_t bits;
      memcpy(&bits, &x->value, sizeof(bits));
      // The kind's own name is not stored (names are mostly the few MetricKindOf knows).
      bool canonical = x->kind != MetricKind::kOther && MetricKindOf(x->name) == x->kind;
      uint8_t flags = static_cast<uint8_t>(x->kind) & kKindMask;
      if (canonical) flags |= kCanonical;
      if (x->has_value) flags |= kHasValue;
      if (bits != 0) flags |= kValueStored;
      out.push_back(static_cast<char>(flags));
      if (!canonical) PutText(x->name, &out);
      PutText(m.text(*x), &out);
      if (bits != 0) out.append(reinterpret_cast<const char*>(&bits), sizeof(bits));
    }
  }
  PutText(m.md5_result, &out);
  out.shrink_to_fit();
  nodes_[node] = std::move(out);
}

void KeptMetrics::Get(uint32_t node, PairMetrics* out) const {
  const std::string& s = nodes_[node];
  const char* p = s.data();
  uint32_t items = static_cast<uint32_t>(GetVarint(&p));
  out->Reset(items);
  for (uint32_t k = 0; k < items; ++k) {
    for (uint64_t n = GetVarint(&p); n > 0; --n) {
      uint8_t flags = static_cast<uint8_t>(*p++);
      auto kind = static_cast<MetricKind>(flags & kKindMask);
      std::string_view name = flags & kCanonical ? CanonicalName(kind) : GetText(&p);
      std::string_view text = GetText(&p);
      double value = 0;
      if (flags & kValueStored) {
        memcpy(&value, p, sizeof(value));
        p += sizeof(value);
      }
      out->Add(k, name, kind, text, value, (flags & kHasValue) != 0);
    }
  }
  out->md5_result = GetText(&p);
}

size_t KeptMetrics::bytes() const {
  size_t n = nodes_.capacity() * sizeof(std::string);
  for (const std::string& s : nodes_) {
    if (s.size() > 15) n += s.capacity() + 1;
  }
  return n;
}

}  // namespace graph_ascend::compare
