// OpenGraph's colours: each node's legend bucket under both gradings, the
// divergence marks and the ranking they follow, a new legend and the
// thresholds' metric (legend_choice.h).
#include "open_graph.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <shared_mutex>

#include "compare/pair_compare.h"
#include "legend_choice.h"
#include "rerank.h"

namespace graph_ascend::service {

int32_t OpenGraph::BucketFor(vis::Side s, uint32_t node, vis::Grading grading) const {
  if (!is_compare()) return -1;
  const SideGraph& g = *side(s);
  int32_t m = g.matched(node);
  bool grade = grading == vis::GRADING_26;
  uint32_t type = g.node_type(node);
  bool collection = s == vis::SIDE_NPU && (type == vis::NODE_API_COLLECTION || type == vis::NODE_MULTI_COLLECTION);
  // Bench nodes show the colour of their NPU partner (docs/API.md, "Colours").
  double value = std::nan("");
  if (s == vis::SIDE_NPU) {
    value = grade ? g.grade(node) : g.precision(node);
  } else if (m >= 0) {
    value = grade ? npu_->grade(static_cast<uint32_t>(m)) : npu_->precision(static_cast<uint32_t>(m));
  }
  return compare::NodeBucket(grade ? meta_.grade_legend() : meta_.legend(),
                             grade ? unmatched_grade_bucket_ : unmatched_bucket_, m >= 0, collection, value);
}

void OpenGraph::RefreshBucket(vis::Side s, uint32_t node) {
  ForgetMarks();
  auto refresh = [this](vis::Side side, uint32_t n) {
    mutable_side(side)->set_bucket(n, BucketFor(side, n, vis::GRADING_INDEX));
    mutable_side(side)->set_grade_bucket(n, BucketFor(side, n, vis::GRADING_26));
  };
  refresh(s, node);
  if (is_compare()) {
    int32_t m = side(s)->matched(node);
    vis::Side o = s == vis::SIDE_NPU ? vis::SIDE_BENCH : vis::SIDE_NPU;
    if (m >= 0) refresh(o, static_cast<uint32_t>(m));
  }
}

std::shared_ptr<const vis::DivergenceRanking> OpenGraph::divergence() const {
  std::lock_guard<std::mutex> l(marks_mu_);
  return divergence_;
}

void OpenGraph::ShowDivergence(std::shared_ptr<const vis::DivergenceRanking> ranking) {
  std::lock_guard<std::mutex> l(marks_mu_);
  if (ranking == divergence_) return;
  divergence_ = std::move(ranking);
  marks_[0].reset();
  marks_[1].reset();
}

Status OpenGraph::TakeDetailsRanking() {
  if (!details_file_ || details_ranking_taken_.load()) return Status::Ok();
  auto reader = DetailReader();
  if (!reader.ok()) return reader.error();
  const vis::VisReader& whole = **reader;
  Result<vis::DivergenceRanking> ranking = Error{};
  try {
    ranking = whole.ReadDivergence();
  } catch (const std::exception& e) {  // a damaged size that slipped past the reader's checks
    ranking = MakeError(whole.path(), "divergence ranking", std::string("damaged .vis file (") + e.what() + ")");
  }
  if (!ranking.ok()) {
    Error e = ranking.error();
    if (e.file == whole.path()) e.file = relative_;
    return e;
  }
  for (const vis::DivergenceEntry& e : ranking->entry()) {
    if (e.node() >= npu_->size()) {
      return MakeError(relative_, "divergence ranking", "node " + std::to_string(e.node()) + " out of range");
    }
  }
  {
    std::unique_lock<std::shared_mutex> l(mu_);
    if (details_ranking_taken_.exchange(true)) return Status::Ok();
    // FileMeta's summary of the ranking (fields 160-166 and the overview), as the whole file has it.
    const vis::FileMeta& m = whole.meta();
    meta_.set_divergence_ranked(m.divergence_ranked());
    meta_.set_divergence_count(m.divergence_count());
    meta_.set_first_divergence(m.first_divergence());
    meta_.set_first_divergence_reason(m.first_divergence_reason());
    meta_.set_first_divergence_is_communication(m.first_divergence_is_communication());
    *meta_.mutable_first_divergence_peers() = m.first_divergence_peers();
    meta_.set_divergence_unranked(m.divergence_unranked());
    if (m.has_overview()) *meta_.mutable_overview() = m.overview();
    reranking_->SetStored(std::make_shared<const vis::DivergenceRanking>(std::move(*ranking)));
  }
  // Shown as the matches now are (the user may have matched by hand meanwhile).
  return RerankDivergence(this);
}

void OpenGraph::ForgetMarks() {
  std::lock_guard<std::mutex> l(marks_mu_);
  marks_[0].reset();
  marks_[1].reset();
}

std::shared_ptr<const OpenGraph::Marks> OpenGraph::DivergenceMarks(vis::Side s) const {
  std::lock_guard<std::mutex> l(marks_mu_);
  std::shared_ptr<const Marks>& cached = marks_[s == vis::SIDE_BENCH ? 1 : 0];
  if (cached) return cached;
  const SideGraph* g = side(s);
  auto m = std::make_shared<Marks>();
  uint32_t n = g == nullptr ? 0 : g->size();
  m->mark.assign(n, 0);
  m->worst.assign(n, -1);
  if (n == 0) return cached = m;
  for (const vis::DivergenceEntry& e : divergence_->entry()) {
    int64_t node = s == vis::SIDE_NPU ? static_cast<int64_t>(e.node()) : npu_->matched(e.node());
    if (node < 0 || node >= n) continue;
    m->mark[node] |= kDivergent;
    for (int32_t p = g->parent(static_cast<uint32_t>(node)); p >= 0; p = g->parent(static_cast<uint32_t>(p))) {
      if (m->mark[p] & kContains) break;
      m->mark[p] |= kContains;
    }
  }
  // Worst bucket below each node: the highest numeric legend index (the
  // legend runs from best to worst), children before parents.
  std::vector<uint32_t> order;
  order.reserve(n);
  order.push_back(0);
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t* kids = g->children(order[i]);
    for (uint32_t k = 0; k < g->child_count(order[i]); ++k) order.push_back(kids[k]);
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    int32_t p = g->parent(*it);
    if (p < 0) continue;
    int32_t own = g->bucket(*it) == unmatched_bucket_ ? -1 : g->bucket(*it);
    int32_t best = std::max<int32_t>(own, m->worst[*it]);
    if (best > m->worst[p]) m->worst[p] = static_cast<int8_t>(best);
  }
  return cached = m;
}

void OpenGraph::RefreshAllBuckets() {
  unmatched_bucket_ = compare::UnmatchedBucket(meta_.legend());
  unmatched_grade_bucket_ = compare::UnmatchedBucket(meta_.grade_legend());
  for (vis::Side s : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
    SideGraph* g = mutable_side(s);
    if (g == nullptr) continue;
    for (uint32_t i = 0; i < g->size(); ++i) {
      const uint32_t type = g->node_type(i);
      if (is_compare() && g->matched(i) < 0 &&
          (s == vis::SIDE_BENCH || (type != vis::NODE_API_COLLECTION && type != vis::NODE_MULTI_COLLECTION))) {
        // BucketFor's answer for an unmatched node that is no NPU collection,
        // without its lookups (most nodes of an opening screen are such).
        g->set_bucket(i, unmatched_bucket_);
        g->set_grade_bucket(i, unmatched_grade_bucket_);
        continue;
      }
      g->set_bucket(i, BucketFor(s, i, vis::GRADING_INDEX));
      g->set_grade_bucket(i, BucketFor(s, i, vis::GRADING_26));
    }
  }
  summary_valid_ = false;
  ForgetMarks();
}

void OpenGraph::SetLegend(const google::protobuf::RepeatedPtrField<vis::ColorBucket>& legend) {
  *meta_.mutable_legend() = legend;
  RefreshAllBuckets();
}

Result<std::vector<double>> OpenGraph::MetricIndexes(uint32_t mask) const {
  const SideGraph& g = *npu_;
  std::vector<double> out(g.size(), std::numeric_limits<double>::quiet_NaN());
  if (!is_compare()) return out;
  auto reader = DetailReader();
  if (!reader.ok()) return reader.error();
  const vis::VisReader& details = **reader;
  vis::NodeDetailBlock block;
  uint64_t first = 0, end = 0;
  for (uint32_t i = 0; i < g.size(); ++i) {
    if (g.matched(i) < 0) continue;
    auto edited = edited_[vis::SIDE_NPU].find(i);
    if (edited != edited_[vis::SIDE_NPU].end()) {
      out[i] = MetricIndex(edited->second, mask);
      continue;
    }
    if (i < first || i >= end) {
      auto b = DetailBlock(details, vis::SIDE_NPU, i);
      if (!b.ok()) return b.error();
      block = std::move(*b);
      first = block.first();
      end = first + static_cast<uint64_t>(block.detail_size());
      if (i < first || i >= end) {
        return MakeError(relative_, "NPU node " + std::to_string(i), "no detail block holds it");
      }
    }
    out[i] = MetricIndex(block.detail(static_cast<int>(i - first)), mask);
  }
  return out;
}

void OpenGraph::ApplyMetrics(uint32_t mask, const std::vector<double>& values) {
  SideGraph* g = npu_.get();
  if (metrics_ != 0) {
    for (uint32_t i = 0; i < g->size() && i < own_precision_.size(); ++i) g->set_precision(i, own_precision_[i]);
    own_precision_.clear();
  }
  metrics_ = mask;
  if (mask != 0) {
    own_precision_.resize(g->size());
    for (uint32_t i = 0; i < g->size(); ++i) own_precision_[i] = g->precision(i);
    for (uint32_t i = 0; i < g->size() && i < values.size(); ++i) {
      // A pair without a compared item has no index to replace (§6.8).
      if (g->has_precision(i) && !std::isnan(values[i]) && g->matched(i) >= 0) g->set_precision(i, values[i]);
    }
    // §6.9: an API collection under the root shows the worst of its children.
    const uint32_t* top = g->children(0);
    for (uint32_t k = 0; k < g->child_count(0); ++k) {
      uint32_t c = top[k];
      if (g->node_type(c) != vis::NODE_API_COLLECTION || !g->has_precision(c)) continue;
      double worst = 0;
      const uint32_t* kids = g->children(c);
      for (uint32_t j = 0; j < g->child_count(c); ++j) {
        if (g->has_precision(kids[j])) worst = std::max(worst, g->precision(kids[j]));
      }
      g->set_precision(c, worst);
    }
  }
  ++generation_;
  RefreshAllBuckets();
}

}  // namespace graph_ascend::service
