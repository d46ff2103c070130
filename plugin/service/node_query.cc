#include "node_query.h"

#include <re2/filtered_re2.h>
#include <re2/re2.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <system_error>
#include <thread>

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

namespace {

// Below this many bytes of names a search runs on one thread.
constexpr size_t kParallelBytes = size_t{4} << 20;

// Finds the node holding byte `offset`, starting from `hint` (a node at or
// before it): hits come in increasing order, so a galloping search from the
// last hit is shorter than a binary search over every node.
uint32_t NodeFrom(const SideGraph& g, uint32_t hint, size_t offset) {
  uint32_t lo = hint, step = 1, hi = hint + 1;
  while (hi < g.size() && g.name_offset(hi) <= offset) {
    lo = hi;
    step *= 2;
    hi = std::min<uint32_t>(g.size(), hi + step);
  }
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    (g.name_offset(mid) <= offset ? lo : hi) = mid;
  }
  return lo;
}

// Runs `scan(first, end, hits)` over node ranges that split the names
// buffer in two halves on two threads when it is large, and joins the hits
// in node order.
template <typename Scan>
std::vector<uint32_t> ScanInParallel(const SideGraph& g, Scan scan) {
  std::vector<uint32_t> hits;
  if (g.names_buffer().size() < kParallelBytes || g.size() < 2) {
    scan(0u, g.size(), &hits);
    return hits;
  }
  uint32_t mid = g.NodeAtOffset(g.names_buffer().size() / 2);
  if (mid == 0) mid = 1;
  std::vector<uint32_t> second;
  // An exception on the worker (bad_alloc) is rethrown on the calling thread,
  // whose handler answers it, instead of ending the process.
  std::exception_ptr failed;
  auto scan_second = [&] {
    try {
      scan(mid, g.size(), &second);
    } catch (...) {
      failed = std::current_exception();
    }
  };
  std::thread worker;
  try {
    worker = std::thread(scan_second);
  } catch (const std::system_error&) {
    scan_second();  // no thread to be had: this one scans both halves
  }
  try {
    scan(0u, mid, &hits);
  } catch (...) {
    if (worker.joinable()) worker.join();
    throw;
  }
  if (worker.joinable()) worker.join();
  if (failed) std::rethrow_exception(failed);
  hits.insert(hits.end(), second.begin(), second.end());
  return hits;
}

// memmem of `needle` over the names of nodes [first, end) of `hay` (the names
// buffer or its lowercase copy); calls `hit(node)` once per node holding it.
template <typename Hit>
void FindLiteral(const SideGraph& g, std::string_view hay, std::string_view needle, uint32_t first, uint32_t end,
                 Hit hit) {
  size_t pos = g.name_offset(first);
  const size_t stop = g.name_offset(end);
  uint32_t node = first;
  while (pos < stop) {
    const void* p = memmem(hay.data() + pos, stop - pos, needle.data(), needle.size());
    if (p == nullptr) break;
    const size_t at = static_cast<const char*>(p) - hay.data();
    node = NodeFrom(g, node, at);
    hit(node);
    pos = g.name_offset(node + 1);
  }
}

// The literal that every match of `re` contains (lowercase; from RE2's
// prefilter), the rarest of them in a sample of the names; "" when the
// pattern has none (e.g. "a|b", ".*").
std::string RequiredAtom(const SideGraph& g, const std::string& pattern, const RE2::Options& opts) {
  re2::FilteredRE2 filter(3);
  int id = 0;
  if (filter.Add(pattern, opts, &id) != RE2::NoError) return "";
  std::vector<std::string> atoms;
  filter.Compile(&atoms);
  if (atoms.empty()) return "";
  std::vector<int> all(atoms.size());
  for (size_t i = 0; i < atoms.size(); ++i) all[i] = static_cast<int>(i);
  std::vector<int> potential;
  filter.AllPotentials({}, &potential);
  if (!potential.empty()) return "";  // matches without any atom
  // Atom i is required when the prefilter fails with every other atom present
  // (the prefilter is a monotone AND/OR formula of atoms).
  std::string best;
  size_t best_count = SIZE_MAX;
  std::string_view sample = g.folded_names_buffer().substr(0, size_t{1} << 20);
  for (size_t i = 0; i < atoms.size(); ++i) {
    std::vector<int> others;
    for (int a : all) {
      if (a != static_cast<int>(i)) others.push_back(a);
    }
    potential.clear();
    filter.AllPotentials(others, &potential);
    if (!potential.empty()) continue;
    size_t count = 0;
    for (size_t p = sample.find(atoms[i]); p != std::string_view::npos; p = sample.find(atoms[i], p + 1)) ++count;
    if (count < best_count || (count == best_count && atoms[i].size() > best.size())) {
      best = atoms[i];
      best_count = count;
    }
  }
  return best;
}

}  // namespace

Result<std::vector<uint32_t>> SearchNodes(const SideGraph& g, const SearchSpec& spec) {
  if (spec.query.empty()) return std::vector<uint32_t>{};
  if (spec.query.size() > 4096) return MakeError("", "query", "query longer than 4096 bytes");
  auto keep = [&](uint32_t n, std::vector<uint32_t>* hits) {
    if (Wanted(g, n, spec.micro_step)) hits->push_back(n);
  };
  if (!spec.regex) {
    if (spec.query.find_first_of("\n\r") != std::string::npos) return std::vector<uint32_t>{};
    const std::string needle = spec.case_insensitive ? Fold(spec.query) : spec.query;
    std::string_view hay = spec.case_insensitive ? g.folded_names_buffer() : g.names_buffer();
    return ScanInParallel(g, [&](uint32_t first, uint32_t end, std::vector<uint32_t>* hits) {
      FindLiteral(g, hay, needle, first, end, [&](uint32_t n) { keep(n, hits); });
    });
  }
  RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_case_sensitive(!spec.case_insensitive);
  opts.set_max_mem(64 << 20);
  RE2 single(spec.query, opts);
  if (!single.ok()) return MakeError("", "query", "bad regular expression: " + single.error());

  // A literal every match contains narrows the names to check: find it with
  // memmem in the lowercase names, then match only those names.
  const std::string atom = RequiredAtom(g, spec.query, opts);
  if (!atom.empty()) {
    return ScanInParallel(g, [&](uint32_t first, uint32_t end, std::vector<uint32_t>* hits) {
      FindLiteral(g, g.folded_names_buffer(), atom, first, end, [&](uint32_t n) {
        if (RE2::PartialMatch(g.name(n), single)) keep(n, hits);
      });
    });
  }
  // Otherwise one RE2 scan of the names in multi-line mode: ^ and $ match at
  // name boundaries in the buffer.
  RE2 scan("(?m:" + spec.query + ")", opts);
  if (!scan.ok()) return MakeError("", "query", "bad regular expression: " + scan.error());
  std::string_view hay = g.names_buffer();
  return ScanInParallel(g, [&](uint32_t first, uint32_t end, std::vector<uint32_t>* hits) {
    size_t pos = g.name_offset(first);
    const size_t stop = g.name_offset(end);
    uint32_t node = first;
    re2::StringPiece match;
    while (pos < stop) {
      if (!scan.Match(re2::StringPiece(hay.data(), hay.size()), pos, stop, RE2::UNANCHORED, &match, 1)) break;
      const size_t at = match.data() - hay.data();
      if (at >= stop) break;
      node = NodeFrom(g, node, at);
      const size_t line_end = g.name_offset(node + 1) - 1;  // the '\n' after the name
      // A match inside the name is a match of the name; one that crosses a
      // line end (a pattern that can match '\n') is checked on the name alone.
      if (at + match.size() <= line_end || RE2::PartialMatch(g.name(node), single)) keep(node, hits);
      pos = line_end + 1;
    }
  });
}

Result<NameMatch> NameMatcher(const SearchSpec& spec) {
  if (spec.query.empty()) return NameMatch([](std::string_view) { return false; });
  if (spec.query.size() > 4096) return MakeError("", "query", "query longer than 4096 bytes");
  if (!spec.regex) {
    if (spec.query.find_first_of("\n\r") != std::string::npos) {
      return NameMatch([](std::string_view) { return false; });
    }
    if (!spec.case_insensitive) {
      return NameMatch([q = spec.query](std::string_view name) { return name.find(q) != std::string_view::npos; });
    }
    return NameMatch([q = Fold(spec.query)](std::string_view name) {
      return Fold(std::string(name)).find(q) != std::string::npos;
    });
  }
  RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_case_sensitive(!spec.case_insensitive);
  opts.set_max_mem(64 << 20);
  auto re = std::make_shared<RE2>(spec.query, opts);
  if (!re->ok()) return MakeError("", "query", "bad regular expression: " + re->error());
  return NameMatch([re](std::string_view name) { return RE2::PartialMatch(name, *re); });
}

std::vector<uint32_t> FilterNodes(const SideGraph& g, bool compare, const FilterSpec& spec) {
  std::vector<uint32_t> hits;
  bool by_bucket = !spec.buckets.empty(), by_unmatched = compare && spec.unmatched,
       by_overflow = !spec.overflow.empty();
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
    int32_t b = g.bucket(n, spec.grading);
    bool hit = (by_bucket && b >= 0 && b < 64 && (bucket_mask >> b) & 1) || (by_unmatched && g.matched(n) < 0) ||
               (by_overflow && g.overflow(n) != 0 && (overflow_mask >> g.overflow(n)) & 1);
    if (hit) hits.push_back(n);
  }
  return hits;
}

Result<SideSearch::Hits> SideSearch::Find(const SearchSpec& spec) const {
  {
    std::lock_guard<std::mutex> l(mu_);
    for (auto it = recent_.begin(); it != recent_.end(); ++it) {
      if (it->first == spec) {
        recent_.splice(recent_.begin(), recent_, it);
        return recent_.front().second;
      }
    }
  }
  // Searched outside the lock: other searches of the side go on meanwhile.
  auto found = SearchNodes(g_, spec);
  if (!found.ok()) return found.error();
  Hits hits = std::make_shared<const std::vector<uint32_t>>(std::move(*found));
  std::lock_guard<std::mutex> l(mu_);
  recent_.emplace_front(spec, hits);
  if (recent_.size() > kKept) recent_.pop_back();
  return hits;
}

}  // namespace graph_ascend::service
