// The gRPC GraphService (proto/graph_service.proto) over a log directory.
//
// Every request names its file relative to the log directory; the file is
// resolved by LogDir (never outside it) and opened into the FileCache on
// first use, so any RPC works on a fresh server (e.g. after a restart).
// Errors map to gRPC codes: INVALID_ARGUMENT (bad request, path escape),
// NOT_FOUND (file or node), FAILED_PRECONDITION (not possible on this file),
// DATA_LOSS (not a .vis or damaged), INTERNAL.
#pragma once

#include <memory>
#include <shared_mutex>
#include <string>

#include "file_cache.h"
#include "foreign_files.h"
#include "graph_service.grpc.pb.h"
#include "log_dir.h"
#include "rank_overview.h"
#include "view_store.h"

namespace graph_ascend::service {

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
};

// Health is a callback method: it runs on gRPC's own threads, not on the
// pool of the other (synchronous) methods, so a server busy with long
// requests still answers it at once, and it takes no file lock.
class GraphServiceImpl final : public GraphService::WithCallbackMethod_Health<GraphService::Service> {
 public:
  static Result<std::unique_ptr<GraphServiceImpl>> Create(const ServiceOptions& options);

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
  grpc::Status CallJson(grpc::ServerContext*, const JsonCall*, JsonReply*) override;
  grpc::Status GetOverview(grpc::ServerContext*, const OverviewRequest*, OverviewReply*) override;

 private:
  GraphServiceImpl(LogDir logdir, ForeignFiles foreign, const ServiceOptions& options);

  grpc::Status HealthReplyOf(grpc::ServerContext*, const HealthRequest*, HealthReply*);

  // Resolves and opens `relative` (a .vis under the log directory).
  grpc::Status Open(const std::string& relative, const ProgressFn& progress, std::shared_ptr<GraphFile>* file);
  // A view's open file, held under its shared lock, and the view's side.
  struct ViewAccess {
    std::shared_ptr<GraphFile> file;
    std::shared_lock<std::shared_mutex> lock;
    const SideGraph* graph = nullptr;
  };
  // Open() + shared lock + the checks of the view key (session, side, micro step).
  grpc::Status OpenView(const ViewKey& key, ViewAccess* access);
  enum class ViewOp { kGet, kExpand, kCollapse, kReveal };
  grpc::Status DoView(const ViewKey& key, ViewOp op, int32_t node, const Rect* viewport, bool from_node,
                      ViewReply* reply);
  grpc::Status DoMatch(const MatchRequest& req, bool match, MatchReply* reply);
  FileInfo InfoOf(const GraphFile& f) const;
  template <typename Req, typename Rep>
  grpc::Status Bridge(grpc::Status (GraphServiceImpl::*method)(grpc::ServerContext*, const Req*, Rep*),
                      grpc::ServerContext* ctx, const std::string& json, std::string* out);

  void AddForeignRuns(const RunEntry& e, ListRunsReply* reply);

  LogDir logdir_;
  const size_t max_answer_bytes_;
  ForeignFiles foreign_;
  FileCache cache_;
  ViewStore views_;
  OverviewCache overviews_;
};

}  // namespace graph_ascend::service
