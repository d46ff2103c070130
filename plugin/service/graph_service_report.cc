// GetProfile and GetReport (issue 32): the layer profile and the HTML report
// of a compare, made by the builder's libraries (builder/profile,
// builder/report) as `graph-ascend info --profile` and `report` make them.
// The hierarchy and the stored verdict come from the file; node details
// through the open file (OpenGraph::Detail), under its shared lock.
#include "graph_service.h"
#include "profile/profile_chart.h"
#include "report/html_report.h"
#include "rpc_answers.h"

namespace graph_ascend::service {

// A compare's index, verdict and details, as the libraries read them.
struct LoadedCompare {
  std::unique_ptr<vis::VisReader> reader;
  vis::SideIndex npu, bench;
  verdict::Verdict verdict;
};

namespace {

grpc::Status Load(const OpenGraph& file, const std::string& relative, LoadedCompare* out) {
  if (!file.is_compare()) {
    return Fail(grpc::StatusCode::FAILED_PRECONDITION, relative + ": a build of one run has no layer profile or report");
  }
  auto reader = vis::VisReader::Open(file.abs_path());
  if (!reader.ok()) return Fail(grpc::StatusCode::DATA_LOSS, reader.error());
  out->reader = std::move(*reader);
  auto npu = vis::LoadSideIndex(*out->reader, vis::SIDE_NPU);
  if (!npu.ok()) return Fail(grpc::StatusCode::DATA_LOSS, npu.error());
  auto bench = vis::LoadSideIndex(*out->reader, vis::SIDE_BENCH);
  if (!bench.ok()) return Fail(grpc::StatusCode::DATA_LOSS, bench.error());
  out->npu = std::move(*npu);
  out->bench = std::move(*bench);
  auto v = verdict::ReadVerdict(*out->reader, out->npu, relative);
  if (!v.ok()) return Fail(grpc::StatusCode::DATA_LOSS, v.error());
  out->verdict = std::move(*v);
  return grpc::Status::OK;
}

profile::DetailFn DetailsOf(const OpenGraph& file) {
  return [&file](vis::Side side, uint32_t node) { return file.Detail(side, node); };
}

}  // namespace

grpc::Status GraphServiceImpl::OpenCompare(const ProfileRequest& req, std::shared_ptr<OpenGraph>* file,
                                           LoadedCompare* in) {
  grpc::Status st = Open(req.file(), {}, file);
  if (!st.ok()) return st;
  if (req.depth() > 1000) return Fail(grpc::StatusCode::INVALID_ARGUMENT, "depth must be at most 1000");
  return Load(**file, req.file(), in);
}

grpc::Status GraphServiceImpl::GetProfile(grpc::ServerContext*, const ProfileRequest* req, ProfileReply* reply) {
  std::shared_ptr<OpenGraph> file;
  LoadedCompare in;
  grpc::Status st = OpenCompare(*req, &file, &in);
  if (!st.ok()) return st;
  for (int k = 0; k < profile::kSeriesCount; ++k) {
    reply->add_series(profile::SeriesName(k));
    reply->add_colour(profile::SeriesColour(k));
  }
  if (file->meta().mode() == vis::MODE_STRUCTURE) {
    reply->set_message("a structure compare holds no values");
    return grpc::Status::OK;
  }
  std::vector<uint32_t> ranked;
  for (const verdict::Entry& e : in.verdict.entries) ranked.push_back(e.node);
  Result<profile::Profile> p = [&] {
    std::shared_lock<std::shared_mutex> l(file->mutex());
    return profile::MakeProfile(profile::HierarchyOf(in.npu, in.bench), DetailsOf(*file), file->meta().mode(),
                                static_cast<int>(req->depth()), ranked);
  }();
  if (!p.ok()) {
    // No layers (or nothing at the depth) is an answer, not a failure: the page says it.
    if (p.error().file.empty()) {
      reply->set_message(p.error().where + ": " + p.error().message);
      return grpc::Status::OK;
    }
    return Fail(grpc::StatusCode::DATA_LOSS, p.error());
  }
  reply->set_available(true);
  reply->set_grouping(p->grouping);
  for (const profile::Point& point : p->points) {
    ProfilePoint* out = reply->add_points();
    out->set_label(point.label);
    out->set_node(point.node);
    out->set_ranked(point.ranked);
    out->set_first(point.first);
    for (const profile::Value& v : point.value) {
      ProfileValue* value = out->add_value();
      value->set_has(v.has);
      value->set_error(v.error);
      value->set_floor(v.floor);
      value->set_node(v.node);
    }
  }
  reply->set_svg(profile::ProfileSvg(*p));
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::GetReport(grpc::ServerContext*, const ProfileRequest* req, ReportReply* reply) {
  std::shared_ptr<OpenGraph> file;
  LoadedCompare in;
  grpc::Status st = OpenCompare(*req, &file, &in);
  if (!st.ok()) return st;
  if (file->meta().mode() == vis::MODE_STRUCTURE) {
    return Fail(grpc::StatusCode::FAILED_PRECONDITION, req->file() + ": a structure compare holds no values to report");
  }
  report::Input r;
  r.name = req->file();  // as the client named it, relative to the log directory
  r.meta = &in.reader->meta();
  r.npu = &in.npu;
  r.bench = &in.bench;
  r.detail = DetailsOf(*file);
  r.verdict = &in.verdict;
  r.depth = static_cast<int>(req->depth());
  Result<std::string> html = [&] {
    std::shared_lock<std::shared_mutex> l(file->mutex());
    return report::RenderReport(r);
  }();
  if (!html.ok()) return Fail(grpc::StatusCode::DATA_LOSS, html.error());
  reply->set_html(std::move(*html));
  std::string name = req->file().substr(req->file().rfind('/') + 1);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".vis") == 0) name.resize(name.size() - 4);
  reply->set_file_name(name + ".report.html");
  return grpc::Status::OK;
}

}  // namespace graph_ascend::service
