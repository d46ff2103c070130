// An item as msprobe's formats hold it (reference §4.2 normalisation, §10.5
// formatting): what the JSON .vis writer and the .vis.db writer both write.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "vis.pb.h"

namespace graph_ascend::vis {

// One item as msprobe exports it: ordered key/value strings; a single
// ("value", "null") for null items.
std::vector<std::pair<std::string, std::string>> FormatItem(const Item& item, CompareMode mode,
                                                            const std::string& node_name);

}  // namespace graph_ascend::vis
