#include "distributed/comm_linker.h"
#include "base/strings.h"

#include <cmath>
#include <map>
#include <string>
#include <unordered_map>

#include "base/py_format.h"

namespace graph_ascend::distributed {
namespace {

using graph::kNoNode;
using graph::Side;

enum class Kind { kP2P, kOneToMany, kManyToOne, kManyToMany };

struct Api {
  const char* name;
  const char* peer;
  const char* rank_param;  // item key after ".input."
  const char* type;
  Kind kind;
};

// §8.1; any other Distributed API is a many-to-many collective.
const Api kApis[] = {
    {"send", "recv", "dst", "send", Kind::kP2P},           {"isend", "irecv", "dst", "send", Kind::kP2P},
    {"recv", "send", "src", "receive", Kind::kP2P},        {"irecv", "isend", "src", "receive", Kind::kP2P},
    {"broadcast", "broadcast", "1", "send", Kind::kOneToMany}, {"scatter", "scatter", "src", "send", Kind::kOneToMany},
    {"gather", "gather", "dst", "receive", Kind::kManyToOne},  {"reduce", "reduce", "1", "receive", Kind::kManyToOne},
};

const Api* FindApi(const std::string& api) {
  for (const Api& a : kApis) {
    if (api == a.name) return &a;
  }
  return nullptr;
}

// Reads one rank's communication nodes out of its graph and dump.
class RankScanner {
 public:
  RankScanner(const Side& side, bool overflow) : side_(side), overflow_(overflow) {}

  std::vector<CommNode> Scan() const;

 private:
  std::string Index(uint32_t node) const;
  // The output.0 item's dtype, shape and statistics, for the P2P check.
  bool Output0(uint32_t node, std::vector<std::string>* out) const;
  const dump::DumpItem* Item(uint32_t node, const std::string& suffix) const;
  bool IntValue(const dump::DumpItem& item, int64_t* v) const;

  const Side& side_;
  bool overflow_;
};

const dump::DumpItem* RankScanner::Item(uint32_t node, const std::string& suffix) const {
  int32_t e = side_.graph->entry[node];
  if (e == kNoNode) return nullptr;
  int64_t key = side_.pool->Find(suffix);
  if (key < 0) return nullptr;
  const dump::DumpEntry& entry = side_.dump.entries[e];
  for (uint32_t k = 0; k < entry.input_count + entry.output_count; ++k) {
    const dump::DumpItem& item = side_.dump.items[entry.first_item + k];
    if (!(item.flags & dump::kItemFullKey) && item.key == static_cast<uint32_t>(key)) return &item;
  }
  return nullptr;
}

bool RankScanner::IntValue(const dump::DumpItem& item, int64_t* v) const {
  int64_t value_key = side_.pool->Find("value");
  for (uint32_t f = item.first_field; f < item.first_field + item.field_count; ++f) {
    const dump::Field& field = side_.dump.fields[f];
    if (static_cast<int64_t>(field.name) == value_key && field.value.kind == dump::ValueKind::kInteger) {
      *v = field.value.integer;
      return true;
    }
  }
  return false;
}

bool RankScanner::Output0(uint32_t node, std::vector<std::string>* out) const {
  const dump::DumpItem* item = Item(node, ".output.0");
  if (item == nullptr) return false;
  static const char* const kKeys[] = {"dtype", "shape", "Max", "Min", "Mean", "Norm"};
  for (const char* k : kKeys) {
    int64_t key = side_.pool->Find(k);
    std::string v = "null";
    for (uint32_t f = item->first_field; f < item->first_field + item->field_count; ++f) {
      const dump::Field& field = side_.dump.fields[f];
      if (static_cast<int64_t>(field.name) != key) continue;
      switch (field.value.kind) {
        case dump::ValueKind::kString:
        case dump::ValueKind::kJson: v = "s" + std::string(side_.pool->Get(field.value.string)); break;
        case dump::ValueKind::kInteger: v = "n" + PyRepr(static_cast<double>(field.value.integer)); break;
        case dump::ValueKind::kNumber: v = "n" + PyRepr(field.value.number); break;
        case dump::ValueKind::kBool: v = field.value.boolean ? "True" : "False"; break;
        default: break;
      }
    }
    out->push_back(v);
  }
  return true;
}

std::string RankScanner::Index(uint32_t node) const {
  const graph::Graph& g = *side_.graph;
  if (overflow_) {
    switch (g.overflow[node]) {
      case dump::OverflowLevel::kMedium: return "medium";
      case dump::OverflowLevel::kHigh: return "high";
      case dump::OverflowLevel::kCritical: return "critical";
      default: return "Nan";
    }
  }
  double p = g.precision[node];
  if (std::isnan(p)) return "Nan";
  if (!g.precision_float[node] && p == std::floor(p)) return std::to_string(static_cast<long long>(p));
  return PyRepr(p);
}

std::vector<CommNode> RankScanner::Scan() const {
  const graph::Graph& g = *side_.graph;
  std::vector<CommNode> nodes;
  std::map<std::string, int> count;
  int64_t group_ranks_key = side_.pool->Find("group_ranks");
  int64_t group_id_key = side_.pool->Find("group_id");
  for (uint32_t n = 0; n < g.size(); ++n) {
    std::string_view name = g.Name(n);
    if (name.substr(0, 11) != "Distributed") continue;
    size_t a = name.find('.');
    if (a == std::string_view::npos) continue;
    size_t b = name.find('.', a + 1);
    CommNode c;
    c.node = n;
    c.api = std::string(name.substr(a + 1, b == std::string_view::npos ? std::string_view::npos : b - a - 1));
    const Api* api = FindApi(c.api);
    if (api != nullptr) {
      const dump::DumpItem* item = Item(n, std::string(".input.") + api->rank_param);
      c.has_rank_param = item != nullptr && IntValue(*item, &c.rank_param);
    }
    if (const dump::DumpItem* group = Item(n, ".input.group")) {
      for (uint32_t f = group->first_field; f < group->first_field + group->field_count; ++f) {
        const dump::Field& field = side_.dump.fields[f];
        if (static_cast<int64_t>(field.name) == group_ranks_key && field.value.kind == dump::ValueKind::kJson) {
          std::string_view text = side_.pool->Get(field.value.string);
          for (size_t i = 0; i < text.size();) {
            if (text[i] >= '0' && text[i] <= '9') {
              int64_t v = 0;
              while (i < text.size() && text[i] >= '0' && text[i] <= '9') v = v * 10 + (text[i++] - '0');
              c.group_ranks.push_back(v);
            } else {
              ++i;
            }
          }
        }
        if (static_cast<int64_t>(field.name) == group_id_key && field.value.kind == dump::ValueKind::kString) {
          c.group_id = std::string(side_.pool->Get(field.value.string));
        }
      }
      c.has_group = !c.group_ranks.empty() && !c.group_id.empty();
    }
    if (c.api == "batch_isend_irecv") {
      int32_t e = g.entry[n];
      if (e == kNoNode) continue;
      const dump::DumpEntry& entry = side_.dump.entries[e];
      for (uint32_t k = 0; k < entry.p2p_count; ++k) {
        const dump::P2POp& op = side_.dump.p2p[entry.first_p2p + k];
        if (op.op == 0 || op.peer < 0) continue;
        std::string gid = std::string(side_.pool->Get(op.op)) + "_rank" + std::to_string(op.peer) + "_" +
                          (op.group_id ? std::string(side_.pool->Get(op.group_id)) : "None");
        c.uids.push_back(gid + "_" + std::to_string(++count[gid]));
      }
      if (c.uids.empty()) continue;
    } else {
      std::string gid;
      if (api != nullptr && api->kind == Kind::kP2P) {
        if (!c.has_rank_param) continue;
        gid = c.api + "rank" + std::to_string(c.rank_param);
      } else {
        if (!c.has_group) continue;
        gid = c.group_id + c.api;
      }
      c.uid = gid + "_" + std::to_string(++count[gid]);
    }
    c.name = std::string(name);
    c.index = Index(n);
    c.has_output0 = Output0(n, &c.output0);
    nodes.push_back(std::move(c));
  }
  return nodes;
}

// One rank's nodes by uid (a later node with the same uid wins), and the
// links being made.
struct RankState {
  const RankComm* comm;
  std::unordered_map<std::string, size_t> by_uid;
  RankLinks* links;

  const CommNode* ByUid(const std::string& uid) const {
    auto it = by_uid.find(uid);
    return it == by_uid.end() ? nullptr : &comm->nodes[it->second];
  }
  bool Annotated(uint32_t node) const { return links->nodes.count(node) != 0; }
  void Add(uint32_t node, const std::string& type, int rank, const CommNode& peer) {
    links->nodes[node].push_back(CommLink{type, rank, peer.name, peer.index});
  }
};

}  // namespace

RankComm ScanRank(int rank, const graph::Side& side, bool overflow_check) {
  return RankComm{rank, RankScanner(side, overflow_check).Scan()};
}

std::vector<RankLinks> LinkComm(const std::vector<RankComm>& ranks, uint32_t* annotated_out, P2PRule p2p) {
  std::vector<RankLinks> links(ranks.size());
  std::vector<RankState> states(ranks.size());
  std::map<int, RankState*> by_rank;
  for (size_t i = 0; i < ranks.size(); ++i) {
    states[i].comm = &ranks[i];
    states[i].links = &links[i];
    for (size_t k = 0; k < ranks[i].nodes.size(); ++k) {
      const CommNode& c = ranks[i].nodes[k];
      if (!c.uids.empty()) {
        for (const std::string& uid : c.uids) states[i].by_uid[uid] = k;
      } else {
        states[i].by_uid[c.uid] = k;
      }
    }
    by_rank[ranks[i].rank] = &states[i];
  }
  uint32_t annotated = 0;
  for (RankState& t : states) {
    const int my_rank = t.comm->rank;
    for (const CommNode& c : t.comm->nodes) {
      if (t.Annotated(c.node)) continue;
      const Api* api = FindApi(c.api);
      if (!c.uids.empty()) {
        // batch_isend_irecv: one entry per operation.
        for (const std::string& uid : c.uids) {
          size_t u1 = uid.find('_');
          std::string op = uid.substr(0, u1);
          const Api* op_api = FindApi(op);
          if (op_api == nullptr) continue;
          size_t r0 = u1 + 5, r1 = uid.find('_', r0);
          int target_rank = std::atoi(uid.substr(r0, r1 - r0).c_str());
          auto it = by_rank.find(target_rank);
          if (it == by_rank.end()) continue;
          std::string target_uid = ReplaceAll(
              ReplaceAll(uid, "rank" + std::to_string(target_rank), "rank" + std::to_string(my_rank)), op,
              op_api->peer);
          const CommNode* target = it->second->ByUid(target_uid);
          if (target == nullptr) continue;
          t.Add(c.node, op_api->type, target_rank, *target);
        }
        if (t.Annotated(c.node)) {
          ++annotated;
          if (t.links->nodes[c.node].size() > 1) t.links->lists.insert(c.node);
        }
        continue;
      }
      if (api != nullptr && api->kind == Kind::kP2P) {
        int target_rank = static_cast<int>(c.rank_param);
        auto it = by_rank.find(target_rank);
        if (it == by_rank.end()) continue;
        std::string target_uid = ReplaceAll(
            ReplaceAll(c.uid, "rank" + std::to_string(target_rank), "rank" + std::to_string(my_rank)), c.api,
            api->peer);
        const CommNode* target = it->second->ByUid(target_uid);
        if (target == nullptr || !target->has_rank_param || target->rank_param != my_rank) continue;
        if (p2p == P2PRule::kOutputsAgree &&
            (!c.has_output0 || !target->has_output0 || c.output0 != target->output0)) {
          continue;
        }
        const Api* peer_api = FindApi(api->peer);
        t.Add(c.node, api->type, target_rank, *target);
        it->second->Add(target->node, peer_api->type, my_rank, c);
        annotated += 2;
        continue;
      }
      // Collectives: only the root rank of a one-to-many / many-to-one API initiates.
      if (api != nullptr && (!c.has_rank_param || c.rank_param != my_rank)) continue;
      std::string type = api != nullptr ? api->type : "send_receive";
      bool found = false;
      for (int64_t r : c.group_ranks) {
        if (r == my_rank) continue;
        auto it = by_rank.find(static_cast<int>(r));
        if (it == by_rank.end()) continue;
        const CommNode* target = it->second->ByUid(c.uid);
        if (target == nullptr || !target->has_group || target->group_id != c.group_id) continue;
        t.Add(c.node, type, static_cast<int>(r), *target);
        found = true;
        if (api != nullptr) {
          it->second->Add(target->node, type == "send" ? "receive" : "send", my_rank, c);
          ++annotated;
        }
      }
      if (found) ++annotated;
    }
  }
  if (annotated_out != nullptr) *annotated_out = annotated;
  return links;
}

void Annotate(const RankLinks& links, graph::Side* side) {
  for (const auto& [node, list] : links.nodes) {
    for (const CommLink& l : list) {
      if (side->distributed_first.size() < side->graph->size()) {
        side->distributed_first.resize(side->graph->size(), kNoNode);
      }
      Side::DistributedLink link{l.type, l.rank, l.peer_node, l.peer_index, kNoNode};
      int32_t id = static_cast<int32_t>(side->distributed.size());
      side->distributed.push_back(link);
      int32_t* tail = &side->distributed_first[node];
      while (*tail != kNoNode) tail = &side->distributed[*tail].next;
      *tail = id;
    }
  }
  for (uint32_t node : links.lists) side->distributed_is_list.insert(node);
}

uint32_t LinkRanks(const std::vector<RankGraph>& ranks, bool overflow_check, P2PRule p2p) {
  std::vector<RankComm> comm;
  for (const RankGraph& r : ranks) comm.push_back(ScanRank(r.rank, *r.side, overflow_check));
  uint32_t annotated = 0;
  std::vector<RankLinks> links = LinkComm(comm, &annotated, p2p);
  for (size_t i = 0; i < ranks.size(); ++i) Annotate(links[i], ranks[i].side);
  return annotated;
}

}  // namespace graph_ascend::distributed
