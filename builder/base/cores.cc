#include "base/cores.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

namespace graph_ascend {
namespace {

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The process's cgroup v2 folder ("0::/PATH" of /proc/self/cgroup), or "" outside one.
std::string CgroupFolder() {
  std::string text = ReadSmallFile("/proc/self/cgroup");
  size_t at = text.find("0::");
  if (at == std::string::npos) return "";
  size_t end = text.find('\n', at);
  std::string path = text.substr(at + 3, end == std::string::npos ? std::string::npos : end - at - 3);
  return "/sys/fs/cgroup" + (path == "/" ? std::string() : path);
}

bool ParseU64(const std::string& text, uint64_t* out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 19) return false;
  *out = std::strtoull(text.c_str(), nullptr, 10);
  return true;
}

std::string FirstLine(std::string text) {
  size_t end = text.find('\n');
  if (end != std::string::npos) text.resize(end);
  return text;
}

}  // namespace

int CgroupCores(const std::string& cpu_max_text) {
  std::istringstream in(cpu_max_text);
  std::string quota_text, period_text;
  in >> quota_text >> period_text;
  uint64_t quota = 0, period = 0;
  if (!ParseU64(quota_text, &quota) || !ParseU64(period_text, &period) || period == 0) return 0;  // "max"
  return static_cast<int>(std::max<uint64_t>(1, (quota + period - 1) / period));
}

uint64_t CgroupMemoryLeft(const std::string& memory_max_text, const std::string& memory_current_text) {
  uint64_t max = 0, current = 0;
  if (!ParseU64(FirstLine(memory_max_text), &max)) return std::numeric_limits<uint64_t>::max();  // "max"
  if (!ParseU64(FirstLine(memory_current_text), &current)) current = 0;
  return max > current ? max - current : 0;
}

int UsableCores() {
  int cores = 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cores = CPU_COUNT(&set);
  if (cores <= 0) cores = 1;
  // Each cgroup on the way up may cap the CPU time; the tightest counts.
  for (std::string dir = CgroupFolder(); dir.size() > std::string("/sys/fs/cgroup").size();
       dir.resize(dir.rfind('/'))) {
    int limit = CgroupCores(ReadSmallFile(dir + "/cpu.max"));
    if (limit > 0) cores = std::min(cores, limit);
  }
  return cores;
}

uint64_t AvailableMemory() {
  uint64_t available = 0;
  std::istringstream meminfo(ReadSmallFile("/proc/meminfo"));
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    uint64_t kib = 0;
    if (fields >> kib) available = kib * 1024;
  }
  for (std::string dir = CgroupFolder(); dir.size() > std::string("/sys/fs/cgroup").size();
       dir.resize(dir.rfind('/'))) {
    uint64_t left = CgroupMemoryLeft(ReadSmallFile(dir + "/memory.max"), ReadSmallFile(dir + "/memory.current"));
    if (left != std::numeric_limits<uint64_t>::max()) available = available == 0 ? left : std::min(available, left);
  }
  return available;
}

Result<uint64_t> ParseByteSize(const std::string& text, const std::string& where) {
  std::string digits = text;
  uint64_t unit = 1;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K': case 'k': unit = 1ull << 10; break;
      case 'M': case 'm': unit = 1ull << 20; break;
      case 'G': case 'g': unit = 1ull << 30; break;
      case 'T': case 't': unit = 1ull << 40; break;
      default: break;
    }
    if (unit != 1) digits.pop_back();
  }
  uint64_t n = 0;
  if (!ParseU64(digits, &n) || n == 0 || n > std::numeric_limits<uint64_t>::max() / unit) {
    return Error{"", where, "'" + text + "': expected a positive size in bytes, or with K, M, G or T (8G)"};
  }
  return n * unit;
}

}  // namespace graph_ascend
