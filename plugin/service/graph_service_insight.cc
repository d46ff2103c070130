// GraphService: where a compare diverges (GetDivergence); the batch's rank
// overview is graph_service_overview.cc.
#include "graph_service.h"

#include "divergence/divergence.h"
#include "rpc_answers.h"

namespace graph_ascend::service {
namespace {

// Why a compare shows no ranking, in full (the page shows it as it is).
std::string UnrankedReason(const OpenGraph& f, const Status& taken) {
  if (!taken.ok()) return "No divergence ranking: the node details it is computed from could not be converted: " +
                          taken.error().ToString();
  if (!f.meta().divergence_unranked().empty()) return "No divergence ranking: " + f.meta().divergence_unranked();
  if (!f.is_compare()) return "";
  const std::string& writer = f.meta().writer();
  if (writer.rfind("msprobe", 0) == 0) {
    return "No divergence ranking: the file was converted from an " + writer +
           " by a graph-ascend older than its rankings; import it again to rank it";
  }
  return "No divergence ranking: the file was written by " + (writer.empty() ? std::string("an older tool") : writer) +
         ", before graph-ascend ranked divergences; build it again to rank it";
}

}  // namespace

grpc::Status GraphServiceImpl::GetDivergence(grpc::ServerContext*, const FileRequest* req, DivergenceReply* reply) {
  std::shared_ptr<OpenGraph> file;
  grpc::Status st = Open(req->file(), {}, &file);
  if (!st.ok()) return st;
  RunEntry self;
  // An msprobe .vis.db opened from its index is ranked with its details: wait for them.
  Status taken = file->TakeDetailsRanking();
  {
    std::shared_lock<std::shared_mutex> l(file->mutex());
    reply->set_ranked(file->meta().divergence_ranked());
    if (!reply->ranked()) reply->set_unranked_reason(UnrankedReason(*file, taken));
    const SideGraph& npu = *file->side(vis::SIDE_NPU);
    // The build's ranking, or the one re-ranked after manual matches (rerank.h).
    std::shared_ptr<const vis::DivergenceRanking> shown = file->divergence();
    const vis::DivergenceRanking& ranking = *shown;
    // Files written before the noise rule store no rule (FLOOR, the default) and no margins.
    bool noise_rule = reply->ranked() && ranking.rule() == vis::DIVERGENCE_RULE_NOISE;
    reply->set_rule(noise_rule ? vis::DIVERGENCE_RULE_NOISE : vis::DIVERGENCE_RULE_FLOOR);
    reply->set_largest_margin_node(-1);
    if (noise_rule) {
      reply->set_threshold(ranking.threshold());
      reply->set_none_beyond_noise(ranking.entry_size() == 0);
      // The stored node is not checked when the file opens: an index out of range is left out.
      if (ranking.has_largest() && ranking.largest_margin_node() < npu.size()) {
        reply->set_has_largest(true);
        reply->set_largest_margin(ranking.largest_margin());
        reply->set_largest_margin_node(static_cast<int32_t>(ranking.largest_margin_node()));
        reply->set_largest_margin_name(std::string(npu.name(ranking.largest_margin_node())));
      }
    }
    for (const vis::DivergenceEntry& e : ranking.entry()) {
      DivergenceItem* item = reply->add_items();
      item->set_npu_node(static_cast<int32_t>(e.node()));
      item->set_bench_node(file->is_compare() ? npu.matched(e.node()) : -1);
      item->set_name(std::string(npu.name(e.node())));
      item->set_reason(e.reason());
      item->set_reason_text(divergence::ReasonName(e.reason()));
      item->set_input_error(e.input_error());
      item->set_output_error(e.output_error());
      item->set_floor(e.floor());
      item->set_note(e.note());
      item->set_bucket(npu.bucket(e.node()));
      // Unmatched entries have no errors of their own, so no margin (docs/DIVERGENCE.md).
      if (noise_rule && e.reason() != vis::DIVERGENCE_UNMATCHED) {
        item->set_margin(e.margin());
        item->set_has_margin(true);
      }
    }
  }
  // The ranks of the same batch step, from the run's overview (their metas only).
  std::vector<RunEntry> runs = logdir_.ListRuns();
  for (const RunEntry& e : runs) {
    if (e.path == req->file()) self = e;
  }
  if (self.rank.empty() || self.group.empty() || self.kind != "compare") return grpc::Status::OK;
  auto overview = overviews_.Get(logdir_, runs, req->file());
  if (!overview.ok()) return grpc::Status::OK;  // the file itself was served above
  const OverviewReply& o = **overview;
  for (const OverviewCell& c : o.cells()) {
    // A damaged neighbour does not hide the others.
    if (o.steps(static_cast<int>(c.step())) != self.step || !c.error().empty()) continue;
    DivergenceRank* r = reply->add_ranks();
    r->set_file(c.file());
    r->set_rank(o.ranks(static_cast<int>(c.rank())));
    r->set_ranked(c.ranked());
    r->set_first(c.first());
    r->set_reason(c.reason());
    r->set_communication(c.communication());
    r->set_caused_by(c.caused_by());
  }
  return grpc::Status::OK;
}

}  // namespace graph_ascend::service
