// The tensor-parallel merge (§9.6): twins across the TP ranks, merged statistics.
#include "merge/forest.h"

#include <algorithm>

#include "base/strings.h"
#include "merge/statistics.h"

namespace graph_ascend::merge::internal {

// ------------------------------------------------------------------ §9.6

std::vector<uint32_t> Forest::PreOrder(uint16_t graph) const {
  std::vector<uint32_t> order;
  std::vector<uint8_t> seen(name_.size(), 0);
  std::vector<uint32_t> stack = {root_[graph]};
  while (!stack.empty()) {
    uint32_t n = stack.back();
    stack.pop_back();
    if (seen[n]) continue;
    seen[n] = 1;
    order.push_back(n);
    for (auto it = children_[n].rbegin(); it != children_[n].rend(); ++it) stack.push_back(*it);
  }
  return order;
}

std::vector<uint32_t> Forest::TpTwins(uint32_t n, const std::vector<uint16_t>& others,
                                      const std::map<int, std::vector<int>>* mapping) const {
  std::vector<uint32_t> twins;
  std::vector<uint32_t> ancestors = Ancestors(n);
  int tagged_rank = FirstRankTag(Name(n));
  bool mapped = tagged_rank >= 0 && mapping != nullptr && !mapping->empty();
  const std::vector<int>* peers = nullptr;
  if (mapped) {
    auto it = mapping->find(tagged_rank);
    if (it == mapping->end() || it->second.empty() || it->second.size() != others.size()) return {};
    peers = &it->second;
  }
  for (size_t i = 0; i < others.size(); ++i) {
    int32_t t = mapped ? Lookup(others[i], ReplaceRankTags(Name(n), (*peers)[i])) : Lookup(others[i], name_[n]);
    if (t == kNoNode || Ancestors(static_cast<uint32_t>(t)) != ancestors) return {};
    twins.push_back(static_cast<uint32_t>(t));
  }
  return twins;
}

void Forest::MergeTp(const std::vector<uint16_t>& results, const std::map<int, std::vector<int>>* mapping) {
  if (results.size() < 2) return;
  uint16_t main = results[0];
  std::vector<uint16_t> others(results.begin() + 1, results.end());
  std::vector<uint32_t> order = PreOrder(main);
  for (uint32_t n : order) {
    int32_t up = parent_[n];
    if (up == kNoNode || op_[up] != NodeOp::kModule || Name(up) == "clip_grad" || Name(up) == "optimizer" ||
        StartsWith(Name(n), "Distributed") || HasInfo(n)) {
      continue;
    }
    MergeMatmulReduce(n, others, mapping);
    std::vector<uint32_t> twins = TpTwins(n, others, mapping);
    ParamGroups in, out;
    CompareParams(n, twins, true, &in, &out);
    if (in.empty() && out.empty()) continue;
    AddInfo(n, MergedFromRanks(n, twins));
    for (std::string& f : MergeParams(in)) AddInfo(n, std::move(f));
    for (std::string& f : MergeParams(out)) AddInfo(n, std::move(f));
  }
  for (uint32_t n : order) MergeColumnRowParallel(n, others, mapping);
}

void Forest::MergeMatmulReduce(uint32_t n, const std::vector<uint16_t>& others,
                               const std::map<int, std::vector<int>>* mapping) {
  if (op_[n] != NodeOp::kModule) return;
  std::vector<std::string_view> seg = SplitDots(Name(n));
  if (seg.size() < 4) return;
  std::string_view kind = seg[seg.size() - 3], pass = seg[seg.size() - 2];
  bool row_forward = pass == "forward" && Contains(kind, "RowParallelLinear");
  bool column_backward = pass == "backward" && Contains(kind, "ColumnParallelLinear");
  if (!row_forward && !column_backward) return;
  std::vector<uint32_t> matmuls, reduces;
  for (uint32_t c : children_[n]) {
    std::string_view name = Name(c);
    if (Contains(name, "matmul")) matmuls.push_back(c);
    if (Contains(name, "_reduce_scatter_base") || Contains(name, "reduce_scatter_tensor") ||
        Contains(name, "all_reduce")) {
      reduces.push_back(c);
    }
  }
  if (matmuls.empty() || reduces.empty()) return;
  for (uint32_t mm : matmuls) {
    std::vector<ItemRef> mm_out = Items(mm, true);
    if (mm_out.empty()) continue;
    for (size_t r = 0; r < reduces.size(); ++r) {
      uint32_t red = reduces[r];
      std::vector<ItemRef> red_out = Items(red, true), red_in = Items(red, false);
      if (red_out.empty()) continue;
      // The matmul's output is all_reduce's input 0 or reduce_scatter's input 1.
      bool all_reduce = Contains(Name(red), "all_reduce");
      if (red_in.size() < (all_reduce ? 1u : 2u)) continue;
      if (!SameParam(mm_out[0], red_in[all_reduce ? 0 : 1], false)) continue;
      std::vector<uint32_t> twins = TpTwins(mm, others, mapping);
      ParamGroups in;
      CompareParams(mm, twins, true, &in, nullptr);
      if (!in.empty()) {
        AddInfo(mm, MergedFromRanks(mm, twins));
        for (std::string& f : MergeParams(in)) AddInfo(mm, std::move(f));
      }
      for (uint32_t field : {k_max_, k_min_, k_mean_, k_norm_})
        SetField(mm_out[0], field, FieldValue(red_out[0], field));
      Value full_op_name = FieldValue(red_out[0], k_full_op_name_);
      std::string from = full_op_name.kind == ValueKind::kString && !pool_->Get(full_op_name.string).empty()
                             ? std::string(pool_->Get(full_op_name.string))
                             : std::string(Name(red));
      AddInfo(mm, "The output of this data is merged from " + from);
      reduces.erase(reduces.begin() + static_cast<long>(r));
      break;
    }
  }
}

void Forest::MergeColumnRowParallel(uint32_t n, const std::vector<uint16_t>& others,
                                    const std::map<int, std::vector<int>>* mapping) {
  if (op_[n] != NodeOp::kModule || HasInfo(n)) return;
  std::vector<std::string_view> seg = SplitDots(Name(n));
  if (seg.size() < 4) return;
  if (seg[seg.size() - 2] != "forward" || !Contains(seg[seg.size() - 3], "ColumnParallelLinear")) return;
  if (parent_[n] == kNoNode) return;
  // The siblings from this ColumnParallelLinear to the last RowParallelLinear.
  const std::vector<uint32_t>& siblings = children_[parent_[n]];
  long start = -1, end = -1;
  for (size_t i = 0; i < siblings.size(); ++i) {
    if (Contains(Name(siblings[i]), Name(n))) {
      start = static_cast<long>(i);
    } else if (Contains(Name(siblings[i]), "RowParallelLinear")) {
      end = static_cast<long>(i);
    }
  }
  if (start < 0 || end < 0 || end - start + 1 < 2) return;
  std::vector<uint32_t> span(siblings.begin() + start, siblings.begin() + end + 1);
  uint32_t column = span.front(), row = span.back();
  std::vector<uint32_t> stack = span;
  while (!stack.empty()) {
    uint32_t cur = stack.back();
    stack.pop_back();
    for (auto it = children_[cur].rbegin(); it != children_[cur].rend(); ++it) stack.push_back(*it);
    if (HasInfo(cur) || StartsWith(Name(cur), "Distributed")) continue;
    std::vector<uint32_t> twins = TpTwins(cur, others, mapping);
    ParamGroups in, out;
    CompareParams(cur, twins, false, &in, &out);
    if (in.empty() && out.empty()) continue;
    AddInfo(cur, MergedFromRanks(cur, twins));
    bool matmul = Contains(Name(cur), "matmul");
    if (cur == column || (matmul && parent_[cur] == static_cast<int32_t>(column))) {
      EraseKey(&in, "input.0");  // the column layer's input is not split
    } else if (cur == row || (matmul && parent_[cur] == static_cast<int32_t>(row))) {
      out.clear();  // the row layer's output is reduced already, its bias not split
      EraseKey(&in, "parameters.bias");
    }
    for (std::string& f : MergeParams(in)) AddInfo(cur, std::move(f));
    for (std::string& f : MergeParams(out)) AddInfo(cur, std::move(f));
  }
}

}  // namespace graph_ascend::merge::internal
