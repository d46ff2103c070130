#include "divergence/overview_counts.h"

#include <cmath>
#include <vector>

#include "compare/pair_compare.h"

namespace graph_ascend::divergence {

vis::OverviewCounts CountForOverview(const graph::Graph& npu, const vis::FileMeta& meta,
                                     const vis::DivergenceRanking& ranking) {
  vis::OverviewCounts out;
  std::vector<uint32_t> buckets(static_cast<size_t>(meta.legend_size()), 0);
  std::vector<uint32_t> grades(static_cast<size_t>(meta.grade_legend_size()), 0);
  const int unmatched = compare::UnmatchedBucket(meta.legend());
  const int unmatched_grade = compare::UnmatchedBucket(meta.grade_legend());
  uint32_t overflow[4] = {0, 0, 0, 0};
  // Pre-order from the root with an explicit stack: only reachable nodes count.
  std::vector<int32_t> todo;
  if (npu.size() > 0) todo.push_back(0);
  while (!todo.empty()) {
    const uint32_t n = static_cast<uint32_t>(todo.back());
    todo.pop_back();
    for (int32_t c = npu.first_child[n]; c != graph::kNoNode; c = npu.next_sibling[c]) todo.push_back(c);
    const uint8_t level = static_cast<uint8_t>(npu.overflow[n]);
    if (level < 4) ++overflow[level];
    if (n == 0) continue;  // the root is no operator (as in the service's and info's counts)
    const uint32_t type = static_cast<uint32_t>(npu.op[n]);
    const bool collection = type == vis::NODE_API_COLLECTION || type == vis::NODE_MULTI_COLLECTION;
    const bool matched = npu.matched[n] != graph::kNoNode;
    int b = compare::NodeBucket(meta.legend(), unmatched, matched, collection, npu.precision[n]);
    if (b >= 0 && b < static_cast<int>(buckets.size())) ++buckets[b];
    const double grade = n < npu.grade.size() ? npu.grade[n] : std::nan("");
    b = compare::NodeBucket(meta.grade_legend(), unmatched_grade, matched, collection, grade);
    if (b >= 0 && b < static_cast<int>(grades.size())) ++grades[b];
  }
  for (uint32_t c : buckets) out.add_bucket_count(c);
  for (uint32_t c : grades) out.add_grade_bucket_count(c);
  out.set_overflow_medium(overflow[1]);
  out.set_overflow_high(overflow[2]);
  out.set_overflow_critical(overflow[3]);
  out.set_first_divergence_node(ranking.entry_size() > 0 ? static_cast<int32_t>(ranking.entry(0).node()) : -1);
  return out;
}

}  // namespace graph_ascend::divergence
