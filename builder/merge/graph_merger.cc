#include "merge/graph_merger.h"

#include <algorithm>

#include "base/strings.h"
#include "merge/forest.h"

// The strategies (§9.2) over the working forest of merge/forest.h.
namespace graph_ascend::merge {
namespace internal {

// ------------------------------------------------------------------ the strategies

Result<std::vector<MergedSide>> Forest::Merge() {
  Strategy strategy = SelectStrategy(params_);
  Log(std::string("merging ") + std::to_string(ranks_.size()) + " ranks (" + StrategyName(strategy) + ")");
  std::vector<uint16_t> all;
  for (uint16_t s = 0; s < ranks_.size(); ++s) all.push_back(s);
  auto slots_of = [&](const std::vector<int>& group) {
    std::vector<uint16_t> out;
    for (int rank : group) {
      for (uint16_t s = 0; s < ranks_.size(); ++s) {
        if (ranks_[s].rank == rank) out.push_back(s);
      }
    }
    return out;
  };
  auto groups_text = [](const RankGroups& groups) {
    std::string s;
    for (const auto& g : groups) s += (s.empty() ? "" : ", ") + PyList(g);
    return "[" + s + "]";
  };
  bool vpp = params_.vpp > 1;
  std::vector<uint16_t> results;
  auto merge_pp_group = [&](const std::vector<uint16_t>& group) -> Status {
    GA_RETURN_IF_ERROR(MergePp(group));
    if (vpp && group.size() >= 2) {
      MergeVppData(group[0]);
      MergeVppChunks(group[0]);
    }
    return Status::Ok();
  };
  switch (strategy) {
    case Strategy::kNoParallel:
      MergeApiCollections(all);
      results = all;
      break;
    case Strategy::kTp: {
      auto tp = TpGroups();
      if (!tp.ok()) return tp.error();
      GA_RETURN_IF_ERROR(CheckGroups(*tp, "tp"));
      Log("tp groups " + groups_text(*tp));
      for (const auto& g : *tp) {
        std::vector<uint16_t> slots = slots_of(g);
        MergeApiCollections(slots);
        MergeTp(slots, nullptr);
        results.push_back(slots[0]);
      }
      break;
    }
    case Strategy::kPp:
    case Strategy::kVpp: {
      auto pp = PpGroups();
      if (!pp.ok()) return pp.error();
      GA_RETURN_IF_ERROR(CheckGroups(*pp, "pp"));
      Log("pp groups " + groups_text(*pp));
      for (const auto& g : *pp) {
        std::vector<uint16_t> slots = slots_of(g);
        MergeApiCollections(slots);
        GA_RETURN_IF_ERROR(merge_pp_group(slots));
        results.push_back(slots[0]);
      }
      break;
    }
    case Strategy::kTpPp:
    case Strategy::kFull: {
      auto pp = PpGroups();
      if (!pp.ok()) return pp.error();
      auto tp = TpGroups();
      if (!tp.ok()) return tp.error();
      GA_RETURN_IF_ERROR(CheckGroups(*pp, "pp"));
      GA_RETURN_IF_ERROR(CheckGroups(*tp, "tp"));
      Log("pp groups " + groups_text(*pp) + ", tp groups " + groups_text(*tp));
      // A node tagged "_rank<a>." in the main TP rank's graph has its twin
      // tagged "_rank<b>." in the graph of the b-th rank of a's TP group.
      std::map<int, std::vector<int>> mapping;
      for (size_t i = 1; i < tp->size(); ++i) {
        const std::vector<int>& g = (*tp)[i];
        if (!g.empty()) mapping[g[0]] = std::vector<int>(g.begin() + 1, g.end());
      }
      if (strategy == Strategy::kTpPp) {
        MergeApiCollections(all);
        std::vector<uint16_t> pp_results;
        for (const auto& g : *pp) {
          std::vector<uint16_t> slots = slots_of(g);
          GA_RETURN_IF_ERROR(merge_pp_group(slots));
          if (!slots.empty()) pp_results.push_back(slots[0]);
        }
        if (pp_results.empty()) return Error{params_.file, params_.Where("pp"), "no pipeline group to merge"};
        MergeTp(pp_results, &mapping);
        SortMergedApiCollections(pp_results[0]);
        results.push_back(pp_results[0]);
      } else {
        std::map<int, uint16_t> pp_results;  // main rank -> its slot
        for (const auto& g : *pp) {
          std::vector<uint16_t> slots = slots_of(g);
          if (slots.empty()) continue;
          MergeApiCollections(slots);
          GA_RETURN_IF_ERROR(merge_pp_group(slots));
          pp_results[ranks_[slots[0]].rank] = slots[0];
        }
        for (const auto& g : *tp) {
          std::vector<uint16_t> list;
          for (int rank : g) {
            auto it = pp_results.find(rank);
            if (it != pp_results.end()) list.push_back(it->second);
          }
          if (list.empty()) continue;
          MergeApiCollections(list);
          MergeTp(list, &mapping);
          SortMergedApiCollections(list[0]);
          results.push_back(list[0]);
        }
      }
      break;
    }
  }
  std::vector<MergedSide> out;
  for (uint16_t r : results) out.push_back(MergedSide{ranks_[r].rank, Emit(r)});
  return out;
}

}  // namespace internal

using internal::Contains;
using internal::DumpEntry;
using internal::DumpItem;
using internal::FieldOf;
using internal::FindLayers;
using internal::Graph;
using internal::kNoNode;
using internal::LayersMatch;
using internal::ParseIntList;
using internal::Side;
using internal::Value;
using internal::ValueKind;

std::string ApiRankName(std::string_view name, int rank) {
  std::vector<std::string_view> seg = SplitDots(name);
  if (seg.size() < 2) return std::string(name);
  std::vector<std::string> parts(seg.begin(), seg.end());
  parts[1] += "_rank" + std::to_string(rank);
  return JoinDots(parts);
}

std::string RenumberLayers(std::string_view name, std::string_view index) {
  std::string out;
  size_t from = 0;
  LayersMatch m;
  while (FindLayers(name, from, &m)) {
    out.append(name.substr(from, m.digits - from)).append(index).push_back('.');
    from = m.end;
  }
  return out.append(name.substr(from));
}

RankGroups PpGroupsFromData(const std::vector<RankSide>& ranks) {
  std::vector<std::pair<int, int>> sends;
  for (const RankSide& r : ranks) {
    const Side& side = *r.side;
    const Graph& g = *side.graph;
    const StringPool& pool = *side.pool;
    int64_t value_key = pool.Find("value"), isend = pool.Find("isend");
    std::optional<int64_t> peer;
    for (uint32_t n = 0; n < g.size() && !peer; ++n) {
      std::string_view name = g.Name(n);
      if (!StartsWith(name, "Distributed.") || g.entry[n] == kNoNode) continue;
      const DumpEntry& e = side.dump.entries[g.entry[n]];
      if (Contains(name, ".batch_isend_irecv.")) {
        for (uint32_t i = e.first_p2p; i < e.first_p2p + e.p2p_count; ++i) {
          const dump::P2POp& op = side.dump.p2p[i];
          if (op.peer >= 0 && op.peer != r.rank && static_cast<int64_t>(op.op) == isend) {
            peer = op.peer;
            break;
          }
        }
      } else if (Contains(name, ".send.") || Contains(name, ".isend.")) {
        for (uint32_t i = e.first_item; i < e.first_item + e.input_count; ++i) {
          const DumpItem& item = side.dump.items[i];
          if (item.flags & dump::kItemFullKey || pool.Get(item.key) != ".input.dst" || value_key < 0) continue;
          const Value* v = FieldOf(side.dump, item, static_cast<uint32_t>(value_key));
          // A copy first: Value is packed (dump_data.h), and optional's assignment
          // would bind a reference to its 4-aligned int64 (undefined; UBSan).
          if (v != nullptr && v->kind == ValueKind::kInteger) peer = int64_t{v->integer};
        }
      }
    }
    if (peer && *peer <= INT_MAX) sends.emplace_back(r.rank, static_cast<int>(*peer));
  }
  return TraceP2PChains(sends);
}

RankGroups TpGroupsFromData(const std::vector<RankSide>& ranks) {
  RankGroups groups;
  for (const RankSide& r : ranks) {
    const Side& side = *r.side;
    const Graph& g = *side.graph;
    int64_t group_ranks = side.pool->Find("group_ranks");
    for (uint32_t n = 0; n < g.size(); ++n) {
      std::string_view name = g.Name(n);
      if (!Contains(name, "reduce_scatter") && !Contains(name, "all_reduce")) continue;
      std::vector<int> group;
      if (g.entry[n] != kNoNode && group_ranks >= 0) {
        const DumpEntry& e = side.dump.entries[g.entry[n]];
        for (uint32_t i = e.first_item; i < e.first_item + e.input_count; ++i) {
          const DumpItem& item = side.dump.items[i];
          if (item.flags & dump::kItemFullKey || side.pool->Get(item.key) != ".input.group") continue;
          const Value* v = FieldOf(side.dump, item, static_cast<uint32_t>(group_ranks));
          if (v != nullptr && v->kind == ValueKind::kJson) group = ParseIntList(side.pool->Get(v->string));
        }
      }
      if (!group.empty() && std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
      break;
    }
  }
  return groups;
}

Result<std::vector<MergedSide>> MergeRanks(std::vector<RankSide> ranks, const ParallelParams& params,
                                           const MergeLog& log) {
  if (ranks.empty()) return Error{params.file, params.Where("rank_size"), "no rank to merge"};
  std::stable_sort(ranks.begin(), ranks.end(), [](const RankSide& a, const RankSide& b) { return a.rank < b.rank; });
  for (size_t i = 1; i < ranks.size(); ++i) {
    if (ranks[i].side->pool != ranks[0].side->pool) {
      return Error{ranks[i].side->dir, "", "internal: the ranks of a merge must share one string pool"};
    }
    if (ranks[i].rank == ranks[i - 1].rank) {
      return Error{ranks[i].side->dir, "", "two rank folders have rank " + std::to_string(ranks[i].rank)};
    }
    if (ranks[i].side->dump.task != ranks[0].side->dump.task) {
      return Error{ranks[i].side->dump.path, "key task",
                   "'" + ranks[i].side->dump.task + "' but " + ranks[0].side->dump.path + " has '" +
                       ranks[0].side->dump.task + "': the ranks of a run must be dumped with the same task"};
    }
  }
  RankGroups pp = PpGroupsFromData(ranks), tp = TpGroupsFromData(ranks);
  internal::Forest forest(std::move(ranks), params, log, std::move(pp), std::move(tp));
  return forest.Merge();
}

}  // namespace graph_ascend::merge
