// What the GraphService handlers (graph_service*.cc) share: gRPC answers
// whose messages are clipped to fit gRPC's metadata, the checks of a
// request's view, node and viewport, and the node summaries and hit pages
// several answers carry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "base/status.h"
#include "base/strings.h"
#include "graph_service.pb.h"
#include "open_graph.h"

namespace graph_ascend::service {

// A failed status whose message is one line (base/status.h OneLine) cut to
// 1 KiB (it may echo request fields).
grpc::Status Fail(grpc::StatusCode code, const std::string& message);
grpc::Status Fail(grpc::StatusCode code, const Error& e);

const char* SideName(vis::Side s);

// Viewport coordinates within [-2^30, 2^30], sizes within [0, 2^30].
grpc::Status CheckViewport(const Rect& r);
// The view key against the open file (session, side, micro step); sets the side graph.
grpc::Status CheckView(const OpenGraph& f, const ViewKey& key, const SideGraph** g);
grpc::Status CheckNode(const OpenGraph& f, vis::Side side, const SideGraph& g, int64_t node);

// Node n of `side` with its nearest 100 ancestors.
void FillSummary(const OpenGraph& f, vis::Side side, uint32_t n, vis::Grading grading, NodeSummary* s);
// One page of hits (limit 0 = 200, at most 10000); OUT_OF_RANGE past max_bytes.
// A hit page's size as FillHits has it (`limit` 0: the default; at most 10000), and
// how many of a hit's nearest ancestors an answer names.
uint32_t HitLimit(uint32_t limit);
constexpr size_t kMaxAncestors = 100;
grpc::Status FillHits(const SideGraph& g, vis::Grading grading, const std::vector<uint32_t>& hits, uint32_t offset,
                      uint32_t limit, size_t max_bytes, NodeList* out);

}  // namespace graph_ascend::service
