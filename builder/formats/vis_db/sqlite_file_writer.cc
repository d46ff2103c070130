// SqliteFileWriter (sqlite_file_writer.h): tables streamed as b-trees, index
// keys sorted and written at Commit, then sqlite_schema on page 1.
#include "formats/vis_db/sqlite_file_writer.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/temp_files.h"
#include "formats/vis_db/sqlite_btree.h"
#include "formats/vis_db/sqlite_key_sort.h"

namespace graph_ascend::formats {

using sqlite_file::BtreeBuilder;
using sqlite_file::KeySorter;
using sqlite_file::PageFile;
using sqlite_file::RunFile;

namespace {

void Put4(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

// The database header (file format §1.3): one write, so every counter is 1.
void WriteHeader(uint32_t page_size, uint32_t pages, uint8_t* p) {
  memcpy(p, "SQLite format 3", 16);  // with its NUL
  p[16] = static_cast<uint8_t>(page_size == 65536 ? 0 : page_size >> 8);
  p[17] = static_cast<uint8_t>(page_size == 65536 ? 1 : page_size & 0xff);
  p[18] = 1;   // legacy (rollback journal) write and read versions
  p[19] = 1;
  p[20] = 0;   // no reserved bytes at the end of a page
  p[21] = 64;  // the payload fractions, fixed by the format
  p[22] = 32;
  p[23] = 32;
  Put4(p + 24, 1);      // file change counter
  Put4(p + 28, pages);  // valid: version-valid-for below equals the change counter
  Put4(p + 32, 0);      // no freelist
  Put4(p + 36, 0);
  Put4(p + 40, 1);  // schema cookie
  Put4(p + 44, 4);  // schema format 4
  Put4(p + 48, 0);
  Put4(p + 52, 0);  // no auto-vacuum
  Put4(p + 56, 1);  // UTF-8
  Put4(p + 60, 0);
  Put4(p + 64, 0);
  Put4(p + 68, 0);
  memset(p + 72, 0, 20);
  Put4(p + 92, 1);  // version-valid-for
  Put4(p + 96, static_cast<uint32_t>(sqlite3_libversion_number()));
}

}  // namespace

struct SqliteFileWriter::Impl {
  struct Table {
    std::string name, sql;
    int columns = 0;
    int64_t rows = 0;
    std::unique_ptr<BtreeBuilder> tree;
    std::vector<size_t> indexes;  // its entries of `indexes`
    uint32_t root = 0;
  };
  struct Index {
    std::string name, sql;  // sql "" for an autoindex (NULL in sqlite_schema)
    size_t table = 0;
    std::vector<int> columns;
    bool unique = false;
    std::unique_ptr<KeySorter> keys;
    uint32_t root = 0;
  };

  std::string path, tmp;
  TemporaryFile temp;
  int fd = -1;
  Options options;
  std::unique_ptr<PageFile> file;
  std::vector<Table> tables;
  std::vector<Index> indexes;
  std::vector<std::pair<bool, size_t>> schema;  // (a table?, its number) in declaration order
  std::unique_ptr<RunFile> runs;
  bool appended = false;
  bool committed = false;
  std::string record;
  std::vector<SqlValue> key;

  Impl(std::string p, std::string t, const Options& o)
      : path(std::move(p)), tmp(std::move(t)), temp(tmp), options(o) {}

  // Removes the temporary file and the sorted runs.
  void Abandon() {
    if (fd >= 0) close(fd);
    fd = -1;
    unlink(tmp.c_str());
    runs.reset();
  }

  Status Placed(Status s, const std::string& where) {
    if (s.ok()) return s;
    Error e = s.error();
    if (e.file.empty()) e.file = path;
    if (e.where.empty()) e.where = where;
    else e.where = where + ", " + e.where;
    return e;
  }

  // Past the budget, the largest index's keys go to a sorted run.
  Status SpillIfOver() {
    size_t total = 0;
    Index* largest = nullptr;
    for (Index& i : indexes) {
      total += i.keys->bytes();
      if (!largest || i.keys->bytes() > largest->keys->bytes()) largest = &i;
    }
    // (A sorter's offsets are 32-bit: none holds 2 GB.)
    if (!largest || (total <= options.sort_memory && largest->keys->bytes() < (size_t{1} << 31))) {
      return Status::Ok();
    }
    if (!runs) {
      auto r = RunFile::Create(tmp + ".sort");
      if (!r.ok()) return r.error();
      runs = std::move(*r);
    }
    return largest->keys->Spill(runs.get());
  }

  Status WriteIndex(Index& index) {
    BtreeBuilder tree(file.get(), true);
    const Table& table = tables[index.table];
    GA_RETURN_IF_ERROR(Placed(
        index.keys->Merge(
            runs.get(), [&tree](std::string_view record) { return tree.AddKey(record); },
            [&](std::string_view record) {
              return Error{path, "table " + table.name + ", key '" + sqlite_file::FirstColumnText(record) + "'",
                           "the primary key is repeated"};
            }),
        "index " + index.name));
    index.root = tree.Finish();
    index.keys.reset();
    return Status::Ok();
  }

  Status WriteSchema(std::vector<uint8_t>* page1) {
    BtreeBuilder tree(file.get(), false, 100);
    int64_t rowid = 0;
    auto row = [&](const char* type, const std::string& name, const std::string& table, uint32_t root,
                   const std::string& sql) {
      SqlValue v[5] = {SqlValue::Text(type), SqlValue::Text(name), SqlValue::Text(table),
                       SqlValue::Integer(root), sql.empty() ? SqlValue::Null() : SqlValue::Text(sql)};
      record.clear();
      sqlite_file::AppendRecord(v, false, 0, &record);
      return Placed(tree.AddRow(++rowid, record), "sqlite_schema, " + name);
    };
    for (auto [is_table, n] : schema) {
      if (is_table) {
        GA_RETURN_IF_ERROR(row("table", tables[n].name, tables[n].name, tables[n].root, tables[n].sql));
      } else {
        const Index& i = indexes[n];
        GA_RETURN_IF_ERROR(row("index", i.name, tables[i.table].name, i.root, i.sql));
      }
    }
    page1->assign(options.page_size, 0);
    tree.Finish(page1->data());
    return Status::Ok();
  }
};

SqliteFileWriter::SqliteFileWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SqliteFileWriter::~SqliteFileWriter() {
  if (!impl_->committed) impl_->Abandon();
}

Result<std::unique_ptr<SqliteFileWriter>> SqliteFileWriter::Create(const std::string& path, const Options& options) {
  const uint32_t size = options.page_size;
  if (size < 512 || size > 65536 || (size & (size - 1)) != 0) {
    return Error{path, "", "page size " + std::to_string(size) + " is not a power of two from 512 to 65536"};
  }
  auto impl = std::make_unique<Impl>(path, path + ".tmp-" + std::to_string(getpid()), options);
  impl->fd = open(impl->tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (impl->fd < 0) return Error{path, "", std::string("cannot create the temporary file: ") + strerror(errno)};
  impl->file = std::make_unique<PageFile>(impl->fd, impl->tmp, size);
  return std::unique_ptr<SqliteFileWriter>(new SqliteFileWriter(std::move(impl)));
}

Result<int> SqliteFileWriter::AddTable(const std::string& name, const std::string& sql, int columns,
                                       int text_primary_key) {
  Impl& m = *impl_;
  if (m.appended) return Error{m.path, "table " + name, "declared after rows were appended"};
  if (columns < 1 || text_primary_key >= columns) return Error{m.path, "table " + name, "bad column count or key"};
  const size_t t = m.tables.size();
  Impl::Table& table = m.tables.emplace_back();
  table.name = name;
  table.sql = sql;
  table.columns = columns;
  table.tree = std::make_unique<BtreeBuilder>(m.file.get(), false);
  m.schema.push_back({true, t});
  if (text_primary_key >= 0) {
    Impl::Index& index = m.indexes.emplace_back();
    index.name = "sqlite_autoindex_" + name + "_1";
    index.table = t;
    index.columns = {text_primary_key};
    index.unique = true;
    index.keys = std::make_unique<KeySorter>(1, true);
    table.indexes.push_back(m.indexes.size() - 1);
    m.schema.push_back({false, m.indexes.size() - 1});
  }
  return static_cast<int>(t);
}

Status SqliteFileWriter::AddIndex(const std::string& name, int table, const std::string& sql,
                                  const std::vector<int>& columns) {
  Impl& m = *impl_;
  if (m.appended) return Error{m.path, "index " + name, "declared after rows were appended"};
  if (table < 0 || static_cast<size_t>(table) >= m.tables.size() || columns.empty()) {
    return Error{m.path, "index " + name, "no such table or no column"};
  }
  for (int c : columns) {
    if (c < 0 || c >= m.tables[table].columns) return Error{m.path, "index " + name, "no such column"};
  }
  Impl::Index& index = m.indexes.emplace_back();
  index.name = name;
  index.sql = sql;
  index.table = static_cast<size_t>(table);
  index.columns = columns;
  index.keys = std::make_unique<KeySorter>(columns.size(), false);
  m.tables[table].indexes.push_back(m.indexes.size() - 1);
  m.schema.push_back({false, m.indexes.size() - 1});
  return Status::Ok();
}

Status SqliteFileWriter::Append(int t, std::span<const SqlValue> row) {
  Impl& m = *impl_;
  if (m.committed || t < 0 || static_cast<size_t>(t) >= m.tables.size()) {
    return Error{m.path, "table " + std::to_string(t), "no such table"};
  }
  Impl::Table& table = m.tables[t];
  if (row.size() != static_cast<size_t>(table.columns)) {
    return Error{m.path, "table " + table.name,
                 std::to_string(row.size()) + " values for " + std::to_string(table.columns) + " columns"};
  }
  m.appended = true;
  const int64_t rowid = ++table.rows;
  m.record.clear();
  sqlite_file::AppendRecord(row, false, 0, &m.record);
  // SQLite reads no row over SQLITE_MAX_LENGTH (10^9 bytes by default): its INSERT refused one.
  if (m.record.size() > 1000000000) {
    return Error{m.path, "table " + table.name + ", row " + std::to_string(rowid),
                 "a row of " + std::to_string(m.record.size()) + " bytes, over SQLite's limit of 10^9"};
  }
  GA_RETURN_IF_ERROR(m.Placed(table.tree->AddRow(rowid, m.record), "table " + table.name));
  for (size_t i : table.indexes) {
    Impl::Index& index = m.indexes[i];
    m.key.clear();
    for (int c : index.columns) m.key.push_back(row[c]);
    index.keys->Add(m.key, rowid);
  }
  GA_RETURN_IF_ERROR(m.file->status());
  return m.SpillIfOver();
}

Status SqliteFileWriter::Commit() {
  Impl& m = *impl_;
  if (m.committed) return Error{m.path, "", "committed twice"};
  auto commit = [&m]() -> Status {
    for (Impl::Table& t : m.tables) t.root = t.tree->Finish();
    for (Impl::Index& i : m.indexes) GA_RETURN_IF_ERROR(m.WriteIndex(i));
    std::vector<uint8_t> page1;
    GA_RETURN_IF_ERROR(m.WriteSchema(&page1));
    WriteHeader(m.options.page_size, m.file->pages(), page1.data());
    GA_RETURN_IF_ERROR(m.file->Finish(page1.data()));
    m.runs.reset();
    const int fd = m.fd;
    m.fd = -1;
    if (close(fd) != 0) return Error{m.path, "", std::string("cannot write: ") + strerror(errno)};
    if (rename(m.tmp.c_str(), m.path.c_str()) != 0) {
      return Error{m.path, "", std::string("cannot rename the temporary file: ") + strerror(errno)};
    }
    return Status::Ok();
  };
  Status s = commit();
  if (!s.ok()) {
    m.Abandon();
    m.committed = true;  // nothing more to remove
    return s;
  }
  m.committed = true;
  m.temp.Release();
  return Status::Ok();
}

}  // namespace graph_ascend::formats
