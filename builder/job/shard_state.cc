#include "job/shard_state.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/temp_files.h"
#include "vis_writer/link_rewrite.h"

namespace graph_ascend::job {
namespace {

constexpr char kStateMagic[8] = {'\x89', 'G', 'A', 'S', 'H', 'A', 'R', 'D'};

std::string HostPid() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return std::string(host) + "-" + std::to_string(getpid());
}

std::string Frame(const google::protobuf::MessageLite& msg) {
  std::string body = msg.SerializeAsString();
  std::string out(kStateMagic, sizeof(kStateMagic));
  uint64_t n = body.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return out + body;
}

}  // namespace

Status ReadShardState(const std::string& path, google::protobuf::MessageLite* msg) {
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) return Error{path, "", std::string("cannot open: ") + strerror(errno)};
  std::string data;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) data.append(buf, n);
  bool failed = ferror(f);
  fclose(f);
  if (failed) return Error{path, "", "read failed"};
  if (data.size() < 16 || memcmp(data.data(), kStateMagic, sizeof(kStateMagic)) != 0) {
    return Error{path, "byte 0", "not a graph-ascend shard state file (no \\x89GASHARD header)"};
  }
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= static_cast<uint64_t>(static_cast<unsigned char>(data[8 + i])) << (8 * i);
  if (length != data.size() - 16) {
    return Error{path, "byte 8", "damaged: the length says " + std::to_string(length) + " bytes, the file has " +
                                     std::to_string(data.size() - 16)};
  }
  if (!msg->ParseFromArray(data.data() + 16, static_cast<int>(length))) {
    return Error{path, "byte 16", "damaged: the message does not parse"};
  }
  return Status::Ok();
}

Status WriteShardState(const std::string& path, const google::protobuf::MessageLite& msg, bool exclusive) {
  std::string tmp = path + ".tmp-" + HostPid();
  TemporaryFile temp(tmp);
  std::string data = Frame(msg);
  FILE* f = fopen(tmp.c_str(), "wb");
  if (f == nullptr) return Error{tmp, "", std::string("cannot create: ") + strerror(errno)};
  bool ok = fwrite(data.data(), 1, data.size(), f) == data.size() && fflush(f) == 0 && fsync(fileno(f)) == 0;
  ok = fclose(f) == 0 && ok;
  if (!ok) {
    unlink(tmp.c_str());
    return Error{tmp, "", std::string("write failed: ") + strerror(errno)};
  }
  // link(2) publishes the file only if none is there (also over NFS).
  int rc = exclusive ? link(tmp.c_str(), path.c_str()) : rename(tmp.c_str(), path.c_str());
  int err = errno;
  if (exclusive || rc != 0) unlink(tmp.c_str());
  temp.Release();
  if (rc != 0 && exclusive && err == EEXIST) return Error{path, "", "exists"};
  if (rc != 0) return Error{path, "", std::string("cannot write: ") + strerror(err)};
  return Status::Ok();
}

void CommToProto(const distributed::RankComm& comm, shard::ShardRankComm* out) {
  out->set_rank(comm.rank);
  for (const distributed::CommNode& c : comm.nodes) {
    shard::ShardCommNode* n = out->add_nodes();
    n->set_node(c.node);
    n->set_name(c.name);
    n->set_api(c.api);
    n->set_has_rank_param(c.has_rank_param);
    n->set_rank_param(c.rank_param);
    n->set_has_group(c.has_group);
    for (int64_t r : c.group_ranks) n->add_group_ranks(r);
    n->set_group_id(c.group_id);
    n->set_uid(c.uid);
    for (const std::string& u : c.uids) n->add_uids(u);
    n->set_index(c.index);
    n->set_has_output0(c.has_output0);
    for (const std::string& v : c.output0) n->add_output0(v);
  }
}

distributed::RankComm CommFromProto(const shard::ShardRankComm& in) {
  distributed::RankComm comm;
  comm.rank = in.rank();
  for (const shard::ShardCommNode& n : in.nodes()) {
    distributed::CommNode c;
    c.node = n.node();
    c.name = n.name();
    c.api = n.api();
    c.has_rank_param = n.has_rank_param();
    c.rank_param = n.rank_param();
    c.has_group = n.has_group();
    c.group_ranks.assign(n.group_ranks().begin(), n.group_ranks().end());
    c.group_id = n.group_id();
    c.uid = n.uid();
    c.uids.assign(n.uids().begin(), n.uids().end());
    c.index = n.index();
    c.has_output0 = n.has_output0();
    c.output0.assign(n.output0().begin(), n.output0().end());
    comm.nodes.push_back(std::move(c));
  }
  return comm;
}

Status WriteStepLinks(const std::string& output_dir, const std::vector<distributed::RankComm>& npu,
                      const std::vector<distributed::RankComm>* bench, distributed::P2PRule p2p,
                      const std::vector<std::vector<std::string>>& files, uint32_t* npu_count, uint32_t* bench_count) {
  std::vector<distributed::RankLinks> npu_links = distributed::LinkComm(npu, npu_count, p2p);
  std::vector<distributed::RankLinks> bench_links;
  if (bench != nullptr) bench_links = distributed::LinkComm(*bench, bench_count, p2p);
  auto to_vis = [](const distributed::RankLinks& links) {
    vis::SideLinks out;
    for (const auto& [node, list] : links.nodes) {
      vis::NodeLinks& n = out[node];
      n.is_list = links.lists.count(node) != 0;
      for (const distributed::CommLink& l : list) {
        vis::DistributedLink* d = &n.links.emplace_back();
        d->set_communications_type(l.type);
        d->set_rank(l.rank);
        d->set_peer_node(l.peer_node);
        d->set_peer_index(l.peer_index);
      }
    }
    return out;
  };
  for (size_t k = 0; k < files.size(); ++k) {
    vis::SideLinks n = to_vis(npu_links[k]);
    vis::SideLinks b = bench != nullptr ? to_vis(bench_links[k]) : vis::SideLinks();
    if (n.empty() && b.empty()) continue;
    for (const std::string& o : files[k]) GA_RETURN_IF_ERROR(vis::RewriteLinks(output_dir + "/" + o, n, b));
  }
  return Status::Ok();
}

}  // namespace graph_ascend::job
