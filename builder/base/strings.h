// Small text operations on dump names ("Module.layer1.0.conv1.Conv2d.forward.0")
// shared by the builder's modules.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace graph_ascend {

inline bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

inline bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Non-empty and only '0'..'9'.
bool IsDigits(std::string_view s);

// Every occurrence of `from` (non-empty) replaced by `to`, left to right.
std::string ReplaceAll(std::string_view s, std::string_view from, std::string_view to);
// The same into `out` (replaced), which keeps its storage from call to call.
void ReplaceAll(std::string_view s, std::string_view from, std::string_view to, std::string* out);

// The segment of `s` between its k-th and (k+1)-th dot from the end, k = 0
// for the last one: SplitDots(s)[size - 1 - k] without the vector. False
// when `s` has fewer than k dots.
bool DotSegmentFromEnd(std::string_view s, size_t k, std::string_view* segment);

// "a.b..c" -> {"a", "b", "", "c"}; views into `s`.
std::vector<std::string_view> Split(std::string_view s, char sep);
inline std::vector<std::string_view> SplitDots(std::string_view s) { return Split(s, '.'); }
// The same as owned strings.
std::vector<std::string> SplitDotsCopy(std::string_view s);

// parts[from, to) joined with '.'.
std::string JoinDots(const std::vector<std::string>& parts, size_t from = 0, size_t to = std::string::npos);

}  // namespace graph_ascend
