// SqliteFileWriter (builder/formats/vis_db/sqlite_file_writer.h): SQLite
// itself must accept what it writes (PRAGMA integrity_check checks the
// b-trees, the page accounting and every index against its table) and read
// back what the same rows inserted through libsqlite3 give.
#include "formats/vis_db/sqlite_file_writer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "sqlite_rows.h"
#include "test_files.h"

namespace graph_ascend::formats {
namespace {

namespace fs = std::filesystem;
using testing::SqlRows;
using testing::TempDir;

// A value the test owns (SqlValue's text is a view).
struct Value {
  SqlValue::Kind kind = SqlValue::kNull;
  int64_t i = 0;
  double r = 0;
  std::string t;
  SqlValue View() const {
    switch (kind) {
      case SqlValue::kInteger: return SqlValue::Integer(i);
      case SqlValue::kReal: return SqlValue::Real(r);
      case SqlValue::kText: return SqlValue::Text(t);
      default: return SqlValue::Null();
    }
  }
};
Value Null() { return {}; }
Value Int(int64_t v) { return {SqlValue::kInteger, v, 0, ""}; }
Value Real(double v) { return {SqlValue::kReal, 0, v, ""}; }
Value Text(std::string v) { return {SqlValue::kText, 0, 0, std::move(v)}; }
using Row = std::vector<Value>;

struct Schema {
  std::string table = "t";
  std::string create;  // CREATE TABLE text
  int columns = 0;
  int primary_key = -1;
  struct Index {
    std::string name, sql;
    std::vector<int> columns;
    std::string order;  // ORDER BY of a scan in its order
  };
  std::vector<Index> indexes;
};

// Writes `rows` with SqliteFileWriter.
Status WriteOurs(const std::string& path, const Schema& s, const std::vector<Row>& rows,
                 SqliteFileWriter::Options options) {
  auto w = SqliteFileWriter::Create(path, options);
  if (!w.ok()) return w.error();
  auto t = (*w)->AddTable(s.table, s.create, s.columns, s.primary_key);
  if (!t.ok()) return t.error();
  for (const Schema::Index& i : s.indexes) GA_RETURN_IF_ERROR((*w)->AddIndex(i.name, *t, i.sql, i.columns));
  std::vector<SqlValue> values;
  for (const Row& r : rows) {
    values.clear();
    for (const Value& v : r) values.push_back(v.View());
    GA_RETURN_IF_ERROR((*w)->Append(*t, values));
  }
  return (*w)->Commit();
}

// Writes `rows` through libsqlite3, as a reference.
void WriteReference(const std::string& path, const Schema& s, const std::vector<Row>& rows) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::string sql = s.create + ";";
  for (const Schema::Index& i : s.indexes) sql += i.sql + ";";
  sql += "BEGIN;";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::string insert = "INSERT INTO " + s.table + " VALUES (";
  for (int c = 0; c < s.columns; ++c) insert += c ? ",?" : "?";
  insert += ")";
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, insert.c_str(), -1, &st, nullptr), SQLITE_OK);
  for (const Row& r : rows) {
    for (int c = 0; c < s.columns; ++c) {
      const Value& v = r[c];
      if (v.kind == SqlValue::kInteger) sqlite3_bind_int64(st, c + 1, v.i);
      if (v.kind == SqlValue::kReal) sqlite3_bind_double(st, c + 1, v.r);
      if (v.kind == SqlValue::kText) {
        sqlite3_bind_text(st, c + 1, v.t.data(), static_cast<int>(v.t.size()), SQLITE_STATIC);
      }
      if (v.kind == SqlValue::kNull) sqlite3_bind_null(st, c + 1);
    }
    ASSERT_EQ(sqlite3_step(st), SQLITE_DONE) << sqlite3_errmsg(db);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  ASSERT_EQ(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

std::string IntegrityCheck(const std::string& path) {
  std::string out;
  for (const std::string& line : SqlRows(path, "PRAGMA integrity_check")) out += line;
  return out;
}

// Writes `rows` both ways and checks that SQLite accepts ours and reads the
// same rows, in rowid order and in each index's order.
void CheckSameAsSqlite(const Schema& s, const std::vector<Row>& rows, SqliteFileWriter::Options options) {
  TempDir dir;
  const std::string ours = dir / "ours.db", theirs = dir / "theirs.db";
  Status st = WriteOurs(ours, s, rows, options);
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  WriteReference(theirs, s, rows);
  EXPECT_EQ(IntegrityCheck(ours), "t2:ok|");
  const std::string all = "SELECT rowid, * FROM " + s.table + " ORDER BY rowid";
  auto got = SqlRows(ours, all);
  EXPECT_EQ(got.size(), rows.size());
  EXPECT_TRUE(got == SqlRows(theirs, all)) << "the rows differ";
  for (const Schema::Index& i : s.indexes) {
    const std::string scan = "SELECT rowid FROM " + s.table + " INDEXED BY " + i.name + " ORDER BY " + i.order;
    EXPECT_TRUE(SqlRows(ours, scan) == SqlRows(theirs, scan)) << i.name << ": the index order differs";
  }
  const std::string master = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid";
  EXPECT_EQ(SqlRows(ours, master), SqlRows(theirs, master));
  // Nothing but the file: no temporary, no sorted runs.
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) files += e.path().filename() == "ours.db" ? 1 : 0;
  EXPECT_EQ(files, 1u);
  EXPECT_FALSE(fs::exists(ours + ".tmp-" + std::to_string(getpid()) + ".sort"));
}

// t(k TEXT PRIMARY KEY, a, b, c) with indexes on (a, b) and (c).
Schema FourColumns() {
  Schema s;
  s.create = "CREATE TABLE t (k TEXT PRIMARY KEY, a, b, c)";
  s.columns = 4;
  s.primary_key = 0;
  s.indexes = {{"ia", "CREATE INDEX ia ON t (a, b)", {1, 2}, "a, b, rowid"},
               {"ic", "CREATE INDEX ic ON t (c)", {3}, "c, rowid"}};
  return s;
}

SqliteFileWriter::Options Pages(uint32_t size, size_t sort_memory = 64 << 20) {
  SqliteFileWriter::Options o;
  o.page_size = size;
  o.sort_memory = sort_memory;
  return o;
}

TEST(SqliteFileWriter, EmptyTablesAreValid) {
  CheckSameAsSqlite(FourColumns(), {}, Pages(65536));
  CheckSameAsSqlite(FourColumns(), {}, Pages(512));
}

TEST(SqliteFileWriter, OneRow) {
  CheckSameAsSqlite(FourColumns(), {{Text("k"), Int(1), Text("x"), Real(0.5)}}, Pages(4096));
}

TEST(SqliteFileWriter, EveryValueKindStoredAndOrderedAsSqliteDoes) {
  const int64_t big = int64_t{1} << 53;
  const std::vector<Value> values = {
      Null(), Int(0), Int(1), Int(-1), Int(2), Int(127), Int(128), Int(-128), Int(-129), Int(32767), Int(32768),
      Int(-32769), Int(8388607), Int(8388608), Int(2147483647), Int(2147483648LL), Int(-2147483649LL),
      Int(0x7FFFFFFFFFFFLL), Int(0x800000000000LL), Int(std::numeric_limits<int64_t>::max()),
      Int(std::numeric_limits<int64_t>::min()), Int(big), Int(big + 1), Int(big - 1), Real(static_cast<double>(big)),
      Real(9223372036854775808.0), Real(-9223372036854775808.0), Int(std::numeric_limits<int64_t>::max() - 1),
      Real(0.5), Real(-0.0), Real(0.0), Real(1.0), Real(-1.5), Real(1e300), Real(-1e-300), Real(2.0),
      Text(""), Text("a"), Text(std::string("a\0b", 3)), Text(std::string("a\0", 2)), Text("a\x01"), Text("ab"),
      Text("\xff"), Text("B"), Text("b"), Real(std::nan("")), Real(255.5), Real(256.0), Int(255), Int(256),
      Real(4294967295.5), Real(4294967296.0), Int(4294967295LL), Int(4294967296LL), Real(-0.5), Real(1e-300),
      Real(65535.75), Int(65536), Int(16777215), Real(16777216.25), Text(std::string("\0", 1))};
  std::vector<Row> rows;
  for (size_t i = 0; i < values.size(); ++i) {
    rows.push_back({Text("k" + std::to_string(i)), values[i], values[(i * 7) % values.size()], values[i]});
  }
  CheckSameAsSqlite(FourColumns(), rows, Pages(1024));
}

TEST(SqliteFileWriter, PayloadsAroundEachLocalLimitAndOverflowChains) {
  // Text of every length up to several pages: each table and index local
  // limit is met just below, at and above; the longest need overflow chains.
  for (uint32_t page : {512u, 1024u}) {
    Schema s;
    s.create = "CREATE TABLE t (k TEXT PRIMARY KEY, v)";
    s.columns = 2;
    s.primary_key = 0;
    s.indexes = {{"iv", "CREATE INDEX iv ON t (v)", {1}, "v, rowid"}};
    std::vector<Row> rows;
    for (size_t n = 0; n <= 5 * page; ++n) {
      std::string v(n, 'a' + static_cast<char>(n % 26));
      for (size_t j = 0; j < n; j += 7) v[j] = static_cast<char>('A' + (j + n) % 26);
      rows.push_back({Text(std::to_string(n % 97) + "-" + std::string(n % 600, 'k') + std::to_string(n)), Text(v)});
    }
    rows.push_back({Text("huge"), Text(std::string(1 << 20, 'h'))});
    SCOPED_TRACE(page);
    CheckSameAsSqlite(s, rows, Pages(page));
  }
}

std::vector<Row> ManyRows(size_t n) {
  std::vector<Row> rows;
  for (size_t i = 0; i < n; ++i) {
    const size_t h = (i * 2654435761u) % 100003;
    rows.push_back({Text("key/" + std::to_string(h) + "/" + std::to_string(i)),
                    i % 11 == 0 ? Null() : Int(static_cast<int64_t>(h % 37)),
                    i % 5 == 0 ? Real(static_cast<double>(h % 13) + 0.25) : Text("b" + std::to_string(h % 1000)),
                    i % 3 == 0 ? Null() : Text(std::string(h % 40, 'c') + std::to_string(i))});
  }
  return rows;
}

// The levels of b-tree `name`, read from the file: from its root down its
// leftmost children to a leaf.
int Levels(const std::string& path, const std::string& name) {
  auto root = SqlRows(path, "SELECT rootpage FROM sqlite_master WHERE name = '" + name + "'");
  const std::string bytes = testing::ReadFile(path);
  if (root.size() != 1 || bytes.size() < 100) return 0;
  auto byte = [&bytes](size_t at) -> uint32_t { return at < bytes.size() ? static_cast<uint8_t>(bytes[at]) : 0; };
  uint32_t page_size = (byte(16) << 8) | byte(17);
  if (page_size == 1) page_size = 65536;
  uint32_t page = static_cast<uint32_t>(std::stoul(root[0].substr(1)));
  for (int levels = 1; levels < 64; ++levels) {
    const size_t at = size_t{page - 1} * page_size + (page == 1 ? 100 : 0);
    if (byte(at) == 0x0A || byte(at) == 0x0D) return levels;   // a leaf
    const size_t first = (byte(at + 12) << 8) | byte(at + 13);  // the first cell: its left child first
    const size_t cell = size_t{page - 1} * page_size + first;
    page = (byte(cell) << 24) | (byte(cell + 1) << 16) | (byte(cell + 2) << 8) | byte(cell + 3);
  }
  return 0;
}

TEST(SqliteFileWriter, DeepTreesAtSmallPages) {
  // 20000 rows at 512-byte pages: three levels and more, tables and indexes.
  CheckSameAsSqlite(FourColumns(), ManyRows(20000), Pages(512));
  TempDir dir;
  ASSERT_TRUE(WriteOurs(dir / "deep.db", FourColumns(), ManyRows(20000), Pages(512)).ok());
  EXPECT_GE(Levels(dir / "deep.db", "t"), 3);
  EXPECT_GE(Levels(dir / "deep.db", "sqlite_autoindex_t_1"), 3);
  EXPECT_GE(Levels(dir / "deep.db", "ia"), 3);
  EXPECT_GE(Levels(dir / "deep.db", "ic"), 3);
}

// t(k TEXT PRIMARY KEY, a, b) with indexes on (a) and (b, a).
Schema KeyAndTwoColumns() {
  Schema s;
  s.create = "CREATE TABLE t (k TEXT PRIMARY KEY, a, b)";
  s.columns = 3;
  s.primary_key = 0;
  s.indexes = {{"ia", "CREATE INDEX ia ON t (a)", {1}, "a, rowid"},
               {"iab", "CREATE INDEX iab ON t (b, a)", {2, 1}, "b, a, rowid"}};
  return s;
}

TEST(SqliteFileWriter, KeysInOrderOrInAFewAscendingRuns) {
  // Keys already ascending, or in a few ascending runs, are merged rather
  // than sorted; past 32 runs they are sorted. Ties are ordered by rowid.
  for (size_t runs : {1, 2, 5, 32, 33, 200}) {
    for (size_t budget : {size_t{64} << 20, size_t{3000}}) {
      const Schema s = KeyAndTwoColumns();
      std::vector<Row> rows;
      const size_t n = 2000, per_run = n / runs;
      for (size_t i = 0; i < n; ++i) {
        const int64_t a = static_cast<int64_t>((i % per_run) / 3);
        char k[16];
        snprintf(k, sizeof(k), "k%06zu", i);  // ascending: the primary key is one run
        rows.push_back({Text(k), Int(a), i < n / 2 ? Null() : Text("b")});
      }
      SCOPED_TRACE(std::to_string(runs) + " runs, budget " + std::to_string(budget));
      CheckSameAsSqlite(s, rows, Pages(1024, budget));
    }
  }
}

TEST(SqliteFileWriter, TextsWithLongSharedStartsSortAsSqliteDoes) {
  // Keys sharing long starts (ancestor lists, a module's names) sort 16
  // bytes a step from where their group stops agreeing: groups of every
  // size, texts ending inside a step or a prefix of another (with and
  // without zero bytes after), repeated texts (ordered by rowid) and texts
  // ending in zero bytes.
  const Schema s = KeyAndTwoColumns();
  const std::vector<std::string> parts = {
      "[\"DefaultModel\"",  ", \"Module.model.layers.", "1", "10", "2", "mlp.LlamaMLP.forward.0\"", ".",
      std::string("\0", 1), std::string(40, 'x'),       ""};
  std::vector<Row> rows;
  uint64_t h = 88172645463325252ull;
  auto next = [&h]() {  // xorshift: the same rows each run
    h ^= h << 13;
    h ^= h >> 7;
    h ^= h << 17;
    return h;
  };
  for (size_t i = 0; i < 6000; ++i) {
    std::string a = std::string(i % 3 == 0 ? 70 : 33, 'p');
    const size_t n = next() % 9;
    for (size_t j = 0; j < n; ++j) a += parts[next() % parts.size()];
    rows.push_back({Text("k" + std::to_string(i)), Text(a), Int(static_cast<int64_t>(next() % 3))});
  }
  for (size_t budget : {size_t{64} << 20, size_t{20000}}) {
    SCOPED_TRACE(budget);
    CheckSameAsSqlite(s, rows, Pages(1024, budget));
  }
}

TEST(SqliteFileWriter, KeysPastTheBudgetSpillAndMerge) {
  // A few KB of keys held: most keys go through sorted runs.
  CheckSameAsSqlite(FourColumns(), ManyRows(5000), Pages(1024, 4096));
}

TEST(SqliteFileWriter, RepeatedPrimaryKeyIsAnErrorAndLeavesNothing) {
  for (size_t budget : {size_t{64} << 20, size_t{2048}}) {
    TempDir dir;
    std::vector<Row> rows = ManyRows(2000);
    rows.push_back({Text("key/5/dup"), Int(1), Int(2), Int(3)});
    rows.push_back({Text("key/5/dup"), Int(4), Int(5), Int(6)});
    Status st = WriteOurs(dir / "x.db", FourColumns(), rows, Pages(1024, budget));
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().file, dir / "x.db");
    EXPECT_NE(st.error().where.find("table t"), std::string::npos) << st.error().ToString();
    EXPECT_NE(st.error().where.find("key/5/dup"), std::string::npos) << st.error().ToString();
    EXPECT_TRUE(fs::is_empty(dir.path()));
  }
}

TEST(SqliteFileWriter, DestroyedBeforeCommitLeavesNothing) {
  TempDir dir;
  {
    auto w = SqliteFileWriter::Create(dir / "x.db", Pages(1024, 1024));
    ASSERT_TRUE(w.ok());
    auto t = (*w)->AddTable("t", "CREATE TABLE t (k TEXT PRIMARY KEY, v)", 2, 0);
    ASSERT_TRUE(t.ok());
    std::string v(5000, 'v');
    for (int i = 0; i < 500; ++i) {
      std::string k = "k" + std::to_string(i);
      SqlValue row[] = {SqlValue::Text(k), SqlValue::Text(v)};
      ASSERT_TRUE((*w)->Append(*t, row).ok());
    }
    EXPECT_FALSE(fs::is_empty(dir.path()));
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(SqliteFileWriter, SeveralTablesInterleaved) {
  TempDir dir;
  const std::string path = dir / "x.db";
  auto w = SqliteFileWriter::Create(path, Pages(512));
  ASSERT_TRUE(w.ok());
  auto a = (*w)->AddTable("a", "CREATE TABLE a (id TEXT PRIMARY KEY, n INTEGER)", 2, 0);
  auto b = (*w)->AddTable("b", "CREATE TABLE b (x, y)", 2);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*w)->AddIndex("bx", *b, "CREATE INDEX bx ON b (y, x)", {1, 0}).ok());
  for (int i = 0; i < 3000; ++i) {
    std::string id = "id" + std::to_string(i * 7919 % 3000);
    SqlValue ra[] = {SqlValue::Text(id), SqlValue::Integer(i)};
    ASSERT_TRUE((*w)->Append(*a, ra).ok());
    if (i % 3 == 0) {
      SqlValue rb[] = {SqlValue::Integer(-i), SqlValue::Text(id)};
      ASSERT_TRUE((*w)->Append(*b, rb).ok());
    }
  }
  ASSERT_TRUE((*w)->Commit().ok());
  EXPECT_EQ(IntegrityCheck(path), "t2:ok|");
  EXPECT_EQ(SqlRows(path, "SELECT count(*), sum(n) FROM a"), std::vector<std::string>{"i3000|i4498500|"});
  // The row whose id is 'id7' (i * 7919 % 3000 == 7), found through the primary key's index.
  EXPECT_EQ(SqlRows(path, "SELECT n FROM a WHERE id = 'id7'"), std::vector<std::string>{"i2753|"});
  EXPECT_EQ(SqlRows(path, "SELECT count(*) FROM b INDEXED BY bx WHERE y > 'id2'"),
            SqlRows(path, "SELECT count(*) FROM b NOT INDEXED WHERE y > 'id2'"));
  EXPECT_EQ(SqlRows(path, "SELECT type, name, tbl_name, sql IS NULL FROM sqlite_master ORDER BY rowid"),
            (std::vector<std::string>{"t5:table|t1:a|t1:a|i0|", "t5:index|t20:sqlite_autoindex_a_1|t1:a|i1|",
                                      "t5:table|t1:b|t1:b|i0|", "t5:index|t2:bx|t1:b|i0|"}));
}

}  // namespace
}  // namespace graph_ascend::formats
