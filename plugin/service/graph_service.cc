#include "graph_service.h"

#include "formats/foreign_file.h"

#include <google/protobuf/util/json_util.h>
#include <sys/stat.h>
#include <unistd.h>

#include <strings.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <regex>
#include <shared_mutex>

#include "base/temp_files.h"
#include "base/version.h"
#include "config_files.h"
#include "convert_inputs.h"
#include "divergence/divergence.h"
#include "legend_choice.h"
#include "manual_match.h"
#include "node_query.h"

namespace graph_ascend::service {
namespace {

constexpr uint32_t kDefaultLimit = 200;
constexpr uint32_t kMaxLimit = 10000;
// Ancestors listed per hit or summary (the nearest ones).
constexpr size_t kMaxAncestors = 100;
// Viewport coordinates and sizes (layout units) a request may give: sums of
// two of them stay inside int32.
constexpr int64_t kMaxCoordinate = int64_t{1} << 30;
// Error messages echo request fields (file names, colours): cut so that the
// status fits gRPC's metadata limit (16 KiB) and stays readable.
constexpr size_t kMaxMessageBytes = 1024;

std::string Clip(const std::string& message) {
  if (message.size() <= kMaxMessageBytes) return message;
  size_t cut = kMaxMessageBytes;
  while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 char
  return message.substr(0, cut) + "... (" + std::to_string(message.size()) + " bytes)";
}

grpc::Status Fail(grpc::StatusCode code, const std::string& message) { return grpc::Status(code, Clip(message)); }
grpc::Status Fail(grpc::StatusCode code, const Error& e) { return Fail(code, e.ToString()); }

// The nearest kMaxAncestors ancestors' names into `names`; returns how many nearer the root were left out.
uint32_t AddAncestors(const SideGraph& g, uint32_t n, google::protobuf::RepeatedPtrField<std::string>* names) {
  std::vector<uint32_t> path = g.Ancestors(n, kMaxAncestors);
  for (uint32_t a : path) names->Add(std::string(g.name(a)));
  return g.depth(n) > static_cast<int32_t>(path.size()) ? static_cast<uint32_t>(g.depth(n)) - path.size() : 0;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

const char* SideName(vis::Side s) { return s == vis::SIDE_NPU ? "NPU" : "Bench"; }

void FillSummary(const GraphFile& f, vis::Side side, uint32_t n, vis::Grading grading, NodeSummary* s) {
  const SideGraph& g = *f.side(side);
  s->set_index(static_cast<int32_t>(n));
  s->set_name(std::string(g.name(n)));
  s->set_node_type(g.node_type(n));
  s->set_parent(g.parent(n));
  s->set_ancestors_omitted(AddAncestors(g, n, s->mutable_ancestors()));
  s->set_micro_step(g.micro_step(n));
  s->set_has_precision(g.has_precision(n));
  s->set_precision_index(g.has_precision(n) ? g.precision(n) : 0);
  s->set_bucket(g.bucket(n, grading));
  s->set_has_grade(g.has_grade(n));
  s->set_grade_index(g.has_grade(n) ? g.grade(n) : 0);
  s->set_overflow(static_cast<vis::OverflowLevel>(g.overflow(n)));
  s->set_matched(g.matched(n));
  if (g.matched(n) >= 0 && f.is_compare()) {
    s->set_matched_name(std::string(f.other(side).name(static_cast<uint32_t>(g.matched(n)))));
  }
  s->set_child_count(g.child_count(n));
}

grpc::Status FillHits(const SideGraph& g, vis::Grading grading, const std::vector<uint32_t>& hits, uint32_t offset,
                      uint32_t limit, size_t max_bytes, NodeList* out) {
  out->set_total(static_cast<uint32_t>(hits.size()));
  if (limit == 0) limit = kDefaultLimit;
  limit = std::min(limit, kMaxLimit);
  size_t bytes = 0;
  for (size_t i = offset; i < hits.size() && i < static_cast<size_t>(offset) + limit; ++i) {
    uint32_t n = hits[i];
    NodeHit* h = out->add_hits();
    h->set_index(static_cast<int32_t>(n));
    h->set_name(std::string(g.name(n)));
    h->set_ancestors_omitted(AddAncestors(g, n, h->mutable_ancestors()));
    bytes += h->ByteSizeLong();
    if (bytes > max_bytes) {
      out->Clear();
      return Fail(grpc::StatusCode::OUT_OF_RANGE, "the answer would exceed " + std::to_string(max_bytes) +
                                                      " bytes at hit " + std::to_string(i - offset) +
                                                      ": ask for fewer hits (a smaller limit)");
    }
    h->set_bucket(g.bucket(n, grading));
    h->set_overflow(static_cast<vis::OverflowLevel>(g.overflow(n)));
    h->set_has_precision(g.has_precision(n));
    h->set_precision_index(g.has_precision(n) ? g.precision(n) : 0);
    h->set_has_grade(g.has_grade(n));
    h->set_grade_index(g.has_grade(n) ? g.grade(n) : 0);
  }
  return grpc::Status::OK;
}

grpc::Status CheckViewport(const Rect& r) {
  auto in = [](int64_t v, int64_t lo) { return v >= lo && v <= kMaxCoordinate; };
  if (!in(r.x(), -kMaxCoordinate) || !in(r.y(), -kMaxCoordinate) || !in(r.width(), 0) || !in(r.height(), 0)) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, "viewport: x and y must lie in [-2^30, 2^30], width and height in "
                                                    "[0, 2^30]");
  }
  return grpc::Status::OK;
}

// Checks the view key against the open file; returns the side graph.
grpc::Status CheckView(const GraphFile& f, const ViewKey& key, const SideGraph** g) {
  if (key.session().empty() || key.session().size() > 128) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, "view.session must be a non-empty id of at most 128 characters");
  }
  if (key.side() != vis::SIDE_NPU && key.side() != vis::SIDE_BENCH) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, "view.side must be SIDE_NPU or SIDE_BENCH");
  }
  *g = f.side(key.side());
  if (*g == nullptr) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, f.relative() + ": a build file has no Bench side");
  }
  int32_t m = key.micro_step();
  if (m < -1 || (m >= 0 && static_cast<uint32_t>(m) >= std::max<uint32_t>(1, f.meta().micro_steps()))) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT,
                f.relative() + ": micro step " + std::to_string(m) + " out of range (-1 for all, 0.." +
                    std::to_string(std::max<uint32_t>(1, f.meta().micro_steps()) - 1) + ")");
  }
  return grpc::Status::OK;
}

grpc::Status CheckNode(const GraphFile& f, vis::Side side, const SideGraph& g, int64_t node) {
  if (!g.valid(node)) {
    return Fail(grpc::StatusCode::NOT_FOUND, f.relative() + ": " + SideName(side) + " node " + std::to_string(node) +
                                                 " does not exist (the side has " + std::to_string(g.size()) +
                                                 " nodes)");
  }
  return grpc::Status::OK;
}

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

}  // namespace

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
      foreign_(std::move(foreign)),
      cache_(options.cache_bytes),
      views_(options.max_views, options.views_bytes, options.idle_seconds),
      convert_(logdir_, std::move(convert)) {}

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
  auto format = formats::DetectFormat(*abs);
  if (db || (format.ok() && *format != formats::FileFormat::kVis)) {
    if (progress) progress(0, "converting");
    std::function<void(double)> converting;
    if (progress) converting = [&progress](double f) { progress(f, "converting"); };
    auto converted = foreign_.Converted(*abs, graph, converting);
    if (!converted.ok()) {
      Error e = converted.error();
      if (e.file == *abs) e.file = file_name;
      return Fail(grpc::StatusCode::DATA_LOSS, e);
    }
    open_path = *converted;
  }
  auto f = cache_.Get(open_path, canonical, progress);
  if (!f.ok()) return Fail(grpc::StatusCode::DATA_LOSS, f.error());
  *file = std::move(*f);
  if ((*file)->TakeSavedChoiceCheck()) ApplySavedChoice(*file);
  return grpc::Status::OK;
}

BesideNames GraphServiceImpl::NamesOf(const GraphFile& f) const {
  return BesideNamesOf(f.relative(), f.meta().step(), f.meta().rank());
}

std::string GraphServiceImpl::InLogDir(const std::string& relative) const { return logdir_.root() + "/" + relative; }

grpc::Status GraphServiceImpl::ShowChoice(const std::shared_ptr<GraphFile>& file, uint32_t mask,
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

namespace {

// Metrics apply to statistics compares only: the other modes have no relative errors.
grpc::Status CheckMetricsApply(const GraphFile& f, uint32_t mask) {
  if (mask == 0 || (f.is_compare() && f.meta().mode() == vis::MODE_STATISTICS)) return grpc::Status::OK;
  return Fail(grpc::StatusCode::FAILED_PRECONDITION,
              f.relative() + ": the relative-error metric colours statistics compares only");
}

}  // namespace

void GraphServiceImpl::ApplySavedChoice(const std::shared_ptr<GraphFile>& file) {
  std::string rel, error;
  {
    std::shared_lock<std::shared_mutex> l(file->mutex());
    rel = NamesOf(*file).legend;
  }
  struct stat st;
  if (stat(InLogDir(rel).c_str(), &st) != 0) return;
  auto choice = ReadLegendChoice(InLogDir(rel), rel);
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

grpc::Status GraphServiceImpl::DoView(const ViewKey& key, ViewOp op, int32_t node, const Rect* viewport, bool from_node,
                                      ViewReply* reply) {
  if (viewport != nullptr) {
    grpc::Status vst = CheckViewport(*viewport);
    if (!vst.ok()) return vst;
  }
  ViewAccess access;
  grpc::Status st = OpenView(key, &access);
  if (!st.ok()) return st;
  const std::shared_ptr<GraphFile>& file = access.file;
  const SideGraph* g = access.graph;
  const vis::Grading grading = file->GradingOf(key);
  if (op != ViewOp::kGet) {
    st = CheckNode(*file, key.side(), *g, node);
    if (!st.ok()) return st;
  }
  auto view = views_.Get(key.session(), file->id(), key.side(), key.micro_step());
  std::lock_guard<std::mutex> view_lock(view->mu);
  Status s = Status::Ok();
  switch (op) {
    case ViewOp::kGet:
      break;
    case ViewOp::kExpand:
      s = view->state.Expand(*g, static_cast<uint32_t>(node));
      break;
    case ViewOp::kCollapse:
      s = view->state.Collapse(*g, static_cast<uint32_t>(node));
      break;
    case ViewOp::kReveal:
      s = view->state.Reveal(*g, static_cast<uint32_t>(node));
      break;
  }
  if (!s.ok()) {
    Error e = s.error();
    e.file = file->relative() + " (" + SideName(key.side()) + ")";
    return Fail(grpc::StatusCode::FAILED_PRECONDITION, e);
  }
  view->state.Update(*g);
  view->bytes = view->state.MemoryBytes();
  reply->set_total_visible(view->state.total_visible());
  reply->set_width(view->state.width());
  reply->set_height(view->state.height());
  reply->set_focus(op == ViewOp::kGet ? -1 : node);
  std::vector<LayoutBox> boxes;
  if (viewport != nullptr && viewport->width() > 0 && viewport->height() > 0) {
    Viewport v{viewport->x(), viewport->y(), viewport->width(), viewport->height()};
    LayoutBox at;
    if (from_node && op != ViewOp::kGet && view->state.Locate(*g, static_cast<uint32_t>(node), &at)) {
      // Relative to the node: the absolute corner is checked again.
      Rect absolute = *viewport;
      absolute.set_x(static_cast<int32_t>(std::clamp<int64_t>(int64_t{v.x} + at.x, INT32_MIN, INT32_MAX)));
      absolute.set_y(static_cast<int32_t>(std::clamp<int64_t>(int64_t{v.y} + at.y, INT32_MIN, INT32_MAX)));
      st = CheckViewport(absolute);
      if (!st.ok()) return st;
      v.x = absolute.x();
      v.y = absolute.y();
    }
    boxes = view->state.Cut(*g, v);
    Rect* applied = reply->mutable_viewport();
    applied->set_x(v.x);
    applied->set_y(v.y);
    applied->set_width(v.width);
    applied->set_height(v.height);
  } else {
    boxes = view->state.Layout(*g);
  }
  const size_t count = boxes.size();
  reply->mutable_nodes()->Reserve(static_cast<int>(count));
  std::shared_ptr<const GraphFile::Marks> marks = file->DivergenceMarks(key.side());
  for (size_t k = 0; k < count; ++k) {
    const LayoutBox& b = boxes[k];
    const uint32_t n = b.node;
    LayoutNode* out = reply->add_nodes();
    out->set_index(static_cast<int32_t>(n));
    out->set_name(std::string(g->name(n)));
    out->set_label(std::string(Label(*g, n)));
    out->set_x(b.x);
    out->set_y(b.y);
    out->set_width(b.width);
    out->set_height(b.height);
    out->set_node_type(g->node_type(n));
    out->set_expandable(b.expandable);
    out->set_expanded(b.expanded);
    out->set_parent(b.parent_box < 0 ? -1 : static_cast<int32_t>(boxes[b.parent_box].node));
    out->set_depth(b.depth);
    out->set_has_precision(g->has_precision(n));
    out->set_precision_index(g->has_precision(n) ? g->precision(n) : 0);
    out->set_bucket(g->bucket(n, grading));
    out->set_has_grade(g->has_grade(n));
    out->set_grade_index(g->has_grade(n) ? g->grade(n) : 0);
    out->set_overflow(static_cast<vis::OverflowLevel>(g->overflow(n)));
    out->set_matched(g->matched(n));
    out->set_distributed((g->flags(n) & vis::FLAG_DISTRIBUTED) != 0);
    out->set_divergent((marks->mark[n] & GraphFile::kDivergent) != 0);
    out->set_contains_divergence((marks->mark[n] & GraphFile::kContains) != 0);
    out->set_worst_descendant_bucket(marks->worst[n]);
  }
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::GetView(grpc::ServerContext*, const ViewRequest* req, ViewReply* reply) {
  return DoView(req->view(), ViewOp::kGet, -1, req->has_viewport() ? &req->viewport() : nullptr, false, reply);
}
grpc::Status GraphServiceImpl::Expand(grpc::ServerContext*, const NodeRequest* req, ViewReply* reply) {
  return DoView(req->view(), ViewOp::kExpand, req->node(), req->has_viewport() ? &req->viewport() : nullptr,
                req->viewport_from_node(), reply);
}
grpc::Status GraphServiceImpl::Collapse(grpc::ServerContext*, const NodeRequest* req, ViewReply* reply) {
  return DoView(req->view(), ViewOp::kCollapse, req->node(), req->has_viewport() ? &req->viewport() : nullptr,
                req->viewport_from_node(), reply);
}
grpc::Status GraphServiceImpl::Reveal(grpc::ServerContext*, const NodeRequest* req, ViewReply* reply) {
  return DoView(req->view(), ViewOp::kReveal, req->node(), req->has_viewport() ? &req->viewport() : nullptr,
                req->viewport_from_node(), reply);
}

grpc::Status GraphServiceImpl::Search(grpc::ServerContext*, const SearchRequest* req, NodeList* reply) {
  ViewAccess view;
  grpc::Status st = OpenView(req->view(), &view);
  if (!st.ok()) return st;
  const std::shared_ptr<GraphFile>& file = view.file;
  const SideGraph* g = view.graph;
  SearchSpec spec{req->query(), req->regex(), req->case_insensitive(), req->view().micro_step()};
  std::string key = std::to_string(req->view().side()) + (spec.regex ? "r" : "s") +
                    (spec.case_insensitive ? "i" : "c") + std::to_string(spec.micro_step) + "/" + spec.query;
  GraphFile::Hits hits = file->CachedSearch(key);
  if (hits == nullptr) {
    auto found = SearchNodes(*g, spec);
    if (!found.ok()) return Fail(grpc::StatusCode::INVALID_ARGUMENT, found.error());
    hits = std::make_shared<const std::vector<uint32_t>>(std::move(*found));
    file->CacheSearch(key, hits);
  }
  return FillHits(*g, file->GradingOf(req->view()), *hits, req->offset(), req->limit(), max_answer_bytes_, reply);
}

grpc::Status GraphServiceImpl::Filter(grpc::ServerContext*, const FilterRequest* req, NodeList* reply) {
  ViewAccess view;
  grpc::Status st = OpenView(req->view(), &view);
  if (!st.ok()) return st;
  const std::shared_ptr<GraphFile>& file = view.file;
  const SideGraph* g = view.graph;
  FilterSpec spec;
  spec.grading = file->GradingOf(req->view());
  const int legend_size = file->Legend(spec.grading).size();
  for (int32_t b : req->buckets()) {
    if (b < 0 || b >= legend_size) {
      return Fail(grpc::StatusCode::INVALID_ARGUMENT, file->relative() + ": bucket " + std::to_string(b) +
                                                          " is not in the legend (" + std::to_string(legend_size) +
                                                          " entries)");
    }
    spec.buckets.push_back(b);
  }
  for (int o : req->overflow()) {
    if (o < vis::OVERFLOW_MEDIUM || o > vis::OVERFLOW_CRITICAL) {
      return Fail(grpc::StatusCode::INVALID_ARGUMENT, "overflow levels are MEDIUM, HIGH or CRITICAL");
    }
    spec.overflow.push_back(static_cast<uint32_t>(o));
  }
  spec.unmatched = req->unmatched();
  spec.leaves_only = req->leaves_only();
  spec.micro_step = req->view().micro_step();
  return FillHits(*g, spec.grading, FilterNodes(*g, file->is_compare(), spec), req->offset(), req->limit(),
                  max_answer_bytes_, reply);
}

grpc::Status GraphServiceImpl::GetNodeDetail(grpc::ServerContext*, const NodeRequest* req, NodeDetailReply* reply) {
  ViewAccess view;
  grpc::Status st = OpenView(req->view(), &view);
  if (!st.ok()) return st;
  const std::shared_ptr<GraphFile>& file = view.file;
  const SideGraph* g = view.graph;
  vis::Side side = req->view().side();
  st = CheckNode(*file, side, *g, req->node());
  if (!st.ok()) return st;
  auto fill = [&](vis::Side s, uint32_t n, NodeSummary* summary, vis::NodeDetail* detail,
                  google::protobuf::RepeatedPtrField<std::string>* stack) -> grpc::Status {
    FillSummary(*file, s, n, file->GradingOf(req->view()), summary);
    auto d = file->Detail(s, n);
    if (!d.ok()) return Fail(grpc::StatusCode::DATA_LOSS, d.error());
    auto frames = file->Stack(s, d->stack_id());
    if (!frames.ok()) return Fail(grpc::StatusCode::DATA_LOSS, frames.error());
    for (auto& f : *frames) stack->Add(std::move(f));
    *detail = std::move(*d);
    return grpc::Status::OK;
  };
  uint32_t n = static_cast<uint32_t>(req->node());
  st = fill(side, n, reply->mutable_node(), reply->mutable_detail(), reply->mutable_stack());
  if (!st.ok()) return st;
  if (file->is_compare() && g->matched(n) >= 0) {
    vis::Side o = side == vis::SIDE_NPU ? vis::SIDE_BENCH : vis::SIDE_NPU;
    st = fill(o, static_cast<uint32_t>(g->matched(n)), reply->mutable_matched(), reply->mutable_matched_detail(),
              reply->mutable_matched_stack());
    if (!st.ok()) return st;
  }
  return grpc::Status::OK;
}

namespace {

void AddResults(const std::vector<PairOutcome>& outcomes, MatchReply* reply) {
  for (const PairOutcome& o : outcomes) {
    MatchResult* r = reply->add_results();
    r->set_npu(o.npu);
    r->set_bench(o.bench);
    r->set_ok(o.ok);
    r->set_error(o.error);
    r->set_precision_index(o.precision);
    r->set_has_precision(o.has_precision);
  }
}

}  // namespace

grpc::Status GraphServiceImpl::DoMatch(const MatchRequest& req, bool match, MatchReply* reply) {
  std::shared_ptr<GraphFile> file;
  grpc::Status st = Open(req.file(), {}, &file);
  if (!st.ok()) return st;
  const uint32_t npu = static_cast<uint32_t>(req.npu_node()), bench = static_cast<uint32_t>(req.bench_node());
  // Checks and file reading under the shared lock; the exclusive one only
  // for the edit itself, in memory (other clients keep reading meanwhile).
  GraphFile::DetailCache cache;
  {
    std::shared_lock<std::shared_mutex> l(file->mutex());
    std::string why = MatchingUnsupported(*file);
    if (!why.empty()) return Fail(grpc::StatusCode::FAILED_PRECONDITION, file->relative() + ": " + why);
    st = CheckNode(*file, vis::SIDE_NPU, *file->side(vis::SIDE_NPU), req.npu_node());
    if (!st.ok()) return st;
    st = CheckNode(*file, vis::SIDE_BENCH, *file->side(vis::SIDE_BENCH), req.bench_node());
    if (!st.ok()) return st;
    PrefetchForMatch(*file, npu, bench, req.with_children(), match, &cache);
  }
  uint32_t metrics;
  {
    std::unique_lock<std::shared_mutex> l(file->mutex());
    // Matching computes the file's own index: under a metric, the own
    // indices come back first and the metric is shown again after.
    metrics = file->metrics();
    if (metrics != 0) file->ApplyMetrics(0, {});
    auto outcomes = match ? MatchNodes(file.get(), npu, bench, req.with_children(), &cache)
                          : UnmatchNodes(file.get(), npu, bench, req.with_children(), &cache);
    AddResults(outcomes, reply);
  }
  return Reshow(file, metrics, reply->mutable_info());
}

grpc::Status GraphServiceImpl::Reshow(const std::shared_ptr<GraphFile>& file, uint32_t metrics, FileInfo* info) {
  if (metrics != 0) {
    grpc::Status st = ShowChoice(file, metrics, nullptr);
    if (!st.ok()) return st;
  }
  std::shared_lock<std::shared_mutex> l(file->mutex());
  *info = InfoOf(*file);
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::Match(grpc::ServerContext*, const MatchRequest* req, MatchReply* reply) {
  return DoMatch(*req, true, reply);
}
grpc::Status GraphServiceImpl::Unmatch(grpc::ServerContext*, const MatchRequest* req, MatchReply* reply) {
  return DoMatch(*req, false, reply);
}

grpc::Status GraphServiceImpl::SaveMatches(grpc::ServerContext*, const FileRequest* req, SaveMatchesReply* reply) {
  std::shared_ptr<GraphFile> file;
  grpc::Status st = Open(req->file(), {}, &file);
  if (!st.ok()) return st;
  std::unique_lock<std::shared_mutex> l(file->mutex());
  std::string why = MatchingUnsupported(*file);
  if (!why.empty()) return Fail(grpc::StatusCode::FAILED_PRECONDITION, file->relative() + ": " + why);
  // Beside the real file under tb_graph_ascend's name, and never through a
  // link: a "<file>.config" symlink could point at any file of the log directory.
  const std::string rel = NamesOf(*file).match_config;
  const std::string abs = InLogDir(rel);
  std::string refused = RefusedTarget(abs);
  if (!refused.empty()) return Fail(grpc::StatusCode::FAILED_PRECONDITION, rel + ": " + refused);
  Status s = WriteMatchConfig(*file, abs, rel);
  if (!s.ok()) return Fail(grpc::StatusCode::INTERNAL, s.error());
  file->MarkSaved();
  reply->set_path(rel);
  reply->set_matches(static_cast<uint32_t>(file->manual_matches().size()));
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::LoadMatches(grpc::ServerContext*, const LoadMatchesRequest* req, MatchReply* reply) {
  std::shared_ptr<GraphFile> file;
  grpc::Status st = Open(req->file(), {}, &file);
  if (!st.ok()) return st;
  std::string rel;
  {
    std::shared_lock<std::shared_mutex> l(file->mutex());
    rel = req->config().empty() ? NamesOf(*file).match_config : req->config();
  }
  if (!EndsWith(rel, ".config") && !EndsWith(rel, ".json")) {
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, rel + ": a match config file ends in .config or .json");
  }
  bool missing = false;
  auto abs = logdir_.Resolve(rel, true, &missing);
  if (!abs.ok()) return Fail(missing ? grpc::StatusCode::NOT_FOUND : grpc::StatusCode::INVALID_ARGUMENT, abs.error());
  uint32_t metrics;
  Result<std::vector<PairOutcome>> outcomes = std::vector<PairOutcome>();
  {
    std::unique_lock<std::shared_mutex> l(file->mutex());
    std::string why = MatchingUnsupported(*file);
    if (!why.empty()) return Fail(grpc::StatusCode::FAILED_PRECONDITION, file->relative() + ": " + why);
    metrics = file->metrics();
    if (metrics != 0) file->ApplyMetrics(0, {});
    outcomes = ApplyMatchConfig(file.get(), *abs, rel);
  }
  st = Reshow(file, metrics, reply->mutable_info());
  if (!outcomes.ok()) {
    reply->Clear();
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, outcomes.error());
  }
  if (!st.ok()) return st;
  AddResults(*outcomes, reply);
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::SetLegend(grpc::ServerContext*, const SetLegendRequest* req, FileInfo* reply) {
  grpc::Status st = CheckLegend(req->legend(), req->save());
  if (!st.ok()) return st;
  std::shared_ptr<GraphFile> file;
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
  std::shared_ptr<GraphFile> file;
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

grpc::Status GraphServiceImpl::ListMatchConfigs(grpc::ServerContext*, const FileRequest* req, MatchConfigList* reply) {
  std::shared_ptr<GraphFile> file;
  grpc::Status st = Open(req->file(), {}, &file);
  if (!st.ok()) return st;
  std::string own;
  {
    std::shared_lock<std::shared_mutex> l(file->mutex());
    own = NamesOf(*file).match_config;
  }
  reply->set_own(own);
  size_t slash = own.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : own.substr(0, slash);
  for (const ConfigEntry& e : service::ListMatchConfigs(logdir_.root(), dir)) {
    MatchConfigFile* c = reply->add_configs();
    c->set_path(e.path);
    c->set_name(e.name);
    c->set_size(e.size);
    c->set_mtime_unix(e.mtime_unix);
  }
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::GetDivergence(grpc::ServerContext*, const FileRequest* req, DivergenceReply* reply) {
  std::shared_ptr<GraphFile> file;
  grpc::Status st = Open(req->file(), {}, &file);
  if (!st.ok()) return st;
  RunEntry self;
  {
    std::shared_lock<std::shared_mutex> l(file->mutex());
    reply->set_ranked(file->meta().divergence_ranked());
    const SideGraph& npu = *file->side(vis::SIDE_NPU);
    for (const vis::DivergenceEntry& e : file->divergence().entry()) {
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

grpc::Status GraphServiceImpl::GetOverview(grpc::ServerContext*, const OverviewRequest* req, OverviewReply* reply) {
  bool missing = false;
  auto abs = logdir_.Resolve(req->file(), true, &missing);
  if (!abs.ok()) return Fail(missing ? grpc::StatusCode::NOT_FOUND : grpc::StatusCode::INVALID_ARGUMENT, abs.error());
  auto overview = overviews_.Get(logdir_, logdir_.ListRuns(), req->file());
  if (!overview.ok()) return Fail(grpc::StatusCode::FAILED_PRECONDITION, overview.error());
  *reply = **overview;
  return grpc::Status::OK;
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
  if (m == "GetCkpt") return Bridge(&GraphServiceImpl::GetCkpt, ctx, in, out);
  return Fail(grpc::StatusCode::NOT_FOUND, "no unary API method " + m);
}

// ---- Convert

namespace {

grpc::Status Of(const ConvertStatus& st) {
  return st.ok() ? grpc::Status::OK : Fail(static_cast<grpc::StatusCode>(st.code), st.message);
}

}  // namespace

grpc::Status GraphServiceImpl::ConvertInputs(grpc::ServerContext*, const ConvertInputsRequest*,
                                             ConvertInputsReply* reply) {
  reply->set_allowed(convert_.allowed());
  reply->set_not_allowed_reason(convert_.not_allowed_reason());
  if (convert_.allowed()) ListConvertInputs(logdir_, reply);
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::ConvertPlan(grpc::ServerContext*, const ConvertRequest* req, ConvertPlanReply* reply) {
  return Of(convert_.Plan(*req, reply));
}

grpc::Status GraphServiceImpl::ConvertStart(grpc::ServerContext*, const ConvertRequest* req, ConvertJob* reply) {
  return Of(convert_.Start(*req, reply));
}

grpc::Status GraphServiceImpl::ConvertProgress(grpc::ServerContext* ctx, const ConvertJobRequest* req,
                                               grpc::ServerWriter<ConvertJob>* writer) {
  uint64_t version = 0;
  while (!ctx->IsCancelled()) {
    ConvertJob job;
    uint64_t seen = version;
    ConvertStatus st = convert_.WaitChange(req->session(), req->id(), &version, std::chrono::milliseconds(500), &job);
    if (!st.ok()) return Of(st);
    if (version != seen && !writer->Write(job)) break;  // the page has gone
    if (job.state() != CONVERT_QUEUED && job.state() != CONVERT_RUNNING) break;
  }
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::ConvertCancel(grpc::ServerContext*, const ConvertJobRequest* req, ConvertJob* reply) {
  return Of(convert_.Cancel(req->session(), req->id(), reply));
}

grpc::Status GraphServiceImpl::ConvertList(grpc::ServerContext*, const ConvertListRequest* req,
                                           ConvertListReply* reply) {
  convert_.List(req->session(), reply);
  return grpc::Status::OK;
}

}  // namespace graph_ascend::service
