#include "rank_overview.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "base/parallel.h"
#include "divergence/divergence.h"
#include "vis/vis_file.h"

namespace graph_ascend::service {
namespace {

// "rank12" -> 12; -1 for other names ("rank", "merged0", "").
int32_t RankNumber(const std::string& rank) {
  if (rank.size() <= 4 || rank.compare(0, 4, "rank") != 0 || rank.size() > 13) return -1;
  int64_t n = 0;
  for (size_t i = 4; i < rank.size(); ++i) {
    if (rank[i] < '0' || rank[i] > '9') return -1;
    n = n * 10 + (rank[i] - '0');
  }
  return n > INT32_MAX ? -1 : static_cast<int32_t>(n);
}

// The worst (highest) numeric legend entry with nodes in it, -1.
int32_t WorstBucket(const google::protobuf::RepeatedPtrField<vis::ColorBucket>& legend,
                    const google::protobuf::RepeatedField<uint32_t>& counts) {
  for (int i = std::min(legend.size(), counts.size()) - 1; i >= 0; --i) {
    if (counts[i] > 0 && !legend[i].unmatched()) return i;
  }
  return -1;
}

// One member file's cell and its cross-rank links, from its FileMeta.
struct Read {
  OverviewCell cell;
  RankLink link;
  vis::FileMeta legend_meta;  // legends and grading (kept for the run's first file)
};

// A member's cell before its file is read.
Read Unread(const RunEntry& e) {
  Read r;
  r.cell.set_file(e.path);
  r.cell.set_first_node(-1);
  r.cell.set_worst_bucket(-1);
  r.cell.set_worst_grade_bucket(-1);
  r.link.rank = RankNumber(e.rank);
  return r;
}

// The member's FileMeta: read from its .vis, or given by `foreign` for a graph of a .vis.db.
Result<vis::FileMeta> MemberMeta(const LogDir& logdir, const RunEntry& e, const ForeignMetaFn& foreign) {
  if (IsForeignGraph(e.path)) {
    if (!foreign) return MakeError(e.path, "", "the rank overview cannot read this .vis.db here");
    return foreign(e);
  }
  auto abs = logdir.Resolve(e.path, true, nullptr);
  if (!abs.ok()) return abs.error();
  auto reader = vis::VisReader::Open(*abs);
  if (!reader.ok()) {
    Error err = reader.error();
    if (err.file == *abs) err.file = e.path;
    return err;
  }
  return (*reader)->meta();
}

Read ReadMemberUnguarded(const LogDir& logdir, const RunEntry& e, const ForeignMetaFn& foreign) {
  Read r = Unread(e);
  auto meta = MemberMeta(logdir, e, foreign);
  if (!meta.ok()) {
    r.cell.set_error(meta.error().ToString());
    return r;
  }
  const vis::FileMeta& m = *meta;
  OverviewCell& c = r.cell;
  c.set_ranked(m.divergence_ranked());
  c.set_first(m.first_divergence());
  c.set_reason(m.first_divergence_reason());
  c.set_reason_text(m.first_divergence().empty() ? "" : divergence::ReasonName(m.first_divergence_reason()));
  c.set_communication(m.first_divergence_is_communication());
  c.set_divergence_count(m.divergence_count());
  if (m.has_overview()) {
    const vis::OverviewCounts& o = m.overview();
    c.set_counted(true);
    c.set_first_node(m.first_divergence().empty() ? -1 : o.first_divergence_node());
    c.set_worst_bucket(WorstBucket(m.legend(), o.bucket_count()));
    c.set_worst_grade_bucket(WorstBucket(m.grade_legend(), o.grade_bucket_count()));
    c.set_overflow_medium(o.overflow_medium());
    c.set_overflow_high(o.overflow_high());
    c.set_overflow_critical(o.overflow_critical());
  }
  r.link.diverges = !m.first_divergence().empty();
  r.link.communication = m.first_divergence_is_communication();
  r.link.peers.assign(m.first_divergence_peers().begin(), m.first_divergence_peers().end());
  *r.legend_meta.mutable_legend() = m.legend();
  *r.legend_meta.mutable_grade_legend() = m.grade_legend();
  r.legend_meta.set_grading(m.grading());
  return r;
}

// An exception (std::bad_alloc) is the member's error: it must not end the
// process from a worker thread, nor lose the other members' cells.
Read ReadMember(const LogDir& logdir, const RunEntry& e, const ForeignMetaFn& foreign) {
  try {
    return ReadMemberUnguarded(logdir, e, foreign);
  } catch (...) {
    Read r = Unread(e);
    r.cell.set_error(ErrorOfException(std::current_exception(), e.path).ToString());
    return r;
  }
}

// Reads every member's meta on a few threads: a 1000-rank run is 1000 small
// reads, each mostly waiting on the disk the first time.
std::vector<Read> ReadMembers(const LogDir& logdir, const std::vector<const RunEntry*>& members,
                              const ForeignMetaFn& foreign) {
  std::vector<Read> out(members.size());
  std::atomic<size_t> next{0};
  auto work = [&]() {
    for (size_t i = next++; i < members.size(); i = next++) out[i] = ReadMember(logdir, *members[i], foreign);
  };
  size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), 4);
  // A graph of a .vis.db is a conversion, not a small read: one thread each, up to the 4.
  bool converted =
      std::any_of(members.begin(), members.end(), [](const RunEntry* e) { return IsForeignGraph(e->path); });
  threads = std::min(threads, converted ? members.size() : (members.size() + 63) / 64);
  std::vector<std::thread> pool;
  try {
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  } catch (const std::system_error&) {
    // Fewer threads than planned (a thread limit): this one reads the rest.
  }
  work();
  for (std::thread& t : pool) t.join();
  return out;
}

std::string RankName(int32_t rank) { return rank < 0 ? "" : "rank" + std::to_string(rank); }

}  // namespace

bool IsForeignGraph(const std::string& path) {
  return path.find(".vis.db#") != std::string::npos ||
         (path.size() > 7 && path.compare(path.size() - 7, 7, ".vis.db") == 0);
}

std::vector<RankOrigin> TraceOrigins(const std::vector<RankLink>& ranks) {
  std::vector<RankOrigin> out(ranks.size());
  std::unordered_map<int32_t, size_t> at;  // rank number -> position
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].rank >= 0) at.emplace(ranks[i].rank, i);
  }
  // listeners[p]: the diverging ranks whose first divergence is a communication with rank p.
  std::unordered_map<int32_t, std::vector<size_t>> listeners;
  std::vector<bool> traced(ranks.size(), false);
  std::deque<size_t> queue;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const RankLink& r = ranks[i];
    if (!r.diverges) continue;
    if (!r.communication) {
      out[i].origin = r.rank;
      traced[i] = true;
      queue.push_back(i);
      continue;
    }
    for (int32_t p : r.peers) {
      if (p != r.rank) listeners[p].push_back(i);
    }
  }
  // Breadth first from the origins: a communication takes the nearest traced sender.
  while (!queue.empty()) {
    size_t p = queue.front();
    queue.pop_front();
    auto l = listeners.find(ranks[p].rank);
    if (ranks[p].rank < 0 || l == listeners.end()) continue;
    for (size_t i : l->second) {
      if (traced[i]) continue;
      traced[i] = true;
      out[i].caused_by = ranks[p].rank;
      out[i].origin = out[p].origin;
      queue.push_back(i);
    }
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].diverges && !traced[i]) out[i].origin = ranks[i].rank;
  }
  return out;
}

Result<std::shared_ptr<const OverviewReply>> OverviewCache::Get(const LogDir& logdir,
                                                               const std::vector<RunEntry>& runs,
                                                               const std::string& file,
                                                               const ForeignMetaFn& foreign) {
  const RunEntry* self = nullptr;
  for (const RunEntry& e : runs) {
    if (e.path == file) self = &e;
  }
  if (self == nullptr) return MakeError(file, "", "no such .vis file under the log directory");
  // A .vis.db's name need not say compare (msprobe's -o names it): its graphs
  // are members unless listed as builds, and a graph that is no compare says so in its cell.
  auto compare = [](const RunEntry& e) { return e.kind == "compare" || (IsForeignGraph(e.path) && e.kind.empty()); };
  if (!compare(*self)) {
    return MakeError(file, "", "the rank overview is of compare files (compare_*.vis); this is " +
                                   (self->kind.empty() ? std::string("no batch output") : "a " + self->kind));
  }
  auto vis_file = [](const RunEntry& e) {
    return e.name.size() > 4 && e.name.compare(e.name.size() - 4, 4, ".vis") == 0;
  };
  if (!vis_file(*self) && !IsForeignGraph(self->path)) {
    return MakeError(file, "", "the rank overview reads graph-ascend .vis files and msprobe's .vis.db");
  }
  // The run's compare files (or graphs of one .vis.db: a group never mixes the two).
  std::vector<const RunEntry*> members;
  if (self->group.empty()) {
    members.push_back(self);
  } else {
    for (const RunEntry& e : runs) {
      if (e.group == self->group && compare(e) && (vis_file(e) || IsForeignGraph(e.path))) members.push_back(&e);
    }
  }
  std::sort(members.begin(), members.end(), [](const RunEntry* a, const RunEntry* b) {
    if (a->step != b->step) return NaturalLess(a->step, b->step);
    if (a->rank != b->rank) return NaturalLess(a->rank, b->rank);
    return NaturalLess(a->path, b->path);
  });
  const std::string group = self->group.empty() ? self->path : self->group;
  std::string signature;
  for (const RunEntry* e : members) {
    signature += e->path + '\n' + std::to_string(e->size) + ' ' + std::to_string(e->mtime_unix) + '\n';
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->group == group && it->signature == signature) {
        entries_.splice(entries_.begin(), entries_, it);
        return entries_.front().reply;
      }
    }
  }

  std::vector<Read> reads = ReadMembers(logdir, members, foreign);
  auto reply = std::make_shared<OverviewReply>();
  reply->set_group(group);
  using Order = std::map<std::string, uint32_t, bool (*)(const std::string&, const std::string&)>;
  Order steps(NaturalLess), ranks(NaturalLess);
  for (const RunEntry* e : members) {
    steps.emplace(e->step, 0);
    ranks.emplace(e->rank, 0);
  }
  for (auto& [name, index] : steps) {
    index = static_cast<uint32_t>(reply->steps_size());
    reply->add_steps(name);
  }
  for (auto& [name, index] : ranks) {
    index = static_cast<uint32_t>(reply->ranks_size());
    reply->add_ranks(name);
  }
  bool legend_set = false;
  for (size_t i = 0; i < members.size(); ++i) {
    reads[i].cell.set_step(steps[members[i]->step]);
    reads[i].cell.set_rank(ranks[members[i]->rank]);
    if (!legend_set && reads[i].cell.error().empty()) {
      *reply->mutable_legend() = reads[i].legend_meta.legend();
      *reply->mutable_grade_legend() = reads[i].legend_meta.grade_legend();
      reply->set_grading(reads[i].legend_meta.grading());
      legend_set = true;
    }
  }
  // Members are sorted by step: trace each step's ranks together.
  for (size_t begin = 0; begin < members.size();) {
    size_t end = begin;
    while (end < members.size() && members[end]->step == members[begin]->step) ++end;
    std::vector<RankLink> links;
    for (size_t i = begin; i < end; ++i) links.push_back(reads[i].link);
    std::vector<RankOrigin> origins = TraceOrigins(links);
    OverviewOrigin step_origin;
    step_origin.set_step(members[begin]->step);
    for (size_t i = begin; i < end; ++i) {
      const RankOrigin& o = origins[i - begin];
      OverviewCell& c = reads[i].cell;
      c.set_caused_by(RankName(o.caused_by));
      c.set_origin(RankName(o.origin));
      // A rank whose name has no number cannot be linked: it stands for itself.
      if (links[i - begin].diverges && o.origin < 0) c.set_origin(members[i]->rank);
      if (!c.origin().empty() && c.caused_by().empty()) step_origin.add_ranks(members[i]->rank);
    }
    if (step_origin.ranks_size() > 0) {
      if (reply->origin_step().empty() && reply->origin_ranks_size() == 0) {
        reply->set_origin_step(step_origin.step());
        *reply->mutable_origin_ranks() = step_origin.ranks();
      }
      *reply->add_step_origins() = std::move(step_origin);
    }
    begin = end;
  }
  for (Read& r : reads) *reply->add_cells() = std::move(r.cell);

  std::lock_guard<std::mutex> l(mu_);
  entries_.remove_if([&](const Entry& e) { return e.group == group; });
  entries_.push_front({group, std::move(signature), reply});
  while (entries_.size() > max_runs_) entries_.pop_back();
  return std::shared_ptr<const OverviewReply>(reply);
}

}  // namespace graph_ascend::service
