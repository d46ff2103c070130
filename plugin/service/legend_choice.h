// Thresholds and metric (tb_graph_ascend 8.3's colour settings and its
// precision-error metric): which relative errors make a statistics node's
// index, and the choice saved beside the file (config_files.h names it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "vis.pb.h"

namespace graph_ascend::service {

// One bit per relative error, in tb_graph_ascend's order (its filter values "0".."3").
enum MetricBit : uint32_t { kMaxRelative = 1, kMinRelative = 2, kMeanRelative = 4, kNormRelative = 8 };

// "MaxRelativeErr", "MinRelativeErr", "MeanRelativeErr", "NormRelativeErr"
// -> bits (0 for none: the file's own index). `where` names the list in errors.
Result<uint32_t> ParseMetrics(const std::vector<std::string>& names, const std::string& file, const std::string& where);
std::vector<std::string> MetricNames(uint32_t mask);

// tb_graph_ascend's recomputed index of a matched NPU node: over its outputs
// the worst chosen relative error ("20.0%" -> 0.2), 1 as soon as one is not
// finite ("Nan", "inf%"), capped at 1; "N/A" and texts without a number count
// as none, and an output without any as 0. NaN when the node has no output.
double MetricIndex(const vis::NodeDetail& npu, uint32_t mask);

struct LegendChoice {
  google::protobuf::RepeatedPtrField<vis::ColorBucket> legend;  // empty: the file's
  uint32_t metrics = 0;
};

// The saved choice: {"Colors": {<tb_graph_ascend's Colors object>}, "metrics": [names]}.
// The Colors object (keyed by colour, value [lo, hi] or, for the grey entry,
// "无匹配节点" / [] as msprobe writes it) may also stand alone, as copied from a
// msprobe .vis. Errors name the file and the key or byte offset.
Result<LegendChoice> ReadLegendChoice(const std::string& abs_path, const std::string& display_path);
std::string LegendChoiceText(const google::protobuf::RepeatedPtrField<vis::ColorBucket>& legend, uint32_t metrics);

}  // namespace graph_ascend::service
