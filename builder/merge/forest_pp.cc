// API collections across ranks (§9.4) and the pipeline-parallel merge (§9.5).
#include "merge/forest.h"

#include <algorithm>
#include <climits>

#include "base/strings.h"

namespace graph_ascend::merge::internal {

// ------------------------------------------------------------------ §9.4

void Forest::MergeApiCollections(const std::vector<uint16_t>& results) {
  uint16_t main = results[0];
  uint32_t root = root_[main];
  std::vector<uint32_t> kept;
  for (uint32_t c : std::vector<uint32_t>(children_[root])) {
    std::string name(Name(c));
    if (StartsWith(name, "Apis_Between_Modules_All_Ranks")) {
      kept.push_back(c);
      for (size_t i = 1; i < results.size(); ++i) {
        int32_t o = Lookup(results[i], name_[c]);
        if (o == kNoNode) continue;
        for (uint32_t sub : children_[o]) {
          parent_[sub] = static_cast<int32_t>(c);
          node_map_[main][name_[sub]] = sub;
          for (uint32_t subsub : children_[sub]) {
            // The other result's own collection kept its APIs' names; msprobe
            // leaves them so and the merged graph names two nodes alike. They
            // are tagged with their rank like every other rank's API.
            if (FirstRankTag(Name(subsub)) < 0 && Rank(subsub) != ranks_[main].rank) {
              Rename(subsub, ApiRankName(Name(subsub), Rank(subsub)));
            }
            node_map_[main][name_[subsub]] = subsub;
          }
        }
        std::vector<uint32_t> moved = children_[o];
        children_[c].insert(children_[c].end(), moved.begin(), moved.end());
      }
    } else if (StartsWith(name, "Apis_Between_Modules")) {
      uint32_t all = AddNode(pool_->Intern("Apis_Between_Modules_All_Ranks." + std::to_string(all_ranks_next_[main]++)),
                             NodeOp::kApiCollection, main);
      parent_[all] = static_cast<int32_t>(root);
      node_map_[main][name_[all]] = all;
      kept.push_back(all);
      uint32_t original = name_[c];
      std::string k(SplitDots(name).back());
      Rename(c, "Apis_Between_Modules_Rank" + std::to_string(ranks_[main].rank) + "." + k);
      node_map_[main][name_[c]] = c;
      node_map_[main].erase(original);
      children_[all] = {c};
      parent_[c] = static_cast<int32_t>(all);
      for (size_t i = 1; i < results.size(); ++i) {
        int32_t o = Lookup(results[i], original);
        if (o == kNoNode) continue;
        int rank = ranks_[results[i]].rank;
        Rename(static_cast<uint32_t>(o), "Apis_Between_Modules_Rank" + std::to_string(rank) + "." + k);
        node_map_[main][name_[o]] = static_cast<uint32_t>(o);
        for (uint32_t api : children_[o]) {
          Rename(api, ApiRankName(Name(api), rank));
          node_map_[main][name_[api]] = api;
        }
        children_[all].push_back(static_cast<uint32_t>(o));
        parent_[o] = static_cast<int32_t>(all);
      }
    } else {
      kept.push_back(c);
    }
  }
  children_[root] = std::move(kept);
}

void Forest::SortMergedApiCollections(uint16_t graph) {
  for (uint32_t c : children_[root_[graph]]) {
    if (op_[c] != NodeOp::kApiCollection || !StartsWith(Name(c), "Apis_Between_Modules_All_Ranks")) continue;
    auto rank_of = [&](uint32_t n) {
      std::string_view name = Name(n);
      size_t at = name.find("_Rank");
      if (at == std::string_view::npos) return -1;
      size_t j = at + 5;
      while (j < name.size() && name[j] >= '0' && name[j] <= '9' && j - at - 5 < 9) ++j;
      return j > at + 5 ? std::atoi(std::string(name.substr(at + 5, j - at - 5)).c_str()) : -1;
    };
    std::stable_sort(children_[c].begin(), children_[c].end(),
                     [&](uint32_t a, uint32_t b) { return rank_of(a) < rank_of(b); });
  }
}

// ------------------------------------------------------------------ §9.5

Result<RankGroups> Forest::PpGroups() {
  const RankGroups& groups = pp_data_;
  if (groups.empty()) {
    auto d = MakeDefaultGroups(params_);
    if (!d.ok()) return d.error();
    Log("no pipeline send in the data (batch_isend_irecv, send, isend): default pp groups " + [&] {
      std::string s;
      for (const auto& g : d->pp) s += (s.empty() ? "" : ", ") + PyList(g);
      return "[" + s + "]";
    }());
    return d->pp;
  }
  if (static_cast<int>(groups[0].size()) != params_.pp) {
    auto d = MakeDefaultGroups(params_);
    if (!d.ok()) return d.error();
    Log("the pipeline chains of the data have " + std::to_string(groups[0].size()) +
        " ranks, not pp = " + std::to_string(params_.pp) + ": default pp groups used");
    return d->pp;
  }
  return groups;
}

Result<RankGroups> Forest::TpGroups() {
  const RankGroups& groups = tp_data_;
  if (groups.empty() || static_cast<int>(groups[0].size()) != params_.tp) {
    auto d = MakeDefaultGroups(params_);
    if (!d.ok()) return d.error();
    Log(groups.empty() ? "no reduce_scatter/all_reduce group in the data: default tp groups used"
                       : "the all_reduce groups of the data have " + std::to_string(groups[0].size()) +
                             " ranks, not tp = " + std::to_string(params_.tp) + ": default tp groups used");
    return d->tp;
  }
  return groups;
}

Status Forest::CheckGroups(const RankGroups& groups, const char* what) const {
  for (const auto& g : groups) {
    for (int rank : g) {
      auto it = std::find_if(ranks_.begin(), ranks_.end(), [&](const RankSide& r) { return r.rank == rank; });
      if (it == ranks_.end()) {
        return Error{params_.file, params_.Where("rank_size"),
                     std::string("the ") + what + " group " + PyList(g) + " names rank " + std::to_string(rank) +
                         ", which has no rank folder: check rank_size, tp, pp and order"};
      }
    }
    if (g.empty()) return Error{params_.file, params_.Where("rank_size"), std::string("an empty ") + what + " group"};
  }
  return Status::Ok();
}

Status Forest::MergePp(const std::vector<uint16_t>& group) {
  if (group.size() < 2) return Status::Ok();
  uint16_t main = group[0];
  std::vector<uint16_t> others(group.begin() + 1, group.end());
  uint32_t root = root_[main];
  // msprobe iterates the root's list while merging may append to it; once a
  // sort replaces that list, later appends are not seen.
  root_reordered_[main] = 0;
  std::vector<uint32_t> visit = children_[root];
  for (size_t i = 0; i < visit.size(); ++i) {
    uint32_t c = visit[i];
    if (op_[c] != NodeOp::kModule || Name(c) == "clip_grad" || Name(c) == "optimizer") continue;
    GA_RETURN_IF_ERROR(MergeNodes(main, c, others, 0));
    if (!root_reordered_[main]) visit = children_[root];
    SortNodes(main, c);
  }
  return Status::Ok();
}

Status Forest::MergeNodes(uint16_t main, uint32_t n, const std::vector<uint16_t>& others, int depth) {
  if (depth > kMaxDepth) {
    return Error{ranks_[main].side->dir, "",
                 "modules nested deeper than " + std::to_string(kMaxDepth) +
                     " levels: parallel merge stops (as msprobe's recursion limit)"};
  }
  if (mark_[n] >= 0) return Status::Ok();  // a tagged node's name is found in no other graph
  std::vector<uint32_t> twins;
  for (uint16_t o : others) {
    int32_t t = Lookup(o, name_[n]);
    if (t == kNoNode) return Status::Ok();
    twins.push_back(static_cast<uint32_t>(t));
  }
  if (!twins.empty()) {
    ParamGroups in, out;
    CompareParams(n, twins, true, &in, &out);
    std::string name(Name(n));
    bool split = !in.empty() && !out.empty() && HasLayers(name);
    if (Contains(name, ".backward.")) {
      int32_t f = Lookup(main, ReplaceAll(name, ".backward.", ".forward."));
      if (f != kNoNode && pp_merged_[f]) split = true;
    }
    if (split) {
      // A layer the pipeline split: every rank's copy becomes a sibling.
      pp_merged_[n] = 1;
      int32_t up = parent_[n];
      for (uint32_t t : twins) {
        MarkPositionRank(t, Rank(t));
        if (up == kNoNode) continue;
        parent_[t] = up;
        children_[up].push_back(t);
      }
      return Status::Ok();
    }
    if (in.empty() && !out.empty() && Contains(name, ".forward.")) {
      ReplaceItems(n, twins.back(), true, false);
    } else if (!in.empty() && out.empty() && Contains(name, ".backward.")) {
      ReplaceItems(n, twins.back(), false, false);
    }
    MergeUniqueChildren(n, twins);
  }
  for (size_t i = 0; i < children_[n].size(); ++i) {
    uint32_t c = children_[n][i];
    if (op_[c] == NodeOp::kModule) GA_RETURN_IF_ERROR(MergeNodes(main, c, others, depth + 1));
  }
  return Status::Ok();
}

void Forest::MarkPositionRank(uint32_t n, int rank) {
  int32_t position = 0;
  if (parent_[n] != kNoNode) {
    const std::vector<uint32_t>& siblings = children_[parent_[n]];
    for (size_t i = 0; i < siblings.size(); ++i) {
      uint32_t s = siblings[i];
      if (s == n || (mark_[s] < 0 && name_[s] == name_[n])) {
        position = static_cast<int32_t>(i);
        break;
      }
    }
  }
  mark_[n] = position;
  mark_rank_[n] = rank;
  for (uint32_t c : children_[n]) MarkPositionRank(c, rank);
}

void Forest::MergeUniqueChildren(uint32_t n, const std::vector<uint32_t>& twins) {
  // A tagged node's name never equals an untagged one's.
  auto key = [&](uint32_t x) -> uint64_t { return mark_[x] < 0 ? name_[x] : (uint64_t{1} << 40) + x; };
  std::vector<const std::vector<uint32_t>*> lists = {&children_[n]};
  for (uint32_t t : twins) lists.push_back(&children_[t]);
  std::vector<uint32_t> unique;
  for (size_t i = 1; i < lists.size(); ++i) {
    std::unordered_set<uint64_t> elsewhere;
    for (size_t j = 0; j < lists.size(); ++j) {
      if (j == i) continue;
      for (uint32_t x : *lists[j]) elsewhere.insert(key(x));
    }
    // A dict of the list: first place of a key, its last node.
    std::vector<uint64_t> order;
    std::unordered_map<uint64_t, uint32_t> last;
    for (uint32_t x : *lists[i]) {
      if (last.emplace(key(x), x).second) {
        order.push_back(key(x));
      } else {
        last[key(x)] = x;
      }
    }
    for (uint64_t k : order) {
      if (!elsewhere.count(k)) unique.push_back(last[k]);
    }
  }
  for (uint32_t u : unique) {
    MarkPositionRank(u, Rank(u));
    children_[n].push_back(u);
    parent_[u] = static_cast<int32_t>(n);
  }
}

void Forest::SortNodes(uint16_t main, uint32_t start) {
  std::vector<uint32_t> stack = {start};
  while (!stack.empty()) {
    uint32_t node = stack.back();
    stack.pop_back();
    if (mark_[node] >= 0 && parent_[node] != kNoNode) {
      uint32_t up = static_cast<uint32_t>(parent_[node]);
      std::string_view name = Name(node);
      bool forward = Contains(name, ".forward.") || EndsWith(name, ".forward");
      std::vector<uint32_t> untagged, tagged;
      for (uint32_t s : children_[up]) (mark_[s] >= 0 ? tagged : untagged).push_back(s);
      std::stable_sort(tagged.begin(), tagged.end(), [&](uint32_t a, uint32_t b) {
        int ra = forward ? mark_rank_[a] : -mark_rank_[a], rb = forward ? mark_rank_[b] : -mark_rank_[b];
        return ra != rb ? ra < rb : mark_[a] < mark_[b];
      });
      std::vector<uint32_t> sorted = forward ? untagged : tagged;
      const std::vector<uint32_t>& tail = forward ? tagged : untagged;
      sorted.insert(sorted.end(), tail.begin(), tail.end());
      int32_t index = -1;
      auto number = [&](uint32_t s) {
        if (HasLayers(Name(s))) ++index;
        if (mark_[s] >= 0) pp_index_[s] = index;
      };
      if (forward) {
        for (uint32_t s : sorted) number(s);
      } else {
        for (auto it = sorted.rbegin(); it != sorted.rend(); ++it) number(*it);
      }
      for (uint32_t s : tagged) UpdateNodeId(main, s);
      children_[up] = std::move(sorted);
      if (up == root_[main]) root_reordered_[main] = 1;
    }
    for (uint32_t c : children_[node]) stack.push_back(c);
  }
}

void Forest::UpdateNodeId(uint16_t main, uint32_t start) {
  std::vector<std::pair<uint32_t, std::string>> stack = {{start, ""}};
  while (!stack.empty()) {
    auto [node, index] = std::move(stack.back());
    stack.pop_back();
    std::string name(Name(node));
    std::string renamed = name;
    if (op_[node] == NodeOp::kModule) {
      if (HasLayers(name) && mark_[node] >= 0) {
        if (pp_index_[node] != kNoPpIndex) index = std::to_string(pp_index_[node]);
        renamed = RenumberLayers(name, index);
      }
    } else if (mark_[node] >= 0) {
      renamed = ApiRankName(name, mark_rank_[node]);
    }
    mark_[node] = -1;
    Rename(node, renamed);
    node_map_[main][name_[node]] = node;
    for (uint32_t c : children_[node]) stack.emplace_back(c, index);
  }
}

}  // namespace graph_ascend::merge::internal
