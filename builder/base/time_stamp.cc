#include "base/time_stamp.h"

#include <ctime>

namespace graph_ascend {

std::string LocalTimeStamp() {
  time_t now = time(nullptr);
  struct tm local;
  localtime_r(&now, &local);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y%m%d%H%M%S", &local);
  return buf;
}

}  // namespace graph_ascend
