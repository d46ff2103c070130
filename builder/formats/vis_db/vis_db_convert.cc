// ConvertVisDb (vis_db.h): each row's details go straight from SQLite into
// the .vis. The NPU and Bench sides of a compare are read on two threads, each
// with its own connection; their detail blocks meet at one writer.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <optional>

#include "base/parallel.h"
#include "formats/vis_db/vis_db.h"
#include "formats/vis_db/vis_db_rows.h"
#include "vis/vis_file.h"
#include "vis_writer/ranking_rewrite.h"

namespace graph_ascend::formats {
namespace {

using namespace db_rows;  // NOLINT: the reader's parts

// One side's details on their way into the .vis: rows parse into a block's
// reused messages, and a full block is written and cleared. Without a writer
// (an index-only file) each row parses into one scratch message.
class DetailStream {
 public:
  DetailStream(vis::VisWriter* w, std::mutex* mu, vis::Side side) : writer_(w), mu_(mu), side_(side) {}

  vis::NodeDetail* Next() {
    if (writer_ == nullptr) {
      scratch_.Clear();
      return &scratch_;
    }
    if (block_.detail_size() == 0) block_.set_first(count_);
    ++count_;
    return block_.add_detail();
  }
  Status Added(size_t text_bytes) {
    if (writer_ == nullptr) return Status::Ok();
    bytes_ += text_bytes;
    if (block_.detail_size() >= static_cast<int>(vis::kDetailBlockNodes) || bytes_ >= vis::kDetailBlockBytes) {
      return Flush();
    }
    return Status::Ok();
  }
  Status Flush() {
    if (block_.detail_size() == 0) return Status::Ok();
    {
      std::lock_guard<std::mutex> lock(*mu_);
      GA_RETURN_IF_ERROR(writer_->WriteDetailBlock(side_, block_));
    }
    block_.Clear();  // keeps the messages for the next rows
    bytes_ = 0;
    return Status::Ok();
  }

 private:
  vis::VisWriter* writer_;
  std::mutex* mu_;
  vis::Side side_;
  vis::NodeDetailBlock block_;
  vis::NodeDetail scratch_;
  uint32_t count_ = 0;
  size_t bytes_ = 0;  // source text of the block, an upper bound of its size
};

// Streams the rows of one side (their items when `items`), counting them in
// *side_rows. With items, false in *streamed when they cannot be streamed in
// node order: a repeated name (records merge), the root not first (msprobe
// 26.2 writes it last). Without items nothing is streamed in order: the
// builder merges and orders as ReadGraph does. `tick` (may be empty) is
// called every 4096 rows.
Status StreamSide(const DbFile& f, sqlite3* db, sqlite3_stmt* st, const DbGraphKey& key, const char* source,
                  bool items, SideRows* side, DetailStream* details, std::atomic<uint64_t>* rows,
                  const std::function<void()>& tick, uint64_t* side_rows, bool* streamed) {
  *streamed = false;
  side->builder.Reserve(std::string_view(source) == "NPU" ? key.npu_nodes : key.bench_nodes);
  GA_RETURN_IF_ERROR(Bind(st, key, source));
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    size_t before = side->builder.size();
    std::string name(View(st, kName));
    if (items && before > 0 && name == "DefaultModel") return Status::Ok();
    ForeignNode& node = side->builder.Add(std::move(name));
    if (items && side->builder.size() == before) return Status::Ok();
    ++*side_rows;
    GA_RETURN_IF_ERROR(ReadRow(st, f.ctx, side, &node, details->Next(), items));
    GA_RETURN_IF_ERROR(details->Added(static_cast<size_t>(sqlite3_column_bytes(st, kInput)) +
                                      static_cast<size_t>(sqlite3_column_bytes(st, kOutput))));
    if (rows->fetch_add(1, std::memory_order_relaxed) % 4096 == 4095 && tick) tick();
  }
  if (rc != SQLITE_DONE) return DbError(f.ctx.path, db, GraphWhere(key));
  GA_RETURN_IF_ERROR(details->Flush());
  *streamed = true;
  return Status::Ok();
}

// A second connection and statement for the Bench side.
struct BenchReader {
  Db db;
  Stmt st;
};

// Converts one graph (without node details unless `items`); false in
// *streamed (and nothing written) when it cannot be streamed, also when rows
// have a data_source other than NPU and Bench.
Status ConvertGraph(const DbFile& f, sqlite3_stmt* npu_st, BenchReader* bench_reader, const DbGraphKey& key,
                    bool items, const std::string& out, const std::function<void(uint64_t)>& rows_read,
                    bool* streamed) {
  const std::string& path = f.ctx.path;
  *streamed = false;
  auto writer = vis::VisWriter::Create(out);
  if (!writer.ok()) return writer.error();
  GraphFile g;
  g.meta = GraphMetaOf(f, key);
  std::mutex mu;
  SideRows npu, bench;
  vis::VisWriter* detail_writer = items ? writer->get() : nullptr;
  DetailStream npu_details(detail_writer, &mu, vis::SIDE_NPU), bench_details(detail_writer, &mu, vis::SIDE_BENCH);
  std::atomic<uint64_t> rows{0};
  Status bench_status = Status::Ok();
  bool bench_streamed = true;
  uint64_t npu_rows = 0, bench_rows = 0;
  // An exception on the Bench side's thread (std::bad_alloc) comes back as
  // an Error of the file; the destructor joins it if this thread throws.
  std::optional<BackgroundWork> bench_work;
  if (g.compare()) {
    bench_work.emplace([&] {
      bench_status = StreamSide(f, bench_reader->db.get(), bench_reader->st.get(), key, "Bench", items, &bench,
                                &bench_details, &rows, {}, &bench_rows, &bench_streamed);
    });
  }
  bool npu_streamed = false;
  // Progress is reported from this thread, counting the rows of both.
  std::function<void()> tick;
  if (rows_read) tick = [&] { rows_read(rows.load()); };
  Status npu_status =
      StreamSide(f, f.db.get(), npu_st, key, "NPU", items, &npu, &npu_details, &rows, tick, &npu_rows, &npu_streamed);
  Status bench_thrown = bench_work ? bench_work->Join(path) : Status::Ok();
  if (rows_read) rows_read(rows.load());
  GA_RETURN_IF_ERROR(npu_status);
  GA_RETURN_IF_ERROR(bench_thrown);
  GA_RETURN_IF_ERROR(bench_status);
  // Rows of another data_source than NPU and Bench: ReadGraph puts them on the NPU side.
  if (!npu_streamed || !bench_streamed || npu_rows != key.npu_nodes || (g.compare() && bench_rows != key.bench_nodes)) {
    return Status::Ok();
  }
  GA_RETURN_IF_ERROR(FinishGraph(path, key, &npu, &bench, &g));
  GA_RETURN_IF_ERROR(WriteIndexAndStacks(g, writer->get(), &g.meta));
  GA_RETURN_IF_ERROR((*writer)->WriteMeta(g.meta));
  GA_RETURN_IF_ERROR((*writer)->Commit());
  *streamed = true;
  // Two sides' worth of small allocations are freed at once, not one after the other.
  BackgroundWork free_bench([&bench] { bench = SideRows(); });
  npu = SideRows();
  return free_bench.Join(path);
}

// ConvertVisDb, or ConvertVisDbIndex without `items` (`whole` then says
// which files hold their details all the same).
Result<std::vector<std::string>> Convert(const std::string& path,
                                         const std::function<std::string(const vis::FileMeta&)>& out_path,
                                         const std::function<void(double)>& progress, bool items,
                                         std::vector<bool>* whole) {
  auto file = OpenDbFile(path);
  if (!file.ok()) return file.error();
  DbFile& f = **file;
  auto npu_st = PrepareNodes(f.db.get(), path, f.schema, true, items);
  if (!npu_st.ok()) return npu_st.error();
  BenchReader bench;
  if (f.meta.kind() == vis::GRAPH_COMPARE) {
    auto db = OpenReadOnly(path);
    if (!db.ok()) return db.error();
    bench.db = std::move(*db);
    auto st = PrepareNodes(bench.db.get(), path, f.schema, true, items);
    if (!st.ok()) return st.error();
    bench.st = std::move(*st);
  }
  uint64_t total = 0, done = 0;
  for (const DbGraphKey& k : f.keys) total += k.npu_nodes + k.bench_nodes;
  std::function<void(uint64_t)> rows_read;  // rows of the current graph
  if (progress && total > 0) {
    rows_read = [&](uint64_t n) {
      progress(std::min(1.0, static_cast<double>(done + n) / static_cast<double>(total)));
    };
  }
  std::vector<std::string> written;
  auto fail = [&](Error e) {
    for (const std::string& w : written) unlink(w.c_str());
    return e;
  };
  std::unique_ptr<Stmt> read_whole;  // all sources, for a graph read whole
  for (const DbGraphKey& key : f.keys) {
    std::string out = out_path(GraphMetaOf(f, key));
    if (out.empty()) {  // not wanted
      done += key.npu_nodes + key.bench_nodes;
      continue;
    }
    bool streamed = false;
    Status st = ConvertGraph(f, npu_st->get(), &bench, key, items, out, rows_read, &streamed);
    if (!st.ok()) return fail(st.error());
    if (whole != nullptr) whole->push_back(items || !streamed);
    if (!streamed) {
      if (!read_whole) {
        auto s = PrepareNodes(f.db.get(), path, f.schema, false);
        if (!s.ok()) return fail(s.error());
        read_whole = std::make_unique<Stmt>(std::move(*s));
      }
      GraphFile g;
      st = ReadGraph(f, read_whole->get(), key, &g);
      if (st.ok()) st = WriteVisFile(std::move(g), out);
      if (!st.ok()) return fail(st.error());
    }
    written.push_back(out);
    // A compare gets its divergence ranking from the details just written, as a build ranks.
    if (items) {
      auto ranked = vis::AddRanking(out);
      if (!ranked.ok()) return fail(ranked.error());
    }
    done += key.npu_nodes + key.bench_nodes;
  }
  return written;
}

}  // namespace

Result<std::vector<std::string>> ConvertVisDb(const std::string& path,
                                              const std::function<std::string(const vis::FileMeta&)>& out_path,
                                              const std::function<void(double)>& progress) {
  return Convert(path, out_path, progress, true, nullptr);
}

Result<std::vector<std::string>> ConvertVisDbIndex(const std::string& path,
                                                   const std::function<std::string(const vis::FileMeta&)>& out_path,
                                                   const std::function<void(double)>& progress,
                                                   std::vector<bool>* whole) {
  whole->clear();
  return Convert(path, out_path, progress, false, whole);
}

}  // namespace graph_ascend::formats
