// Foreign formats (builder/formats): round trips of graphs built from the
// samples through msprobe's JSON .vis and .vis.db and back, the files real
// msprobe wrote (tests/data/msprobe_outputs), and bad input.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sqlite3.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "cli_runner.h"
#include "formats/foreign_file.h"
#include "formats/msprobe_json/json_export.h"
#include "formats/msprobe_json/msprobe_json.h"
#include "formats/vis_db/vis_db.h"
#include "msprobe_fixtures.h"
#include "thread_limit.h"
#include "vis/vis_file.h"
#include "vis/vis_index.h"

namespace graph_ascend::formats {
namespace {

namespace fs = std::filesystem;
using testing::Ok;
using testing::ReadFile;
using testing::RunTool;
using testing::Sample;
using testing::TempDir;
using testing::WriteFile;

// What a graph says about its nodes, one line per node, whatever format it came from.
std::vector<std::string> Describe(const GraphFile& g, vis::Side s, bool with_micro_step = true) {
  const GraphSide& side = g.side(s);
  const GraphSide& other = g.side(s == vis::SIDE_NPU ? vis::SIDE_BENCH : vis::SIDE_NPU);
  const vis::SideIndex& idx = side.index;
  std::vector<std::string> out;
  for (uint32_t n = 0; n < idx.size(); ++n) {
    std::string line(idx.Name(n));
    line += " type=" + std::to_string(idx.node_type[n]);
    line += " parent=" + (idx.parent[n] >= 0 ? std::string(idx.Name(idx.parent[n])) : "-");
    line += " children=";
    for (uint32_t c = idx.child_offset[n]; c < idx.child_offset[n + 1]; ++c) {
      line += std::string(idx.Name(idx.children[c])) + ",";
    }
    line += " matched=" + (idx.matched[n] >= 0 ? std::string(other.index.Name(idx.matched[n])) : "-");
    char p[40];
    snprintf(p, sizeof(p), "%.17g", idx.precision[n]);
    line += std::string(" precision=") + (std::isnan(idx.precision[n]) ? "none" : p);
    line += " overflow=" + std::to_string(idx.overflow[n]);
    if (with_micro_step) line += " micro_step=" + std::to_string(std::max(0, idx.micro_step[n]));
    const vis::NodeDetail& d = side.details[n];
    for (const auto* items : {&d.input(), &d.output()}) {
      for (const vis::Item& item : *items) {
        line += "\n  " + item.key() + " state=" + std::to_string(item.state()) + ":";
        for (auto& [k, v] : vis::FormatItem(item, g.meta.mode(), std::string(idx.Name(n)))) line += " " + k + "=" + v;
      }
    }
    line += "\n  stack:";
    if (d.stack_id() >= 0) {
      for (const std::string& f : side.stacks[d.stack_id()]) line += " " + f;
    }
    for (const vis::DistributedLink& l : d.distributed()) {
      line += "\n  link " + l.communications_type() + " " + std::to_string(l.rank()) + " " + l.peer_node() + " " +
              l.peer_index();
    }
    for (const std::string& m : d.parallel_merge_info()) line += "\n  merge " + m;
    out.push_back(std::move(line));
  }
  return out;
}

void ExpectSameGraph(const GraphFile& a, const GraphFile& b, bool with_micro_step = true) {
  EXPECT_EQ(a.meta.kind(), b.meta.kind());
  EXPECT_EQ(a.meta.mode(), b.meta.mode());
  EXPECT_EQ(a.meta.micro_steps(), b.meta.micro_steps());
  EXPECT_EQ(a.meta.overflow_checked(), b.meta.overflow_checked());
  auto legend = [](const GraphFile& g) {
    std::vector<std::string> out;
    for (const vis::ColorBucket& c : g.meta.legend()) out.push_back(c.color() + " " + c.name() + " " + c.description());
    return out;
  };
  EXPECT_EQ(legend(a), legend(b));
  EXPECT_EQ(Describe(a, vis::SIDE_NPU, with_micro_step), Describe(b, vis::SIDE_NPU, with_micro_step));
  if (a.compare()) {
    EXPECT_EQ(Describe(a, vis::SIDE_BENCH, with_micro_step), Describe(b, vis::SIDE_BENCH, with_micro_step));
  }
}

// Builds `config` (a samples/ compare.json, build.json or batch.json) with bin/graph-ascend.
std::vector<std::string> Build(const std::string& config, const std::string& out_dir) {
  testing::RunResult r = RunTool({"graph", "-i", Sample(config), "-o", out_dir});
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(out_dir)) {
    if (e.path().extension() == ".vis") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

int64_t CountRows(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  // immutable: msprobe's files are in WAL mode, and a plain read-only open would create -wal/-shm beside them.
  std::string uri = "file:" + db_path + "?immutable=1";
  EXPECT_EQ(sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  int64_t n = -1;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
    n = sqlite3_column_int64(s, 0);
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return n;
}

// PRAGMA integrity_check's answer ("ok"): the b-trees, the page accounting and every index against its table.
std::string IntegrityCheck(const std::string& db_path) {
  sqlite3* db = nullptr;
  std::string uri = "file:" + db_path + "?immutable=1";
  EXPECT_EQ(sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, nullptr) == SQLITE_OK) {
    while (sqlite3_step(s) == SQLITE_ROW) out += reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

class RoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(RoundTrip, VisThroughDbAndBack) {
  TempDir dir;
  for (const std::string& vis_path : Build(GetParam(), dir / "out")) {
    GraphFile ours = Ok(ReadVisFile(vis_path));
    ASSERT_GT(ours.npu.index.size(), 1u);
    ASSERT_TRUE(WriteVisDb({&ours}, dir / "g.vis.db").ok());
    EXPECT_EQ(IntegrityCheck(dir / "g.vis.db"), "ok");
    auto back = Ok(ReadVisDb(dir / "g.vis.db"));
    ASSERT_EQ(back.size(), 1u);
    ExpectSameGraph(ours, back[0].graph);
  }
}

TEST_P(RoundTrip, VisThroughMsprobeJsonAndBack) {
  TempDir dir;
  for (const std::string& vis_path : Build(GetParam(), dir / "out")) {
    GraphFile ours = Ok(ReadVisFile(vis_path));
    ASSERT_TRUE(vis::ExportJson(vis_path, dir / "g.json").ok());
    GraphFile back = Ok(ReadMsprobeJson(dir / "g.json"));
    ExpectSameGraph(ours, back);
    // Kept by the JSON format, not by the db schema.
    for (uint32_t n = 0; n < ours.npu.details.size(); ++n) {
      EXPECT_EQ(ours.npu.details[n].md5_result(), back.npu.details[n].md5_result());
    }
  }
}

TEST_P(RoundTrip, VisThroughVisAndBack) {
  TempDir dir;
  for (const std::string& vis_path : Build(GetParam(), dir / "out")) {
    GraphFile ours = Ok(ReadVisFile(vis_path));
    ASSERT_TRUE(WriteVisFile(ours, dir / "again.vis").ok());
    GraphFile back = Ok(ReadVisFile(dir / "again.vis"));
    ExpectSameGraph(ours, back);
    EXPECT_EQ(ours.meta.npu().node_count(), back.meta.npu().node_count());
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, RoundTrip,
                         ::testing::Values("cnn_statistics/compare.json", "cnn_statistics/build.json",
                                           "cnn_md5/compare.json", "dist_gloo/compare.json",
                                           "overflow_nan/compare.json"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return s;
                         });

TEST(VisDbTest, BatchOfRanksIntoOneDbAndOutAgain) {
  TempDir dir;
  std::vector<std::string> files = Build("dist_gloo/batch.json", dir / "out");
  ASSERT_GE(files.size(), 2u);
  std::vector<GraphFile> ours;
  for (const std::string& f : files) ours.push_back(Ok(ReadVisFile(f)));
  std::vector<const GraphFile*> refs;
  for (const GraphFile& g : ours) refs.push_back(&g);
  ASSERT_TRUE(WriteVisDb(refs, dir / "batch.vis.db").ok());
  EXPECT_EQ(IntegrityCheck(dir / "batch.vis.db"), "ok");
  EXPECT_EQ(CountRows(dir / "batch.vis.db", "SELECT COUNT(*) FROM (SELECT DISTINCT step, rank FROM tb_nodes)"),
            static_cast<int64_t>(files.size()));
  EXPECT_EQ(CountRows(dir / "batch.vis.db", "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index'"), 7 + 3);
  auto keys = Ok(ListVisDb(dir / "batch.vis.db"));
  ASSERT_EQ(keys.size(), files.size());
  EXPECT_EQ(keys[0].npu_nodes, ours[0].npu.index.size());
  auto back = Ok(ReadVisDb(dir / "batch.vis.db"));
  ASSERT_EQ(back.size(), files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(back[i].graph.meta.step(), ours[i].meta.step());
    EXPECT_EQ(back[i].graph.meta.rank(), ours[i].meta.rank());
    ExpectSameGraph(ours[i], back[i].graph);
  }
  // Two graphs for one step and rank are refused, and nothing is written.
  Status st = WriteVisDb({&ours[0], &ours[0]}, dir / "twice.vis.db");
  EXPECT_FALSE(st.ok());
  EXPECT_FALSE(fs::exists(dir / "twice.vis.db"));
}

// Our .vis stores a micro step on top-level nodes only; a .vis.db row
// carries its top-level ancestor's (msprobe 26's plugin filters every row by
// micro_step_id), and reads back as the same graph.
TEST(VisDbTest, EveryRowCarriesItsTopLevelMicroStep) {
  TempDir dir;
  std::vector<std::string> files = Build("p2p_micro/batch.json", dir / "out");
  ASSERT_EQ(files.size(), 2u);
  testing::RunResult r = RunTool({"export", files[0], files[1], "--format", "db", "-o", dir / "b.vis.db"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string db = dir / "b.vis.db";
  EXPECT_EQ(CountRows(db, "SELECT micro_steps FROM tb_config"), 2);
  const std::string rank0 = " AND rank = 0 AND data_source = 'NPU'";
  EXPECT_EQ(CountRows(db, "SELECT micro_step_id FROM tb_nodes WHERE node_name = 'Functional.linear.1.forward'" + rank0),
            1);
  EXPECT_EQ(CountRows(db, "SELECT COUNT(*) FROM tb_nodes WHERE micro_step_id = 1" + rank0 +
                              " AND up_node IN ('Module.fc.Linear.forward.1', 'Apis_Between_Modules.1')"),
            CountRows(db, "SELECT COUNT(*) FROM tb_nodes WHERE up_node IN ('Module.fc.Linear.forward.1', "
                          "'Apis_Between_Modules.1')" + rank0));
  EXPECT_GT(CountRows(db, "SELECT COUNT(*) FROM tb_nodes WHERE micro_step_id = 1 AND up_node != 'DefaultModel'" + rank0),
            0);
  auto graphs = Ok(ReadVisDb(db));
  ASSERT_EQ(graphs.size(), 2u);
  ExpectSameGraph(Ok(ReadVisFile(files[0])), graphs[0].graph, /*with_micro_step=*/false);
}

TEST(VisDbTest, ReadingLeavesNothingBesideTheFile) {
  TempDir dir;
  std::vector<std::string> files = Build("cnn_statistics/compare.json", dir / "out");
  GraphFile ours = Ok(ReadVisFile(files[0]));
  fs::create_directory(dir / "logs");
  ASSERT_TRUE(WriteVisDb({&ours}, dir / "logs/g.vis.db").ok());
  ASSERT_TRUE(ReadVisDb(dir / "logs/g.vis.db").ok());
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir / "logs")) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"g.vis.db"});
}

// Files written by real msprobe (bench/reference/make_msprobe_fixtures.sh).
std::string Fixture(const std::string& name) { return testing::SourceDir() + "/tests/data/msprobe_outputs/" + name; }


TEST(MsprobeOutputsTest, VisDbNodeCountsAndMatchesAsMsprobeWroteThem) {
  std::vector<std::string> dbs = Fixtures(".vis.db");
  ASSERT_FALSE(dbs.empty());
  for (const std::string& path : dbs) {
    SCOPED_TRACE(path);
    auto graphs = Ok(ReadVisDb(path));
    ASSERT_FALSE(graphs.empty());
    EXPECT_EQ(static_cast<int64_t>(graphs.size()),
              CountRows(path, "SELECT COUNT(*) FROM (SELECT DISTINCT step, rank FROM tb_nodes)"));
    for (const DbGraph& g : graphs) {
      std::string key = " WHERE step = " + std::to_string(g.step) + " AND rank = " + std::to_string(g.rank);
      EXPECT_EQ(g.graph.npu.index.size(), CountRows(path, "SELECT COUNT(*) FROM tb_nodes" + key +
                                                              " AND data_source = 'NPU'"));
      EXPECT_EQ(g.graph.bench.index.size(), CountRows(path, "SELECT COUNT(*) FROM tb_nodes" + key +
                                                                " AND data_source = 'Bench'"));
      int64_t matched = 0, with_precision = 0, with_items = 0;
      for (uint32_t n = 0; n < g.graph.npu.index.size(); ++n) {
        matched += g.graph.npu.index.matched[n] >= 0;
        with_precision += !std::isnan(g.graph.npu.index.precision[n]);
        with_items += g.graph.npu.details[n].input_size() + g.graph.npu.details[n].output_size();
      }
      EXPECT_EQ(matched, CountRows(path, "SELECT COUNT(*) FROM tb_nodes" + key +
                                             " AND data_source = 'NPU' AND matched_node_link NOT IN ('', '[]')"));
      EXPECT_EQ(with_precision, CountRows(path, "SELECT COUNT(*) FROM tb_nodes" + key +
                                                    " AND data_source = 'NPU' AND precision_index IS NOT NULL"));
      EXPECT_GT(with_items, 0);
      // The hierarchy hangs from the root.
      EXPECT_EQ(g.graph.npu.index.Name(0), "DefaultModel");
      EXPECT_EQ(g.graph.npu.index.PreOrder().size(), g.graph.npu.index.size());
    }
  }
}

// ConvertVisDb streams each row into the .vis; the files must hold what
// ReadVisDb reads, also where it falls back to reading a graph whole (the root
// not first, a repeated node name).
void ExpectConvertedAsRead(const std::string& db, const std::string& out_dir) {
  auto graphs = Ok(ReadVisDb(db));
  int made = 0;
  auto written =
      Ok(ConvertVisDb(db, [&](const vis::FileMeta&) { return out_dir + "/" + std::to_string(made++) + ".vis"; }));
  ASSERT_EQ(written.size(), graphs.size());
  for (size_t i = 0; i < graphs.size(); ++i) {
    SCOPED_TRACE(written[i]);
    GraphFile back = Ok(ReadVisFile(written[i]));
    EXPECT_EQ(back.meta.step(), graphs[i].graph.meta.step());
    EXPECT_EQ(back.meta.rank(), graphs[i].graph.meta.rank());
    ExpectSameGraph(graphs[i].graph, back);
    EXPECT_EQ(back.npu.index.flags, graphs[i].graph.npu.index.flags);
    EXPECT_EQ(back.bench.index.flags, graphs[i].graph.bench.index.flags);
    EXPECT_EQ(back.npu.stacks, graphs[i].graph.npu.stacks);
  }
  // The hierarchy-first file: the same index, stacks and meta in the same
  // node order, and no details unless the graph had to be read whole.
  std::vector<bool> whole;
  made = 0;
  auto index_files = Ok(ConvertVisDbIndex(
      db, [&](const vis::FileMeta&) { return out_dir + "/" + std::to_string(made++) + ".index.vis"; }, {}, &whole));
  ASSERT_EQ(index_files.size(), written.size());
  ASSERT_EQ(whole.size(), written.size());
  for (size_t i = 0; i < written.size(); ++i) {
    SCOPED_TRACE(index_files[i]);
    auto full = Ok(vis::VisReader::Open(written[i]));
    auto index = Ok(vis::VisReader::Open(index_files[i]));
    EXPECT_EQ(index->meta().npu().node_count(), full->meta().npu().node_count());
    EXPECT_EQ(index->meta().npu().stack_count(), full->meta().npu().stack_count());
    EXPECT_EQ(index->meta().step(), full->meta().step());
    EXPECT_EQ(index->meta().legend_size(), full->meta().legend_size());
    bool reads_whole = !index->Sections(vis::SECTION_NODE_DETAILS, vis::SIDE_NPU).empty();
    EXPECT_EQ(reads_whole, whole[i]);
    for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
      if (!full->has_side(side)) continue;
      vis::SideIndex a = Ok(vis::LoadSideIndex(*full, side)), b = Ok(vis::LoadSideIndex(*index, side));
      EXPECT_EQ(a.names, b.names);
      EXPECT_EQ(a.parent, b.parent);
      EXPECT_EQ(a.children, b.children);
      EXPECT_EQ(a.node_type, b.node_type);
      EXPECT_EQ(a.overflow, b.overflow);
      EXPECT_EQ(a.matched, b.matched);
      EXPECT_EQ(a.flags, b.flags);
      EXPECT_EQ(a.micro_step, b.micro_step);
      EXPECT_EQ(a.precision.size(), b.precision.size());
      for (size_t n = 0; n < a.precision.size() && n < b.precision.size(); ++n) {
        EXPECT_TRUE(a.precision[n] == b.precision[n] || (std::isnan(a.precision[n]) && std::isnan(b.precision[n])));
      }
      EXPECT_EQ(full->Sections(vis::SECTION_STACKS, side).size(), index->Sections(vis::SECTION_STACKS, side).size());
    }
    // A node's details read by name while the whole file is written: the
    // ones that file holds, stack ids and repeated names' merge included.
    auto nodes = Ok(VisDbNodes::Open(db, index_files[i]));
    GraphFile back = Ok(ReadVisFile(written[i]));
    for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
      if (!full->has_side(side)) continue;
      const GraphSide& g = back.side(side);
      for (uint32_t n = 0; n < g.index.size(); ++n) {
        auto d = nodes->Detail(side, std::string(g.index.Name(n)));
        ASSERT_TRUE(d.ok()) << g.index.Name(n) << ": " << d.error().ToString();
        ASSERT_EQ(d->SerializeAsString(), g.details[n].SerializeAsString()) << g.index.Name(n);
      }
    }
  }
}

TEST(MsprobeOutputsTest, ConvertedDbHoldsWhatIsRead) {
  for (const std::string& path : Fixtures(".vis.db")) {
    SCOPED_TRACE(path);
    TempDir dir;
    ExpectConvertedAsRead(path, dir.path());
  }
}

// The Bench side of a compare is read on a thread of its own; when none can
// be started (a thread limit) it is read on the caller's, and the files are
// the same (issue 17, 1c: std::system_error escaped the conversion).
TEST(MsprobeOutputsTest, ConvertsWhenNoThreadCanBeStarted) {
  TempDir dir;
  testing::NoNewThreads limit;
  ASSERT_TRUE(limit.ok());
  EXPECT_THROW(std::thread([] {}).join(), std::system_error);  // the limit holds
  ExpectConvertedAsRead(Fixture("dist_gloo_compare_26.2.0.vis.db"), dir.path());
}

TEST(MsprobeOutputsTest, ConvertedDbWithTheRootLastOrARepeatedNameHoldsWhatIsRead) {
  TempDir dir;
  std::string db = dir / "moved.vis.db";
  fs::copy_file(Fixture("dist_gloo_compare_26.2.0.vis.db"), db);
  ExecSql(db, "PRAGMA journal_mode=DELETE; UPDATE tb_nodes SET node_order = 100000 WHERE up_node = ''");
  ExpectConvertedAsRead(db, dir.path());
  std::string twice = dir / "twice.vis.db";
  fs::copy_file(Fixture("dist_gloo_compare_26.2.0.vis.db"), twice);
  ExecSql(twice,
          "PRAGMA journal_mode=DELETE; INSERT INTO tb_nodes SELECT id || '_again', graph_id, node_order + 100000, "
          "node_name, node_type, up_node, sub_nodes, precision_index, overflow_level, micro_step_id, "
          "matched_node_link, stack_id, parallel_merge_info, matched_distributed, modified, '{}', output_data, "
          "data_source, dump_data_dir, step, rank, is_distributed FROM tb_nodes WHERE node_order = 3");
  ExpectConvertedAsRead(twice, dir.path());
}

// The hierarchy-first pass does not read the items: a row has some when its
// input_data or output_data holds more than two characters (msprobe writes "{}"
// for none), counted as characters, not bytes, and NULL holds none.
TEST(MsprobeOutputsTest, IndexFileHasDataFromThreeCharactersOfItemsText) {
  TempDir dir;
  std::string db = dir / "items.vis.db";
  fs::copy_file(Fixture("dist_gloo_compare_26.2.0.vis.db"), db);
  const std::vector<std::pair<std::string, bool>> cases = {{"NULL", false},  {"''", false},   {"'{}'", false},
                                                            {"'[]'", false},  {"'éé'", false}, {"'abc'", true},
                                                            {"'é{}'", true}, {"'{\"a\"'", true}};
  std::vector<std::string> names;
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(h,
                               "SELECT node_name FROM tb_nodes WHERE data_source = 'NPU' AND up_node <> '' "
                               "ORDER BY node_order LIMIT ?",
                               -1, &st, nullptr),
            SQLITE_OK);
  sqlite3_bind_int(st, 1, static_cast<int>(cases.size()));
  while (sqlite3_step(st) == SQLITE_ROW) names.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  sqlite3_close(h);
  ASSERT_EQ(names.size(), cases.size());
  std::string sql = "PRAGMA journal_mode=DELETE;";
  for (size_t i = 0; i < cases.size(); ++i) {
    sql += " UPDATE tb_nodes SET input_data = " + cases[i].first + ", output_data = " + cases[i].first +
           " WHERE data_source = 'NPU' AND node_name = '" + names[i] + "';";
  }
  ExecSql(db, sql);
  std::vector<bool> whole;
  auto files = Ok(ConvertVisDbIndex(db, [&](const vis::FileMeta&) { return dir / "index.vis"; }, {}, &whole));
  ASSERT_EQ(files.size(), 1u);
  ASSERT_FALSE(whole[0]);
  auto reader = Ok(vis::VisReader::Open(files[0]));
  vis::SideIndex idx = Ok(vis::LoadSideIndex(*reader, vis::SIDE_NPU));
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].first);
    bool found = false;
    for (uint32_t n = 0; n < idx.size(); ++n) {
      if (idx.Name(n) != names[i]) continue;
      found = true;
      EXPECT_EQ((idx.flags[n] & vis::FLAG_HAS_DATA) != 0, cases[i].second);
    }
    EXPECT_TRUE(found) << names[i];
  }
}

TEST(MsprobeOutputsTest, JsonVisNodeCountsAndMatchesAsMsprobeWroteThem) {
  std::vector<std::string> files = Fixtures(".vis");
  ASSERT_FALSE(files.empty());
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    GraphFile g = Ok(ReadMsprobeJson(path));
    auto j = nlohmann::json::parse(ReadFile(path));
    bool compare = j.contains("NPU");
    EXPECT_EQ(g.compare(), compare);
    const auto& npu = compare ? j["NPU"]["node"] : j["node"];
    EXPECT_EQ(g.npu.index.size(), npu.size());
    size_t matched = 0;
    for (const auto& [name, node] : npu.items()) matched += !node["matched_node_link"].empty();
    size_t ours = 0;
    for (int32_t m : g.npu.index.matched) ours += m >= 0;
    EXPECT_EQ(ours, matched);
    if (compare) {
      EXPECT_EQ(g.bench.index.size(), j["Bench"]["node"].size());
    }
    // Converting it to our .vis and back keeps it.
    TempDir dir;
    ASSERT_TRUE(WriteVisFile(g, dir / "x.vis").ok());
    ExpectSameGraph(g, Ok(ReadVisFile(dir / "x.vis")));
  }
}

// Every JSON .vis layout the reader claims (msprobe 1.2-8.2; 8.2.0's CLI
// still writes JSON) is a committed file of that version, and each node
// reads as written: precision index, items, stack frames, micro step.
TEST(MsprobeOutputsTest, EveryJsonLayoutReadsEachNodeAsWritten) {
  const std::vector<std::string> versions = {"1.2.0", "1.3.0", "8.1.0", "8.1.2", "8.2.0"};
  std::set<std::string> seen;
  for (const std::string& path : Fixtures(".vis")) {
    for (const std::string& v : versions) {
      if (path.find("_" + v + ".vis") != std::string::npos || path.find("_" + v + "-") != std::string::npos) {
        seen.insert(v);
      }
    }
    SCOPED_TRACE(path);
    GraphFile g = Ok(ReadMsprobeJson(path));
    auto j = nlohmann::json::parse(ReadFile(path));
    EXPECT_EQ(g.meta.micro_steps(), std::max<uint32_t>(1, j.value("MicroSteps", 1)));
    for (vis::Side s : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
      if (s == vis::SIDE_BENCH && !g.compare()) continue;
      const GraphSide& side = g.side(s);
      const auto& nodes = g.compare() ? j[s == vis::SIDE_NPU ? "NPU" : "Bench"]["node"] : j["node"];
      ASSERT_EQ(side.index.size(), nodes.size());
      for (uint32_t n = 0; n < side.index.size(); ++n) {
        const std::string name(side.index.Name(n));
        ASSERT_TRUE(nodes.contains(name)) << name;
        const auto& node = nodes[name];
        SCOPED_TRACE(name);
        const auto& data = node.value("data", nlohmann::json::object());
        if (s == vis::SIDE_NPU && data.contains("precision_index") && !data["precision_index"].is_null()) {
          const auto& p = data["precision_index"];
          EXPECT_DOUBLE_EQ(side.index.precision[n], p.is_string() ? std::stod(p.get<std::string>()) : p.get<double>());
        }
        const vis::NodeDetail& d = side.details[n];
        EXPECT_EQ(static_cast<size_t>(d.input_size()), node.value("input_data", nlohmann::json::object()).size());
        EXPECT_EQ(static_cast<size_t>(d.output_size()), node.value("output_data", nlohmann::json::object()).size());
        const auto& stack = node.value("stack_info", nlohmann::json::array());
        EXPECT_EQ(d.stack_id() >= 0 ? side.stacks[d.stack_id()].size() : 0u, stack.size());
        if (node.contains("micro_step_id") && side.index.parent[n] == 0) {
          EXPECT_EQ(side.index.micro_step[n], node["micro_step_id"].get<int32_t>());
        }
      }
    }
  }
  EXPECT_EQ(seen, std::set<std::string>(versions.begin(), versions.end())) << "a file of every layout claimed";
}

// Micro steps of a .vis.db (samples/p2p_micro: two micro-batches a step) as
// msprobe 26.2.0 and 8.2.0 wrote them; 8.2.0's early schema holds the stack
// frames inline (stack_info, no tb_stack); 26.2.0 links the isend/irecv pairs.
TEST(MsprobeOutputsTest, MicroStepsAndInlineStacksOfADb) {
  for (const char* name : {"p2p_micro_batch_26.2.0.vis.db", "p2p_micro_batch_8.2.0.vis.db"}) {
    SCOPED_TRACE(name);
    const std::string path = Fixture(name);
    auto graphs = Ok(ReadVisDb(path));
    ASSERT_EQ(graphs.size(), 2u) << "step0 rank0 and rank1";
    for (const DbGraph& g : graphs) {
      EXPECT_EQ(g.graph.meta.micro_steps(), 2u);
      std::string key = " WHERE step = " + std::to_string(g.step) + " AND rank = " + std::to_string(g.rank) +
                        " AND data_source = 'NPU'";
      int64_t second = 0;
      for (uint32_t n = 0; n < g.graph.npu.index.size(); ++n) second += g.graph.npu.index.micro_step[n] == 1;
      EXPECT_EQ(second, CountRows(path, "SELECT COUNT(*) FROM tb_nodes" + key + " AND micro_step_id = 1"));
      EXPECT_GT(second, 0);
      int64_t frames = 0;
      for (uint32_t n = 0; n < g.graph.npu.index.size(); ++n) {
        int32_t id = g.graph.npu.details[n].stack_id();
        frames += id >= 0 ? static_cast<int64_t>(g.graph.npu.stacks[id].size()) : 0;
      }
      EXPECT_GT(frames, 0);
      const bool inline_stacks = std::string(name).find("8.2.0") != std::string::npos;
      EXPECT_EQ(CountRows(path, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'tb_stack'"), inline_stacks ? 0 : 1);
      if (inline_stacks) {
        EXPECT_EQ(frames, CountRows(path, "SELECT SUM(json_array_length(stack_info)) FROM tb_nodes" + key));
      }
      int32_t isend = -1;
      for (uint32_t n = 0; n < g.graph.npu.index.size(); ++n) {
        if (g.graph.npu.index.Name(n) == "Distributed.isend.0.forward") isend = static_cast<int32_t>(n);
      }
      ASSERT_GE(isend, 0);
      const auto& links = g.graph.npu.details[isend].distributed();
      if (inline_stacks) {
        EXPECT_EQ(links.size(), 0) << "8.2.0 asks a send's output to agree with the recv's (an isend has none)";
      } else {
        ASSERT_EQ(links.size(), 1);
        EXPECT_EQ(links[0].peer_node(), "Distributed.irecv.0.forward");
        EXPECT_EQ(links[0].rank(), 1 - g.rank);
      }
    }
    TempDir dir;
    ExpectConvertedAsRead(path, dir.path());
  }
}

// tb_graph_ascend's updateColors rewrites the Colors of a JSON .vis with the
// grey entry's value as text ("无匹配节点"), where msprobe writes [].
TEST(MsprobeOutputsTest, ColorsRewrittenByTbGraphAscendAreRead) {
  std::vector<std::string> files = Fixtures(".vis");
  ASSERT_FALSE(files.empty());
  auto j = nlohmann::ordered_json::parse(ReadFile(files[0]));
  ASSERT_TRUE(j.contains("Colors"));
  std::string grey;
  for (auto& [colour, entry] : j["Colors"].items()) {
    if (entry["value"].empty()) {
      entry["value"] = "无匹配节点";
      grey = colour;
    }
  }
  ASSERT_FALSE(grey.empty());
  TempDir dir;
  WriteFile(dir / "tb.vis", j.dump(4, ' ', false));
  GraphFile g = Ok(ReadMsprobeJson(dir / "tb.vis"));
  ASSERT_EQ(g.meta.legend_size(), static_cast<int>(j["Colors"].size()));
  int unmatched = 0;
  for (const vis::ColorBucket& b : g.meta.legend()) {
    if (b.unmatched()) {
      ++unmatched;
      EXPECT_EQ(b.color(), grey);
    }
  }
  EXPECT_EQ(unmatched, 1);
}

TEST(ImportCommandTest, DbsOfMsprobe82And83ImportAsTheyRead) {
  for (const char* name : {"dist_gloo_compare_8.2.1.vis.db", "dist_gloo_compare_8.3.3.vis.db",
                           "dist_gloo_build_8.3.3.vis.db"}) {
    SCOPED_TRACE(name);
    TempDir dir;
    testing::RunResult r = RunTool({"import", Fixture(name), "-o", dir / "g.vis"});
    ASSERT_EQ(r.status, 0) << r.err;
    auto read = Ok(ReadVisDb(Fixture(name)));
    ASSERT_EQ(read.size(), 1u);
    GraphFile imported = Ok(ReadVisFile(dir / "g.vis"));
    ExpectSameGraph(read[0].graph, imported);
    EXPECT_EQ(imported.npu.index.size(),
              CountRows(Fixture(name), "SELECT COUNT(*) FROM tb_nodes WHERE data_source = 'NPU'"));
    EXPECT_NE(imported.meta.grading(), vis::GRADING_26);  // 8.x files hold the precision index
  }
}

// -o is a folder wherever a command may write several files; a name ending
// in .vis is the file of a one-graph input (issue 29 point 5).
TEST(ImportCommandTest, OutIsAFolderUnlessItNamesAVis) {
  TempDir dir;
  // One graph, -o a folder that does not exist yet (nor its parent): one batch-named file in it.
  testing::RunResult r = RunTool({"import", Fixture("dist_gloo_compare_8.1.2.vis"), "-o", dir / "a/imported"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> files = testing::Files(dir / "a/imported");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].rfind("compare_", 0), 0u) << files[0];
  EXPECT_EQ(testing::Lines(r.out), std::vector<std::string>{dir / ("a/imported/" + files[0])});

  // One graph, -o x.vis: that file.
  r = RunTool({"import", Fixture("dist_gloo_build_26.2.0.vis.db"), "-o", dir / "one.vis"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(testing::Lines(r.out), std::vector<std::string>{dir / "one.vis"});
  EXPECT_TRUE(fs::is_regular_file(dir / "one.vis"));

  // Several graphs, -o x.vis: an error naming the input and nothing written.
  r = RunTool({"import", Fixture("dist_gloo_batch_26.2.0.vis.db"), "-o", dir / "many.vis"});
  testing::ExpectOneError(r, {"dist_gloo_batch_26.2.0.vis.db", "holds several graphs", "-o must name a folder"});
  EXPECT_FALSE(fs::exists(dir / "many.vis"));

  // A folder that fails: a damaged input leaves no folder made for it.
  WriteFile(dir / "damaged.vis", "{\"NPU\": ");
  r = RunTool({"import", dir / "damaged.vis", "-o", dir / "b/out"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_FALSE(fs::exists(dir / "b"));
}

TEST(ImportCommandTest, OneVisPerStepAndRankOfADb) {
  TempDir dir;
  std::vector<std::string> files = Build("dist_gloo/batch.json", dir / "out");
  std::vector<std::string> args = {"export"};
  args.insert(args.end(), files.begin(), files.end());
  args.insert(args.end(), {"--format", "db", "-o", dir / "b.vis.db"});
  testing::RunResult r = RunTool(args);
  ASSERT_EQ(r.status, 0) << r.err;
  r = RunTool({"import", dir / "b.vis.db", "-o", dir / "imported"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> lines = testing::Lines(r.out);
  ASSERT_EQ(lines.size(), files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    // The same names as the batch's own, but for the time stamp.
    std::string name = fs::path(files[i]).filename().string();
    name = name.substr(0, name.rfind('_') + 1);
    EXPECT_NE(lines[i].find("/" + name), std::string::npos) << lines[i];
  }
  r = RunTool({"info", lines[1]});
  EXPECT_EQ(r.status, 0) << r.err;
}

}  // namespace
}  // namespace graph_ascend::formats
