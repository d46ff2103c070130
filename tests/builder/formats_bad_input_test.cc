// Damaged msprobe files (builder/formats): one error naming the file and the
// place, through the readers, the streaming converter and
// `graph-ascend import` (exit 2, one line, nothing written).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "formats/foreign_file.h"
#include "formats/vis_db/vis_db.h"
#include "msprobe_fixtures.h"

namespace graph_ascend::formats {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::RunTool;
using testing::TempDir;
using testing::WriteFile;

// Bad input: one error naming the file (and the place), nothing written.
class BadInput : public ::testing::Test {
 protected:
  // With `hierarchy`, the fault is in the columns the service's first open
  // reads: ConvertVisDbIndex refuses it too (the same SideBuilder checks).
  void ExpectRefused(const std::string& input, const std::string& where_part, bool hierarchy = false) {
    if (hierarchy) {
      std::vector<bool> whole;
      auto index = ConvertVisDbIndex(input, [&](const vis::FileMeta&) { return dir_ / "index.vis"; }, {}, &whole);
      ASSERT_FALSE(index.ok());
      EXPECT_EQ(index.error().file, input);
      EXPECT_NE(index.error().ToString().find(where_part), std::string::npos) << index.error().ToString();
      EXPECT_FALSE(fs::exists(dir_ / "index.vis"));
    }
    auto r = ReadGraphs(input);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().file, input);
    EXPECT_NE(r.error().ToString().find(where_part), std::string::npos) << r.error().ToString();
    testing::RunResult run = RunTool({"import", input, "-o", dir_ / "out.vis"});
    EXPECT_EQ(run.status, 2);
    EXPECT_EQ(testing::Lines(run.err).size(), 1u) << run.err;
    EXPECT_NE(run.err.find(input), std::string::npos) << run.err;
    EXPECT_FALSE(fs::exists(dir_ / "out.vis"));
  }
  std::string RealDb() {
    std::vector<std::string> dbs = Fixtures(".vis.db");
    EXPECT_FALSE(dbs.empty());
    std::string copy = dir_ / "real.vis.db";
    fs::copy_file(dbs.front(), copy);
    return copy;
  }
  TempDir dir_;
};

TEST_F(BadInput, NotSqlite) {
  WriteFile(dir_ / "x.vis.db", "this is not a database, only some text that is long enough");
  ExpectRefused(dir_ / "x.vis.db", "byte 0", true);
}

TEST_F(BadInput, TruncatedDb) {
  std::string real = ReadFile(RealDb());
  WriteFile(dir_ / "cut.vis.db", real.substr(0, real.size() / 2));
  ExpectRefused(dir_ / "cut.vis.db", "SQLite", true);
}

TEST_F(BadInput, MissingTable) {
  std::string db = RealDb();
  ExecSql(db, "DROP TABLE tb_config");
  ExpectRefused(db, "table tb_config", true);
}

TEST_F(BadInput, MissingColumn) {
  std::string db = RealDb();
  ExecSql(db, "ALTER TABLE tb_nodes DROP COLUMN sub_nodes");
  ExpectRefused(db, "column sub_nodes", true);
}

TEST_F(BadInput, DamagedItemsColumn) {
  std::string db = RealDb();
  ExecSql(db, "UPDATE tb_nodes SET input_data = '{\"x\": {\"Max\": ' WHERE node_order = 1");
  ExpectRefused(db, "column input_data");
}

// Found by ga_fuzz (vis_db_cell): values the .vis reader refuses were
// converted into a .vis that info, export and the service could not read.
TEST_F(BadInput, UnknownNodeType) {
  std::string db = RealDb();
  ExecSql(db, "UPDATE tb_nodes SET node_type = '21' WHERE node_order = 1");
  ExpectRefused(db, "unknown node type 21", true);
}

TEST_F(BadInput, NodeTypeThatWrapsAByte) {
  std::string db = RealDb();
  ExecSql(db, "UPDATE tb_nodes SET node_type = '257' WHERE node_order = 1");
  ExpectRefused(db, "unknown node type 257", true);
}

TEST_F(BadInput, NegativeMicroStep) {
  std::string db = RealDb();
  ExecSql(db, "UPDATE tb_config SET micro_steps = 2");
  ExecSql(db, "UPDATE tb_nodes SET micro_step_id = -7 WHERE node_order = 1");
  ExpectRefused(db, "negative micro step -7", true);
}

TEST_F(BadInput, ChildListedByTwoParents) {
  std::string db = RealDb();
  // The root lists a child of Apis_Between_Modules.0 as its own as well.
  std::string child = "Tensor.long.1.forward";
  ExecSql(db, "UPDATE tb_nodes SET sub_nodes = json_insert(sub_nodes, '$[#]', '" + child +
                  "') WHERE up_node = '' OR up_node IS NULL");
  ExpectRefused(db, "listed twice or naming another parent", true);
}

TEST_F(BadInput, ParentsInACycle) {
  std::string db = RealDb();
  // Apis_Between_Modules.0's parent becomes its own child, which lists it.
  std::string child = "Tensor.long.1.forward";
  ExecSql(db, "UPDATE tb_nodes SET up_node = '" + child + "' WHERE node_name = 'Apis_Between_Modules.0'");
  ExecSql(db, "UPDATE tb_nodes SET sub_nodes = '[\"Apis_Between_Modules.0\"]' WHERE node_name = '" + child + "'");
  ExpectRefused(db, "node ", true);
}

// A matched_node_link naming no node of the other side: graph-ascend import
// and the service died of SIGSEGV in ResolveMatches (found by ga_fuzz,
// msprobe_json and vis_db_cell). Refused on both sides of both formats, the
// line naming the file, the node and the name.
TEST_F(BadInput, MatchedLinkToNoNodeOfADb) {
  for (const char* side : {"NPU", "Bench"}) {
    SCOPED_TRACE(side);
    std::string db = RealDb();
    ExecSql(db, std::string("UPDATE tb_nodes SET matched_node_link = '[\"Module.no_such_node\"]' "
                            "WHERE node_name = 'Apis_Between_Modules.0' AND data_source = '") + side + "'");
    std::string where = std::string(side) +
                        " node Apis_Between_Modules.0: matched_node_link names 'Module.no_such_node', which is not a "
                        "node of the " + (std::string(side) == "NPU" ? "Bench" : "NPU") + " graph";
    ExpectRefused(db, where, true);
    testing::RunResult run = RunTool({"import", db, "-o", dir_ / "out"});
    EXPECT_EQ(run.status, 2);
    EXPECT_NE(run.err.find(db + ": "), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(where), std::string::npos) << run.err;
    EXPECT_FALSE(fs::exists(dir_ / "out"));
    fs::remove(db);
  }
}

TEST_F(BadInput, MatchedLinkToNoNodeOfAJsonVis) {
  std::string real;
  for (const std::string& f : Fixtures(".vis")) {
    if (f.find("dist_gloo_compare_8.1.2.vis") != std::string::npos) real = f;
  }
  ASSERT_FALSE(real.empty());
  for (const char* side : {"NPU", "Bench"}) {
    SCOPED_TRACE(side);
    auto j = nlohmann::json::parse(ReadFile(real));
    j[side]["node"]["Apis_Between_Modules.0"]["matched_node_link"] = {"Module.no_such_node"};
    std::string path = dir_ / "link.vis";
    WriteFile(path, j.dump());
    std::string where = std::string(side) +
                        " node Apis_Between_Modules.0: matched_node_link names 'Module.no_such_node', which is not a "
                        "node of the " + (std::string(side) == "NPU" ? "Bench" : "NPU") + " graph";
    ExpectRefused(path, where);
    testing::RunResult run = RunTool({"import", path, "-o", dir_ / "out.vis"});
    EXPECT_NE(run.err.find(where), std::string::npos) << run.err;
  }
  // The plugin's saved match maps are links as well.
  auto j = nlohmann::json::parse(ReadFile(real));
  j["npu_match_nodes"] = {{"Apis_Between_Modules.0", "Module.no_such_node"}};
  WriteFile(dir_ / "map.vis", j.dump());
  ExpectRefused(dir_ / "map.vis", "NPU node Apis_Between_Modules.0: matched_node_link names 'Module.no_such_node'");
}

// A FIFO named like a graph file: refused, never a blocked open().
TEST_F(BadInput, FifoIsNotAGraphFile) {
  for (const char* name : {"fifo.vis.db", "fifo.vis"}) {
    std::string path = dir_ / name;
    ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
    ExpectRefused(path, "not a regular file");
  }
}

TEST_F(BadInput, JsonVisCutInHalf) {
  std::vector<std::string> files = Fixtures(".vis");
  ASSERT_FALSE(files.empty());
  std::string text = ReadFile(files.front());
  WriteFile(dir_ / "half.vis", text.substr(0, text.size() / 2));
  ExpectRefused(dir_ / "half.vis", "line ");
}

}  // namespace
}  // namespace graph_ascend::formats
