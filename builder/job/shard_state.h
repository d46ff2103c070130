// The files of OUTPUT_DIR/.graph-ascend-shards/ (docs/FORMAT.md, "Shard
// state"): an 8-byte magic, the message's length, the message.
#pragma once

#include <string>
#include <vector>

#include <google/protobuf/message_lite.h>

#include "base/status.h"
#include "distributed/comm_linker.h"
#include "shard.pb.h"

namespace graph_ascend::job {

// In the state folder (ShardStateDir): the batch's record, and one summary per unit (<key>.summary).
inline constexpr char kShardBatchFile[] = "batch";
inline constexpr char kShardSummarySuffix[] = ".summary";

Status ReadShardState(const std::string& path, google::protobuf::MessageLite* msg);

// Writes `path` through a temporary file named after the host and pid. With
// `exclusive` the file is published with link(2) only if none is there, and
// the error is then Error::message "exists".
Status WriteShardState(const std::string& path, const google::protobuf::MessageLite& msg, bool exclusive);

// A rank's communication nodes in and out of a summary.
void CommToProto(const distributed::RankComm& comm, shard::ShardRankComm* out);
distributed::RankComm CommFromProto(const shard::ShardRankComm& in);

// Links the ranks of one step from their communication nodes (`bench` null in
// a build) and writes each rank's links into its files, `files[k]` of rank k
// (names inside `output_dir`). The counts of linked nodes go to the last two.
Status WriteStepLinks(const std::string& output_dir, const std::vector<distributed::RankComm>& npu,
                      const std::vector<distributed::RankComm>* bench, distributed::P2PRule p2p,
                      const std::vector<std::vector<std::string>>& files, uint32_t* npu_count, uint32_t* bench_count);

}  // namespace graph_ascend::job
