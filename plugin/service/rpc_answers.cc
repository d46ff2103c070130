#include "rpc_answers.h"

#include <algorithm>

namespace graph_ascend::service {
namespace {

constexpr uint32_t kDefaultLimit = 200;
constexpr uint32_t kMaxLimit = 10000;
// Ancestors listed per hit or summary (the nearest ones).
// Viewport coordinates and sizes (layout units) a request may give: sums of
// two of them stay inside int32.
constexpr int64_t kMaxCoordinate = int64_t{1} << 30;
// Error messages echo request fields (file names, colours): cut so that the
// status fits gRPC's metadata limit (16 KiB) and stays readable.
constexpr size_t kMaxMessageBytes = 1024;

std::string Clip(const std::string& message) {
  if (message.size() <= kMaxMessageBytes) return message;
  size_t cut = kMaxMessageBytes;
  while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 char
  return message.substr(0, cut) + "... (" + std::to_string(message.size()) + " bytes)";
}

// The nearest kMaxAncestors ancestors' names into `names`; returns how many nearer the root were left out.
uint32_t AddAncestors(const SideGraph& g, uint32_t n, google::protobuf::RepeatedPtrField<std::string>* names) {
  std::vector<uint32_t> path = g.Ancestors(n, kMaxAncestors);
  for (uint32_t a : path) names->Add(std::string(g.name(a)));
  return g.depth(n) > static_cast<int32_t>(path.size()) ? static_cast<uint32_t>(g.depth(n)) - path.size() : 0;
}

}  // namespace

// Every error answer goes through here: one line (control characters and
// bytes that are not UTF-8 escaped: grpcio decodes the message as UTF-8), cut.
grpc::Status Fail(grpc::StatusCode code, const std::string& message) {
  return grpc::Status(code, Clip(OneLine(message)));
}
grpc::Status Fail(grpc::StatusCode code, const Error& e) { return Fail(code, e.ToString()); }

const char* SideName(vis::Side s) { return s == vis::SIDE_NPU ? "NPU" : "Bench"; }

void FillSummary(const OpenGraph& f, vis::Side side, uint32_t n, vis::Grading grading, NodeSummary* s) {
  const SideGraph& g = *f.side(side);
  s->set_index(static_cast<int32_t>(n));
  s->set_name(std::string(g.name(n)));
  s->set_node_type(g.node_type(n));
  s->set_parent(g.parent(n));
  s->set_ancestors_omitted(AddAncestors(g, n, s->mutable_ancestors()));
  s->set_micro_step(g.micro_step(n));
  s->set_has_precision(g.has_precision(n));
  s->set_precision_index(g.has_precision(n) ? g.precision(n) : 0);
  s->set_bucket(g.bucket(n, grading));
  s->set_has_grade(g.has_grade(n));
  s->set_grade_index(g.has_grade(n) ? g.grade(n) : 0);
  s->set_overflow(static_cast<vis::OverflowLevel>(g.overflow(n)));
  s->set_matched(g.matched(n));
  if (g.matched(n) >= 0 && f.is_compare()) {
    s->set_matched_name(std::string(f.other(side).name(static_cast<uint32_t>(g.matched(n)))));
  }
  s->set_child_count(g.child_count(n));
}

uint32_t HitLimit(uint32_t limit) { return limit == 0 ? kDefaultLimit : std::min(limit, kMaxLimit); }

grpc::Status FillHits(const SideGraph& g, vis::Grading grading, const std::vector<uint32_t>& hits, uint32_t offset,
                      uint32_t limit, size_t max_bytes, NodeList* out) {
  out->set_total(static_cast<uint32_t>(hits.size()));
  limit = HitLimit(limit);
  size_t bytes = 0;
  for (size_t i = offset; i < hits.size() && i < static_cast<size_t>(offset) + limit; ++i) {
    uint32_t n = hits[i];
    NodeHit* h = out->add_hits();
    h->set_index(static_cast<int32_t>(n));
    h->set_name(std::string(g.name(n)));
    h->set_ancestors_omitted(AddAncestors(g, n, h->mutable_ancestors()));
    bytes += h->ByteSizeLong();
    if (bytes > max_bytes) {
      out->Clear();
      return Fail(grpc::StatusCode::OUT_OF_RANGE, "the answer would exceed " + std::to_string(max_bytes) +
                                                      " bytes at hit " + std::to_string(i - offset) +
                                                      ": ask for fewer hits (a smaller limit)");
    }
    h->set_bucket(g.bucket(n, grading));
    h->set_overflow(static_cast<vis::OverflowLevel>(g.overflow(n)));
    h->set_has_precision(g.has_precision(n));
    h->set_precision_index(g.has_precision(n) ? g.precision(n) : 0);
    h->set_has_grade(g.has_grade(n));
    h->set_grade_index(g.has_grade(n) ? g.grade(n) : 0);
  }
  return grpc::Status::OK;
}

grpc::Status CheckViewport(const Rect& r) {
  auto in = [](int64_t v, int64_t lo) { return v >= lo && v <= kMaxCoordinate; };
  if (!in(r.x(), -kMaxCoordinate) || !in(r.y(), -kMaxCoordinate) || !in(r.width(), 0) || !in(r.height(), 0)) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, "viewport: x and y must lie in [-2^30, 2^30], width and height in "
                                                    "[0, 2^30]");
  }
  return grpc::Status::OK;
}

// Checks the view key against the open file; returns the side graph.
grpc::Status CheckView(const OpenGraph& f, const ViewKey& key, const SideGraph** g) {
  if (key.session().empty() || key.session().size() > 128) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, "view.session must be a non-empty id of at most 128 characters");
  }
  if (key.side() != vis::SIDE_NPU && key.side() != vis::SIDE_BENCH) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, "view.side must be SIDE_NPU or SIDE_BENCH");
  }
  *g = f.side(key.side());
  if (*g == nullptr) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, f.relative() + ": a build file has no Bench side");
  }
  int32_t m = key.micro_step();
  if (m < -1 || (m >= 0 && static_cast<uint32_t>(m) >= std::max<uint32_t>(1, f.meta().micro_steps()))) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT,
                f.relative() + ": micro step " + std::to_string(m) + " out of range (-1 for all, 0.." +
                    std::to_string(std::max<uint32_t>(1, f.meta().micro_steps()) - 1) + ")");
  }
  return grpc::Status::OK;
}

grpc::Status CheckNode(const OpenGraph& f, vis::Side side, const SideGraph& g, int64_t node) {
  if (!g.valid(node)) {
    return Fail(grpc::StatusCode::NOT_FOUND, f.relative() + ": " + SideName(side) + " node " + std::to_string(node) +
                                                 " does not exist (the side has " + std::to_string(g.size()) +
                                                 " nodes)");
  }
  return grpc::Status::OK;
}

}  // namespace graph_ascend::service
