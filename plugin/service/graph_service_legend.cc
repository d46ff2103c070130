// GraphService: colour legends and relative-error metrics (SetLegend,
// ResetLegend, a saved choice applied on open).
#include "graph_service.h"

#include <strings.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <regex>
#include <shared_mutex>

#include "config_files.h"
#include "legend_choice.h"
#include "rpc_answers.h"

namespace graph_ascend::service {

namespace {

// `keyed_by_colour`: the legend is to be saved as tb_graph_ascend's Colors
// object, whose keys are the colours, so no two entries may share one.
grpc::Status CheckLegend(const google::protobuf::RepeatedPtrField<vis::ColorBucket>& legend,
                         bool keyed_by_colour = false) {
  static const std::regex kColor("^#[0-9A-Fa-f]{6}$");
  if (legend.size() > 32) return Fail(grpc::StatusCode::INVALID_ARGUMENT, "legend: at most 32 entries");
  int unmatched = 0;
  for (int i = 0; i < legend.size(); ++i) {
    const vis::ColorBucket& b = legend[i];
    std::string where = "legend[" + std::to_string(i) + "]: ";
    if (!std::regex_match(b.color(), kColor)) {
      return Fail(grpc::StatusCode::INVALID_ARGUMENT, where + "color must be #RRGGBB, got \"" + b.color() + "\"");
    }
    if (b.description().size() > 4096 || b.name().size() > 256) {
      return Fail(grpc::StatusCode::INVALID_ARGUMENT, where + "description or name too long");
    }
    for (int j = 0; keyed_by_colour && j < i; ++j) {
      if (strcasecmp(legend[j].color().c_str(), b.color().c_str()) == 0) {
        return Fail(grpc::StatusCode::INVALID_ARGUMENT,
                    where + "colour " + b.color() + " is also legend[" + std::to_string(j) +
                        "]'s (a saved legend is keyed by colour, as tb_graph_ascend's Colors)");
      }
    }
    if (b.unmatched()) {
      if (++unmatched > 1) return Fail(grpc::StatusCode::INVALID_ARGUMENT, where + "a second \"unmatched\" entry");
      continue;
    }
    if (!std::isfinite(b.lo()) || !std::isfinite(b.hi()) || b.lo() > b.hi()) {
      return Fail(grpc::StatusCode::INVALID_ARGUMENT, where + "needs finite lo <= hi");
    }
  }
  return grpc::Status::OK;
}

// Metrics apply to statistics compares only: the other modes have no relative errors.
grpc::Status CheckMetricsApply(const OpenGraph& f, uint32_t mask) {
  if (mask == 0 || (f.is_compare() && f.meta().mode() == vis::MODE_STATISTICS)) return grpc::Status::OK;
  return Fail(grpc::StatusCode::FAILED_PRECONDITION,
              f.relative() + ": the relative-error metric colours statistics compares only");
}

}  // namespace

grpc::Status GraphServiceImpl::ShowChoice(const std::shared_ptr<OpenGraph>& file, uint32_t mask,
                                          const google::protobuf::RepeatedPtrField<vis::ColorBucket>* legend) {
  for (int attempt = 0;; ++attempt) {
    uint64_t generation;
    Result<std::vector<double>> values = std::vector<double>();
    {
      std::shared_lock<std::shared_mutex> l(file->mutex());
      generation = file->generation();
      if (mask != 0) values = file->MetricIndexes(mask);
    }
    if (!values.ok()) return Fail(grpc::StatusCode::DATA_LOSS, values.error());
    std::unique_lock<std::shared_mutex> l(file->mutex());
    // An edit in between (a match) changed the details: compute again.
    if (file->generation() != generation && attempt < 3) continue;
    if (legend != nullptr) file->SetLegend(*legend);
    file->ApplyMetrics(mask, *values);
    return grpc::Status::OK;
  }
}

void GraphServiceImpl::ApplySavedChoice(const std::shared_ptr<OpenGraph>& file) {
  std::string rel, error;
  {
    std::shared_lock<std::shared_mutex> l(file->mutex());
    rel = NamesOf(*file).legend;
  }
  // Checked as any file a client names: inside the log directory (a link
  // out of it is refused) and a regular file (a FIFO or device is an error of
  // the legend, never a blocked or endless read).
  bool missing = false;
  auto abs = logdir_.Resolve(rel, true, &missing);
  if (!abs.ok() && missing) return;
  Result<LegendChoice> choice = abs.ok() ? ReadLegendChoice(*abs, rel) : Result<LegendChoice>(abs.error());
  grpc::Status st2 = !choice.ok() ? Fail(grpc::StatusCode::INVALID_ARGUMENT, choice.error())
                                  : CheckLegend(choice->legend);
  if (st2.ok()) {
    std::shared_lock<std::shared_mutex> l(file->mutex());
    st2 = CheckMetricsApply(*file, choice->metrics);
  }
  if (st2.ok()) {
    st2 = ShowChoice(file, choice->metrics, choice->legend.empty() ? nullptr : &choice->legend);
  }
  if (!st2.ok()) {
    std::string m = st2.error_message();
    std::unique_lock<std::shared_mutex> l(file->mutex());
    file->set_legend_error(m.rfind(rel, 0) == 0 ? m : rel + ": " + m);
  }
}

grpc::Status GraphServiceImpl::SetLegend(grpc::ServerContext*, const SetLegendRequest* req, FileInfo* reply) {
  grpc::Status st = CheckLegend(req->legend(), req->save());
  if (!st.ok()) return st;
  std::shared_ptr<OpenGraph> file;
  st = Open(req->file(), {}, &file);
  if (!st.ok()) return st;
  auto mask = ParseMetrics({req->metrics().begin(), req->metrics().end()}, file->relative(), "metrics");
  if (!mask.ok()) return Fail(grpc::StatusCode::INVALID_ARGUMENT, mask.error());
  {
    std::shared_lock<std::shared_mutex> l(file->mutex());
    st = CheckMetricsApply(*file, *mask);
    if (!st.ok()) return st;
  }
  st = ShowChoice(file, *mask, req->legend().empty() ? nullptr : &req->legend());
  if (!st.ok()) return st;
  std::unique_lock<std::shared_mutex> l(file->mutex());
  file->MarkEdited();
  file->set_legend_error("");
  if (req->save()) {
    const std::string rel = NamesOf(*file).legend;
    const std::string abs = InLogDir(rel);
    std::string refused = RefusedTarget(abs);
    if (!refused.empty()) return Fail(grpc::StatusCode::FAILED_PRECONDITION, rel + ": " + refused);
    Status s = WriteAtomically(abs, rel, LegendChoiceText(file->meta().legend(), file->metrics()));
    if (!s.ok()) return Fail(grpc::StatusCode::INTERNAL, s.error());
  }
  *reply = InfoOf(*file);
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::ResetLegend(grpc::ServerContext*, const FileRequest* req, FileInfo* reply) {
  std::shared_ptr<OpenGraph> file;
  grpc::Status st = Open(req->file(), {}, &file);
  if (!st.ok()) return st;
  std::unique_lock<std::shared_mutex> l(file->mutex());
  const std::string rel = NamesOf(*file).legend;
  if (unlink(InLogDir(rel).c_str()) != 0 && errno != ENOENT) {
    return Fail(grpc::StatusCode::INTERNAL, rel + ": cannot remove: " + strerror(errno));
  }
  google::protobuf::RepeatedPtrField<vis::ColorBucket> stored = file->stored_legend();
  file->SetLegend(stored);
  file->ApplyMetrics(0, {});
  file->MarkEdited();
  file->set_legend_error("");
  *reply = InfoOf(*file);
  return grpc::Status::OK;
}

}  // namespace graph_ascend::service
