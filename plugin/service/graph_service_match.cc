// GraphService: manual matching (Match, Unmatch), match configs
// (SaveMatches, LoadMatches, ListMatchConfigs) and the journal that keeps
// unsaved edits across restarts.
#include "graph_service.h"

#include <algorithm>
#include <cstdio>
#include <shared_mutex>

#include "config_files.h"
#include "manual_match.h"
#include "match_journal.h"
#include "rerank.h"
#include "rpc_answers.h"

namespace graph_ascend::service {

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

// Why SaveMatches writes nothing while the builder's matches were removed: the config
// (tb_graph_ascend's {NPU node: Bench node}) lists pairs to match, so a session saved without those
// removals would come back with them matched (docs/COMPATIBILITY.md).
std::string RemovedAutomaticRefusal(const OpenGraph& f) {
  const auto& removed = f.removed_automatic();
  std::string pairs;
  size_t shown = 0;
  for (const auto& [npu, bench] : removed) {
    if (shown == 3) break;
    pairs += (shown++ ? ", " : "") + npu + " <-> " + bench;
  }
  if (removed.size() > shown) pairs += ", and " + std::to_string(removed.size() - shown) + " more";
  const bool one = removed.size() == 1;
  return "not saved: " + std::to_string(removed.size()) + (one ? " automatic match was" : " automatic matches were") +
         " removed (" + pairs + "), and a match config can only list pairs to match; match " +
         (one ? "that pair" : "those pairs") + " again to save (the unsaved edits are kept across restarts)";
}

// The divergence ranking follows the edit (rerank.h); a ranking that cannot
// be made leaves the one shown as it was.
void Rerank(OpenGraph* f) {
  Status s = RerankDivergence(f);
  if (!s.ok()) std::fprintf(stderr, "graph-ascend-server: warning: re-ranking: %s\n", s.error().ToString().c_str());
}

}  // namespace

grpc::Status GraphServiceImpl::DoMatch(const MatchRequest& req, bool match, MatchReply* reply) {
  std::shared_ptr<OpenGraph> file;
  grpc::Status st = Open(req.file(), {}, &file);
  if (!st.ok()) return st;
  const uint32_t npu = static_cast<uint32_t>(req.npu_node()), bench = static_cast<uint32_t>(req.bench_node());
  // Checks and file reading under the shared lock; the exclusive one only
  // for the edit itself, in memory (other clients keep reading meanwhile).
  OpenGraph::DetailCache cache;
  {
    std::shared_lock<std::shared_mutex> l(file->mutex());
    std::string why = MatchingUnsupported(*file);
    if (!why.empty()) return Fail(grpc::StatusCode::FAILED_PRECONDITION, file->relative() + ": " + why);
    st = CheckNode(*file, vis::SIDE_NPU, *file->side(vis::SIDE_NPU), req.npu_node());
    if (!st.ok()) return st;
    st = CheckNode(*file, vis::SIDE_BENCH, *file->side(vis::SIDE_BENCH), req.bench_node());
    if (!st.ok()) return st;
    PrefetchForMatch(*file, npu, bench, req.with_children(), match, &cache);
    if (on_match_read_) on_match_read_();
  }
  uint32_t metrics;
  {
    std::unique_lock<std::shared_mutex> l(file->mutex());
    // Matching computes the file's own index: under a metric, the own
    // indices come back first and the metric is shown again after.
    metrics = file->metrics();
    if (metrics != 0) file->ApplyMetrics(0, {});
    bool had_matches = !file->manual_matches().empty();
    auto outcomes = match ? MatchNodes(file.get(), npu, bench, req.with_children(), &cache)
                          : UnmatchNodes(file.get(), npu, bench, req.with_children(), &cache);
    JournalEdits(*file, had_matches, match, outcomes);  // still under the lock: lines in the edits' order
    AddResults(outcomes, reply);
  }
  Rerank(file.get());
  return Reshow(file, metrics, reply->mutable_info());
}

grpc::Status GraphServiceImpl::Reshow(const std::shared_ptr<OpenGraph>& file, uint32_t metrics, FileInfo* info) {
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
  std::shared_ptr<OpenGraph> file;
  grpc::Status st = Open(req->file(), {}, &file);
  if (!st.ok()) return st;
  std::unique_lock<std::shared_mutex> l(file->mutex());
  std::string why = MatchingUnsupported(*file);
  if (!why.empty()) return Fail(grpc::StatusCode::FAILED_PRECONDITION, file->relative() + ": " + why);
  // Beside the real file under tb_graph_ascend's name, and never through a
  // link: a "<file>.config" symlink could point at any file of the log directory.
  const std::string rel = NamesOf(*file).match_config;
  if (!file->removed_automatic().empty()) {
    return Fail(grpc::StatusCode::FAILED_PRECONDITION, rel + ": " + RemovedAutomaticRefusal(*file));
  }
  const std::string abs = InLogDir(rel);
  std::string refused = RefusedTarget(abs);
  if (!refused.empty()) return Fail(grpc::StatusCode::FAILED_PRECONDITION, rel + ": " + refused);
  Status s = WriteMatchConfig(*file, abs, rel);
  if (!s.ok()) return Fail(grpc::StatusCode::INTERNAL, s.error());
  file->MarkSaved();
  // The config holds every edit now; a journal started later follows it.
  {
    std::lock_guard<std::mutex> journal(journal_mu_);
    journal_compact_at_.erase(JournalOf(*file));
  }
  Status removed = RemoveJournal(JournalOf(*file));
  if (!removed.ok()) std::fprintf(stderr, "graph-ascend-server: warning: %s\n", removed.error().ToString().c_str());
  reply->set_path(rel);
  reply->set_matches(static_cast<uint32_t>(file->manual_matches().size()));
  return grpc::Status::OK;
}

grpc::Status GraphServiceImpl::LoadMatches(grpc::ServerContext*, const LoadMatchesRequest* req, MatchReply* reply) {
  std::shared_ptr<OpenGraph> file;
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
    bool had_matches = !file->manual_matches().empty();
    outcomes = ApplyMatchConfig(file.get(), *abs, rel);
    if (outcomes.ok()) JournalEdits(*file, had_matches, true, *outcomes);
  }
  Rerank(file.get());
  st = Reshow(file, metrics, reply->mutable_info());
  if (!outcomes.ok()) {
    reply->Clear();
    return Fail(grpc::StatusCode::INVALID_ARGUMENT, outcomes.error());
  }
  if (!st.ok()) return st;
  AddResults(*outcomes, reply);
  return grpc::Status::OK;
}

std::string GraphServiceImpl::JournalOf(const OpenGraph& f) const {
  return JournalPath(journal_dir_, logdir_.root(), f.relative());
}

void GraphServiceImpl::JournalEdits(const OpenGraph& f, bool had_matches, bool match,
                                    const std::vector<PairOutcome>& outcomes) {
  auto warn = [](const Error& e) { std::fprintf(stderr, "graph-ascend-server: warning: %s\n", e.ToString().c_str()); };
  const std::string path = JournalOf(f);
  size_t size = 0;
  Status s = AppendToJournal(path, f.relative(), had_matches ? NamesOf(f).match_config : "", match, outcomes, &size);
  // The edit stands in memory; only its survival of a restart is lost.
  if (!s.ok()) return warn(s.error());
  std::lock_guard<std::mutex> l(journal_mu_);
  size_t& at = journal_compact_at_[path];
  if (size < std::max(at, journal_compact_bytes_)) return;
  // Under the file's lock: no edit comes between the state and its rewrite.
  auto compacted = CompactJournal(path, f.relative(), CurrentEdits(f));
  if (!compacted.ok()) return warn(compacted.error());  // the whole journal stays, and replays the same
  at = 2 * *compacted;
}

void GraphServiceImpl::ReplayJournalOnce(const std::shared_ptr<OpenGraph>& file) {
  std::shared_ptr<std::once_flag> once;
  {
    std::lock_guard<std::mutex> l(journal_mu_);
    auto& slot = replayed_[file->id()];
    if (!slot) slot = std::make_shared<std::once_flag>();
    once = slot;
  }
  std::call_once(*once, [&] {  // other openers wait for the edits and their ranking
    ReplayJournal(file);
    if (file->generation() != 0) Rerank(file.get());
  });
}

void GraphServiceImpl::ReplayJournal(const std::shared_ptr<OpenGraph>& file) {
  auto warn = [](const std::string& what) { std::fprintf(stderr, "graph-ascend-server: warning: %s\n", what.c_str()); };
  const std::string path = JournalOf(*file);
  auto journal = RecoverJournal(path);
  if (!journal.ok()) return warn(journal.error().ToString());
  for (const std::string& w : journal->warnings) warn(w);
  if (journal->entries.empty() || !MatchingUnsupported(*file).empty()) return;
  size_t lost = 0;
  std::unique_lock<std::shared_mutex> l(file->mutex());
  if (!journal->base.empty()) {
    bool missing = false;
    auto abs = logdir_.Resolve(journal->base, true, &missing);
    Status applied = abs.ok() ? ApplyMatchConfig(file.get(), *abs, journal->base).status() : Status(abs.error());
    if (!applied.ok()) warn(path + ": its saved config: " + applied.error().ToString());
  }
  for (const PairOutcome& o : ReplayEdits(file.get(), journal->entries)) lost += o.ok ? 0 : 1;
  std::fprintf(stderr, "graph-ascend-server: %s: %zu unsaved edits restored from %s\n", file->relative().c_str(),
               journal->entries.size() - lost, path.c_str());
  if (lost > 0) warn(path + ": " + std::to_string(lost) + " edits no longer apply to " + file->relative());
}

grpc::Status GraphServiceImpl::ListMatchConfigs(grpc::ServerContext*, const FileRequest* req, MatchConfigList* reply) {
  std::shared_ptr<OpenGraph> file;
  grpc::Status st = Open(req->file(), {}, &file, false);  // its name alone: an opening screen will do
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

}  // namespace graph_ascend::service
