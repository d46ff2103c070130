#include "open_graph.h"

#include <sys/stat.h>

#include <algorithm>
#include <mutex>
#include <optional>

#include "base/parallel.h"

namespace graph_ascend::service {
namespace {

std::atomic<uint64_t> next_file_id{1};

// The names that resolve the stored item keys of a side's details.
vis::NodeNames NodeNames(const SideGraph& g) {
  return [&g](uint32_t n) { return n < g.size() ? g.name(n) : std::string_view(); };
}

// `read()` with an exception (a damaged size that slipped past the reader's
// checks: bad_alloc, length_error) turned into an error of the file, so the
// handler answers DATA_LOSS rather than UNKNOWN, and a side loading on a
// thread of its own, where nothing would catch, cannot end the process.
template <typename Read>
auto Guarded(const std::string& path, Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const std::exception& e) {
    return MakeError(path, "", std::string("damaged .vis file (") + e.what() + ")");
  }
}

}  // namespace

Result<std::shared_ptr<OpenGraph>> OpenGraph::Open(const std::string& abs_path, const std::string& relative,
                                                   const ProgressFn& progress, DetailsFileFn details_file,
                                                   NodeDetailFn node_detail, std::shared_ptr<const SideIndexes> index) {
  // No progress before the header, trailer and meta are checked: a file that
  // is no .vis fails before the first progress message.
  auto reader = Guarded(abs_path, [&] { return vis::VisReader::Open(abs_path); });
  if (!reader.ok()) {
    Error e = reader.error();
    e.file = relative;  // never show absolute paths of the server's machine
    return e;
  }
  std::shared_ptr<OpenGraph> f(new OpenGraph());
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
  auto load = [&](vis::Side side) {
    if (index) return SideGraph::FromPartial(side == vis::SIDE_NPU ? index->npu : index->bench, abs_path, side);
    return SideGraph::Load(*f->reader_, side, [&](double v) { report(side == vis::SIDE_NPU ? 0 : 1, v); });
  };
  Result<std::unique_ptr<SideGraph>> bench = Error{};
  std::optional<BackgroundWork> bench_work;  // on the caller's thread when no thread can be started
  // In memory: a side of a few milliseconds' copying is worth a thread.
  constexpr uint32_t kThreadWorthy = 1u << 14;
  if (two_sides && (!index || index->bench.size >= kThreadWorthy)) {
    bench_work.emplace([&] { bench = Guarded(abs_path, [&] { return load(vis::SIDE_BENCH); }); });
  } else if (two_sides) {
    bench = Guarded(abs_path, [&] { return load(vis::SIDE_BENCH); });
  }
  auto npu = Guarded(abs_path, [&] { return load(vis::SIDE_NPU); });
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
  f->search_[0] = std::make_unique<SideSearch>(*f->npu_);
  if (f->bench_) f->search_[1] = std::make_unique<SideSearch>(*f->bench_);
  if (progress) progress(0.99, "colouring");
  f->RefreshAllBuckets();
  return f;
}

Result<vis::NodeDetail> OpenGraph::Detail(vis::Side s, uint32_t node, const DetailCache* cache) const {
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

Result<const vis::VisReader*> OpenGraph::DetailReader() const {
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

Result<vis::NodeDetailBlock> OpenGraph::DetailBlock(const vis::VisReader& details, vis::Side s, uint32_t node) const {
  auto block = Guarded(details.path(), [&] { return details.ReadDetailBlock(s, node, NodeNames(*side(s))); });
  if (!block.ok()) {
    Error e = block.error();
    if (e.file == details.path()) e.file = relative_;
    return e;
  }
  return block;
}

void OpenGraph::Prefetch(vis::Side s, std::vector<uint32_t> nodes, DetailCache* cache) const {
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
    auto block = DetailBlock(details, s, nodes[i]);
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

Result<std::vector<std::string>> OpenGraph::Stack(vis::Side s, int32_t stack_id) const {
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

void OpenGraph::SetDetail(vis::Side s, uint32_t node, vis::NodeDetail detail) { edited_[s][node] = std::move(detail); }

void OpenGraph::AddManualMatch(const std::string& npu, const std::string& bench) {
  RemoveManualMatch(npu);
  manual_.emplace_back(npu, bench);
  manual_at_[npu] = std::prev(manual_.end());
}

void OpenGraph::RemoveManualMatch(const std::string& npu) {
  auto it = manual_at_.find(npu);
  if (it == manual_at_.end()) return;
  manual_.erase(it->second);
  manual_at_.erase(it);
}

SideSummary OpenGraph::Summarize(vis::Side s) const {
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

FileInfo OpenGraph::Info() const {
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
  info.set_removed_automatic(static_cast<uint32_t>(removed_automatic_.size()));
  return info;
}

size_t OpenGraph::MemoryBytes() const {
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
