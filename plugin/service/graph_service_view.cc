// GraphService: the laid-out view of a side (GetView, Expand, Collapse, Reveal),
// search, filters and node details.
#include "graph_service.h"

#include <algorithm>
#include <cstdint>

#include "node_query.h"
#include "rpc_answers.h"

namespace graph_ascend::service {

grpc::Status GraphServiceImpl::DoView(const ViewKey& key, ViewOp op, int32_t node, const Rect* viewport, bool from_node,
                                      ViewReply* reply) {
  if (viewport != nullptr) {
    grpc::Status vst = CheckViewport(*viewport);
    if (!vst.ok()) return vst;
  }
  // The opening screen of a large .vis.db graph serves the view until its
  // whole index is written, except where the view would show a nameless node
  // (expanding a node whose children the opening has not read, revealing one).
  ViewAccess access;
  grpc::Status st = OpenView(key, &access, op == ViewOp::kReveal);
  if (!st.ok()) return st;
  if (op == ViewOp::kExpand && access.graph->valid(node) && access.graph->child_count(static_cast<uint32_t>(node)) > 0 &&
      access.graph->name(access.graph->children(static_cast<uint32_t>(node))[0]).empty()) {
    access.lock.unlock();
    access = ViewAccess();
    st = OpenView(key, &access, true);
    if (!st.ok()) return st;
  }
  const std::shared_ptr<OpenGraph>& file = access.file;
  const SideGraph* g = access.graph;
  const vis::Grading grading = file->GradingOf(key);
  if (op != ViewOp::kGet) {
    st = CheckNode(*file, key.side(), *g, node);
    if (!st.ok()) return st;
  }
  auto view = views_.Get(key.session(), file->id(), key.side(), key.micro_step(), file->relative(), g);
  std::lock_guard<std::mutex> view_lock(view->mu);
  Status s = Status::Ok();
  switch (op) {
    case ViewOp::kGet:
      break;
    case ViewOp::kExpand:
      s = view->state.Expand(*g, static_cast<uint32_t>(node));
      break;
    case ViewOp::kCollapse:
      s = view->state.Collapse(*g, static_cast<uint32_t>(node));
      break;
    case ViewOp::kReveal:
      s = view->state.Reveal(*g, static_cast<uint32_t>(node));
      break;
  }
  if (!s.ok()) {
    Error e = s.error();
    e.file = file->relative() + " (" + SideName(key.side()) + ")";
    return Fail(grpc::StatusCode::FAILED_PRECONDITION, e);
  }
  views_.Record(view.get(), *g, op, static_cast<uint32_t>(node));  // the view outlives a server restart
  view->state.Update(*g);
  view->bytes = view->state.MemoryBytes();
  reply->set_total_visible(view->state.total_visible());
  reply->set_width(view->state.width());
  reply->set_height(view->state.height());
  reply->set_focus(op == ViewOp::kGet ? -1 : node);
  std::vector<LayoutBox> boxes;
  if (viewport != nullptr && viewport->width() > 0 && viewport->height() > 0) {
    Viewport v{viewport->x(), viewport->y(), viewport->width(), viewport->height()};
    LayoutBox at;
    if (from_node && op != ViewOp::kGet && view->state.Locate(*g, static_cast<uint32_t>(node), &at)) {
      // Relative to the node: the absolute corner is checked again.
      Rect absolute = *viewport;
      absolute.set_x(static_cast<int32_t>(std::clamp<int64_t>(int64_t{v.x} + at.x, INT32_MIN, INT32_MAX)));
      absolute.set_y(static_cast<int32_t>(std::clamp<int64_t>(int64_t{v.y} + at.y, INT32_MIN, INT32_MAX)));
      st = CheckViewport(absolute);
      if (!st.ok()) return st;
      v.x = absolute.x();
      v.y = absolute.y();
    }
    boxes = view->state.Cut(*g, v);
    Rect* applied = reply->mutable_viewport();
    applied->set_x(v.x);
    applied->set_y(v.y);
    applied->set_width(v.width);
    applied->set_height(v.height);
  } else {
    boxes = view->state.Layout(*g);
  }
  const size_t count = boxes.size();
  reply->mutable_nodes()->Reserve(static_cast<int>(count));
  std::shared_ptr<const OpenGraph::Marks> marks = file->DivergenceMarks(key.side());
  for (size_t k = 0; k < count; ++k) {
    const LayoutBox& b = boxes[k];
    const uint32_t n = b.node;
    LayoutNode* out = reply->add_nodes();
    out->set_index(static_cast<int32_t>(n));
    out->set_name(std::string(g->name(n)));
    out->set_label(std::string(Label(*g, n)));
    out->set_x(b.x);
    out->set_y(b.y);
    out->set_width(b.width);
    out->set_height(b.height);
    out->set_node_type(g->node_type(n));
    out->set_expandable(b.expandable);
    out->set_expanded(b.expanded);
    out->set_parent(b.parent_box < 0 ? -1 : static_cast<int32_t>(boxes[b.parent_box].node));
    out->set_depth(b.depth);
    out->set_has_precision(g->has_precision(n));
    out->set_precision_index(g->has_precision(n) ? g->precision(n) : 0);
    out->set_bucket(g->bucket(n, grading));
    out->set_has_grade(g->has_grade(n));
    out->set_grade_index(g->has_grade(n) ? g->grade(n) : 0);
    out->set_overflow(static_cast<vis::OverflowLevel>(g->overflow(n)));
    out->set_matched(g->matched(n));
    out->set_distributed((g->flags(n) & vis::FLAG_DISTRIBUTED) != 0);
    out->set_divergent((marks->mark[n] & OpenGraph::kDivergent) != 0);
    out->set_contains_divergence((marks->mark[n] & OpenGraph::kContains) != 0);
    out->set_worst_descendant_bucket(marks->worst[n]);
  }
  // An opening's first screen served: its fill need not wait for it any longer.
  if (access.foreign.index && access.foreign.details) access.foreign.details->ViewServed(key.side());
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::GetView(grpc::ServerContext*, const ViewRequest* req, ViewReply* reply) {
  return DoView(req->view(), ViewOp::kGet, -1, req->has_viewport() ? &req->viewport() : nullptr, false, reply);
}
grpc::Status GraphServiceImpl::Expand(grpc::ServerContext*, const NodeRequest* req, ViewReply* reply) {
  return DoView(req->view(), ViewOp::kExpand, req->node(), req->has_viewport() ? &req->viewport() : nullptr,
                req->viewport_from_node(), reply);
}
grpc::Status GraphServiceImpl::Collapse(grpc::ServerContext*, const NodeRequest* req, ViewReply* reply) {
  return DoView(req->view(), ViewOp::kCollapse, req->node(), req->has_viewport() ? &req->viewport() : nullptr,
                req->viewport_from_node(), reply);
}
grpc::Status GraphServiceImpl::Reveal(grpc::ServerContext*, const NodeRequest* req, ViewReply* reply) {
  return DoView(req->view(), ViewOp::kReveal, req->node(), req->has_viewport() ? &req->viewport() : nullptr,
                req->viewport_from_node(), reply);
}

grpc::Status GraphServiceImpl::Search(grpc::ServerContext*, const SearchRequest* req, NodeList* reply) {
  SearchSpec spec{req->query(), req->regex(), req->case_insensitive(), req->view().micro_step()};
  // A graph served from its opening screen is searched in its .vis.db, but
  // for a micro step (its filter needs every hit's ancestors' steps: it waits for the index).
  ViewAccess view;
  grpc::Status st = OpenView(req->view(), &view, spec.micro_step >= 0);
  if (!st.ok()) return st;
  if (view.foreign.index && view.foreign.details) return SearchOpening(view, *req, spec, reply);
  const std::shared_ptr<OpenGraph>& file = view.file;
  const SideGraph* g = view.graph;
  auto hits = file->search(req->view().side()).Find(spec);
  if (!hits.ok()) return Fail(grpc::StatusCode::INVALID_ARGUMENT, hits.error());
  return FillHits(*g, file->GradingOf(req->view()), **hits, req->offset(), req->limit(), max_answer_bytes_, reply);
}

grpc::Status GraphServiceImpl::SearchOpening(const ViewAccess& view, const SearchRequest& req, const SearchSpec& spec,
                                             NodeList* reply) {
  auto match = NameMatcher(spec);
  if (!match.ok()) return Fail(grpc::StatusCode::INVALID_ARGUMENT, match.error());
  const vis::Side side = req.view().side();
  const DetailFill& fill = *view.foreign.details;
  const std::string& converted = view.foreign.path;
  auto relabel = [&](Error e) {
    std::string file_name, graph;
    SplitForeignName(view.file->relative(), &file_name, &graph);
    if (e.file == fill.source()) e.file = file_name;
    return Fail(grpc::StatusCode::DATA_LOSS, e);
  };
  auto hits = fill.Find(side, *match, converted);
  if (!hits.ok()) return relabel(hits.error());
  const SideGraph& g = *view.graph;
  // The opening's named nodes (the root, its children) answer from the side;
  // the others with their index, name and ancestors, uncoloured until the
  // index is written (bucket -1, no precision).
  reply->set_total(static_cast<uint32_t>(hits->size()));
  const uint32_t limit = HitLimit(req.limit());
  const vis::Grading grading = view.file->GradingOf(req.view());
  size_t bytes = 0;
  for (size_t i = req.offset(); i < hits->size() && i < static_cast<size_t>(req.offset()) + limit; ++i) {
    const auto& h = (*hits)[i];
    if (g.valid(static_cast<int32_t>(h.index)) && g.name(h.index) == h.name) {
      NodeList one;
      grpc::Status st = FillHits(g, grading, {h.index}, 0, 1, max_answer_bytes_, &one);
      if (!st.ok()) return st;
      *reply->add_hits() = std::move(*one.mutable_hits(0));
    } else {
      NodeHit* out = reply->add_hits();
      out->set_index(static_cast<int32_t>(h.index));
      out->set_name(h.name);
      uint32_t omitted = 0;
      auto up = fill.Ancestors(side, h.name, kMaxAncestors, &omitted, converted);
      if (!up.ok()) return relabel(up.error());
      for (std::string& a : *up) out->add_ancestors(std::move(a));
      out->set_ancestors_omitted(omitted);
      out->set_bucket(-1);
    }
    bytes += reply->hits(reply->hits_size() - 1).ByteSizeLong();
    if (bytes > max_answer_bytes_) {
      reply->Clear();
      return Fail(grpc::StatusCode::OUT_OF_RANGE, "the answer would exceed " + std::to_string(max_answer_bytes_) +
                                                      " bytes at hit " + std::to_string(i - req.offset()) +
                                                      ": ask for fewer hits (a smaller limit)");
    }
  }
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::Filter(grpc::ServerContext*, const FilterRequest* req, NodeList* reply) {
  ViewAccess view;
  grpc::Status st = OpenView(req->view(), &view);
  if (!st.ok()) return st;
  const std::shared_ptr<OpenGraph>& file = view.file;
  const SideGraph* g = view.graph;
  FilterSpec spec;
  spec.grading = file->GradingOf(req->view());
  const int legend_size = file->Legend(spec.grading).size();
  for (int32_t b : req->buckets()) {
    if (b < 0 || b >= legend_size) {
      return Fail(grpc::StatusCode::INVALID_ARGUMENT, file->relative() + ": bucket " + std::to_string(b) +
                                                          " is not in the legend (" + std::to_string(legend_size) +
                                                          " entries)");
    }
    spec.buckets.push_back(b);
  }
  for (int o : req->overflow()) {
    if (o < vis::OVERFLOW_MEDIUM || o > vis::OVERFLOW_CRITICAL) {
      return Fail(grpc::StatusCode::INVALID_ARGUMENT, "overflow levels are MEDIUM, HIGH or CRITICAL");
    }
    spec.overflow.push_back(static_cast<uint32_t>(o));
  }
  spec.unmatched = req->unmatched();
  spec.leaves_only = req->leaves_only();
  spec.micro_step = req->view().micro_step();
  return FillHits(*g, spec.grading, FilterNodes(*g, file->is_compare(), spec), req->offset(), req->limit(),
                  max_answer_bytes_, reply);
}

grpc::Status GraphServiceImpl::GetNodeDetail(grpc::ServerContext*, const NodeRequest* req, NodeDetailReply* reply) {
  ViewAccess view;
  grpc::Status st = OpenView(req->view(), &view, false);
  if (st.ok() && view.graph->valid(req->node()) && view.graph->name(static_cast<uint32_t>(req->node())).empty()) {
    view.lock.unlock();  // a node the opening screen has not read
    view = ViewAccess();
    st = OpenView(req->view(), &view, true);
  }
  if (!st.ok()) return st;
  const std::shared_ptr<OpenGraph>& file = view.file;
  const SideGraph* g = view.graph;
  vis::Side side = req->view().side();
  st = CheckNode(*file, side, *g, req->node());
  if (!st.ok()) return st;
  auto fill = [&](vis::Side s, uint32_t n, NodeSummary* summary, vis::NodeDetail* detail,
                  google::protobuf::RepeatedPtrField<std::string>* stack) -> grpc::Status {
    FillSummary(*file, s, n, file->GradingOf(req->view()), summary);
    auto d = file->Detail(s, n);
    if (!d.ok()) return Fail(grpc::StatusCode::DATA_LOSS, d.error());
    auto frames = file->Stack(s, d->stack_id());
    if (!frames.ok()) return Fail(grpc::StatusCode::DATA_LOSS, frames.error());
    for (auto& f : *frames) stack->Add(std::move(f));
    *detail = std::move(*d);
    return grpc::Status::OK;
  };
  uint32_t n = static_cast<uint32_t>(req->node());
  st = fill(side, n, reply->mutable_node(), reply->mutable_detail(), reply->mutable_stack());
  if (!st.ok()) return st;
  if (file->is_compare() && g->matched(n) >= 0) {
    vis::Side o = side == vis::SIDE_NPU ? vis::SIDE_BENCH : vis::SIDE_NPU;
    st = fill(o, static_cast<uint32_t>(g->matched(n)), reply->mutable_matched(), reply->mutable_matched_detail(),
              reply->mutable_matched_stack());
    if (!st.ok()) return st;
  }
  return grpc::Status::OK;
}

}  // namespace graph_ascend::service
