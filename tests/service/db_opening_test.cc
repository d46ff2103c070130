// A large .vis.db graph opens from its opening screen (formats::WriteVisDbOpening)
// while its index is converted behind it: the first screen, the root's details
// and its children's come straight from SQLite, and so does a search (the
// names through index2); expanding and revealing wait for the index, which
// then replaces the opening with the same
// node indices, the views keeping their expanded nodes. The index conversion
// is held (ServiceOptions::before_index) so that every request below meets the
// opening, whatever the machine's speed; msprobe 8.2.1, 8.3.3 and 26.2.0 files.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <future>
#include <map>
#include <thread>

#include "formats/foreign_file.h"
#include "graph_service.h"
#include "side_graph.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

namespace fs = std::filesystem;
using testing::InProcessService;
using testing::MsprobeOutput;
using testing::TempDir;

// The graph ReadGraphs reads for listed name `file` of `fixture`: the indices the whole conversion gives.
formats::GraphFile Reference(const std::string& fixture, const std::string& file) {
  auto graphs = formats::ReadGraphs(MsprobeOutput(fixture));
  EXPECT_TRUE(graphs.ok()) << graphs.error().ToString();
  if (!graphs.ok()) return {};
  for (formats::GraphFile& g : *graphs) {
    if (file.find("#" + g.meta.step() + "_" + g.meta.rank()) != std::string::npos) return std::move(g);
  }
  return std::move(graphs->front());
}

// The index conversion's thread waits here until the test lets it go.
class Gate {
 public:
  void Wait() { opened_.wait(); }
  void Open() {
    std::lock_guard<std::mutex> l(mu_);
    if (!open_) open_promise_.set_value();
    open_ = true;
  }

 private:
  std::mutex mu_;
  bool open_ = false;
  std::promise<void> open_promise_;
  std::shared_future<void> opened_ = open_promise_.get_future().share();
};

class DbOpeningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& [name, fixture] : Files()) {
      fs::create_directories(fs::path(logs_.Join(name)).parent_path());
      fs::copy_file(MsprobeOutput(fixture), logs_.Join(name));
    }
    ServiceOptions options;
    options.logdir = logs_.path();
    options.cache_dir = cache_.Join("c");
    options.opening_nodes = 0;  // the fixtures are small: every graph opens from its opening
    // The conversion starts once the first screen is served, or an index is wanted: never on a clock here.
    options.first_screen_wait = std::chrono::hours(1);
    options.before_index = [this] {
      ++indexing_;
      gate_.Wait();
    };
    service_.Start(options, sock_.Join("s.sock"));
  }
  // The gate opens first: the fill's thread may wait on it while the service shuts down.
  void TearDown() override { gate_.Open(); }
  static std::map<std::string, std::string> Files() {
    return {{"run26/batch.vis.db", "dist_gloo_batch_26.2.0.vis.db"},
            {"run26/build.vis.db", "dist_gloo_build_26.2.0.vis.db"},
            {"run83/batch.vis.db", "dist_gloo_batch_8.3.3.vis.db"},
            {"run82/compare.vis.db", "dist_gloo_compare_8.2.1.vis.db"}};
  }

  grpc::Status Open(const std::string& file, FileInfo* info = nullptr) {
    grpc::ClientContext ctx;
    FileRequest req;
    req.set_file(file);
    auto reader = service_.stub()->OpenFile(&ctx, req);
    OpenProgress p;
    while (reader->Read(&p)) {
      if (p.done() && info != nullptr) *info = p.info();
    }
    return reader->Finish();
  }
  static ViewKey Key(const std::string& file, vis::Side side) {
    ViewKey key;
    key.set_session("s");
    key.set_file(file);
    key.set_side(side);
    key.set_micro_step(-1);
    return key;
  }
  ViewReply View(const std::string& file, vis::Side side) {
    grpc::ClientContext ctx;
    ViewRequest req;
    *req.mutable_view() = Key(file, side);
    ViewReply reply;
    grpc::Status st = service_.stub()->GetView(&ctx, req, &reply);
    EXPECT_TRUE(st.ok()) << st.error_message() << " " << st.error_code();
    return reply;
  }
  ViewReply Expand(const std::string& file, vis::Side side, int32_t node) {
    grpc::ClientContext ctx;
    NodeRequest req;
    *req.mutable_view() = Key(file, side);
    req.set_node(node);
    ViewReply reply;
    grpc::Status st = service_.stub()->Expand(&ctx, req, &reply);
    EXPECT_TRUE(st.ok()) << st.error_message() << " " << st.error_code();
    return reply;
  }
  NodeDetailReply Detail(const std::string& file, vis::Side side, int32_t node) {
    grpc::ClientContext ctx;
    NodeRequest req;
    *req.mutable_view() = Key(file, side);
    req.set_node(node);
    NodeDetailReply reply;
    grpc::Status st = service_.stub()->GetNodeDetail(&ctx, req, &reply);
    EXPECT_TRUE(st.ok()) << st.error_message() << " " << st.error_code();
    return reply;
  }
  NodeList Search(const std::string& file, vis::Side side, const std::string& query, bool regex = false,
                  bool case_insensitive = false) {
    grpc::ClientContext ctx;
    SearchRequest req;
    *req.mutable_view() = Key(file, side);
    req.set_query(query);
    req.set_regex(regex);
    req.set_case_insensitive(case_insensitive);
    req.set_limit(10000);
    NodeList reply;
    grpc::Status st = service_.stub()->Search(&ctx, req, &reply);
    EXPECT_TRUE(st.ok()) << st.error_message() << " " << st.error_code();
    return reply;
  }

  // Every node of `reply` stands where the whole graph `g` has it, with its name, parent and match.
  static void ExpectAsInTheWholeGraph(const ViewReply& reply, const formats::GraphFile& g, vis::Side side) {
    const vis::SideIndex& idx = g.side(side).index;
    ASSERT_GT(reply.nodes_size(), 1);
    for (const LayoutNode& n : reply.nodes()) {
      ASSERT_GE(n.index(), 0);
      ASSERT_LT(static_cast<uint32_t>(n.index()), idx.size());
      EXPECT_EQ(n.name(), idx.Name(static_cast<uint32_t>(n.index())));
      EXPECT_EQ(n.parent(), idx.parent[static_cast<uint32_t>(n.index())]) << n.name();
      EXPECT_EQ(n.matched(), idx.matched[static_cast<uint32_t>(n.index())]) << n.name();
      EXPECT_EQ(n.expandable(), idx.child_offset[n.index() + 1] > idx.child_offset[n.index()]) << n.name();
    }
  }

  // Whether `n` index conversions reached the gate (waiting for them, a minute at most: they run on
  // threads of their own).
  bool ReachedGate(int n) {
    for (int i = 0; i < 6000 && indexing_.load() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return indexing_.load() == n;
  }

  TempDir logs_, cache_, sock_;
  Gate gate_;
  std::atomic<int> indexing_{0};
  InProcessService service_;  // declared last: shut down before the gate and the folders
};

// The first screen of both sides and the details of the root and of its
// children, while the index is not converted: each node where the whole
// graph has it, each detail the one the whole graph holds.
TEST_F(DbOpeningTest, TheFirstScreenAndItsDetailsComeFromTheDbBeforeTheIndex) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run26/batch.vis.db#step1_rank0", "dist_gloo_batch_26.2.0.vis.db"},
      {"run26/build.vis.db", "dist_gloo_build_26.2.0.vis.db"},
      {"run83/batch.vis.db#step0_rank1", "dist_gloo_batch_8.3.3.vis.db"},
      {"run82/compare.vis.db", "dist_gloo_compare_8.2.1.vis.db"}};
  for (const auto& [file, fixture] : cases) {
    SCOPED_TRACE(file);
    const formats::GraphFile g = Reference(fixture, file);
    FileInfo info;
    grpc::Status st = Open(file, &info);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(info.meta().step(), g.meta.step());
    EXPECT_EQ(info.meta().rank(), g.meta.rank());
    EXPECT_EQ(info.npu().nodes(), g.npu.index.size());
    for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
      if (side == vis::SIDE_BENCH && !g.compare()) continue;
      ViewReply view = View(file, side);
      ASSERT_NO_FATAL_FAILURE(ExpectAsInTheWholeGraph(view, g, side));
      for (const LayoutNode& n : view.nodes()) {
        NodeDetailReply d = Detail(file, side, n.index());
        const vis::NodeDetail& want = g.side(side).details[static_cast<size_t>(n.index())];
        EXPECT_EQ(d.detail().input_size(), want.input_size()) << n.name();
        EXPECT_EQ(d.detail().output_size(), want.output_size()) << n.name();
        if (want.stack_id() >= 0) {
          EXPECT_EQ(std::vector<std::string>(d.stack().begin(), d.stack().end()),
                    g.side(side).stacks[static_cast<size_t>(want.stack_id())])
              << n.name();
        }
        EXPECT_EQ(d.has_matched(), g.compare() && g.side(side).index.matched[n.index()] >= 0) << n.name();
      }
    }
  }
  // Each fill goes on once its first screen is served, to the gate that holds it.
  ASSERT_TRUE(ReachedGate(4)) << "every index conversion reached its gate: " << indexing_.load();
}

// The index conversion waits until the first screen is served, each side's
// view (the page asks for them right after the open), so that the first
// screen has the cores; a request that needs the index does not wait for it.
TEST_F(DbOpeningTest, TheConversionWaitsForTheFirstScreen) {
  const std::string compare = "run82/compare.vis.db";
  ASSERT_TRUE(Open(compare).ok());
  View(compare, vis::SIDE_NPU);
  EXPECT_EQ(indexing_.load(), 0) << "the Bench side's view is still to be served";
  View(compare, vis::SIDE_BENCH);
  ASSERT_TRUE(ReachedGate(1));
  const std::string build = "run26/build.vis.db";  // one side
  ASSERT_TRUE(Open(build).ok());
  EXPECT_EQ(indexing_.load(), 1);
  View(build, vis::SIDE_NPU);
  ASSERT_TRUE(ReachedGate(2));
  // The Bench side's view not asked: expanding a node whose children the
  // opening has not read waits for the index, which starts it.
  const std::string batch = "run26/batch.vis.db#step0_rank0";
  ASSERT_TRUE(Open(batch).ok());
  const ViewReply npu = View(batch, vis::SIDE_NPU);
  EXPECT_EQ(indexing_.load(), 2);
  int32_t module = -1;
  for (const LayoutNode& n : npu.nodes()) {
    if (n.expandable() && n.parent() >= 0) module = n.index();
  }
  ASSERT_GE(module, 0);
  std::thread expand([&] { Expand(batch, vis::SIDE_NPU, module); });
  const bool reached = ReachedGate(3);
  gate_.Open();
  expand.join();
  EXPECT_TRUE(reached);
  // Opened, never viewed: the service shuts down without waiting for its first screen.
  ASSERT_TRUE(Open("run83/batch.vis.db#step0_rank1").ok());
}

// The side panels' lists that need no node (the match configs beside the
// file, its checkpoint comparison when there is none to map) answer from the
// opening while the index is held; a checkpoint JSON to map onto the modules
// waits for it.
TEST_F(DbOpeningTest, PanelsThatNeedNoNodeAnswerFromTheOpening) {
  const std::string file = "run82/compare.vis.db";
  ASSERT_TRUE(Open(file).ok());
  auto within_a_minute = [](grpc::ClientContext* ctx) {
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(1));
  };
  {
    grpc::ClientContext ctx;
    within_a_minute(&ctx);
    FileRequest req;
    req.set_file(file);
    MatchConfigList reply;
    grpc::Status st = service_.stub()->ListMatchConfigs(&ctx, req, &reply);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(reply.own().substr(0, 6), "run82/") << reply.own();
  }
  {
    grpc::ClientContext ctx;
    within_a_minute(&ctx);
    CkptRequest req;
    req.set_file(file);
    CkptReply reply;
    grpc::Status st = service_.stub()->GetCkpt(&ctx, req, &reply);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_FALSE(reply.available());
  }
  EXPECT_EQ(indexing_.load(), 0) << "no view served, no index wanted: the conversion has not started";
}

// Expanding a node whose children the opening has not read waits for the
// index (a search beside it does not); the answers are those of the whole
// graph, with the indices the opening showed.
TEST_F(DbOpeningTest, ExpandingWaitsForTheIndex) {
  const std::string file = "run26/batch.vis.db#step0_rank1";
  const formats::GraphFile g = Reference("dist_gloo_batch_26.2.0.vis.db", file);
  ASSERT_TRUE(Open(file).ok());
  ViewReply first = View(file, vis::SIDE_NPU);
  int32_t child = -1;
  for (const LayoutNode& n : first.nodes()) {
    if (n.depth() == 1 && n.expandable()) child = n.index();
  }
  ASSERT_GE(child, 0) << "a first-level node with children";
  ViewReply expanded;
  NodeList hits;
  std::thread expand([&] { expanded = Expand(file, vis::SIDE_NPU, child); });
  std::thread search([&] { hits = Search(file, vis::SIDE_BENCH, "all_reduce"); });
  gate_.Open();
  expand.join();
  search.join();
  ASSERT_NO_FATAL_FAILURE(ExpectAsInTheWholeGraph(expanded, g, vis::SIDE_NPU));
  EXPECT_GT(expanded.nodes_size(), first.nodes_size());
  ASSERT_GT(hits.total(), 0u);
  for (const auto& h : hits.hits()) EXPECT_EQ(h.name(), g.bench.index.Name(static_cast<uint32_t>(h.index())));
}

// Searching before the index is written answers from the .vis.db's names:
// the same hits, in the same order, with the same indices and ancestors as
// the search once the index has replaced the opening (literal, either case,
// regular expression; both sides).
TEST_F(DbOpeningTest, SearchComesFromTheDbBeforeTheIndex) {
  const std::vector<std::string> files = {"run26/batch.vis.db#step1_rank0", "run26/build.vis.db",
                                          "run83/batch.vis.db#step0_rank1", "run82/compare.vis.db"};
  struct Query {
    std::string text;
    bool regex, folded;
  };
  const std::vector<Query> queries = {{"all_reduce", false, false}, {"MODULE.", false, true},
                                      {"Module", false, false},     {"^(Module|Distributed).*\\.forward\\.0$", true, false},
                                      {"defaultmodel", false, true}, {"", false, false}};
  std::map<std::string, std::vector<NodeList>> before;
  for (const std::string& file : files) {
    ASSERT_TRUE(Open(file).ok()) << file;
    for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
      if (side == vis::SIDE_BENCH && file == "run26/build.vis.db") continue;  // a build: no Bench side
      for (const Query& q : queries) before[file].push_back(Search(file, side, q.text, q.regex, q.folded));
    }
  }
  // Hits the opening has not read come uncoloured: these answers are the db's.
  size_t uncoloured = 0;
  for (const auto& [file, lists] : before) {
    for (const NodeList& l : lists) {
      for (const NodeHit& h : l.hits()) uncoloured += h.bucket() == -1 ? 1 : 0;
    }
  }
  EXPECT_GT(uncoloured, 0u);
  gate_.Open();  // every search above answered while the index conversions were held
  size_t hits = 0;
  for (const std::string& file : files) {
    {
      grpc::ClientContext ctx;  // a filter waits for the index: the searches below meet it
      FilterRequest req;
      *req.mutable_view() = Key(file, vis::SIDE_NPU);
      req.set_unmatched(true);
      NodeList reply;
      ASSERT_TRUE(service_.stub()->Filter(&ctx, req, &reply).ok());
    }
    size_t k = 0;
    for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
      if (side == vis::SIDE_BENCH && file == "run26/build.vis.db") continue;
      for (const Query& q : queries) {
        SCOPED_TRACE(file + " " + q.text + (side == vis::SIDE_BENCH ? " bench" : " npu"));
        const NodeList after = Search(file, side, q.text, q.regex, q.folded);
        const NodeList& was = before[file][k++];
        ASSERT_EQ(was.total(), after.total());
        ASSERT_EQ(was.hits_size(), after.hits_size());
        for (int i = 0; i < after.hits_size(); ++i) {
          EXPECT_EQ(was.hits(i).index(), after.hits(i).index());
          EXPECT_EQ(was.hits(i).name(), after.hits(i).name());
          EXPECT_EQ(std::vector<std::string>(was.hits(i).ancestors().begin(), was.hits(i).ancestors().end()),
                    std::vector<std::string>(after.hits(i).ancestors().begin(), after.hits(i).ancestors().end()))
              << after.hits(i).name();
          EXPECT_EQ(was.hits(i).ancestors_omitted(), after.hits(i).ancestors_omitted());
        }
        hits += after.hits_size();
      }
    }
  }
  EXPECT_GT(hits, 100u) << "the queries find nodes";
}

// When the index replaces the opening, a view keeps its expanded nodes and
// every index the page holds names the same node.
TEST_F(DbOpeningTest, TheIndexReplacesTheOpeningKeepingViewsAndIndices) {
  const std::string file = "run82/compare.vis.db";
  const formats::GraphFile g = Reference("dist_gloo_compare_8.2.1.vis.db", file);
  ASSERT_TRUE(Open(file).ok());
  ViewReply opening = View(file, vis::SIDE_BENCH);
  gate_.Open();
  // The whole index, then the node expanded on it.
  int32_t child = -1;
  for (const LayoutNode& n : opening.nodes()) {
    if (n.depth() == 1 && n.expandable()) child = n.index();
  }
  ASSERT_GE(child, 0);
  ViewReply expanded = Expand(file, vis::SIDE_BENCH, child);
  ViewReply again = View(file, vis::SIDE_BENCH);
  ASSERT_EQ(again.nodes_size(), expanded.nodes_size()) << "the expanded node stays expanded";
  ASSERT_NO_FATAL_FAILURE(ExpectAsInTheWholeGraph(again, g, vis::SIDE_BENCH));
  for (const LayoutNode& n : opening.nodes()) {
    NodeDetailReply d = Detail(file, vis::SIDE_BENCH, n.index());
    EXPECT_EQ(d.node().name(), n.name());
  }
}

// A graph smaller than the service's opening size opens from its index as
// before; at the size or above, from its opening screen.
TEST(DbOpeningSize, OnlyAGraphOfTheOpeningSizeOpensFromItsOpening) {
  TempDir logs, cache;
  const std::string db = logs.Join("compare.vis.db");
  fs::copy_file(MsprobeOutput("dist_gloo_compare_26.2.0.vis.db"), db);
  const uint64_t nodes = Reference("dist_gloo_compare_26.2.0.vis.db", "").npu.index.size();
  for (uint64_t size : {nodes + 1, nodes}) {
    SCOPED_TRACE(size);
    auto foreign = ForeignFiles::Open(cache.Join("c" + std::to_string(size)), logs.path(), size);
    ASSERT_TRUE(foreign.ok()) << foreign.error().ToString();
    auto opened = foreign->Converted(db, "");
    ASSERT_TRUE(opened.ok()) << opened.error().ToString();
    const std::string suffix = size > nodes ? ".index.vis" : ".opening.vis";
    EXPECT_EQ(opened->path.substr(opened->path.size() - suffix.size()), suffix) << opened->path;
    ASSERT_NE(opened->details, nullptr);
  }
}

// The opening's sides are built from the few nodes known (no column of every
// node written twice): every column as the dense index of the same nodes has
// it, nameless nodes included; a partial index that is no forest is an error.
TEST(SideGraphFromPartial, EveryColumnAsTheDenseIndexHasIt) {
  vis::PartialSideIndex p;
  p.size = 10;
  auto known = [&](uint32_t index, std::string name, std::vector<uint32_t> children) {
    vis::PartialSideIndex::Known k;
    k.index = index;
    k.name = std::move(name);
    k.children = std::move(children);
    p.known.push_back(std::move(k));
    return &p.known.back();
  };
  known(0, "DefaultModel", {2, 5});
  vis::PartialSideIndex::Known* a = known(2, "Module.a.forward.0", {1, 3, 9});
  a->precision = 0.25;
  a->matched = 4;
  a->flags = vis::FLAG_HAS_DATA | vis::FLAG_PRECISION_FLOAT;
  a->micro_step = 1;
  vis::PartialSideIndex::Known* b = known(5, "odd\nname", {});
  b->node_type = static_cast<uint8_t>(vis::NODE_API);
  b->overflow = static_cast<uint8_t>(vis::OVERFLOW_CRITICAL);
  known(7, "a peer, no parent", {});
  const vis::SideIndex dense = p.Dense();
  auto g = SideGraph::FromPartial(p, "x.vis.db", vis::SIDE_NPU);
  ASSERT_TRUE(g.ok()) << g.error().ToString();
  ASSERT_EQ((*g)->size(), dense.size());
  for (uint32_t n = 0; n < dense.size(); ++n) {
    SCOPED_TRACE(n);
    EXPECT_EQ((*g)->name(n), dense.Name(n));
    EXPECT_EQ((*g)->parent(n), dense.parent[n]);
    EXPECT_EQ(std::vector<uint32_t>((*g)->children(n), (*g)->children(n) + (*g)->child_count(n)),
              std::vector<uint32_t>(dense.children.begin() + dense.child_offset[n],
                                    dense.children.begin() + dense.child_offset[n + 1]));
    EXPECT_EQ((*g)->node_type(n), dense.node_type[n]);
    EXPECT_EQ((*g)->micro_step(n), dense.micro_step[n]);
    EXPECT_EQ((*g)->has_precision(n), !std::isnan(dense.precision[n]));
    if ((*g)->has_precision(n)) EXPECT_EQ((*g)->precision(n), dense.precision[n]);
    EXPECT_EQ((*g)->overflow(n), dense.overflow[n]);
    EXPECT_EQ((*g)->matched(n), dense.matched[n]);
    EXPECT_EQ((*g)->flags(n), dense.flags[n]);
  }
  EXPECT_EQ((*g)->name(5), "odd\nname");
  EXPECT_EQ((*g)->child_count(0), 2u);
  EXPECT_EQ((*g)->parent(9), 2);
  EXPECT_EQ((*g)->depth(9), 2);
  EXPECT_FALSE((*g)->reachable(7));
  EXPECT_FALSE((*g)->reachable(6));

  vis::PartialSideIndex twice = p;
  twice.known[1].children.push_back(5);  // node 5 listed by the root and by node 2
  vis::PartialSideIndex outside = p;
  outside.known[1].children.push_back(10);
  vis::PartialSideIndex unordered = p;
  std::swap(unordered.known[1], unordered.known[2]);
  vis::PartialSideIndex cycle = p;  // nodes 5 and 7 list each other, neither under the root
  cycle.known[0].children = {2};
  cycle.known[2].children = {7};
  cycle.known[3].children = {5};
  for (const vis::PartialSideIndex* bad : {&twice, &outside, &unordered, &cycle}) {
    auto r = SideGraph::FromPartial(*bad, "x.vis.db", vis::SIDE_NPU);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().file, "x.vis.db");
    EXPECT_EQ(r.error().where, "NPU node index");
  }
}

// The opening places nodes by node_order, so a graph whose orders are not as
// many consecutive numbers as its rows opens from its index instead: the
// file's only graph (checked against the table's row count) and one graph of
// a batch (checked side by side); another graph of the same batch still
// opens from its opening.
TEST(DbOpeningOrders, OrdersThatAreNotConsecutiveOpenFromTheIndex) {
  TempDir logs, cache;
  struct Case {
    std::string fixture, id, sql, suffix;
  };
  const std::string gap_in_step1_rank0 =
      "PRAGMA journal_mode=DELETE; UPDATE tb_nodes SET node_order = 100000 "
      "WHERE step = 1 AND rank = 0 AND up_node = ''";
  const std::vector<Case> cases = {
      {"dist_gloo_compare_8.2.1.vis.db", "", "", ".opening.vis"},
      {"dist_gloo_compare_8.2.1.vis.db", "",
       "PRAGMA journal_mode=DELETE; UPDATE tb_nodes SET node_order = 100000 WHERE up_node = ''", ".index.vis"},
      {"dist_gloo_build_26.2.0.vis.db", "",
       "PRAGMA journal_mode=DELETE; UPDATE tb_nodes SET node_order = node_order + 1 WHERE up_node = ''", ".index.vis"},
      {"dist_gloo_batch_26.2.0.vis.db", "step1_rank0", gap_in_step1_rank0, ".index.vis"},
      {"dist_gloo_batch_26.2.0.vis.db", "step0_rank1", gap_in_step1_rank0, ".opening.vis"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(c.fixture + " " + c.id + " " + c.sql);
    const std::string db = logs.Join(std::to_string(i) + ".vis.db");
    fs::copy_file(MsprobeOutput(c.fixture), db);
    if (!c.sql.empty()) testing::ExecSql(db, c.sql);
    auto foreign = ForeignFiles::Open(cache.Join("c" + std::to_string(i)), logs.path(), 0);
    ASSERT_TRUE(foreign.ok()) << foreign.error().ToString();
    auto opened = foreign->Converted(db, c.id);
    ASSERT_TRUE(opened.ok()) << opened.error().ToString();
    ASSERT_GE(opened->path.size(), c.suffix.size());
    EXPECT_EQ(opened->path.substr(opened->path.size() - c.suffix.size()), c.suffix) << opened->path;
  }
}

}  // namespace
}  // namespace graph_ascend::service
