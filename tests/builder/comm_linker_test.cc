// Cross-rank communication links (reference §8): P2P send/recv pairs whose
// peers point back at each other and carry the same output, collectives
// with the same node of every other rank of their group, batch_isend_irecv
// per operation; each link shows the peer's index as msprobe prints it.
// The links expected below are those msprobe 8.1.2 writes for the same
// ranks built in batch mode (PeerIndexAsMsprobePrintsIt sets the indices by
// hand: that is only the str() rule).
#include "distributed/comm_linker.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "test_util.h"

namespace graph_ascend::distributed {
namespace {

using graph_ascend::testing::Batch;
using graph_ascend::testing::DumpJson;
using graph_ascend::testing::P2POp;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::Tensor;
using graph_ascend::testing::WriteDumpDir;

const std::string kData = Tensor("[4, 16]", "1.5", "-2.0", "0.25", "6.0");

std::string Int(int v) { return R"({"type": "int", "value": )" + std::to_string(v) + "}"; }

std::string Group(const std::string& ranks, const std::string& id) {
  return R"({"type": "torch.ProcessGroup", "group_ranks": )" + ranks + R"(, "group_id": ")" + id + "\"}";
}

// send / isend (dst) and recv / irecv (src), keyword arguments as torch's
// API is usually called; the output is the tensor sent or received.
std::string P2P(const std::string& peer_key, int peer, const std::string& output = kData) {
  return R"({"input_args": [], "input_kwargs": {"tensor": )" + kData + ", \"" + peer_key + "\": " + Int(peer) +
         R"(}, "output": [)" + output + ", " + Int(peer) + "]}";
}

// A collective: `args` positional, then the group keyword.
std::string Collective(const std::string& args, const std::string& group) {
  return R"({"input_args": [)" + args + R"(], "input_kwargs": {"group": )" + group + R"(}, "output": [)" + kData + "]}";
}

class CommLinkerTest : public ::testing::Test {
 protected:
  // Adds rank `rank` with dump members `members` ({name: entry}); every name
  // is a top-level node.
  void AddRank(int rank, const std::map<std::string, std::string>& members) {
    std::string data, construct = "{";
    for (const auto& [name, entry] : members) {
      data += (data.empty() ? "\"" : ", \"") + name + "\": " + entry;
      construct += (construct.size() > 1 ? ", \"" : "\"") + name + "\": null";
    }
    const std::string dir = dir_ / ("rank" + std::to_string(rank));
    WriteDumpDir(dir, DumpJson(data), construct + "}");
    auto side = graph::BuildSide(dir, &pool_, graph::BuildOptions{});
    ASSERT_TRUE(side.ok()) << side.error().ToString();
    ranks_.push_back({rank, std::move(*side)});
  }

  uint32_t Link(bool overflow_check = false, P2PRule p2p = P2PRule::kOutputsAgree) {
    std::vector<RankGraph> ranks;
    for (auto& [rank, side] : ranks_) ranks.push_back({rank, side.get()});
    return LinkRanks(ranks, overflow_check, p2p);
  }

  graph::Side& RankSide(int rank) {
    for (auto& [r, side] : ranks_) {
      if (r == rank) return *side;
    }
    ADD_FAILURE() << "no rank " << rank;
    return *ranks_[0].second;
  }
  uint32_t Node(int rank, const std::string& name) {
    int32_t n = RankSide(rank).graph->Find(std::string_view(name));
    EXPECT_NE(n, graph::kNoNode) << name;
    return n == graph::kNoNode ? 0 : static_cast<uint32_t>(n);
  }

  // The links of a node, each "type rank index peer_node".
  std::vector<std::string> Links(int rank, const std::string& name) {
    graph::Side& side = RankSide(rank);
    uint32_t n = Node(rank, name);
    std::vector<std::string> out;
    if (n >= side.distributed_first.size()) return out;
    for (int32_t i = side.distributed_first[n]; i != graph::kNoNode; i = side.distributed[i].next) {
      const graph::Side::DistributedLink& l = side.distributed[i];
      out.push_back(l.type + " " + std::to_string(l.rank) + " " + l.peer_index + " " + l.peer_node);
    }
    return out;
  }
  bool IsList(int rank, const std::string& name) {
    return RankSide(rank).distributed_is_list.count(Node(rank, name)) != 0;
  }

  TempDir dir_;
  StringPool pool_;
  std::vector<std::pair<int, std::unique_ptr<graph::Side>>> ranks_;
};

using Strings = std::vector<std::string>;
const std::string kSend = "Distributed.send.0.forward";
const std::string kRecv = "Distributed.recv.0.forward";

TEST_F(CommLinkerTest, SendAndRecvAreLinkedBothWays) {
  AddRank(0, {{kSend, P2P("dst", 1)}});
  AddRank(1, {{kRecv, P2P("src", 0)}});
  EXPECT_EQ(Link(), 2u);
  EXPECT_EQ(Links(0, kSend), Strings{"send 1 Nan " + kRecv}) << "no precision index in a build: Nan";
  EXPECT_EQ(Links(1, kRecv), Strings{"receive 0 Nan " + kSend});
  EXPECT_FALSE(IsList(0, kSend));
}

TEST_F(CommLinkerTest, IsendAndIrecv) {
  AddRank(0, {{"Distributed.irecv.0.forward", P2P("src", 1)}});
  AddRank(1, {{"Distributed.isend.0.forward", P2P("dst", 0)}});
  EXPECT_EQ(Link(), 2u);
  EXPECT_EQ(Links(1, "Distributed.isend.0.forward"), Strings{"send 0 Nan Distributed.irecv.0.forward"});
  EXPECT_EQ(Links(0, "Distributed.irecv.0.forward"), Strings{"receive 1 Nan Distributed.isend.0.forward"});
}

// The n-th send to a rank pairs with the n-th recv from it there.
TEST_F(CommLinkerTest, RepeatedSendsPairInOrder) {
  const std::string second = Tensor("[4, 16]", "9.0", "-2.0", "0.25", "6.0");
  AddRank(0, {{kSend, P2P("dst", 1)}, {"Distributed.send.1.forward", P2P("dst", 1, second)}});
  AddRank(1, {{kRecv, P2P("src", 0)}, {"Distributed.recv.1.forward", P2P("src", 0, second)}});
  EXPECT_EQ(Link(), 4u);
  EXPECT_EQ(Links(0, kSend), Strings{"send 1 Nan " + kRecv});
  EXPECT_EQ(Links(0, "Distributed.send.1.forward"), Strings{"send 1 Nan Distributed.recv.1.forward"});
}

// What was sent must be what was received: dtype, shape and statistics of
// output.0.
TEST_F(CommLinkerTest, P2POutputsMustAgree) {
  const Strings others = {
      Tensor("[4, 16]", "1.75", "-2.0", "0.25", "6.0"), Tensor("[4, 8]", "1.5", "-2.0", "0.25", "6.0"),
      R"({"type": "torch.Tensor", "dtype": "torch.float16", "shape": [4, 16], "Max": 1.5, "Min": -2.0,
                              "Mean": 0.25, "Norm": 6.0})"};
  for (const std::string& other : others) {
    ranks_.clear();
    AddRank(0, {{kSend, P2P("dst", 1)}});
    AddRank(1, {{kRecv, P2P("src", 0, other)}});
    EXPECT_EQ(Link(), 0u) << other;
    EXPECT_EQ(Links(0, kSend), Strings{});
    EXPECT_EQ(Links(1, kRecv), Strings{});
  }
}

// msprobe 26.2's rule (graph_visualize, COMPATIBILITY C26-p2p): peers that
// name each other are linked whatever their outputs hold, or without any
// (an isend's output is a Work handle, which msprobe does not dump).
TEST_F(CommLinkerTest, PeersOnlyRuleLinksWhateverTheOutputs) {
  const std::string other = Tensor("[4, 16]", "1.75", "-2.0", "0.25", "6.0");
  AddRank(0, {{kSend, P2P("dst", 1)}});
  AddRank(1, {{kRecv, P2P("src", 0, other)}});
  EXPECT_EQ(Link(false, P2PRule::kPeersOnly), 2u);
  EXPECT_EQ(Links(0, kSend), Strings{"send 1 Nan " + kRecv});
  EXPECT_EQ(Links(1, kRecv), Strings{"receive 0 Nan " + kSend});
  // As msprobe dumps them (samples/p2p_micro): isend's output.0 (a Work
  // handle) is null, irecv's is the tensor received.
  const std::string isend_entry = R"({"input_args": [)" + kData + R"(], "input_kwargs": {"dst": )" + Int(1) +
                                  R"(}, "output": [null, )" + Int(1) + "]}";
  const std::string irecv_entry =
      R"({"input_args": [null], "input_kwargs": {"src": )" + Int(0) + R"(}, "output": [)" + kData + ", " + Int(0) + "]}";
  const std::string isend = "Distributed.isend.0.forward", irecv = "Distributed.irecv.0.forward";
  ranks_.clear();
  AddRank(0, {{isend, isend_entry}});
  AddRank(1, {{irecv, irecv_entry}});
  EXPECT_EQ(Link(), 0u) << "8.1's rule: a null output.0 against a tensor";
  ranks_.clear();
  AddRank(0, {{isend, isend_entry}});
  AddRank(1, {{irecv, irecv_entry}});
  EXPECT_EQ(Link(false, P2PRule::kPeersOnly), 2u);
  EXPECT_EQ(Links(0, isend), Strings{"send 1 Nan " + irecv});
  EXPECT_EQ(Links(1, irecv), Strings{"receive 0 Nan " + isend});
  // Peers must still name each other.
  ranks_.clear();
  AddRank(0, {{kSend, P2P("dst", 1)}});
  AddRank(1, {{kRecv, P2P("src", 2)}});
  EXPECT_EQ(Link(false, P2PRule::kPeersOnly), 0u);
}

// A recv from another rank is not this send's peer; a rank outside the run
// has no node; a positional dst is not read (only `.input.dst`).
TEST_F(CommLinkerTest, PeersMustPointAtEachOther) {
  AddRank(0, {{kSend, P2P("dst", 1)}});
  AddRank(1, {{kRecv, P2P("src", 2)}});
  AddRank(2, {{kSend, P2P("dst", 1)}, {"Distributed.send.1.forward", P2P("dst", 5)}});
  EXPECT_EQ(Link(), 2u);
  EXPECT_EQ(Links(0, kSend), Strings{});
  EXPECT_EQ(Links(2, kSend), Strings{"send 1 Nan " + kRecv});
  EXPECT_EQ(Links(1, kRecv), Strings{"receive 2 Nan " + kSend});
  EXPECT_EQ(Links(2, "Distributed.send.1.forward"), Strings{});

  ranks_.clear();
  AddRank(0, {{kSend, R"({"input_args": [)" + kData + ", " + Int(1) + R"(], "output": [)" + kData + "]}"}});
  AddRank(1, {{kRecv, P2P("src", 0)}});
  EXPECT_EQ(Link(), 0u);
}

// all_reduce and other many-to-many collectives: each rank's node links to
// the same node of every other rank of its group, one dict per node.
TEST_F(CommLinkerTest, AllReduceAnnotatesEveryRank) {
  const std::string ar = "Distributed.all_reduce.0.forward";
  for (int r = 0; r < 3; ++r) AddRank(r, {{ar, Collective(kData, Group("[0, 1, 2]", "77849d8c"))}});
  EXPECT_EQ(Link(), 3u);
  EXPECT_EQ(Links(0, ar), (Strings{"send_receive 1 Nan " + ar, "send_receive 2 Nan " + ar}));
  EXPECT_EQ(Links(1, ar), (Strings{"send_receive 0 Nan " + ar, "send_receive 2 Nan " + ar}));
  EXPECT_EQ(Links(2, ar), (Strings{"send_receive 0 Nan " + ar, "send_receive 1 Nan " + ar}));
  EXPECT_FALSE(IsList(0, ar)) << "links of one type merge into one nodes_info";
}

TEST_F(CommLinkerTest, CollectivesPairByGroupAndCallCount) {
  const std::string ar0 = "Distributed.all_reduce.0.forward", ar1 = "Distributed.all_reduce.1.forward";
  const std::string ag = "Distributed.all_gather.0.forward";
  // Rank 1 calls its first all_reduce in another group: its second one in
  // group g is rank 0's first in g.
  AddRank(0, {{ar0, Collective(kData, Group("[0, 1]", "g"))}, {ag, Collective(kData, Group("[0, 1]", "g"))}});
  AddRank(1, {{ar0, Collective(kData, Group("[1, 2]", "h"))},
              {ar1, Collective(kData, Group("[0, 1]", "g"))},
              {ag, Collective(kData, Group("[0, 1]", "g"))}});
  EXPECT_EQ(Link(), 4u);
  EXPECT_EQ(Links(0, ar0), Strings{"send_receive 1 Nan " + ar1});
  EXPECT_EQ(Links(1, ar1), Strings{"send_receive 0 Nan " + ar0});
  EXPECT_EQ(Links(1, ar0), Strings{}) << "rank 2 is not in the run";
  EXPECT_EQ(Links(0, ag), Strings{"send_receive 1 Nan " + ag});
}

// Nodes without group info (group_ranks and group_id) are skipped.
TEST_F(CommLinkerTest, CollectivesWithoutGroupInfoAreSkipped) {
  const std::string ar = "Distributed.all_reduce.0.forward";
  const std::string no_group = R"({"input_args": [)" + kData + R"(], "input_kwargs": {}, "output": [)" + kData + "]}";
  const std::string no_id =
      Collective(kData, R"({"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": ""})");
  const std::string no_ranks = Collective(kData, Group("[]", "g"));
  for (const std::string& entry : {no_group, no_id, no_ranks}) {
    ranks_.clear();
    AddRank(0, {{ar, entry}});
    AddRank(1, {{ar, Collective(kData, Group("[0, 1]", "g"))}});
    EXPECT_EQ(Link(), 0u) << entry;
    EXPECT_EQ(Links(0, ar), Strings{});
    EXPECT_EQ(Links(1, ar), Strings{}) << "its peer has no uid to be found by";
  }
}

// One-to-many (broadcast: root = the 2nd positional argument, scatter: src)
// and many-to-one (gather: dst, reduce: 2nd positional): the root links to
// every other rank; the others are annotated by the root with the
// opposite type.
TEST_F(CommLinkerTest, RootedCollectives) {
  const std::string bc = "Distributed.broadcast.0.forward";
  const std::string group = Group("[0, 1, 2]", "g");
  for (int r = 0; r < 3; ++r) AddRank(r, {{bc, Collective(kData + ", " + Int(1), group)}});
  EXPECT_EQ(Link(), 3u);
  EXPECT_EQ(Links(1, bc), (Strings{"send 0 Nan " + bc, "send 2 Nan " + bc})) << "rank 1 is the source";
  EXPECT_EQ(Links(0, bc), Strings{"receive 1 Nan " + bc});
  EXPECT_EQ(Links(2, bc), Strings{"receive 1 Nan " + bc});

  ranks_.clear();
  const std::string gather = "Distributed.gather.0.forward";
  const std::string entry = R"({"input_args": [)" + kData + R"(], "input_kwargs": {"dst": )" + Int(0) +
                            R"(, "group": )" + Group("[0, 1]", "g") + R"(}, "output": [)" + kData + "]}";
  AddRank(0, {{gather, entry}});
  AddRank(1, {{gather, entry}});
  EXPECT_EQ(Link(), 2u);
  EXPECT_EQ(Links(0, gather), Strings{"receive 1 Nan " + gather});
  EXPECT_EQ(Links(1, gather), Strings{"send 0 Nan " + gather});

  ranks_.clear();
  const std::string reduce = "Distributed.reduce.0.forward";
  AddRank(0, {{reduce, Collective(kData + ", " + Int(1), Group("[0, 1]", "g"))}});
  AddRank(1, {{reduce, Collective(kData + ", " + Int(1), Group("[0, 1]", "g"))}});
  EXPECT_EQ(Link(), 2u);
  EXPECT_EQ(Links(1, reduce), Strings{"receive 0 Nan " + reduce});
  EXPECT_EQ(Links(0, reduce), Strings{"send 1 Nan " + reduce});
}

// batch_isend_irecv: one link per operation; a list when there are several.
TEST_F(CommLinkerTest, BatchIsendIrecv) {
  const std::string b = "Distributed.batch_isend_irecv.0.forward";
  const std::string b1 = "Distributed.batch_isend_irecv.1.forward";
  AddRank(0, {{b, Batch(P2POp("isend", 1, "g") + ", " + P2POp("irecv", 1, "g"))}, {b1, Batch(P2POp("isend", 1, "g"))}});
  AddRank(1, {{b, Batch(P2POp("irecv", 0, "g") + ", " + P2POp("isend", 0, "g"))}, {b1, Batch(P2POp("irecv", 0, "g"))}});
  EXPECT_EQ(Link(), 4u);
  EXPECT_EQ(Links(0, b), (Strings{"send 1 Nan " + b, "receive 1 Nan " + b}));
  EXPECT_TRUE(IsList(0, b));
  EXPECT_EQ(Links(1, b), (Strings{"receive 0 Nan " + b, "send 0 Nan " + b}));
  EXPECT_EQ(Links(0, b1), Strings{"send 1 Nan " + b1}) << "the second isend to rank 1 pairs with the second irecv";
  EXPECT_FALSE(IsList(0, b1));
  EXPECT_EQ(Links(1, b1), Strings{"receive 0 Nan " + b1});
}

// The index shown is the peer's, as Python's str() prints it: the
// precision index in a compare ("Nan" when it has none), the overflow level
// with -oc ("Nan" when none).
TEST_F(CommLinkerTest, PeerIndexAsMsprobePrintsIt) {
  const std::string ar = "Distributed.all_reduce.0.forward";
  auto setup = [&] {
    ranks_.clear();
    AddRank(0, {{kSend, P2P("dst", 1)}, {ar, Collective(kData, Group("[0, 1]", "g"))}});
    AddRank(1, {{kRecv, P2P("src", 0)}, {ar, Collective(kData, Group("[0, 1]", "g"))}});
  };
  auto set_index = [&](int rank, const std::string& name, double p, bool as_float) {
    graph::Graph& g = *RankSide(rank).graph;
    g.precision[Node(rank, name)] = p;
    g.precision_float[Node(rank, name)] = as_float;
  };
  setup();
  set_index(1, kRecv, 0, false);
  set_index(1, ar, 0.09090909090909091, true);
  set_index(0, ar, 1, true);
  Link();
  EXPECT_EQ(Links(0, kSend), Strings{"send 1 0 " + kRecv});
  EXPECT_EQ(Links(0, ar), Strings{"send_receive 1 0.09090909090909091 " + ar});
  EXPECT_EQ(Links(1, ar), Strings{"send_receive 0 1.0 " + ar});
  EXPECT_EQ(Links(1, kRecv), Strings{"receive 0 Nan " + kSend}) << "the send has no index";

  setup();
  set_index(1, kRecv, 0.5, true);
  RankSide(1).graph->overflow[Node(1, kRecv)] = dump::OverflowLevel::kHigh;
  RankSide(0).graph->overflow[Node(0, ar)] = dump::OverflowLevel::kCritical;
  RankSide(1).graph->overflow[Node(1, ar)] = dump::OverflowLevel::kMedium;
  Link(/*overflow_check=*/true);
  EXPECT_EQ(Links(0, kSend), Strings{"send 1 high " + kRecv}) << "the overflow level, not the precision index";
  EXPECT_EQ(Links(1, kRecv), Strings{"receive 0 Nan " + kSend});
  EXPECT_EQ(Links(0, ar), Strings{"send_receive 1 medium " + ar});
  EXPECT_EQ(Links(1, ar), Strings{"send_receive 0 critical " + ar});
}

// Only names starting with "Distributed" are communication nodes.
TEST_F(CommLinkerTest, OtherApisAreNotLinked) {
  AddRank(0, {{"Torch.send.0.forward", P2P("dst", 1)},
              {"Tensor.all_reduce.0.forward", Collective(kData, Group("[0, 1]", "g"))}});
  AddRank(1, {{"Torch.recv.0.forward", P2P("src", 0)},
              {"Tensor.all_reduce.0.forward", Collective(kData, Group("[0, 1]", "g"))}});
  EXPECT_EQ(Link(), 0u);
}

}  // namespace
}  // namespace graph_ascend::distributed
