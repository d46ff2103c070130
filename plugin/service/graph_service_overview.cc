// GraphService: the batch's rank overview (GetOverview, docs/OVERVIEW.md) on
// every run the pickers offer: a folder of compare_*.vis (shards included,
// they share the batch's time stamp), and the graphs of one msprobe .vis.db,
// which have no FileMeta of their own until converted.
#include "graph_service.h"
#include "rpc_answers.h"

namespace graph_ascend::service {

// The graph opened as the page opens it (hierarchy first, its conversion
// going on behind); the ranking summary from the whole converted file when
// the index-only one has none, and the counts the overview shows from the
// open graph when the conversion wrote none.
Result<vis::FileMeta> GraphServiceImpl::ForeignMeta(const RunEntry& member) {
  std::shared_ptr<OpenGraph> f;
  grpc::Status st = Open(member.path, {}, &f);
  if (!st.ok()) return Error{"", "", st.error_message()};  // the message names the file
  vis::FileMeta meta;
  FileInfo info;
  std::shared_ptr<const vis::DivergenceRanking> ranking;
  std::vector<std::string> names;  // of the ranking's nodes
  {
    std::shared_lock<std::shared_mutex> l(f->mutex());
    if (!f->is_compare()) return MakeError(member.path, "", "a build graph: the rank overview is of compares");
    meta = f->meta();
    info = f->Info();
    ranking = f->divergence();
    for (const vis::DivergenceEntry& d : ranking->entry()) names.emplace_back(f->side(vis::SIDE_NPU)->name(d.node()));
  }
  if (!meta.divergence_ranked()) {
    std::string file_name, graph;
    SplitForeignName(member.path, &file_name, &graph);
    auto abs = logdir_.Resolve(file_name);
    if (!abs.ok()) return abs.error();
    auto converted = foreign_.Converted(*abs, graph);
    if (!converted.ok()) return Relabelled(converted.error(), *abs, file_name);
    std::string whole = converted->path;
    if (converted->details) {
      foreign_.StartFill(*converted);
      auto written = converted->details->Wait();
      if (!written.ok()) return Relabelled(written.error(), *abs, file_name);
      whole = *written;
    }
    auto reader = vis::VisReader::Open(whole);
    if (!reader.ok()) return Relabelled(reader.error(), whole, member.path);
    const vis::FileMeta& m = (*reader)->meta();
    if (m.divergence_ranked()) {
      meta.set_divergence_ranked(true);
      meta.set_divergence_count(m.divergence_count());
      meta.set_first_divergence(m.first_divergence());
      meta.set_first_divergence_reason(m.first_divergence_reason());
      meta.set_first_divergence_is_communication(m.first_divergence_is_communication());
      *meta.mutable_first_divergence_peers() = m.first_divergence_peers();
      if (m.has_overview()) *meta.mutable_overview() = m.overview();
    }
  }
  if (!meta.divergence_ranked() && ranking->entry_size() > 0) {
    // Ranked after opening (no summary in the file): entry 0 is the first divergence.
    meta.set_divergence_ranked(true);
    meta.set_divergence_count(static_cast<uint32_t>(ranking->entry_size()));
    meta.set_first_divergence(names.front());
    meta.set_first_divergence_reason(ranking->entry(0).reason());
  }
  if (!meta.has_overview()) {
    vis::OverviewCounts* o = meta.mutable_overview();
    o->mutable_bucket_count()->Resize(meta.legend_size(), 0);
    o->mutable_grade_bucket_count()->Resize(meta.grade_legend_size(), 0);
    for (const BucketCount& b : info.npu().buckets()) {
      if (b.bucket() >= 0 && b.bucket() < o->bucket_count_size()) o->set_bucket_count(b.bucket(), b.count());
    }
    for (const BucketCount& b : info.npu().grade_buckets()) {
      if (b.bucket() >= 0 && b.bucket() < o->grade_bucket_count_size()) {
        o->set_grade_bucket_count(b.bucket(), b.count());
      }
    }
    o->set_overflow_medium(info.npu().overflow_medium());
    o->set_overflow_high(info.npu().overflow_high());
    o->set_overflow_critical(info.npu().overflow_critical());
    o->set_first_divergence_node(ranking->entry_size() > 0 ? static_cast<int32_t>(ranking->entry(0).node()) : -1);
  }
  return meta;
}

grpc::Status GraphServiceImpl::GetOverview(grpc::ServerContext*, const OverviewRequest* req, OverviewReply* reply) {
  // A graph of a .vis.db ("run.vis.db#step0_rank1") is checked by its file.
  std::string file_name, graph;
  SplitForeignName(req->file(), &file_name, &graph);
  bool missing = false;
  auto abs = logdir_.Resolve(file_name, true, &missing);
  if (!abs.ok()) return Fail(missing ? grpc::StatusCode::NOT_FOUND : grpc::StatusCode::INVALID_ARGUMENT, abs.error());
  auto overview = overviews_.Get(logdir_, ListedRuns(), req->file(),
                                 [this](const RunEntry& member) { return ForeignMeta(member); });
  if (!overview.ok()) return Fail(grpc::StatusCode::FAILED_PRECONDITION, overview.error());
  *reply = **overview;
  return grpc::Status::OK;
}

}  // namespace graph_ascend::service
