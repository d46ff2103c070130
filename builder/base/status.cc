#include "base/status.h"

namespace graph_ascend {

std::string Error::ToString() const {
  std::string out;
  if (!file.empty()) out += file;
  if (!where.empty()) {
    if (!out.empty()) out += ": ";
    out += where;
  }
  if (!out.empty()) out += ": ";
  out += message;
  return out;
}

}  // namespace graph_ascend
