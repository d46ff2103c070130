#include "node_query.h"

#include <re2/re2.h>

#include <algorithm>
#include <cstring>

namespace graph_ascend::service {
namespace {

bool Wanted(const SideGraph& g, uint32_t n, int32_t micro_step) {
  if (!g.reachable(n)) return false;
  if (micro_step < 0 || n == 0) return true;
  int32_t m = g.effective_micro_step(n);
  return m < 0 || m == micro_step;
}

std::string Fold(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

Result<std::vector<uint32_t>> SearchNodes(const SideGraph& g, const SearchSpec& spec) {
  std::vector<uint32_t> hits;
  if (spec.query.empty()) return hits;
  if (spec.query.size() > 4096) return MakeError("", "query", "query longer than 4096 bytes");
  if (!spec.regex) {
    if (spec.query.find_first_of("\n\r") != std::string::npos) return hits;
    const std::string needle = spec.case_insensitive ? Fold(spec.query) : spec.query;
    std::string_view hay = spec.case_insensitive ? g.folded_names_buffer() : g.names_buffer();
    size_t pos = 0;
    while (pos < hay.size()) {
      const void* p = memmem(hay.data() + pos, hay.size() - pos, needle.data(), needle.size());
      if (p == nullptr) break;
      size_t at = static_cast<const char*>(p) - hay.data();
      uint32_t n = g.NodeAtOffset(at);
      if (Wanted(g, n, spec.micro_step)) hits.push_back(n);
      pos = g.name_offset(n + 1);
    }
    return hits;
  }
  RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_case_sensitive(!spec.case_insensitive);
  opts.set_max_mem(64 << 20);
  // Multi-line mode makes ^ and $ match at name boundaries in the buffer.
  RE2 scan("(?m:" + spec.query + ")", opts);
  if (!scan.ok()) return MakeError("", "query", "bad regular expression: " + scan.error());
  RE2 single(spec.query, opts);
  std::string_view hay = g.names_buffer();
  size_t pos = 0;
  re2::StringPiece match;
  while (pos <= hay.size()) {
    if (!scan.Match(re2::StringPiece(hay.data(), hay.size()), pos, hay.size(), RE2::UNANCHORED, &match, 1)) break;
    size_t at = match.data() - hay.data();
    if (at >= hay.size()) break;
    uint32_t n = g.NodeAtOffset(at);
    size_t line_end = g.name_offset(n + 1) - 1;  // the '\n' after the name
    // A match that stays inside the name is a match of the name; one that
    // crosses a line end (a pattern that can match '\n') is checked alone.
    bool hit = at + match.size() <= line_end || RE2::PartialMatch(std::string(g.name(n)), single);
    if (hit && Wanted(g, n, spec.micro_step)) hits.push_back(n);
    pos = line_end + 1;
  }
  return hits;
}

std::vector<uint32_t> FilterNodes(const SideGraph& g, bool compare, const FilterSpec& spec) {
  std::vector<uint32_t> hits;
  bool by_bucket = !spec.buckets.empty(), by_unmatched = compare && spec.unmatched, by_overflow = !spec.overflow.empty();
  if (!by_bucket && !by_unmatched && !by_overflow) return hits;
  uint64_t bucket_mask = 0;
  for (int32_t b : spec.buckets) {
    if (b >= 0 && b < 64) bucket_mask |= uint64_t{1} << b;
  }
  uint32_t overflow_mask = 0;
  for (uint32_t o : spec.overflow) {
    if (o < 32) overflow_mask |= 1u << o;
  }
  for (uint32_t n = 1; n < g.size(); ++n) {
    if (spec.leaves_only && g.child_count(n) != 0) continue;
    if (!Wanted(g, n, spec.micro_step)) continue;
    int32_t b = g.bucket(n);
    bool hit = (by_bucket && b >= 0 && b < 64 && (bucket_mask >> b) & 1) || (by_unmatched && g.matched(n) < 0) ||
               (by_overflow && g.overflow(n) != 0 && (overflow_mask >> g.overflow(n)) & 1);
    if (hit) hits.push_back(n);
  }
  return hits;
}

}  // namespace graph_ascend::service
