// The local time as output file names carry it ("20250101120000"), as msprobe
// names its build_/compare_ files.
#pragma once

#include <string>

namespace graph_ascend {

std::string LocalTimeStamp();

}  // namespace graph_ascend
