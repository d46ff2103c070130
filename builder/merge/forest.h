// The working forest of the parallel merge (merge/graph_merger.h), shared by
// the files that implement it: forest.cc (nodes, items, statistics, Emit),
// forest_pp.cc (API collections §9.4, pipeline §9.5), forest_vpp.cc (§9.7),
// forest_tp.cc (§9.6) and graph_merger.cc (the strategies). Internal to merge/.
#pragma once

#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "merge/graph_merger.h"

namespace graph_ascend::merge::internal {

using dump::DumpData;
using dump::DumpEntry;
using dump::DumpItem;
using dump::Value;
using dump::ValueKind;
using graph::Graph;
using graph::kNoNode;
using graph::NodeOp;
using graph::Side;

constexpr int32_t kNoPpIndex = INT32_MIN;
constexpr int kMaxDepth = 1000;  // msprobe's recursion limit of the PP merge

bool Contains(std::string_view s, std::string_view p);

// One match of (layers\.|layer\.)(\d+)(\.) in a name.
struct LayersMatch {
  size_t start = 0;   // of "layers." / "layer."
  size_t digits = 0;  // first digit
  size_t end = 0;     // one past the closing dot
};

bool FindLayers(std::string_view s, size_t from, LayersMatch* m);

bool HasLayers(std::string_view s);

// msprobe's \.forward\.\d+$.
bool EndsWithForwardCall(std::string_view s);

// _replace_vpp_id: the second segment, when it is a number, set to `chunk`.
std::string ReplaceChunk(std::string_view name, std::string_view chunk);

// Every "_rank<digits>." in `name` replaced by "_rank<rank>." (§9.6 TP rank mapping).
std::string ReplaceRankTags(std::string_view name, int rank);

// The rank of the first "_rank<digits>." in `name`, or -1.
int FirstRankTag(std::string_view name);

// The integers of a compact JSON list ("[0, 1]"); empty if it is not one.
std::vector<int> ParseIntList(std::string_view s);

const Value* FieldOf(const DumpData& d, const DumpItem& item, uint32_t name);

// An item of some rank's dump data.
struct ItemRef {
  uint16_t slot;
  uint32_t item;
};

// The items of a node that msprobe would merge, by key relative to the node
// ("input.0"); items[0] is the main node's.
struct ParamGroup {
  std::string key;
  std::vector<ItemRef> items;
};

using ParamGroups = std::vector<ParamGroup>;

void EraseKey(ParamGroups* groups, std::string_view key);

// The merge's working forest: every node of every rank's graph, with
// msprobe's node semantics (a node has one parent but may be listed by
// several child lists, as Python's lists keep the nodes they lost; a node's
// name changes as it is renamed; each rank graph keeps its own name map).
class Forest {
 public:
  // `pp_data` and `tp_data`: the groups the ranks' data names (§9.3).
  Forest(std::vector<RankSide> ranks, const ParallelParams& params, const MergeLog& log, RankGroups pp_data,
         RankGroups tp_data);

  Result<std::vector<MergedSide>> Merge();

 private:
  // Nodes.
  std::string_view Name(uint32_t n) const { return pool_->Get(name_[n]); }
  int Rank(uint32_t n) const { return ranks_[slot_[n]].rank; }
  uint32_t AddNode(uint32_t name, NodeOp op, uint16_t slot);
  int32_t Lookup(uint16_t graph, uint32_t name) const;
  int32_t Lookup(uint16_t graph, std::string_view name) const;
  std::vector<uint32_t> Ancestors(uint32_t n) const;  // names, root first
  void Rename(uint32_t n, const std::string& name);
  void AddInfo(uint32_t n, std::string line) { infos_[n].push_back(std::move(line)); }
  bool HasInfo(uint32_t n) const { return !infos_[n].empty(); }

  // Data.
  DumpData& Data(uint32_t n) { return data_[data_slot_[n]]; }
  const DumpEntry* Entry(uint32_t n) const {
    return entry_[n] == kNoNode ? nullptr : &data_[data_slot_[n]].entries[entry_[n]];
  }
  // The items of a node: inputs (is_output false) or outputs.
  std::vector<ItemRef> Items(uint32_t n, bool is_output) const;
  std::string FullKey(uint32_t n, const ItemRef& ref) const;
  const DumpItem& Item(const ItemRef& r) const { return data_[r.slot].items[r.item]; }
  Value FieldValue(const ItemRef& r, uint32_t name) const;
  void SetField(const ItemRef& r, uint32_t name, const Value& v);
  bool NumericDtype(const ItemRef& r) const;
  // Replaces the inputs (or outputs) of `n` by copies of those of `from`,
  // with `from`'s name in full keys replaced by `n`'s when `rename_keys`.
  void ReplaceItems(uint32_t n, uint32_t from, bool outputs, bool rename_keys);
  // compare_param_same: Max/Min equal, Mean/Norm equal (within 1e-6 with `uncertainty`).
  bool SameParam(const ItemRef& a, const ItemRef& b, bool uncertainty) const;
  // compare_node_param_data.
  void CompareParams(uint32_t n, const std::vector<uint32_t>& others, bool compare_data, ParamGroups* in,
                     ParamGroups* out) const;
  // _merge_params: merges each group into its first item; returns the formulas.
  std::vector<std::string> MergeParams(const ParamGroups& groups);
  std::string MergedFromRanks(uint32_t n, const std::vector<uint32_t>& twins) const;

  // §9.4.
  void MergeApiCollections(const std::vector<uint16_t>& results);
  void SortMergedApiCollections(uint16_t graph);
  // §9.5.
  Result<RankGroups> PpGroups();
  Status MergePp(const std::vector<uint16_t>& group);
  Status MergeNodes(uint16_t main, uint32_t n, const std::vector<uint16_t>& others, int depth);
  void MarkPositionRank(uint32_t n, int rank);
  void MergeUniqueChildren(uint32_t n, const std::vector<uint32_t>& twins);
  void SortNodes(uint16_t main, uint32_t start);
  void UpdateNodeId(uint16_t main, uint32_t start);
  // §9.7.
  void MergeVppData(uint16_t main);
  void MergeVppChunks(uint16_t main);
  void SortLayers(uint16_t main, const std::vector<uint32_t>& list, bool forward);
  // §9.6.
  Result<RankGroups> TpGroups();
  void MergeTp(const std::vector<uint16_t>& results, const std::map<int, std::vector<int>>* mapping);
  std::vector<uint32_t> TpTwins(uint32_t n, const std::vector<uint16_t>& others,
                                const std::map<int, std::vector<int>>* mapping) const;
  void MergeMatmulReduce(uint32_t n, const std::vector<uint16_t>& others,
                         const std::map<int, std::vector<int>>* mapping);
  void MergeColumnRowParallel(uint32_t n, const std::vector<uint16_t>& others,
                              const std::map<int, std::vector<int>>* mapping);
  std::vector<uint32_t> PreOrder(uint16_t graph) const;

  // Every rank a group names must have a rank folder.
  Status CheckGroups(const RankGroups& groups, const char* what) const;
  std::unique_ptr<Side> Emit(uint16_t main);
  void Log(const std::string& s) const {
    if (log_) log_(params_.side + ": " + s);
  }

  std::vector<RankSide> ranks_;  // the slots
  ParallelParams params_;
  MergeLog log_;
  RankGroups pp_data_, tp_data_;
  StringPool* pool_;
  std::vector<DumpData> data_;  // per slot, taken from the sides

  // Per node.
  std::vector<uint32_t> name_;
  std::vector<NodeOp> op_;
  std::vector<int32_t> parent_;
  std::vector<std::vector<uint32_t>> children_;
  std::vector<uint16_t> slot_;       // the rank graph the node came from
  std::vector<int32_t> src_;         // its index there, kNoNode for nodes the merge made
  std::vector<uint16_t> data_slot_;  // where its entry is
  std::vector<int32_t> entry_;
  std::vector<int32_t> mark_;  // PP tag: position among its siblings, -1 untagged
  std::vector<int32_t> mark_rank_;
  std::vector<uint8_t> pp_merged_;
  std::vector<int32_t> pp_index_;
  std::vector<std::vector<std::string>> infos_;

  // Per rank graph.
  std::vector<uint32_t> root_;
  std::vector<std::unordered_map<uint32_t, uint32_t>> node_map_;
  std::vector<int> all_ranks_next_;  // Apis_Between_Modules_All_Ranks.<k> counter
  std::vector<uint8_t> root_reordered_;

  uint32_t k_dtype_, k_max_, k_min_, k_mean_, k_norm_, k_value_, k_group_ranks_, k_full_op_name_;
  std::unordered_set<uint32_t> numeric_dtypes_;
};

}  // namespace graph_ascend::merge::internal
