// The layer profile drawn as one SVG element for HTML (no xmlns: HTML parsers place it; no script, no external
// reference): the report inlines it and the page shows it beside the graph.
// Each point's column is a <rect class="ga-profile-hit" data-point="I"
// data-node="N"> the page makes clickable (N: the NPU node to open, -1 none).
#pragma once

#include <string>
#include <string_view>

#include "profile/layer_profile.h"

namespace graph_ascend::profile {

// The colour of a series ("#1f77b4" forward, ...), shared with the page's legend.
const char* SeriesColour(int series);

std::string ProfileSvg(const Profile& p, int width = 760, int height = 280);

// Text escaped for HTML and XML content and attribute values.
std::string EscapeXml(std::string_view text);

}  // namespace graph_ascend::profile
