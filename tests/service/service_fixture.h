// Small .vis files written with VisWriter for the service tests: a
// ResNet-like compare graph shaped like the plugin reference's fixture
// (§3.1, §6.6: 20 first-level nodes, 151-node-like layout) so that the
// reference's worked layout example can be checked number by number.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph_service.h"
#include "vis.pb.h"

namespace graph_ascend::service::testing {

struct FixtureNode {
  std::string name;
  int32_t parent = -1;
  uint32_t type = 0;  // vis::NodeType
  int32_t micro_step = -1;
  uint32_t overflow = 0;
};

struct FixtureGraph {
  std::vector<FixtureNode> nodes;  // node 0 is the root
  int32_t Add(const std::string& name, int32_t parent, uint32_t type = 0);
  int32_t Find(const std::string& name) const;
};

// The ResNet-like hierarchy: root DefaultModel with conv1/bn1/relu/maxpool
// leaves, layer1..4 forward Sequentials (two BasicBlocks of two leaves each),
// avgpool/fc leaves, their backward twins, and backward leaves.
FixtureGraph ResnetLike();

struct FixtureOptions {
  vis::GraphKind kind = vis::GRAPH_COMPARE;
  vis::CompareMode mode = vis::MODE_STATISTICS;
  // NPU names left unmatched (and their Bench namesakes).
  std::vector<std::string> unmatched = {"Module.fc.Linear.forward.0", "Module.fc.Linear.backward.0"};
  uint32_t micro_steps = 1;
  // Also store msprobe 26's grades (matched node i: 0, 0.5, 1 for i % 3 =
  // 0, 1, 2) and make them the file's default grading, as graph_visualize does.
  bool grades = false;
  // NPU names written as the file's divergence ranking (docs/DIVERGENCE.md),
  // with the FileMeta summary; none: no ranking (a file of before rankings).
  std::vector<std::string> divergent;
  std::string first_divergence;  // the meta's name (default: divergent[0])
  bool first_is_communication = false;
  std::vector<int32_t> first_peers;
};

// Writes the graph on both sides (Bench = same names), matching equal names
// except `unmatched`, with statistics that give matched leaves a spread of
// precision indices. The NPU precision of matched leaf i is (i % 10) / 10.
void WriteCompare(const std::string& path, const FixtureGraph& g, const FixtureOptions& options);

// Replaces the table of contents of a .vis by `edit` of it (to forge sizes
// a writer would never write).
void RewriteToc(const std::string& path, const std::function<void(vis::TableOfContents*)>& edit);

// The statistics legend of msprobe (§6.10).
void StatisticsLegend(vis::FileMeta* meta);

// A fresh temporary directory (removed by the caller's TempDir).
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string Join(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// A GraphService over `options` on a Unix socket `socket_path`, in this process
// (the gRPC surface as the plugin calls it); shut down when destroyed.
class InProcessService {
 public:
  // Fails the current test (and leaves stub() null) when the service cannot start.
  void Start(const ServiceOptions& options, const std::string& socket_path);
  ~InProcessService();
  GraphService::Stub* stub() const { return stub_.get(); }

 private:
  std::unique_ptr<GraphServiceImpl> impl_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<GraphService::Stub> stub_;
};

// A file of tests/data/msprobe_outputs (msprobe's own .vis.db and JSON .vis), under GA_SOURCE_DIR.
std::string MsprobeOutput(const std::string& name);

// Runs `sql` on the SQLite file `db` (a copy: it is written); a failure is a test failure.
void ExecSql(const std::string& db, const std::string& sql);

}  // namespace graph_ascend::service::testing
