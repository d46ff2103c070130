#include "graph_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>

#include "base/parallel.h"
#include "compare/pair_compare.h"
#include "legend_choice.h"

namespace graph_ascend::service {
namespace {

std::atomic<uint64_t> next_file_id{1};

// `read()` with an exception (a damaged size that slipped past the reader's
// checks: bad_alloc, length_error) turned into an error of the file, so the
// handler answers DATA_LOSS rather than UNKNOWN, and a side loading on a
// thread of its own, where nothing would catch, cannot end the process.
// The names that resolve the stored item keys of a side's details.
vis::NodeNames NodeNames(const SideGraph& g) {
  return [&g](uint32_t n) { return n < g.size() ? g.name(n) : std::string_view(); };
}

template <typename Read>
auto Guarded(const std::string& path, Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const std::exception& e) {
    return MakeError(path, "", std::string("damaged .vis file (") + e.what() + ")");
  }
}

}  // namespace

Result<std::shared_ptr<GraphFile>> GraphFile::Open(const std::string& abs_path, const std::string& relative,
                                                   const ProgressFn& progress, DetailsFileFn details_file,
                                                   NodeDetailFn node_detail) {
  // No progress before the header, trailer and meta are checked: a file that
  // is no .vis fails before the first progress message.
  auto reader = Guarded(abs_path, [&] { return vis::VisReader::Open(abs_path); });
  if (!reader.ok()) {
    Error e = reader.error();
    e.file = relative;  // never show absolute paths of the server's machine
    return e;
  }
  std::shared_ptr<GraphFile> f(new GraphFile());
  f->relative_ = relative;
  f->id_ = next_file_id++;
  f->reader_ = std::move(*reader);
  f->details_file_ = std::move(details_file);
  f->node_detail_ = std::move(node_detail);
  f->meta_ = f->reader_->meta();
  struct stat st;
  if (stat(abs_path.c_str(), &st) == 0) f->mtime_ns_ = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;

  const bool two_sides = f->meta_.kind() == vis::GRAPH_COMPARE;
  if (two_sides && !f->reader_->has_side(vis::SIDE_BENCH)) {
    return MakeError(relative, "", "damaged .vis file (a compare file without a Bench node index)");
  }
  // Both sides load in parallel; progress is their mean.
  std::atomic<double> frac[2] = {0.0, 0.0};
  std::mutex progress_mu;
  auto report = [&](int i, double v) {
    frac[i] = v;
    if (!progress) return;
    std::lock_guard<std::mutex> l(progress_mu);
    double sum = two_sides ? (frac[0] + frac[1]) / 2 : frac[0].load();
    progress(0.02 + 0.96 * sum, "reading node index");
  };
  Result<std::unique_ptr<SideGraph>> bench = Error{};
  std::optional<BackgroundWork> bench_work;  // on the caller's thread when no thread can be started
  if (two_sides) {
    bench_work.emplace([&] {
      bench = Guarded(abs_path,
                      [&] { return SideGraph::Load(*f->reader_, vis::SIDE_BENCH, [&](double v) { report(1, v); }); });
    });
  }
  auto npu =
      Guarded(abs_path, [&] { return SideGraph::Load(*f->reader_, vis::SIDE_NPU, [&](double v) { report(0, v); }); });
  if (bench_work) {
    Status thrown = bench_work->Join(abs_path);  // what Guarded does not catch
    if (!thrown.ok()) bench = thrown.error();
  }
  auto relabel = [&](Error e) {
    if (e.file == abs_path) e.file = relative;
    return e;
  };
  if (!npu.ok()) return relabel(npu.error());
  f->npu_ = std::move(*npu);
  if (two_sides) {
    if (!bench.ok()) return relabel(bench.error());
    f->bench_ = std::move(*bench);
    for (vis::Side s : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
      const SideGraph& g = *f->side(s);
      const SideGraph& o = f->other(s);
      for (uint32_t i = 0; i < g.size(); ++i) {
        if (g.matched(i) < -1 || g.matched(i) >= static_cast<int32_t>(o.size())) {
          return MakeError(relative, s == vis::SIDE_NPU ? "NPU node index" : "Bench node index",
                           "node " + std::to_string(i) + ": matched node out of range");
        }
      }
    }
  }
  auto ranking = f->reader_->ReadDivergence();
  if (!ranking.ok()) return relabel(ranking.error());
  for (const vis::DivergenceEntry& e : ranking->entry()) {
    if (e.node() >= f->npu_->size()) {
      return MakeError(relative, "divergence ranking", "node " + std::to_string(e.node()) + " out of range");
    }
  }
  f->divergence_ = std::make_shared<const vis::DivergenceRanking>(std::move(*ranking));
  f->reranking_ = std::make_unique<Reranking>(*f->npu_, f->divergence_);
  if (progress) progress(0.99, "colouring");
  f->RefreshAllBuckets();
  return f;
}

int32_t GraphFile::BucketFor(vis::Side s, uint32_t node, vis::Grading grading) const {
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

void GraphFile::RefreshBucket(vis::Side s, uint32_t node) {
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

std::shared_ptr<const vis::DivergenceRanking> GraphFile::divergence() const {
  std::lock_guard<std::mutex> l(marks_mu_);
  return divergence_;
}

void GraphFile::ShowDivergence(std::shared_ptr<const vis::DivergenceRanking> ranking) {
  std::lock_guard<std::mutex> l(marks_mu_);
  if (ranking == divergence_) return;
  divergence_ = std::move(ranking);
  marks_[0].reset();
  marks_[1].reset();
}

void GraphFile::ForgetMarks() {
  std::lock_guard<std::mutex> l(marks_mu_);
  marks_[0].reset();
  marks_[1].reset();
}

std::shared_ptr<const GraphFile::Marks> GraphFile::DivergenceMarks(vis::Side s) const {
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

void GraphFile::RefreshAllBuckets() {
  unmatched_bucket_ = compare::UnmatchedBucket(meta_.legend());
  unmatched_grade_bucket_ = compare::UnmatchedBucket(meta_.grade_legend());
  for (vis::Side s : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
    SideGraph* g = mutable_side(s);
    if (g == nullptr) continue;
    for (uint32_t i = 0; i < g->size(); ++i) {
      g->set_bucket(i, BucketFor(s, i, vis::GRADING_INDEX));
      g->set_grade_bucket(i, BucketFor(s, i, vis::GRADING_26));
    }
  }
  summary_valid_ = false;
  ForgetMarks();
}

void GraphFile::SetLegend(const google::protobuf::RepeatedPtrField<vis::ColorBucket>& legend) {
  *meta_.mutable_legend() = legend;
  RefreshAllBuckets();
}

Result<std::vector<double>> GraphFile::MetricIndexes(uint32_t mask) const {
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
      auto b = Guarded(details.path(), [&] { return details.ReadDetailBlock(vis::SIDE_NPU, i, NodeNames(g)); });
      if (!b.ok()) {
        Error e = b.error();
        if (e.file == details.path()) e.file = relative_;
        return e;
      }
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

void GraphFile::ApplyMetrics(uint32_t mask, const std::vector<double>& values) {
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

Result<vis::NodeDetail> GraphFile::Detail(vis::Side s, uint32_t node, const DetailCache* cache) const {
  auto it = edited_[s].find(node);
  if (it != edited_[s].end()) return it->second;
  if (cache != nullptr) {
    auto c = cache->side[s].find(node);
    if (c != cache->side[s].end()) return c->second;
  }
  const SideGraph* g = side(s);
  if (g == nullptr || node >= g->size()) return MakeError(relative_, "node " + std::to_string(node), "no such node");
  if (node_detail_) {
    std::optional<Result<vis::NodeDetail>> now = node_detail_(s, std::string(g->name(node)));
    if (now) return std::move(*now);
  }
  auto reader = DetailReader();
  if (!reader.ok()) return reader.error();
  const vis::VisReader& details = **reader;
  auto d = Guarded(details.path(), [&] { return details.ReadDetail(s, node, g->name(node)); });
  if (!d.ok()) {
    Error e = d.error();
    if (e.file == details.path()) e.file = relative_;
    return e;
  }
  return std::move(*d);
}

Result<const vis::VisReader*> GraphFile::DetailReader() const {
  if (!details_file_) return reader_.get();
  std::call_once(details_once_, [this] {
    auto path = details_file_();
    if (!path.ok()) {
      details_error_ = path.error();
      return;
    }
    auto r = Guarded(*path, [&] { return vis::VisReader::Open(*path); });
    if (!r.ok()) {
      details_error_ = r.error();
      if (details_error_.file == *path) details_error_.file = relative_;
      return;
    }
    // The same nodes as the index this file was opened with.
    const vis::FileMeta& m = (*r)->meta();
    if (m.npu().node_count() != npu_->size() || (is_compare() && m.bench().node_count() != bench_->size())) {
      details_error_ = Error{relative_, "node details", "the converted file does not hold the nodes of its index"};
      return;
    }
    details_reader_ = std::move(*r);
  });
  if (!details_reader_) return details_error_;
  return details_reader_.get();
}

void GraphFile::Prefetch(vis::Side s, std::vector<uint32_t> nodes, DetailCache* cache) const {
  const SideGraph* g = side(s);
  if (g == nullptr) return;
  auto reader = DetailReader();
  if (!reader.ok()) return;  // Detail() reports the error
  const vis::VisReader& details = **reader;
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  for (size_t i = 0; i < nodes.size();) {
    if (edited_[s].count(nodes[i]) != 0 || cache->side[s].count(nodes[i]) != 0) {
      ++i;
      continue;
    }
    auto block = Guarded(details.path(), [&] { return details.ReadDetailBlock(s, nodes[i], NodeNames(*g)); });
    if (!block.ok()) {
      ++i;
      continue;
    }
    const uint64_t end = uint64_t{block->first()} + static_cast<uint64_t>(block->detail_size());
    for (; i < nodes.size() && nodes[i] < end; ++i) {
      cache->side[s][nodes[i]] = std::move(*block->mutable_detail(static_cast<int>(nodes[i] - block->first())));
    }
  }
}

Result<std::vector<std::string>> GraphFile::Stack(vis::Side s, int32_t stack_id) const {
  std::vector<std::string> out;
  if (stack_id < 0) return out;
  auto st = Guarded(reader_->path(), [&] { return reader_->ReadStack(s, static_cast<uint32_t>(stack_id)); });
  if (!st.ok()) {
    Error e = st.error();
    if (e.file == reader_->path()) e.file = relative_;
    return e;
  }
  out.assign(st->frame().begin(), st->frame().end());
  return out;
}

void GraphFile::SetDetail(vis::Side s, uint32_t node, vis::NodeDetail detail) { edited_[s][node] = std::move(detail); }

void GraphFile::AddManualMatch(const std::string& npu, const std::string& bench) {
  RemoveManualMatch(npu);
  manual_.emplace_back(npu, bench);
  manual_at_[npu] = std::prev(manual_.end());
}

void GraphFile::RemoveManualMatch(const std::string& npu) {
  auto it = manual_at_.find(npu);
  if (it == manual_at_.end()) return;
  manual_.erase(it->second);
  manual_at_.erase(it);
}

SideSummary GraphFile::Summarize(vis::Side s) const {
  SideSummary out;
  const SideGraph* g = side(s);
  if (g == nullptr) return out;
  std::vector<uint32_t> counts(static_cast<size_t>(meta_.legend_size()), 0);
  std::vector<uint32_t> grade_counts(static_cast<size_t>(meta_.grade_legend_size()), 0);
  out.set_nodes(g->size());
  uint32_t matched = 0, unmatched = 0, over[4] = {0, 0, 0, 0};
  for (uint32_t i = 0; i < g->size(); ++i) {
    if (!g->reachable(i)) continue;
    if (is_compare()) (g->matched(i) >= 0 ? matched : unmatched)++;
    if (g->overflow(i) < 4) over[g->overflow(i)]++;
    int32_t b = g->bucket(i);
    // The root is no operator: like `graph-ascend info`, the buckets count the nodes below it.
    if (s == vis::SIDE_NPU && i != 0 && b >= 0 && b < static_cast<int32_t>(counts.size())) counts[b]++;
    int32_t gb = g->grade_bucket(i);
    if (s == vis::SIDE_NPU && i != 0 && gb >= 0 && gb < static_cast<int32_t>(grade_counts.size())) grade_counts[gb]++;
  }
  out.set_matched(matched);
  out.set_unmatched(unmatched);
  if (s == vis::SIDE_NPU && is_compare()) {
    for (size_t b = 0; b < counts.size(); ++b) {
      BucketCount* c = out.add_buckets();
      c->set_bucket(static_cast<int32_t>(b));
      c->set_count(counts[b]);
    }
    for (size_t b = 0; b < grade_counts.size(); ++b) {
      BucketCount* c = out.add_grade_buckets();
      c->set_bucket(static_cast<int32_t>(b));
      c->set_count(grade_counts[b]);
    }
  }
  out.set_overflow_medium(over[vis::OVERFLOW_MEDIUM]);
  out.set_overflow_high(over[vis::OVERFLOW_HIGH]);
  out.set_overflow_critical(over[vis::OVERFLOW_CRITICAL]);
  return out;
}

FileInfo GraphFile::Info() const {
  FileInfo info;
  info.set_file(relative_);
  *info.mutable_meta() = meta_;
  {
    std::lock_guard<std::mutex> l(summary_mu_);
    if (!summary_valid_) {
      summary_[0] = Summarize(vis::SIDE_NPU);
      summary_[1] = Summarize(vis::SIDE_BENCH);
      summary_valid_ = true;
    }
    *info.mutable_npu() = summary_[0];
    if (is_compare()) *info.mutable_bench() = summary_[1];
  }
  info.set_manual_matches(static_cast<uint32_t>(manual_.size()));
  return info;
}

GraphFile::Hits GraphFile::CachedSearch(const std::string& key) const {
  std::lock_guard<std::mutex> l(search_mu_);
  for (auto it = searches_.begin(); it != searches_.end(); ++it) {
    if (it->first == key) {
      searches_.splice(searches_.begin(), searches_, it);
      return searches_.front().second;
    }
  }
  return nullptr;
}

void GraphFile::CacheSearch(const std::string& key, Hits hits) const {
  std::lock_guard<std::mutex> l(search_mu_);
  searches_.emplace_front(key, std::move(hits));
  if (searches_.size() > 16) searches_.pop_back();
}

size_t GraphFile::MemoryBytes() const {
  size_t bytes = sizeof(*this) + meta_.SpaceUsedLong();
  if (npu_) bytes += npu_->MemoryBytes();
  if (bench_) bytes += bench_->MemoryBytes();
  if (reranking_) bytes += reranking_->MemoryBytes();
  for (const auto& m : edited_) {
    for (const auto& [k, d] : m) bytes += d.SpaceUsedLong();
  }
  return bytes;
}

}  // namespace graph_ascend::service
