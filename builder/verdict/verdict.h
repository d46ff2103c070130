// What a compare's .vis says about where its two runs part: the stored
// divergence ranking (docs/DIVERGENCE.md) read into plain values, for the
// commands that report it (info, check).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "vis/vis_file.h"
#include "vis/vis_index.h"

namespace graph_ascend::verdict {

// One entry of the ranking, on the NPU side.
struct Entry {
  uint32_t node = 0;
  std::string name;
  const char* node_type = "node";  // "module", "api", "api collection"
  vis::DivergenceReason reason = vis::DIVERGENCE_NONE;
  bool unmatched = false;  // the node has no peer on the bench side
  double index = NAN;      // its precision index (NaN: none)
  double margin = 0;       // x times its kind's noise (the noise rule); 0 otherwise
  double input_error = 0, output_error = 0, floor = 0;
  std::string note;
};

struct Verdict {
  bool ranked = false;      // the file holds a ranking (files before it do not)
  bool noise_rule = false;  // the entries are the noise rule's (statistics mode)
  std::vector<Entry> entries;  // in ranking order: entry 0 is the first divergence
  // With the noise rule: the largest margin seen and where, and the margin an op must pass.
  bool has_largest = false;
  double largest_margin = 0;
  std::string largest_node;
  double threshold = 0;
  // A batch file whose first divergence receives from other ranks: those ranks.
  std::vector<int32_t> peers;
};

// Reads the ranking of `reader`'s file, whose NPU index is `npu`. An entry
// naming no node is an error naming `path` and the entry.
Result<Verdict> ReadVerdict(const vis::VisReader& reader, const vis::SideIndex& npu, const std::string& path);

const char* NodeTypeName(uint8_t type);

// "7.2x the noise", "> 1e6x the noise: its kind shows none", or "" (no margin).
std::string MarginText(const Verdict& v, const Entry& e);

// One line for a CI log: "NAME (api, outputs differ, inputs agree, 20x the noise, index 0.0025)".
std::string OneLine(const Verdict& v, const Entry& e);

// How a command words the verdict of a ranking with no entry: info and check
// write plain text, the report HTML; each keeps the digits it has always shown.
struct QuietWording {
  bool capital = false;       // "No divergence ..." (the report's sentence)
  int margin_digits = 3;      // significant digits of the largest margin
  int threshold_digits = 6;   // of the margin an op must pass; 0: not said (check's line)
  // Writes the node's name (the report escapes and marks it up); empty: as it is.
  std::function<std::string(const std::string&)> node = nullptr;
};

// "no divergence beyond noise (largest margin 1.24x the noise, at NODE; an op
// counts above 5x)", the parenthesis when the file stores the largest margin.
// With `accepted` entries let through by check's gate: "no divergence beyond
// noise other than the 2 accepted", without the margin.
std::string QuietSentence(const Verdict& v, const QuietWording& w = {}, size_t accepted = 0);

}  // namespace graph_ascend::verdict
