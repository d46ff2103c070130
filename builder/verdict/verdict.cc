#include "verdict/verdict.h"

#include <cstdio>

#include "divergence/divergence.h"

namespace graph_ascend::verdict {

const char* NodeTypeName(uint8_t type) {
  switch (type) {
    case 0: return "module";
    case 1: return "api";
    case 9: return "api collection";
    default: return "node";
  }
}

Result<Verdict> ReadVerdict(const vis::VisReader& reader, const vis::SideIndex& npu, const std::string& path) {
  Verdict v;
  const vis::FileMeta& meta = reader.meta();
  v.ranked = meta.divergence_ranked();
  if (!v.ranked) return v;
  auto ranking = reader.ReadDivergence();
  if (!ranking.ok()) return ranking.error();
  v.noise_rule = ranking->rule() == vis::DIVERGENCE_RULE_NOISE;
  v.threshold = ranking->threshold();
  if (ranking->has_largest() && ranking->largest_margin_node() < npu.size()) {
    v.has_largest = true;
    v.largest_margin = ranking->largest_margin();
    v.largest_node = std::string(npu.Name(ranking->largest_margin_node()));
  }
  for (int i = 0; i < ranking->entry_size(); ++i) {
    const vis::DivergenceEntry& r = ranking->entry(i);
    if (r.node() >= npu.size()) {
      return Error{path, "divergence entry " + std::to_string(i), "no node " + std::to_string(r.node())};
    }
    Entry e;
    e.node = r.node();
    e.name = std::string(npu.Name(r.node()));
    e.node_type = NodeTypeName(npu.node_type[r.node()]);
    e.reason = r.reason();
    e.unmatched = npu.matched[r.node()] < 0;
    e.index = npu.precision[r.node()];
    e.margin = r.margin();
    e.input_error = r.input_error();
    e.output_error = r.output_error();
    e.floor = r.floor();
    e.note = r.note();
    v.entries.push_back(std::move(e));
  }
  if (meta.first_divergence_is_communication()) v.peers.assign(meta.first_divergence_peers().begin(), meta.first_divergence_peers().end());
  return v;
}

std::string MarginText(const Verdict& v, const Entry& e) {
  if (!v.noise_rule || e.reason == vis::DIVERGENCE_UNMATCHED) return "";
  // A kind whose other instances agree bit for bit has no noise: the margin
  // is then a division by almost nothing, said as such.
  if (e.margin >= 1e6) return "> 1e6x the noise: its kind shows none";
  char buf[64];
  snprintf(buf, sizeof buf, "%.3gx the noise", e.margin);
  return buf;
}

std::string OneLine(const Verdict& v, const Entry& e) {
  std::string line = e.name + " (" + e.node_type + ", " + divergence::ReasonName(e.reason);
  std::string margin = MarginText(v, e);
  if (!margin.empty()) line += ", " + margin;
  if (e.unmatched) {
    line += ", unmatched";
  } else if (!std::isnan(e.index)) {
    char buf[64];
    snprintf(buf, sizeof buf, ", index %g", e.index);
    line += buf;
  }
  line += ")";
  if (!e.note.empty()) line += " " + e.note;
  return line;
}

std::string QuietSentence(const Verdict& v, const QuietWording& w, size_t accepted) {
  std::string said = w.capital ? "No divergence beyond noise" : "no divergence beyond noise";
  if (accepted > 0) return said + " other than the " + std::to_string(accepted) + " accepted";
  if (!v.has_largest) return said;
  char buf[64];
  snprintf(buf, sizeof buf, "%.*gx", w.margin_digits, v.largest_margin);
  said += std::string(" (largest margin ") + buf + " the noise, at ";
  said += w.node ? w.node(v.largest_node) : v.largest_node;
  if (w.threshold_digits > 0) {
    snprintf(buf, sizeof buf, "%.*gx", w.threshold_digits, v.threshold);
    said += std::string("; an op counts above ") + buf;
  }
  return said + ")";
}

}  // namespace graph_ascend::verdict
