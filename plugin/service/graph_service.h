// The gRPC GraphService (proto/graph_service.proto) over a log directory.
//
// Every request names its file relative to the log directory; the file is
// resolved by LogDir (never outside it) and opened into the FileCache on
// first use, so any RPC works on a fresh server (e.g. after a restart).
// Errors map to gRPC codes: INVALID_ARGUMENT (bad request, path escape),
// NOT_FOUND (file or node), FAILED_PRECONDITION (not possible on this file),
// DATA_LOSS (not a .vis or damaged), INTERNAL.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "config_files.h"

#include "convert_queue.h"
#include "file_cache.h"
#include "foreign_files.h"
#include "graph_service.grpc.pb.h"
#include "json_bridge.h"
#include "log_dir.h"
#include "manual_match.h"
#include "node_query.h"
#include "rank_overview.h"
#include "runs_info.h"
#include "view_store.h"

namespace graph_ascend::service {

struct LoadedCompare;  // graph_service_report.cc

struct ServiceOptions {
  std::string logdir;
  size_t cache_bytes = size_t{4} << 30;
  // Where msprobe files (.vis.db, JSON .vis) are converted; outside logdir. "" = DefaultCacheRoot().
  std::string cache_dir;
  size_t max_views = 4096;
  size_t views_bytes = size_t{1} << 30;
  int64_t idle_seconds = 6 * 3600;
  // A search or filter page whose answer would be larger is refused (OUT_OF_RANGE).
  size_t max_answer_bytes = size_t{64} << 20;
  // Conversions from the page (--allow-convert): kAuto allows them when the
  // log directory belongs to the user running the server.
  enum class Convert { kAuto, kOn, kOff };
  Convert allow_convert = Convert::kAuto;
  std::string builder;               // graph-ascend; "" = beside this executable
  int64_t convert_orphan_seconds = 30;
  int64_t convert_term_grace_ms = 800;  // a cancelled builder's time to leave after SIGTERM, then SIGKILL
  // A match edits journal past this size (and past twice its last rewrite) is
  // rewritten as the edits that stand (match_journal.h).
  size_t journal_compact_bytes = size_t{1} << 20;
  // Tests: called by Match and Unmatch once they have read what the edit
  // needs, still under the file's shared lock (other readers go on), before
  // the exclusive lock of the edit itself.
  std::function<void()> on_match_read;
  // A .vis.db graph of at least this many nodes a side opens from its opening
  // screen (foreign_files.h); `before_index` (tests) runs before its index is converted.
  uint64_t opening_nodes = ForeignFiles::kOpeningNodes;
  std::function<void()> before_index;
  // How long an opening's conversion waits for its first screen to be served (tests: longer).
  std::chrono::milliseconds first_screen_wait = ForeignFiles::kFirstScreenWait;
};

// Health is a callback method: it runs on gRPC's own threads, not on the
// pool of the other (synchronous) methods, so a server busy with long
// requests still answers it at once, and it takes no file lock.
class GraphServiceImpl final : public GraphService::WithCallbackMethod_Health<GraphService::Service> {
 public:
  // An error when the log directory or cache cannot be opened, or when the
  // JSON bridge's handlers do not fit the proto's methods.
  static Result<std::unique_ptr<GraphServiceImpl>> Create(const ServiceOptions& options);
  // GraphService as the proto declares it (its methods, in order).
  static const google::protobuf::ServiceDescriptor& Descriptor();

  grpc::ServerUnaryReactor* Health(grpc::CallbackServerContext*, const HealthRequest*, HealthReply*) override;
  grpc::Status ListRuns(grpc::ServerContext*, const ListRunsRequest*, ListRunsReply*) override;
  grpc::Status OpenFile(grpc::ServerContext*, const FileRequest*, grpc::ServerWriter<OpenProgress>*) override;
  grpc::Status GetFileInfo(grpc::ServerContext*, const FileRequest*, FileInfo*) override;
  grpc::Status GetView(grpc::ServerContext*, const ViewRequest*, ViewReply*) override;
  grpc::Status Expand(grpc::ServerContext*, const NodeRequest*, ViewReply*) override;
  grpc::Status Collapse(grpc::ServerContext*, const NodeRequest*, ViewReply*) override;
  grpc::Status Reveal(grpc::ServerContext*, const NodeRequest*, ViewReply*) override;
  grpc::Status Search(grpc::ServerContext*, const SearchRequest*, NodeList*) override;
  grpc::Status Filter(grpc::ServerContext*, const FilterRequest*, NodeList*) override;
  grpc::Status GetNodeDetail(grpc::ServerContext*, const NodeRequest*, NodeDetailReply*) override;
  grpc::Status Match(grpc::ServerContext*, const MatchRequest*, MatchReply*) override;
  grpc::Status Unmatch(grpc::ServerContext*, const MatchRequest*, MatchReply*) override;
  grpc::Status SaveMatches(grpc::ServerContext*, const FileRequest*, SaveMatchesReply*) override;
  grpc::Status LoadMatches(grpc::ServerContext*, const LoadMatchesRequest*, MatchReply*) override;
  grpc::Status SetLegend(grpc::ServerContext*, const SetLegendRequest*, FileInfo*) override;
  grpc::Status GetDivergence(grpc::ServerContext*, const FileRequest*, DivergenceReply*) override;
  // Layer profile and report (graph_service_report.cc).
  grpc::Status GetProfile(grpc::ServerContext*, const ProfileRequest*, ProfileReply*) override;
  grpc::Status GetReport(grpc::ServerContext*, const ProfileRequest*, ReportReply*) override;
  grpc::Status ResetLegend(grpc::ServerContext*, const FileRequest*, FileInfo*) override;
  grpc::Status ListMatchConfigs(grpc::ServerContext*, const FileRequest*, MatchConfigList*) override;
  grpc::Status CallJson(grpc::ServerContext*, const JsonCall*, JsonReply*) override;
  grpc::Status ConvertInputs(grpc::ServerContext*, const ConvertInputsRequest*, ConvertInputsReply*) override;
  grpc::Status ConvertPlan(grpc::ServerContext*, const ConvertRequest*, ConvertPlanReply*) override;
  grpc::Status ConvertStart(grpc::ServerContext*, const ConvertRequest*, ConvertJob*) override;
  grpc::Status ConvertProgress(grpc::ServerContext*, const ConvertJobRequest*,
                               grpc::ServerWriter<ConvertJob>*) override;
  grpc::Status ConvertCancel(grpc::ServerContext*, const ConvertJobRequest*, ConvertJob*) override;
  grpc::Status ConvertList(grpc::ServerContext*, const ConvertListRequest*, ConvertListReply*) override;

  // Removes the temporary files of writes still running (conversions of
  // msprobe files, match configs): for a process about to _exit() mid-request.
  void RemoveTemporaries() const;
  grpc::Status GetOverview(grpc::ServerContext*, const OverviewRequest*, OverviewReply*) override;
  // graph_service_repro.cc
  grpc::Status ReproScript(grpc::ServerContext*, const ReproRequest*, ReproReply*) override;

  // Checkpoint similarity (graph_service_ckpt.cc).
  grpc::Status GetCkpt(grpc::ServerContext*, const CkptRequest*, CkptReply*) override;

  // Nodes without a view (graph_service_nodes.cc).
  grpc::Status ListNodes(grpc::ServerContext*, const ListNodesRequest*, ListNodesReply*) override;
  // Element-level comparison of one item's tensor files (graph_service_tensor.cc).
  grpc::Status TensorView(grpc::ServerContext*, const TensorViewRequest*, TensorViewReply*) override;

 private:
  GraphServiceImpl(LogDir logdir, ForeignFiles foreign, const ServiceOptions& options, ConvertQueueOptions convert);

  grpc::Status HealthReplyOf(grpc::ServerContext*, const HealthRequest*, HealthReply*);

  // Resolves and opens `relative` (a .vis under the log directory).
  // A large .vis.db graph opens from its opening screen until its index is
  // written; `whole_index` waits for the index instead (a request that needs every node).
  // `foreign` (when given) gets what ForeignFiles gave for a .vis.db graph.
  grpc::Status Open(const std::string& relative, const ProgressFn& progress, std::shared_ptr<OpenGraph>* file,
                    bool whole_index = true, ForeignOpen* foreign = nullptr);
  // A view's open file, held under its shared lock, and the view's side.
  struct ViewAccess {
    std::shared_ptr<OpenGraph> file;
    std::shared_lock<std::shared_mutex> lock;
    const SideGraph* graph = nullptr;
    ForeignOpen foreign;  // an opening screen's: `index` set
  };
  // Search of a graph served from its opening screen: the .vis.db's names.
  grpc::Status SearchOpening(const ViewAccess& view, const SearchRequest& req, const SearchSpec& spec, NodeList* reply);
  // Open() + shared lock + the checks of the view key (session, side, micro step).
  grpc::Status OpenView(const ViewKey& key, ViewAccess* access, bool whole_index = true);
  grpc::Status DoView(const ViewKey& key, ViewOp op, int32_t node, const Rect* viewport, bool from_node,
                      ViewReply* reply);
  grpc::Status DoMatch(const MatchRequest& req, bool match, MatchReply* reply);
  FileInfo InfoOf(const OpenGraph& f) const;
  // The match config and saved legend beside `f` (config_files.h), and a log-directory path made absolute.
  BesideNames NamesOf(const OpenGraph& f) const;
  std::string InLogDir(const std::string& relative) const;
  // Thresholds and metric: shows the metric `mask` (and `legend`, when not
  // null): details read under the shared lock, applied under the exclusive one.
  grpc::Status ShowChoice(const std::shared_ptr<OpenGraph>& file, uint32_t mask,
                          const google::protobuf::RepeatedPtrField<vis::ColorBucket>* legend);
  // The saved choice beside a file just opened; a bad one is FileInfo.legend_error.
  void ApplySavedChoice(const std::shared_ptr<OpenGraph>& file);
  // The unsaved edits journal (match_journal.h): where `f`'s is, the edit's
  // pairs appended (`had_matches`: the file had manual matches before it, so
  // a new journal follows the saved config), replayed once per open file.
  std::string JournalOf(const OpenGraph& f) const;
  void JournalEdits(const OpenGraph& f, bool had_matches, bool match, const std::vector<PairOutcome>& outcomes);
  void ReplayJournalOnce(const std::shared_ptr<OpenGraph>& file);
  void ReplayJournal(const std::shared_ptr<OpenGraph>& file);
  // After a match edit: the metric shown again, and the file info.
  grpc::Status Reshow(const std::shared_ptr<OpenGraph>& file, uint32_t metrics, FileInfo* info);
  // CallJson's handlers (json_bridge.h), each bound to this service.
  std::vector<JsonBridge::Handler> JsonHandlers();

  // graph_service_runs.cc: the runs ListRuns lists and the overview groups
  // (a .vis.db one entry per graph, its path "<file>#<graph id>").
  std::vector<RunEntry> ListedRuns();
  void AddForeignRuns(const RunEntry& e, std::vector<RunEntry>* runs);
  // graph_service_report.cc: what GetProfile and GetReport start with: the
  // file opened, the depth checked, the compare's index and verdict loaded.
  grpc::Status OpenCompare(const ProfileRequest& req, std::shared_ptr<OpenGraph>* file, LoadedCompare* in);
  // graph_service_overview.cc: the meta of a .vis.db graph for the rank overview.
  Result<vis::FileMeta> ForeignMeta(const RunEntry& member);

  LogDir logdir_;
  const size_t max_answer_bytes_;
  const std::function<void()> on_match_read_;
  ForeignFiles foreign_;
  FileCache cache_;
  ViewStore views_;
  ConvertQueue convert_;  // after logdir_, which it refers to
  OverviewCache overviews_;
  mutable RunsSummaries runs_summaries_;  // runs.json of FileInfo.runs, read once per version
  JsonBridge json_;  // set by Create
  const std::string journal_dir_;  // <cache root>/edits
  const size_t journal_compact_bytes_;
  std::mutex journal_mu_;
  std::unordered_map<uint64_t, std::shared_ptr<std::once_flag>> replayed_;  // by OpenGraph::id()
  std::unordered_map<std::string, size_t> journal_compact_at_;              // by journal path: its next rewrite
};

}  // namespace graph_ascend::service
