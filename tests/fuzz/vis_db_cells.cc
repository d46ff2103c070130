// The mutated-cell frame of the .vis.db fuzz targets (vis_db_cells.h).
#include "vis_db_cells.h"

#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>

#include "fuzz.h"

namespace graph_ascend::fuzz {
namespace {

// The cells vis_db_cell writes into: table, column (text cells msprobe's
// reader parses, and the numbers it reads).
struct DbCell {
  const char* table;
  const char* column;
};
constexpr DbCell kDbCells[] = {
    {"tb_nodes", "node_name"},         {"tb_nodes", "node_type"},           {"tb_nodes", "up_node"},
    {"tb_nodes", "sub_nodes"},         {"tb_nodes", "precision_index"},     {"tb_nodes", "overflow_level"},
    {"tb_nodes", "micro_step_id"},     {"tb_nodes", "matched_node_link"},   {"tb_nodes", "stack_id"},
    {"tb_nodes", "parallel_merge_info"}, {"tb_nodes", "matched_distributed"}, {"tb_nodes", "input_data"},
    {"tb_nodes", "output_data"},       {"tb_nodes", "data_source"},         {"tb_nodes", "step"},
    {"tb_nodes", "rank"},              {"tb_config", "graph_type"},         {"tb_config", "task"},
    {"tb_config", "tool_tip"},         {"tb_config", "micro_steps"},        {"tb_config", "node_colors"},
    {"tb_stack", "stack_info"},        {"tb_stack", "id"},
};
constexpr size_t kDbCellCount = sizeof(kDbCells) / sizeof(kDbCells[0]);

// The .vis.db of a compare by msprobe 26 (102 nodes, matches, stacks).
const std::string& BaseDb() {
  static const std::string bytes = [] {
    std::ifstream in(SourceDir() + "/tests/data/msprobe_outputs/dist_gloo_compare_26.2.0.vis.db", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }();
  return bytes;
}

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
using DbHandle = std::unique_ptr<sqlite3, DbCloser>;

// BaseDb() written to `path` and opened read-write.
DbHandle OpenBaseDbCopy(const std::string& path) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(BaseDb().data(), static_cast<std::streamsize>(BaseDb().size()));
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    fprintf(stderr, "ga_fuzz: cannot open %s: %s\n", path.c_str(), sqlite3_errmsg(db));
    exit(1);
  }
  return DbHandle(db);
}

}  // namespace

// A vis_db_cell input: byte 0 picks the cell's column, byte 1 its row, the
// rest is the cell's text. Seeds: the real cells of rows 0-7 of BaseDb().
std::vector<std::string> DbCellSeeds() {
  std::vector<std::string> out;
  DbHandle db = OpenBaseDbCopy(ScratchDir() + "/seed.vis.db");
  for (size_t c = 0; c < kDbCellCount; ++c) {
    std::string sql = std::string("SELECT ") + kDbCells[c].column + " FROM " + kDbCells[c].table +
                      " ORDER BY rowid LIMIT 8";
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &s, nullptr) != SQLITE_OK) continue;
    for (int row = 0; sqlite3_step(s) == SQLITE_ROW; ++row) {
      const unsigned char* t = sqlite3_column_text(s, 0);
      std::string seed{static_cast<char>(c), static_cast<char>(row)};
      if (t != nullptr) seed.append(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(s, 0)));
      out.push_back(std::move(seed));
    }
    sqlite3_finalize(s);
  }
  return out;
}

// A vis_db_cell input written into a copy of BaseDb() (`bytes` 0-1 pick the
// column and row, the rest is the text), then given to `read`.
Status WithMutatedCell(std::string_view bytes, const std::function<Status(const std::string&)>& read) {
  if (bytes.size() < 2) return Error{"input", "", "too short for a cell"};
  const DbCell& cell = kDbCells[static_cast<unsigned char>(bytes[0]) % kDbCellCount];
  int row = static_cast<unsigned char>(bytes[1]);
  std::string path = ScratchDir() + "/cell.vis.db";
  {
    DbHandle db = OpenBaseDbCopy(path);
    const std::string table = cell.table;
    std::string sql = "UPDATE " + table + " SET " + cell.column + " = ?1 WHERE rowid = (SELECT rowid FROM " + table +
                      " ORDER BY rowid LIMIT 1 OFFSET ?2 % (SELECT COUNT(*) FROM " + table + "))";
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
      fprintf(stderr, "ga_fuzz: %s: %s\n", sql.c_str(), sqlite3_errmsg(db.get()));
      exit(1);
    }
    sqlite3_bind_text(s, 1, bytes.data() + 2, static_cast<int>(bytes.size() - 2), SQLITE_TRANSIENT);
    sqlite3_bind_int(s, 2, row);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    // A UNIQUE or NOT NULL constraint refused the value: nothing to read.
    if (rc != SQLITE_DONE) return Error{"input", cell.column, sqlite3_errmsg(db.get())};
  }
  return read(path);
}

}  // namespace graph_ascend::fuzz
