#include "graph_service.h"

#include <sys/stat.h>
#include <unistd.h>

#include <mutex>
#include <shared_mutex>

#include "base/temp_files.h"
#include "base/version.h"
#include "formats/foreign_file.h"
#include "legend_choice.h"
#include "rpc_answers.h"
#include "runs_info.h"

// The handlers live in files by concept: graph_service_view.cc (view, search,
// details), _match.cc, _legend.cc, _insight.cc (divergence, overview),
// _convert.cc, _runs.cc (the runs listing); this file opens files and routes
// the JSON bridge.
namespace graph_ascend::service {

namespace {

// The graph-ascend executable installed beside graph-ascend-server.
std::string BuilderBesideServer() {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return "graph-ascend";
  std::string path(self, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/') + 1) + "graph-ascend";
}

ConvertQueueOptions ConvertOptionsOf(const ServiceOptions& options, const std::string& root) {
  ConvertQueueOptions c;
  c.builder = options.builder.empty() ? BuilderBesideServer() : options.builder;
  c.orphan_seconds = options.convert_orphan_seconds;
  c.term_grace = std::chrono::milliseconds(options.convert_term_grace_ms);
  struct stat st;
  bool owned = stat(root.c_str(), &st) == 0 && st.st_uid == geteuid();
  switch (options.allow_convert) {
    case ServiceOptions::Convert::kOn:
      c.allowed = true;
      break;
    case ServiceOptions::Convert::kOff:
      c.allowed = false;
      c.not_allowed_reason = "the server was started with --allow-convert off";
      break;
    case ServiceOptions::Convert::kAuto:
      c.allowed = owned;
      if (!owned) {
        c.not_allowed_reason = "the log directory belongs to another user (start the server with --allow-convert on "
                               "to convert anyway)";
      }
      break;
  }
  return c;
}

}  // namespace

Result<std::unique_ptr<GraphServiceImpl>> GraphServiceImpl::Create(const ServiceOptions& options) {
  auto dir = LogDir::Open(options.logdir);
  if (!dir.ok()) return dir.error();
  auto foreign = ForeignFiles::Open(options.cache_dir.empty() ? DefaultCacheRoot() : options.cache_dir, dir->root(),
                                    options.opening_nodes, options.before_index, options.first_screen_wait);
  if (!foreign.ok()) return foreign.error();
  ConvertQueueOptions convert = ConvertOptionsOf(options, dir->root());
  std::unique_ptr<GraphServiceImpl> service(
      new GraphServiceImpl(std::move(*dir), std::move(*foreign), options, std::move(convert)));
  auto bridge = JsonBridge::Build(Descriptor(), service->JsonHandlers(), {"CallJson"});
  if (!bridge.ok()) return bridge.error();
  service->json_ = std::move(*bridge);
  return service;
}

GraphServiceImpl::GraphServiceImpl(LogDir logdir, ForeignFiles foreign, const ServiceOptions& options,
                                   ConvertQueueOptions convert)
    : logdir_(std::move(logdir)),
      max_answer_bytes_(options.max_answer_bytes),
      on_match_read_(options.on_match_read),
      foreign_(std::move(foreign)),
      cache_(options.cache_bytes),
      views_(options.max_views, options.views_bytes, options.idle_seconds, foreign_.root() + "/views"),
      convert_(logdir_, std::move(convert)),
      journal_dir_(foreign_.root() + "/edits"),
      journal_compact_bytes_(options.journal_compact_bytes) {}

grpc::Status GraphServiceImpl::Open(const std::string& relative, const ProgressFn& progress,
                                    std::shared_ptr<OpenGraph>* file, bool whole_index, ForeignOpen* foreign) {
  if (relative.empty())
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, "file: missing (a .vis path relative to the log directory)");
  // msprobe's .vis.db (one listed name per step and rank: "run.vis.db#step0_rank1").
  std::string file_name, graph;
  SplitForeignName(relative, &file_name, &graph);
  bool db = EndsWith(file_name, ".vis.db");
  if (!EndsWith(file_name, ".vis") && !db) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, relative + ": not a .vis or .vis.db file name");
  }
  bool missing = false;
  auto abs = logdir_.Resolve(file_name, true, &missing);
  if (!abs.ok()) return Fail(missing ? grpc::StatusCode::NOT_FOUND : grpc::StatusCode::INVALID_ARGUMENT, abs.error());
  // One name per file: the path of its real file under the log directory, so
  // that a file opened through a symlink and through its target is one open
  // file with one name, and its config is written beside the real file.
  const std::string& root = logdir_.root();
  std::string canonical =
      abs->size() > root.size() && abs->compare(0, root.size() + 1, root + "/") == 0 ? abs->substr(root.size() + 1)
                                                                                    : file_name;
  if (!graph.empty()) canonical += "#" + graph;
  std::string open_path = *abs;
  DetailsFileFn details_file;
  NodeDetailFn node_detail;  // until the details are written
  ForeignOpen converted_open;  // an index-only file: its details written once it is open
  auto format = formats::DetectFormat(*abs);
  if (db || (format.ok() && *format != formats::FileFormat::kVis)) {
    if (progress) progress(0, "converting");
    std::function<void(double)> converting;
    if (progress) converting = [&progress](double f) { progress(f, "converting"); };
    auto converted = foreign_.Converted(*abs, graph, converting, whole_index);
    if (!converted.ok()) return Fail(grpc::StatusCode::DATA_LOSS, Relabelled(converted.error(), *abs, file_name));
    converted_open = std::move(*converted);
    open_path = converted_open.path;
    if (converted_open.details) {
      details_file = DetailsOf(converted_open.details, *abs, file_name);
      node_detail = NodeDetailsOf(converted_open.details, *abs, file_name, open_path);
    }
  }
  auto f = cache_.Get(open_path, canonical, progress, details_file, node_detail, converted_open.index);
  if (!f.ok()) return Fail(grpc::StatusCode::DATA_LOSS, f.error());
  foreign_.StartFill(converted_open);
  if (foreign != nullptr) *foreign = converted_open;
  *file = std::move(*f);
  ReplayJournalOnce(*file);  // before the saved choice, which recolours what it restores
  if ((*file)->TakeSavedChoiceCheck()) ApplySavedChoice(*file);
  return grpc::Status::OK;
}

BesideNames GraphServiceImpl::NamesOf(const OpenGraph& f) const {
  return BesideNamesOf(f.relative(), f.meta().step(), f.meta().rank());
}

std::string GraphServiceImpl::InLogDir(const std::string& relative) const { return logdir_.root() + "/" + relative; }

FileInfo GraphServiceImpl::InfoOf(const OpenGraph& f) const {
  FileInfo info = f.Info();
  BesideNames names = NamesOf(f);
  struct stat st;
  info.set_matches_saved(stat(InLogDir(names.match_config).c_str(), &st) == 0);
  info.set_match_config(names.match_config);
  for (const std::string& m : MetricNames(f.metrics())) info.add_metrics(m);
  info.set_legend_saved(stat(InLogDir(names.legend).c_str(), &st) == 0);
  info.set_legend_file(names.legend);
  info.set_legend_error(f.legend_error());
  RunsInfo runs;
  FillRunsInfo(logdir_, &runs_summaries_, f.relative(), &runs);
  if (runs.runs_size() > 0 || !runs.error().empty()) *info.mutable_runs() = std::move(runs);
  return info;
}

void GraphServiceImpl::RemoveTemporaries() const {
  RemoveTemporariesNow();
  foreign_.RemoveTemporaries();
}

grpc::ServerUnaryReactor* GraphServiceImpl::Health(grpc::CallbackServerContext* ctx, const HealthRequest* req,
                                                   HealthReply* reply) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(HealthReplyOf(nullptr, req, reply));
  return reactor;
}

grpc::Status GraphServiceImpl::HealthReplyOf(grpc::ServerContext*, const HealthRequest*, HealthReply* reply) {
  reply->set_version(kVersion);
  reply->set_logdir(logdir_.root());
  reply->set_open_files(static_cast<uint32_t>(cache_.open_files()));
  reply->set_sessions(static_cast<uint32_t>(views_.sessions()));
  return grpc::Status::OK;
}

// One listed file per graph of a .vis.db, grouped like a batch (the steps and
// ranks become the page's pickers). A file SQLite cannot read is listed once;
// opening it reports why.
grpc::Status GraphServiceImpl::OpenFile(grpc::ServerContext* ctx, const FileRequest* req,
                                        grpc::ServerWriter<OpenProgress>* writer) {
  std::mutex write_mu;
  double last = -1;
  std::string last_stage;
  bool client_gone = false;
  auto progress = [&](double f, const std::string& stage) {
    std::lock_guard<std::mutex> l(write_mu);
    if (client_gone || (f - last < 0.01 && stage == last_stage)) return;
    last = f;
    last_stage = stage;
    OpenProgress p;
    p.set_fraction(f);
    p.set_stage(stage);
    if (ctx->IsCancelled() || !writer->Write(p)) client_gone = true;  // the file still opens into the cache
  };
  std::shared_ptr<OpenGraph> file;
  grpc::Status st = Open(req->file(), progress, &file, false);
  if (!st.ok()) return st;
  OpenProgress done;
  done.set_fraction(1.0);
  done.set_stage("done");
  done.set_done(true);
  {
    std::shared_lock<std::shared_mutex> l(file->mutex());
    *done.mutable_info() = InfoOf(*file);
  }
  std::lock_guard<std::mutex> l(write_mu);
  writer->Write(done);
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::GetFileInfo(grpc::ServerContext*, const FileRequest* req, FileInfo* reply) {
  std::shared_ptr<OpenGraph> file;
  grpc::Status st = Open(req->file(), {}, &file, false);
  if (!st.ok()) return st;
  std::shared_lock<std::shared_mutex> l(file->mutex());
  *reply = InfoOf(*file);
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::OpenView(const ViewKey& key, ViewAccess* access, bool whole_index) {
  grpc::Status st = Open(key.file(), {}, &access->file, whole_index, &access->foreign);
  if (!st.ok()) return st;
  access->lock = std::shared_lock<std::shared_mutex>(access->file->mutex());
  return CheckView(*access->file, key, &access->graph);
}

// The JSON bridge's handlers: every unary method but CallJson. JsonBridge::Build
// checks them against the proto's method list, so a new method missing here
// stops the server at its start (Create).
std::vector<JsonBridge::Handler> GraphServiceImpl::JsonHandlers() {
  using S = GraphServiceImpl;
  return {
      JsonHandler("Health", this, &S::HealthReplyOf),
      JsonHandler("ListRuns", this, &S::ListRuns),
      JsonHandler("GetFileInfo", this, &S::GetFileInfo),
      JsonHandler("GetView", this, &S::GetView),
      JsonHandler("Expand", this, &S::Expand),
      JsonHandler("Collapse", this, &S::Collapse),
      JsonHandler("Reveal", this, &S::Reveal),
      JsonHandler("Search", this, &S::Search),
      JsonHandler("Filter", this, &S::Filter),
      JsonHandler("GetNodeDetail", this, &S::GetNodeDetail),
      JsonHandler("Match", this, &S::Match),
      JsonHandler("Unmatch", this, &S::Unmatch),
      JsonHandler("SaveMatches", this, &S::SaveMatches),
      JsonHandler("LoadMatches", this, &S::LoadMatches),
      JsonHandler("SetLegend", this, &S::SetLegend),
      JsonHandler("GetDivergence", this, &S::GetDivergence),
      JsonHandler("GetProfile", this, &S::GetProfile),
      JsonHandler("GetReport", this, &S::GetReport),
      JsonHandler("ResetLegend", this, &S::ResetLegend),
      JsonHandler("ListMatchConfigs", this, &S::ListMatchConfigs),
      JsonHandler("ConvertInputs", this, &S::ConvertInputs),
      JsonHandler("ConvertPlan", this, &S::ConvertPlan),
      JsonHandler("ConvertStart", this, &S::ConvertStart),
      JsonHandler("ConvertCancel", this, &S::ConvertCancel),
      JsonHandler("ConvertList", this, &S::ConvertList),
      JsonHandler("GetOverview", this, &S::GetOverview),
      JsonHandler("ReproScript", this, &S::ReproScript),
      JsonHandler("GetCkpt", this, &S::GetCkpt),
      JsonHandler("ListNodes", this, &S::ListNodes),
      JsonHandler("TensorView", this, &S::TensorView),
  };
}

grpc::Status GraphServiceImpl::CallJson(grpc::ServerContext* ctx, const JsonCall* req, JsonReply* reply) {
  return json_.Call(ctx, req->method(), req->request_json(), reply->mutable_reply_json());
}

const google::protobuf::ServiceDescriptor& GraphServiceImpl::Descriptor() {
  return *google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(GraphService::service_full_name());
}

}  // namespace graph_ascend::service
