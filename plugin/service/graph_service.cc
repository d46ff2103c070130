#include "graph_service.h"

#include <google/protobuf/util/json_util.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mutex>
#include <shared_mutex>

#include "base/temp_files.h"
#include "base/version.h"
#include "formats/foreign_file.h"
#include "legend_choice.h"
#include "rpc_answers.h"

// The handlers live in files by concept: graph_service_view.cc (view, search,
// details), _match.cc, _legend.cc, _insight.cc (divergence, overview),
// _convert.cc; this file opens files and routes the JSON bridge.
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
  auto foreign = ForeignFiles::Open(options.cache_dir.empty() ? DefaultCacheRoot() : options.cache_dir, dir->root());
  if (!foreign.ok()) return foreign.error();
  ConvertQueueOptions convert = ConvertOptionsOf(options, dir->root());
  return std::unique_ptr<GraphServiceImpl>(
      new GraphServiceImpl(std::move(*dir), std::move(*foreign), options, std::move(convert)));
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
      journal_dir_(foreign_.root() + "/edits") {}

grpc::Status GraphServiceImpl::Open(const std::string& relative, const ProgressFn& progress,
                                    std::shared_ptr<GraphFile>* file) {
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
    auto converted = foreign_.Converted(*abs, graph, converting);
    if (!converted.ok()) return Fail(grpc::StatusCode::DATA_LOSS, Relabelled(converted.error(), *abs, file_name));
    converted_open = std::move(*converted);
    open_path = converted_open.path;
    if (converted_open.details) {
      details_file = DetailsOf(converted_open.details, *abs, file_name);
      node_detail = NodeDetailsOf(converted_open.details, *abs, file_name);
    }
  }
  auto f = cache_.Get(open_path, canonical, progress, details_file, node_detail);
  if (!f.ok()) return Fail(grpc::StatusCode::DATA_LOSS, f.error());
  foreign_.StartFill(converted_open);
  *file = std::move(*f);
  ReplayJournalOnce(*file);  // before the saved choice, which recolours what it restores
  if ((*file)->TakeSavedChoiceCheck()) ApplySavedChoice(*file);
  return grpc::Status::OK;
}

BesideNames GraphServiceImpl::NamesOf(const GraphFile& f) const {
  return BesideNamesOf(f.relative(), f.meta().step(), f.meta().rank());
}

std::string GraphServiceImpl::InLogDir(const std::string& relative) const { return logdir_.root() + "/" + relative; }

FileInfo GraphServiceImpl::InfoOf(const GraphFile& f) const {
  FileInfo info = f.Info();
  BesideNames names = NamesOf(f);
  struct stat st;
  info.set_matches_saved(stat(InLogDir(names.match_config).c_str(), &st) == 0);
  info.set_match_config(names.match_config);
  for (const std::string& m : MetricNames(f.metrics())) info.add_metrics(m);
  info.set_legend_saved(stat(InLogDir(names.legend).c_str(), &st) == 0);
  info.set_legend_file(names.legend);
  info.set_legend_error(f.legend_error());
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
void GraphServiceImpl::AddForeignRuns(const RunEntry& e, ListRunsReply* reply) {
  auto abs = logdir_.Resolve(e.path);
  std::vector<ForeignGraph> graphs(1);
  if (abs.ok()) {
    auto listed = foreign_.Graphs(*abs);
    if (listed.ok()) graphs = std::move(*listed);
  }
  std::string stem = e.name.substr(0, e.name.size() - 7);
  for (const ForeignGraph& g : graphs) {
    RunFile* r = reply->add_files();
    r->set_path(g.id.empty() ? e.path : e.path + "#" + g.id);
    r->set_dir(e.dir);
    r->set_name(e.name);
    r->set_group(e.dir.empty() ? stem : e.dir + "/" + stem);
    r->set_step(g.step);
    r->set_rank(g.rank);
    r->set_size(e.size);
    r->set_mtime_unix(e.mtime_unix);
    r->set_kind(stem.rfind("build", 0) == 0 ? "build" : stem.rfind("compare", 0) == 0 ? "compare" : "");
  }
}

grpc::Status GraphServiceImpl::ListRuns(grpc::ServerContext*, const ListRunsRequest*, ListRunsReply* reply) {
  for (const RunEntry& e : logdir_.ListRuns()) {
    if (EndsWith(e.name, ".vis.db")) {
      AddForeignRuns(e, reply);
      continue;
    }
    RunFile* r = reply->add_files();
    r->set_path(e.path);
    r->set_dir(e.dir);
    r->set_name(e.name);
    r->set_group(e.group);
    r->set_step(e.step);
    r->set_rank(e.rank);
    r->set_size(e.size);
    r->set_mtime_unix(e.mtime_unix);
    r->set_kind(e.kind);
  }
  return grpc::Status::OK;
}

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
  std::shared_ptr<GraphFile> file;
  grpc::Status st = Open(req->file(), progress, &file);
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
  std::shared_ptr<GraphFile> file;
  grpc::Status st = Open(req->file(), {}, &file);
  if (!st.ok()) return st;
  std::shared_lock<std::shared_mutex> l(file->mutex());
  *reply = InfoOf(*file);
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::OpenView(const ViewKey& key, ViewAccess* access) {
  grpc::Status st = Open(key.file(), {}, &access->file);
  if (!st.ok()) return st;
  access->lock = std::shared_lock<std::shared_mutex>(access->file->mutex());
  return CheckView(*access->file, key, &access->graph);
}

template <typename Req, typename Rep>
grpc::Status GraphServiceImpl::Bridge(grpc::Status (GraphServiceImpl::*method)(grpc::ServerContext*, const Req*, Rep*),
                                      grpc::ServerContext* ctx, const std::string& json, std::string* out) {
  Req req;
  google::protobuf::util::JsonParseOptions parse;
  parse.ignore_unknown_fields = false;
  auto parsed = google::protobuf::util::JsonStringToMessage(json.empty() ? "{}" : json, &req, parse);
  if (!parsed.ok()) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT,
                "bad " + Req::descriptor()->name() + " JSON: " + std::string(parsed.message()));
  }
  Rep rep;
  grpc::Status st = (this->*method)(ctx, &req, &rep);
  if (!st.ok()) return st;
  google::protobuf::util::JsonPrintOptions print;
  print.always_print_primitive_fields = true;
  auto printed = google::protobuf::util::MessageToJsonString(rep, out, print);
  if (!printed.ok()) return Fail(grpc::StatusCode::INTERNAL, std::string(printed.message()));
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::CallJson(grpc::ServerContext* ctx, const JsonCall* req, JsonReply* reply) {
  const std::string& m = req->method();
  const std::string& in = req->request_json();
  std::string* out = reply->mutable_reply_json();
  if (m == "Health") return Bridge(&GraphServiceImpl::HealthReplyOf, ctx, in, out);
  if (m == "ListRuns") return Bridge(&GraphServiceImpl::ListRuns, ctx, in, out);
  if (m == "GetFileInfo") return Bridge(&GraphServiceImpl::GetFileInfo, ctx, in, out);
  if (m == "GetView") return Bridge(&GraphServiceImpl::GetView, ctx, in, out);
  if (m == "Expand") return Bridge(&GraphServiceImpl::Expand, ctx, in, out);
  if (m == "Collapse") return Bridge(&GraphServiceImpl::Collapse, ctx, in, out);
  if (m == "Reveal") return Bridge(&GraphServiceImpl::Reveal, ctx, in, out);
  if (m == "Search") return Bridge(&GraphServiceImpl::Search, ctx, in, out);
  if (m == "Filter") return Bridge(&GraphServiceImpl::Filter, ctx, in, out);
  if (m == "GetNodeDetail") return Bridge(&GraphServiceImpl::GetNodeDetail, ctx, in, out);
  if (m == "Match") return Bridge(&GraphServiceImpl::Match, ctx, in, out);
  if (m == "Unmatch") return Bridge(&GraphServiceImpl::Unmatch, ctx, in, out);
  if (m == "SaveMatches") return Bridge(&GraphServiceImpl::SaveMatches, ctx, in, out);
  if (m == "LoadMatches") return Bridge(&GraphServiceImpl::LoadMatches, ctx, in, out);
  if (m == "SetLegend") return Bridge(&GraphServiceImpl::SetLegend, ctx, in, out);
  if (m == "GetDivergence") return Bridge(&GraphServiceImpl::GetDivergence, ctx, in, out);
  if (m == "ResetLegend") return Bridge(&GraphServiceImpl::ResetLegend, ctx, in, out);
  if (m == "ListMatchConfigs") return Bridge(&GraphServiceImpl::ListMatchConfigs, ctx, in, out);
  if (m == "ConvertInputs") return Bridge(&GraphServiceImpl::ConvertInputs, ctx, in, out);
  if (m == "ConvertPlan") return Bridge(&GraphServiceImpl::ConvertPlan, ctx, in, out);
  if (m == "ConvertStart") return Bridge(&GraphServiceImpl::ConvertStart, ctx, in, out);
  if (m == "ConvertCancel") return Bridge(&GraphServiceImpl::ConvertCancel, ctx, in, out);
  if (m == "ConvertList") return Bridge(&GraphServiceImpl::ConvertList, ctx, in, out);
  if (m == "GetOverview") return Bridge(&GraphServiceImpl::GetOverview, ctx, in, out);
  if (m == "ReproScript") return Bridge(&GraphServiceImpl::ReproScript, ctx, in, out);

  if (m == "GetCkpt") return Bridge(&GraphServiceImpl::GetCkpt, ctx, in, out);
  return Fail(grpc::StatusCode::NOT_FOUND, "no unary API method " + m);
}

}  // namespace graph_ascend::service
