// GraphService: the runs of the log directory, one listing for ListRuns (the
// pickers) and the rank overview (graph_service_overview.cc), so that both
// see the same runs with the same fields.
#include "base/strings.h"
#include "graph_service.h"

namespace graph_ascend::service {

std::vector<RunEntry> GraphServiceImpl::ListedRuns() {
  std::vector<RunEntry> runs;
  for (RunEntry& e : logdir_.ListRuns()) {
    if (EndsWith(e.name, ".vis.db")) {
      AddForeignRuns(e, &runs);
    } else {
      runs.push_back(std::move(e));
    }
  }
  return runs;
}

// One entry per graph of the msprobe .vis.db (the file itself when its graphs
// cannot be listed: opening it then says why).
void GraphServiceImpl::AddForeignRuns(const RunEntry& e, std::vector<RunEntry>* runs) {
  auto abs = logdir_.Resolve(e.path);
  std::vector<ForeignGraph> graphs(1);
  if (abs.ok()) {
    auto listed = foreign_.Graphs(*abs);
    if (listed.ok()) graphs = std::move(*listed);
  }
  std::string stem = e.name.substr(0, e.name.size() - 7);
  for (const ForeignGraph& g : graphs) {
    RunEntry r;
    r.path = g.id.empty() ? e.path : e.path + "#" + g.id;
    r.dir = e.dir;
    r.name = e.name;
    r.group = e.dir.empty() ? stem : e.dir + "/" + stem;
    r.step = g.step;
    r.rank = g.rank;
    r.size = e.size;
    r.mtime_unix = e.mtime_unix;
    r.kind = stem.rfind("build", 0) == 0 ? "build" : stem.rfind("compare", 0) == 0 ? "compare" : "";
    runs->push_back(std::move(r));
  }
}

grpc::Status GraphServiceImpl::ListRuns(grpc::ServerContext*, const ListRunsRequest*, ListRunsReply* reply) {
  for (const RunEntry& e : ListedRuns()) {
    RunFile* r = reply->add_files();
    r->set_path(e.path);
    r->set_dir(e.dir);
    r->set_name(e.name);
    r->set_group(e.group);
    r->set_step(e.step);
    r->set_rank(e.rank);
    r->set_stage(e.stage);
    r->set_size(e.size);
    r->set_mtime_unix(e.mtime_unix);
    r->set_kind(e.kind);
  }
  return grpc::Status::OK;
}

}  // namespace graph_ascend::service
