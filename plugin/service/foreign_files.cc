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
  std::string file = FileOf(*dir, id);
  if (stat(file.c_str(), &st) == 0) return file;
  // Only the graph asked for is converted: the first open of one step and
  // rank of a large run reads only its rows. Each file is written to a
  // temporary name and renamed, so a file in the cache is complete.
  std::error_code ec;
  std::filesystem::create_directories(*dir, ec);
  if (ec) return Error{*dir, "", "cannot create: " + ec.message()};
  std::string chosen;
  auto written = formats::ConvertGraphs(
      abs_path,
      [&](const vis::FileMeta& meta) {
        // "" asks for the only graph, or the first of several.
        if (!chosen.empty() || (!id.empty() && GraphId(meta) != id)) return std::string();
        chosen = FileOf(*dir, id.empty() ? GraphId(meta) : id);
        return chosen;
      },
      progress);
  if (!written.ok()) return written.error();
  if (chosen.empty()) return Error{abs_path, "graph " + id, "no such step and rank in the file"};
  if (id.empty() && chosen != file) {
    // Later opens of the one-graph name find it at once.
    if (link(chosen.c_str(), file.c_str()) != 0 && errno != EEXIST) return chosen;
  }
  return chosen;
}

}  // namespace graph_ascend::service
