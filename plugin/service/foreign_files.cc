#include "foreign_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>

#include "formats/foreign_file.h"
#include "formats/vis_db.h"

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

}  // namespace

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

Result<ForeignFiles> ForeignFiles::Open(const std::string& cache_root, const std::string& logdir) {
  std::error_code ec;
  std::filesystem::create_directories(cache_root, ec);
  std::string real = RealPathOf(cache_root);
  if (ec || real.empty()) return Error{cache_root, "", "cannot create the cache directory: " + ec.message()};
  std::string log = RealPathOf(logdir);
  if (!log.empty() && (real == log || real.rfind(log + "/", 0) == 0)) {
    return Error{cache_root, "", "the cache directory must not lie inside the log directory " + log};
  }
  return ForeignFiles(real);
}

Result<std::string> ForeignFiles::KeyDir(const std::string& abs_path) const {
  struct stat st;
  if (stat(abs_path.c_str(), &st) != 0) return Error{abs_path, "", std::string("cannot stat: ") + strerror(errno)};
  std::string key = RealPathOf(abs_path) + "\n" + std::to_string(st.st_size) + "\n" +
                    std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
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

Result<std::string> ForeignFiles::Converted(const std::string& abs_path, const std::string& id,
                                            const std::function<void(double)>& progress) {
  auto dir = KeyDir(abs_path);
  if (!dir.ok()) return dir.error();
  std::lock_guard<std::mutex> lock(mu_);
  struct stat st;
  if (stat(dir->c_str(), &st) != 0) {
    // Written into a private directory, renamed into place when complete.
    std::string tmp = *dir + ".tmp-" + std::to_string(getpid());
    std::error_code ec;
    std::filesystem::remove_all(tmp, ec);
    std::filesystem::create_directories(tmp, ec);
    if (ec) return Error{tmp, "", "cannot create: " + ec.message()};
    auto written = formats::ConvertGraphs(
        abs_path, [&](const vis::FileMeta& meta) { return FileOf(tmp, GraphId(meta)); }, progress);
    if (!written.ok()) {
      std::filesystem::remove_all(tmp, ec);
      return written.error();
    }
    if (rename(tmp.c_str(), dir->c_str()) != 0) {
      std::filesystem::remove_all(tmp, ec);
      if (stat(dir->c_str(), &st) != 0) return Error{*dir, "", std::string("cannot rename: ") + strerror(errno)};
    }
  }
  std::string file = FileOf(*dir, id);
  if (stat(file.c_str(), &st) != 0) {
    // A one-graph name of a file that holds several: its first graph.
    if (id.empty()) {
      std::vector<std::string> files;
      for (const auto& e : std::filesystem::directory_iterator(*dir)) files.push_back(e.path().string());
      if (!files.empty()) return *std::min_element(files.begin(), files.end());
    }
    return Error{abs_path, "graph " + id, "no such step and rank in the file"};
  }
  return file;
}

}  // namespace graph_ascend::service
