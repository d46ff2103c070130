#include "base/strings.h"

#include <algorithm>

namespace graph_ascend {

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string ReplaceAll(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  ReplaceAll(s, from, to, &out);
  return out;
}

void ReplaceAll(std::string_view s, std::string_view from, std::string_view to, std::string* out) {
  out->clear();
  if (from.empty()) {
    out->assign(s);
    return;
  }
  size_t start = 0;
  for (size_t at = s.find(from); at != std::string_view::npos; at = s.find(from, start)) {
    out->append(s.substr(start, at - start)).append(to);
    start = at + from.size();
  }
  out->append(s.substr(start));
}

bool DotSegmentFromEnd(std::string_view s, size_t k, std::string_view* segment) {
  size_t end = s.size();
  for (size_t i = 0; i < k; ++i) {
    size_t dot = end == 0 ? std::string_view::npos : s.rfind('.', end - 1);
    if (dot == std::string_view::npos) return false;
    end = dot;
  }
  size_t dot = end == 0 ? std::string_view::npos : s.rfind('.', end - 1);
  size_t begin = dot == std::string_view::npos ? 0 : dot + 1;
  *segment = s.substr(begin, end - begin);
  return true;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

std::vector<std::string> SplitDotsCopy(std::string_view s) {
  std::vector<std::string_view> views = SplitDots(s);
  return std::vector<std::string>(views.begin(), views.end());
}

std::string JoinDots(const std::vector<std::string>& parts, size_t from, size_t to) {
  to = std::min(to, parts.size());
  std::string out;
  for (size_t i = from; i < to; ++i) {
    if (i > from) out += '.';
    out += parts[i];
  }
  return out;
}

}  // namespace graph_ascend
