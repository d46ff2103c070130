// difflib.SequenceMatcher's ratio: 2 * M / (len(a) + len(b)), M being the
// characters of the matching blocks found by its recursive longest-match
// search (with the "popular element" heuristic for b of 200 or more).
#include <array>
#include <map>
#include <string>
#include <vector>

#include "config_check/config_check.h"

namespace graph_ascend::config_check {

double SequenceRatio(const std::string& a, const std::string& b) {
  size_t la = a.size(), lb = b.size();
  if (la + lb == 0) return 1.0;
  std::map<char, std::vector<size_t>> b2j;
  for (size_t j = 0; j < lb; ++j) b2j[b[j]].push_back(j);
  if (lb >= 200) {
    size_t popular = lb / 100 + 1;
    for (auto it = b2j.begin(); it != b2j.end();) it = it->second.size() > popular ? b2j.erase(it) : std::next(it);
  }
  auto longest = [&](size_t alo, size_t ahi, size_t blo, size_t bhi, size_t* bi, size_t* bj) {
    size_t besti = alo, bestj = blo, best = 0;
    std::map<size_t, size_t> j2len;
    for (size_t i = alo; i < ahi; ++i) {
      std::map<size_t, size_t> next;
      auto hit = b2j.find(a[i]);
      if (hit != b2j.end()) {
        for (size_t j : hit->second) {
          if (j < blo) continue;
          if (j >= bhi) break;
          auto prev = j > 0 ? j2len.find(j - 1) : j2len.end();
          size_t k = next[j] = (prev == j2len.end() ? 0 : prev->second) + 1;
          if (k > best) {
            besti = i - k + 1;
            bestj = j - k + 1;
            best = k;
          }
        }
      }
      j2len = std::move(next);
    }
    while (besti > alo && bestj > blo && a[besti - 1] == b[bestj - 1]) {
      --besti;
      --bestj;
      ++best;
    }
    while (besti + best < ahi && bestj + best < bhi && a[besti + best] == b[bestj + best]) ++best;
    *bi = besti;
    *bj = bestj;
    return best;
  };
  size_t matched = 0;
  std::vector<std::array<size_t, 4>> queue = {{0, la, 0, lb}};
  while (!queue.empty()) {
    auto [alo, ahi, blo, bhi] = queue.back();
    queue.pop_back();
    size_t i, j, k = longest(alo, ahi, blo, bhi, &i, &j);
    if (k == 0) continue;
    matched += k;
    if (alo < i && blo < j) queue.push_back({alo, i, blo, j});
    if (i + k < ahi && j + k < bhi) queue.push_back({i + k, ahi, j + k, bhi});
  }
  return 2.0 * static_cast<double>(matched) / static_cast<double>(la + lb);
}

}  // namespace graph_ascend::config_check
