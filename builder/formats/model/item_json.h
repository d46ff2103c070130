// An item's JSON object as msprobe's .vis.db holds it (the items columns of tb_nodes).
#pragma once

#include <string>
#include <string_view>

#include "vis.pb.h"

namespace graph_ascend::vis {

// FormatItemTo's pairs as json.dumps writes them ({"k": "v", ...}, ASCII escapes),
// appended to `out`. The usual items (with a dtype, or plain arguments; every name once)
// are written in one pass, their numbers without escaping; the rest through FormatItemTo.
void AppendItemJson(const Item& item, CompareMode mode, std::string_view node_name, std::string* out);

}  // namespace graph_ascend::vis
