// Items, stacks and cross-rank links as msprobe's JSON .vis and .vis.db hold
// them: every item value a string ("1.234567", "[2, 3]", "null"), compare
// metrics mixed with dump fields in one object.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "json/json_reader.h"
#include "vis.pb.h"

namespace graph_ascend::formats {

using StringPairs = std::vector<std::pair<std::string, std::string>>;

// Fills the empty `out` with an item from its key and msprobe's strings. Metric names (Max diff,
// MaxRelativeErr, Cosine, ...) become Metrics with their numeric value;
// Max/Min/Mean/Norm become numbers so that the service can compare them
// again; "null" and "None" become null; the rest stays text.
void ItemFromStrings(std::string_view key, bool output, const StringPairs& values, vis::Item* out);

// Reads one items object {"<key>": {"<field>": "<value>", ...}, ...} into
// `out` (non-string values are kept in their JSON text).
Status ReadItems(json::JsonReader& r, bool output, google::protobuf::RepeatedPtrField<vis::Item>* out);

// The items as json.dumps writes msprobe's formatted items (one line,
// ", " and ": " separators, ASCII escapes).
std::string ItemsJson(const google::protobuf::RepeatedPtrField<vis::Item>& items, vis::CompareMode mode,
                      const std::string& node);
// The same appended to `out`, which a caller reuses from row to row.
void AppendItemsJson(const google::protobuf::RepeatedPtrField<vis::Item>& items, vis::CompareMode mode,
                     std::string_view node, std::string* out);

// matched_distributed as msprobe writes it: "{}" for none, a dict, or a
// list of dicts for batch_isend_irecv.
std::string DistributedJson(const vis::NodeDetail& detail);
// Reads a matched_distributed value (object or array) into `detail`.
Status ReadDistributed(json::JsonReader& r, vis::NodeDetail* detail);

// A JSON list of strings ("[]" for none), json.dumps style.
std::string StringListJson(const std::vector<std::string>& list);
// Reads a JSON list of strings.
Result<std::vector<std::string>> ReadStringList(json::JsonReader& r);

// Reads msprobe's colour legend {"#RRGGBB": {"value": [lo, hi] | [], "description": d,
// "accuracy_level": name}} into meta's legend.
Status ReadLegend(json::JsonReader& r, vis::FileMeta* meta);
// Reads a tooltip object {"<column>": "<text>"} into meta's tooltips.
Status ReadTooltips(json::JsonReader& r, vis::FileMeta* meta);

// Names the legend buckets read from a foreign file that have no name as
// the builder names the same colour in meta's mode ("0-0.2", "different"),
// else "unmatched" or "<lo>-<hi>".
void NameLegend(vis::FileMeta* meta);

// "medium" / "high" / "critical" -> OverflowLevel; anything else NONE.
uint32_t OverflowFromName(std::string_view name);
const char* OverflowName(uint32_t level);  // null for NONE

}  // namespace graph_ascend::formats
