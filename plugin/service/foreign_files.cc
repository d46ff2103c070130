#include "foreign_files.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <optional>

#include "base/parallel.h"
#include "side_graph.h"
#include "vis/vis_file.h"
#include "formats/foreign_file.h"
#include "formats/vis_db/vis_db.h"

namespace graph_ascend::service {
namespace {

std::string RealPathOf(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

std::string GraphId(const vis::FileMeta& meta) {
  if (meta.step().empty() && meta.rank().empty()) return "";
  return meta.step() + "_" + meta.rank();
}

std::string FileOf(const std::string& dir, const std::string& id) {
  return dir + "/" + (id.empty() ? std::string("graph") : id) + ".vis";
}

// The index-only file of a graph opened hierarchy first.
std::string IndexFileOf(const std::string& dir, const std::string& id) {
  return dir + "/" + (id.empty() ? std::string("graph") : id) + ".index.vis";
}

// The pid of a conversion's directory "<key>.tmp-<pid>", 0 for other names.
pid_t TemporaryOwner(const std::string& name) {
  size_t at = name.rfind(".tmp-");
  if (at == std::string::npos || at + 5 == name.size()) return 0;
  pid_t pid = 0;
  for (size_t i = at + 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || pid > 100000000) return 0;
    pid = pid * 10 + (name[i] - '0');
  }
  return pid;
}

// Removes the conversion directories under `root` that `abandoned` says
// nobody will finish.
template <typename F>
void RemoveConversions(const std::string& root, F abandoned) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(root, ec)) {
    pid_t owner = TemporaryOwner(e.path().filename().string());
    if (owner == 0 || !abandoned(owner, e.path().string())) continue;
    // A writer still running may add a file while the tree is removed.
    for (int attempt = 0; attempt < 3 && std::filesystem::exists(e.path(), ec); ++attempt) {
      std::filesystem::remove_all(e.path(), ec);
    }
  }
}

// Writes the whole file of graph `chosen_id` of `abs_path` into `full` and
// tells `fill` (publish: the links to it).
void WriteWhole(const std::string& abs_path, const std::string& chosen_id, const std::string& full,
                const std::function<void()>& publish, DetailFill* fill) {
  // Whatever happens the fill is done: an exception (std::bad_alloc) must
  // neither end the process nor leave the clients in Wait() unanswered.
  try {
    bool taken = false;
    auto w = formats::ConvertVisDb(abs_path, [&](const vis::FileMeta& meta) {
      if (taken || GraphId(meta) != chosen_id) return std::string();
      taken = true;
      return full;
    });
    if (!w.ok()) return fill->Done(w.error());
    if (!taken) return fill->Done(Error{abs_path, "graph " + chosen_id, "no such step and rank in the file"});
    publish();
    fill->Done(full);
  } catch (...) {
    Error e = ErrorOfException(std::current_exception(), abs_path);
    e.where = "graph " + chosen_id + " (node details)";
    fill->Done(std::move(e));
  }
}

// The opening screen's named nodes stand where the whole index has them (the
// page holds their indices): a warning on stderr when they do not, e.g. for
// a side whose node_order values skip or repeat numbers. Views keep their
// expanded nodes by name all the same.
void WarnUnlessSameIndices(const SideIndexes& opening, const std::string& index) {
  auto b = vis::VisReader::Open(index);
  std::string wrong;
  if (!b.ok()) return;  // the index's own errors come when it is opened
  for (vis::Side side : {vis::SIDE_NPU, vis::SIDE_BENCH}) {
    const vis::PartialSideIndex& a = side == vis::SIDE_NPU ? opening.npu : opening.bench;
    if (a.size == 0) continue;
    auto g = SideGraph::Load(**b, side, {});
    if (!g.ok()) return;
    if (a.size != (*g)->size()) {
      wrong = "node counts differ";
      break;
    }
    for (const vis::PartialSideIndex::Known& k : a.known) {
      if (k.name != (*g)->name(k.index)) {
        wrong = "node " + std::to_string(k.index);
        break;
      }
    }
    if (!wrong.empty()) break;
  }
  if (wrong.empty()) return;
  std::fprintf(stderr,
               "graph-ascend-server: warning: %s: the opening screen's node indices differ from the whole index's "
               "(%s); the page's selection may move to another node\n",
               index.c_str(), wrong.c_str());
}

}  // namespace

Error Relabelled(Error e, const std::string& abs_path, const std::string& shown) {
  if (e.file == abs_path) e.file = shown;
  return e;
}

DetailsFileFn DetailsOf(std::shared_ptr<const DetailFill> fill, const std::string& abs_path, const std::string& shown) {
  return [fill = std::move(fill), abs_path, shown]() -> Result<std::string> {
    auto r = fill->Wait();
    if (!r.ok()) return Relabelled(r.error(), abs_path, shown);
    return r;
  };
}

NodeDetailFn NodeDetailsOf(std::shared_ptr<const DetailFill> fill, const std::string& abs_path,
                           const std::string& shown, const std::string& converted) {
  return [fill = std::move(fill), abs_path, shown, converted](
             vis::Side side, const std::string& name) -> std::optional<Result<vis::NodeDetail>> {
    if (fill->done()) return std::nullopt;
    auto d = fill->Node(side, name, converted);
    if (!d.ok()) return Result<vis::NodeDetail>(Relabelled(d.error(), abs_path, shown));
    return d;
  };
}

void SplitForeignName(const std::string& relative, std::string* file, std::string* graph) {
  size_t at = relative.rfind(".vis.db#");
  if (at == std::string::npos) {
    *file = relative;
    graph->clear();
    return;
  }
  *file = relative.substr(0, at + 7);
  *graph = relative.substr(at + 8);
}

std::string DefaultCacheRoot() {
  const char* xdg = getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg == '/') return std::string(xdg) + "/graph-ascend";
  const char* home = getenv("HOME");
  return std::string(home != nullptr && *home ? home : "/tmp") + "/.cache/graph-ascend";
}

Result<ForeignFiles> ForeignFiles::Open(const std::string& cache_root, const std::string& logdir,
                                        uint64_t opening_nodes, std::function<void()> before_index,
                                        std::chrono::milliseconds first_screen_wait) {
  std::error_code ec;
  std::filesystem::create_directories(cache_root, ec);
  std::string real = RealPathOf(cache_root);
  if (ec || real.empty()) return Error{cache_root, "", "cannot create the cache directory: " + ec.message()};
  std::string log = RealPathOf(logdir);
  if (!log.empty() && (real == log || real.rfind(log + "/", 0) == 0)) {
    return Error{cache_root, "", "the cache directory must not lie inside the log directory " + log};
  }
  // Left by a server that was killed: its pid is gone and it has not been
  // written for 10 minutes (a cache shared between hosts holds other hosts' pids).
  RemoveConversions(real, [](pid_t pid, const std::string& path) {
    struct stat st;
    return pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH && stat(path.c_str(), &st) == 0 &&
           time(nullptr) - st.st_mtime > 600;
  });
  return ForeignFiles(real, opening_nodes, std::move(before_index), first_screen_wait);
}

void ForeignFiles::RemoveTemporaries() const {
  RemoveConversions(root_, [](pid_t pid, const std::string&) { return pid == getpid(); });
}

Result<std::string> ForeignFiles::KeyDir(const std::string& abs_path) const {
  struct stat st;
  if (stat(abs_path.c_str(), &st) != 0) return Error{abs_path, "", std::string("cannot stat: ") + strerror(errno)};
  // The conversion's own version last: files converted before it wrote the divergence ranking are converted again.
  std::string key = RealPathOf(abs_path) + "\n" + std::to_string(st.st_size) + "\n" +
                    std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + "\nranked";
  char hex[17];
  snprintf(hex, sizeof(hex), "%016zx", std::hash<std::string>()(key));
  return root_ + "/" + hex;
}

Result<std::vector<ForeignGraph>> ForeignFiles::Graphs(const std::string& abs_path) {
  auto keys = formats::ListVisDb(abs_path);
  if (!keys.ok()) return keys.error();
  std::vector<ForeignGraph> out;
  if (keys->size() <= 1) {
    out.emplace_back();
    return out;
  }
  for (const formats::DbGraphKey& k : *keys) {
    ForeignGraph g;
    g.step = "step" + std::to_string(k.step);
    g.rank = "rank" + std::to_string(k.rank);
    g.id = g.step + "_" + g.rank;
    out.push_back(std::move(g));
  }
  return out;
}

Result<std::string> DetailFill::Wait() const {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [this] { return done_; });
  return result_;
}

void DetailFill::Done(Result<std::string> result) {
  {
    std::lock_guard<std::mutex> l(mu_);
    result_ = std::move(result);
    done_ = true;
  }
  cv_.notify_all();
}

bool DetailFill::done() const {
  std::lock_guard<std::mutex> l(mu_);
  return done_;
}

Result<std::string> DetailFill::WaitIndex() const {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [this] { return index_done_; });
  return index_result_;
}

bool DetailFill::index_done() const {
  std::lock_guard<std::mutex> l(mu_);
  return index_done_;
}

void DetailFill::IndexDone(Result<std::string> result) {
  {
    std::lock_guard<std::mutex> l(mu_);
    index_result_ = std::move(result);
    index_done_ = true;
    opening_index_.reset();
  }
  cv_.notify_all();
}

void DetailFill::ViewServed(vis::Side side) {
  std::lock_guard<std::mutex> l(mu_);
  const int bit = side == vis::SIDE_NPU ? 1 : 2;
  if ((screen_sides_ & bit) == 0) return;
  screen_sides_ &= ~bit;
  if (screen_sides_ == 0) cv_.notify_all();
}

void DetailFill::StartNow() {
  std::lock_guard<std::mutex> l(mu_);
  screen_sides_ = 0;
  cv_.notify_all();
}

void DetailFill::WaitFirstScreen() const {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait_for(l, first_screen_wait_, [this] { return screen_sides_ == 0; });
}

std::shared_ptr<const SideIndexes> DetailFill::OpeningIndex() const {
  std::lock_guard<std::mutex> l(mu_);
  return opening_index_;
}

Result<formats::VisDbNodes*> DetailFill::Reader(const std::string& converted) const {
  std::shared_ptr<Nodes> n;
  {
    std::lock_guard<std::mutex> l(mu_);
    std::shared_ptr<Nodes>& at = nodes_[converted];
    if (!at) at = std::make_shared<Nodes>();
    n = at;
  }
  std::call_once(n->once, [&] {
    auto opened = formats::VisDbNodes::Open(source_, converted);
    if (opened.ok()) {
      n->nodes = std::move(*opened);
    } else {
      n->error = opened.error();
    }
  });
  if (!n->nodes) return n->error;
  return n->nodes.get();  // kept in nodes_ while the fill lives
}

Result<vis::NodeDetail> DetailFill::Node(vis::Side side, const std::string& name, const std::string& converted) const {
  auto r = Reader(converted);
  if (!r.ok()) return r.error();
  return (*r)->Detail(side, name);
}

Result<std::vector<formats::VisDbNodes::Hit>> DetailFill::Find(vis::Side side,
                                                               const std::function<bool(std::string_view)>& match,
                                                               const std::string& converted) const {
  auto r = Reader(converted);
  if (!r.ok()) return r.error();
  return (*r)->Find(side, match);
}

Result<std::vector<std::string>> DetailFill::Ancestors(vis::Side side, const std::string& name, size_t max,
                                                       uint32_t* omitted, const std::string& converted) const {
  auto r = Reader(converted);
  if (!r.ok()) return r.error();
  return (*r)->Ancestors(side, name, max, omitted);
}

ForeignFiles::~ForeignFiles() {
  if (!fills_) return;  // moved from
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [file, fill] : fills_->by_file) fill->StartNow();
  }
  for (std::thread& t : fills_->threads) t.join();
}

Result<ForeignOpen> ForeignFiles::Converted(const std::string& abs_path, const std::string& id,
                                            const std::function<void(double)>& progress, bool whole_index) {
  auto dir = KeyDir(abs_path);
  if (!dir.ok()) return dir.error();
  std::shared_ptr<DetailFill> indexing;  // opened from its opening: the index is waited for outside mu_
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = Converting(abs_path, *dir, id, progress, whole_index, &indexing);
    if (!indexing) return found;
  }
  indexing->StartNow();
  StartFill(ForeignOpen{"", indexing});  // when no request has opened the opening yet
  auto index = indexing->WaitIndex();
  if (!index.ok()) return index.error();
  return ForeignOpen{*index, indexing};
}

Result<ForeignOpen> ForeignFiles::Converting(const std::string& abs_path, const std::string& dir,
                                             const std::string& id, const std::function<void(double)>& progress,
                                             bool whole_index, std::shared_ptr<DetailFill>* indexing) {
  struct stat st;
  std::string file = FileOf(dir, id);
  auto filling = fills_->by_file.find(file);
  if (filling != fills_->by_file.end()) {
    const std::shared_ptr<DetailFill>& fill = filling->second;
    if (fill->opening_.empty()) return ForeignOpen{IndexFileOf(dir, id), fill};
    if (!whole_index) {
      auto sides = fill->OpeningIndex();  // null once the index is written
      if (sides) return ForeignOpen{fill->opening_, fill, std::move(sides)};
    }
    *indexing = fill;
    return ForeignOpen{};
  }
  if (stat(file.c_str(), &st) == 0) return ForeignOpen{file, nullptr};
  // Only the graph asked for is converted: the first open of one step and
  // rank of a large run reads only its rows. Each file is written to a
  // temporary name and renamed, so a file in the cache is complete.
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{dir, "", "cannot create: " + ec.message()};
  auto format = formats::DetectFormat(abs_path);
  if (format.ok() && *format == formats::FileFormat::kVisDb) {
    auto opening = OpeningFirst(abs_path, dir, id);
    if (!opening.ok()) return opening.error();
    if (opening->path.empty()) return IndexFirst(abs_path, dir, id, progress);
    if (whole_index) *indexing = opening->details;
    return opening;
  }
  std::string chosen;
  auto written = formats::ConvertGraphs(
      abs_path,
      [&](const vis::FileMeta& meta) {
        // "" asks for the only graph, or the first of several.
        if (!chosen.empty() || (!id.empty() && GraphId(meta) != id)) return std::string();
        chosen = FileOf(dir, id.empty() ? GraphId(meta) : id);
        return chosen;
      },
      progress);
  if (!written.ok()) return written.error();
  if (chosen.empty()) return Error{abs_path, "graph " + id, "no such step and rank in the file"};
  if (id.empty() && chosen != file) {
    // Later opens of the one-graph name find it at once.
    if (link(chosen.c_str(), file.c_str()) != 0 && errno != EEXIST) return ForeignOpen{chosen, nullptr};
  }
  return ForeignOpen{chosen, nullptr};
}

Result<ForeignOpen> ForeignFiles::IndexFirst(const std::string& abs_path, const std::string& dir,
                                             const std::string& id, const std::function<void(double)>& progress) {
  // "" asks for the only graph, or the first of several.
  bool chosen = false;
  std::string chosen_id;
  std::string index = IndexFileOf(dir, id);
  std::vector<bool> whole;
  auto written = formats::ConvertVisDbIndex(
      abs_path,
      [&](const vis::FileMeta& meta) {
        if (chosen || (!id.empty() && GraphId(meta) != id)) return std::string();
        chosen = true;
        chosen_id = GraphId(meta);
        return index;
      },
      progress, &whole);
  if (!written.ok()) return written.error();
  if (!chosen) return Error{abs_path, "graph " + id, "no such step and rank in the file"};
  const std::string full = FileOf(dir, chosen_id), asked = FileOf(dir, id);
  // Later opens of the one-graph name find it at once (a link already there is as good).
  auto publish = [full, asked] {
    if (asked != full) link(full.c_str(), asked.c_str());
  };
  if (whole.front()) {  // read whole, details and all
    if (rename(index.c_str(), full.c_str()) != 0) {
      return Error{full, "", std::string("cannot rename the converted file: ") + strerror(errno)};
    }
    publish();
    return ForeignOpen{full, nullptr};
  }
  auto fill = std::make_shared<DetailFill>();
  fill->source_ = abs_path;
  fills_->by_file[asked] = fill;
  fill->write_ = [abs_path, chosen_id, full, publish, fill = fill.get()] {
    WriteWhole(abs_path, chosen_id, full, publish, fill);
  };
  return ForeignOpen{index, fill};
}

Result<ForeignOpen> ForeignFiles::OpeningFirst(const std::string& abs_path, const std::string& dir,
                                               const std::string& id) {
  const std::string name = id.empty() ? std::string("graph") : id;
  const std::string opening = dir + "/" + name + ".opening.vis";
  auto written = formats::WriteVisDbOpening(abs_path, id, opening_nodes_, opening);
  if (!written.ok()) return written.error();
  if (!written->has_value()) return ForeignOpen{};
  const std::string chosen_id = (*written)->id;
  auto sides = std::make_shared<SideIndexes>();
  sides->npu = std::move((*written)->npu);
  sides->bench = std::move((*written)->bench);
  const std::string index = IndexFileOf(dir, id), full = FileOf(dir, chosen_id), asked = FileOf(dir, id);
  auto publish = [full, asked] {
    if (asked != full) link(full.c_str(), asked.c_str());
  };
  auto fill = std::make_shared<DetailFill>();
  fill->source_ = abs_path;
  fill->opening_ = opening;
  fill->opening_index_ = sides;
  fill->index_done_ = false;
  fill->screen_sides_ = sides->bench.size > 0 ? 3 : 1;  // NPU (1) and Bench (2)
  fill->first_screen_wait_ = first_screen_wait_;
  fills_->by_file[asked] = fill;
  fill->write_ = [abs_path, chosen_id, sides, index, full, publish, hold = before_index_, fill = fill.get()] {
    try {
      fill->WaitFirstScreen();
      if (hold) hold();
      bool taken = false;
      std::vector<bool> whole;
      auto w = formats::ConvertVisDbIndex(
          abs_path,
          [&](const vis::FileMeta& meta) {
            if (taken || GraphId(meta) != chosen_id) return std::string();
            taken = true;
            return index;
          },
          {}, &whole);
      std::optional<Error> failed;
      if (!w.ok()) {
        failed = w.error();
      } else if (!taken) {
        failed = Error{abs_path, "graph " + chosen_id, "no such step and rank in the file"};
      } else if (whole.front()) {  // read whole, details and all
        if (rename(index.c_str(), full.c_str()) != 0) {
          failed = Error{full, "", std::string("cannot rename the converted file: ") + strerror(errno)};
        } else {
          publish();
          fill->IndexDone(full);
          return fill->Done(full);
        }
      }
      if (failed) {
        fill->IndexDone(*failed);
        return fill->Done(*failed);
      }
      WarnUnlessSameIndices(*sides, index);
      fill->IndexDone(index);
    } catch (...) {
      Error e = ErrorOfException(std::current_exception(), abs_path);
      e.where = "graph " + chosen_id + " (node index)";
      fill->IndexDone(e);
      return fill->Done(std::move(e));
    }
    WriteWhole(abs_path, chosen_id, full, publish, fill);
  };
  return ForeignOpen{opening, fill, sides};
}

void ForeignFiles::StartFill(const ForeignOpen& opened) {
  if (!opened.details) return;
  DetailFill* fill = opened.details.get();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (fill->started_) return;
    fill->started_ = true;
    try {
      fills_->threads.emplace_back(fill->write_);
      return;
    } catch (const std::exception&) {
      // No thread to be had (std::system_error at a thread or address-space
      // limit): written below.
    }
  }
  fill->StartNow();  // no view can be served before this open returns
  fill->write_();    // on this thread, outside mu_: the open waits for the whole file
}

}  // namespace graph_ascend::service
