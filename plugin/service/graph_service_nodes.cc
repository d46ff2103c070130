// GraphService: nodes without a view (ListNodes), for clients that read a
// side rather than browse it (the Python API, docs/PYTHON_API.md): a page of
// nodes in node order, or nodes by name, with no view state kept.
#include <algorithm>
#include <cmath>
#include <string>

#include "graph_service.h"
#include "rpc_answers.h"

namespace graph_ascend::service {

namespace {

constexpr uint32_t kDefaultPage = 10000;
constexpr uint32_t kMaxPage = 100000;

// Appends node n to the reply's columns.
void AddListed(const SideGraph& g, const SideGraph* other, vis::Grading grading, uint32_t n, ListNodesReply* out) {
  out->add_index(static_cast<int32_t>(n));
  out->add_name(std::string(g.name(n)));
  out->add_node_type(g.node_type(n));
  out->add_parent(g.parent(n));
  out->add_depth(g.depth(n));
  out->add_micro_step(g.micro_step(n));
  out->add_child_count(g.child_count(n));
  out->add_precision_index(g.has_precision(n) ? g.precision(n) : NAN);
  out->add_grade_index(g.has_grade(n) ? g.grade(n) : NAN);
  out->add_bucket(g.bucket(n, grading));
  out->add_overflow(g.overflow(n));
  int32_t m = g.matched(n);
  // A match is only shown when its index lies on the other side (a damaged file is not trusted further).
  bool matched = m >= 0 && other != nullptr && other->valid(m);
  out->add_matched(matched ? m : -1);
  out->add_matched_name(matched ? std::string(other->name(static_cast<uint32_t>(m))) : std::string());
}

}  // namespace

grpc::Status GraphServiceImpl::ListNodes(grpc::ServerContext*, const ListNodesRequest* req, ListNodesReply* reply) {
  if (req->side() != vis::SIDE_NPU && req->side() != vis::SIDE_BENCH) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, "side must be SIDE_NPU or SIDE_BENCH");
  }
  std::shared_ptr<OpenGraph> file;
  grpc::Status st = Open(req->file(), {}, &file);
  if (!st.ok()) return st;
  std::shared_lock<std::shared_mutex> lock(file->mutex());
  const SideGraph* g = file->side(req->side());
  if (g == nullptr) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, file->relative() + ": a build file has no Bench side");
  }
  const SideGraph* other = file->is_compare() ? &file->other(req->side()) : nullptr;
  const vis::Grading grading = file->GradingOf(ViewKey());
  const uint32_t total = g->size();
  reply->set_total(total);
  if (req->names_size() > 0) {
    if (static_cast<uint32_t>(req->names_size()) > kMaxPage) {
      return Fail(grpc::StatusCode::INVALID_ARGUMENT, "names: at most " + std::to_string(kMaxPage) + " a call");
    }
    for (const std::string& name : req->names()) {
      int32_t n = g->Find(name);
      if (n < 0) {
        return Fail(grpc::StatusCode::NOT_FOUND,
                    file->relative() + ": " + SideName(req->side()) + " has no node named '" + name + "'");
      }
      AddListed(*g, other, grading, static_cast<uint32_t>(n), reply);
    }
    reply->set_next_offset(total);
    return grpc::Status::OK;
  }
  uint32_t limit = req->limit() == 0 ? kDefaultPage : std::min(req->limit(), kMaxPage);
  uint32_t n = std::min(req->offset(), total);
  for (uint32_t listed = 0; n < total && listed < limit; ++n) {
    if (req->matched_only() && (other == nullptr || !other->valid(g->matched(n)))) continue;
    AddListed(*g, other, grading, n, reply);
    ++listed;
  }
  reply->set_next_offset(n);
  return grpc::Status::OK;
}

}  // namespace graph_ascend::service
