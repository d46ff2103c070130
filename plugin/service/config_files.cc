#include "config_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/mapped_file.h"
#include "base/strings.h"
#include "base/temp_files.h"
#include "log_dir.h"

namespace graph_ascend::service {
namespace {

// "step12" -> "12"; "" or no digits -> "0" (tb_graph_ascend's integer step and rank).
std::string Number(const std::string& s) {
  size_t p = s.find_first_of("0123456789");
  if (p == std::string::npos) return "0";
  size_t e = s.find_first_not_of("0123456789", p);
  return s.substr(p, e == std::string::npos ? std::string::npos : e - p);
}

}  // namespace

BesideNames BesideNamesOf(const std::string& relative, const std::string& step, const std::string& rank) {
  std::string file = relative, graph;
  size_t hash = relative.find('#');
  if (hash != std::string::npos) {
    file = relative.substr(0, hash);
    graph = relative.substr(hash + 1);
  }
  std::string stem;
  if (EndsWith(file, ".vis.db")) {
    std::string s = step, r = rank;
    size_t us = graph.find('_');
    if (us != std::string::npos) {
      s = graph.substr(0, us);
      r = graph.substr(us + 1);
    }
    stem = file.substr(0, file.size() - 7) + "_" + Number(s) + "_" + Number(r) + ".vis";
  } else {
    stem = file;
  }
  return {stem + ".config", stem + ".legend.json"};
}

std::vector<ConfigEntry> ListMatchConfigs(const std::string& root, const std::string& dir) {
  std::vector<ConfigEntry> out;
  const std::string abs_dir = dir.empty() ? root : root + "/" + dir;
  DIR* d = opendir(abs_dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (!EndsWith(name, ".vis.config") || name.size() == 11) continue;
    std::string abs = abs_dir + "/" + name;
    char real[PATH_MAX];
    if (realpath(abs.c_str(), real) == nullptr) continue;
    std::string r = real;
    if (r.size() <= root.size() || r.compare(0, root.size() + 1, root + "/") != 0) continue;  // leaves the log dir
    struct stat st;
    if (stat(real, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    out.push_back({dir.empty() ? name : dir + "/" + name, name, static_cast<uint64_t>(st.st_size),
                   static_cast<int64_t>(st.st_mtim.tv_sec)});
  }
  closedir(d);
  std::sort(out.begin(), out.end(),
            [](const ConfigEntry& a, const ConfigEntry& b) { return NaturalLess(a.name, b.name); });
  return out;
}

std::string KeyHash(const std::string& key) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

std::string RefusedTarget(const std::string& abs) {
  struct stat link;
  if (lstat(abs.c_str(), &link) != 0 || S_ISREG(link.st_mode)) return "";
  return S_ISLNK(link.st_mode) ? "is a symbolic link; refusing to write through it"
                               : "exists and is not a regular file";
}

Status WriteAtomically(const std::string& abs_path, const std::string& display_path, const std::string& text) {
  std::string tmp = abs_path + ".tmp-" + std::to_string(getpid());
  TemporaryFile temp(tmp);  // removed when a terminated server leaves mid-write
  // O_EXCL | O_NOFOLLOW: a file or link planted at the temporary name is
  // removed, never written through; rename() then replaces a link itself.
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
  int fd = open(tmp.c_str(), flags, 0640);
  if (fd < 0 && errno == EEXIST && unlink(tmp.c_str()) == 0) fd = open(tmp.c_str(), flags, 0640);
  if (fd < 0) return MakeError(display_path, "", std::string("cannot create: ") + strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t w = write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int err = errno;
      close(fd);
      unlink(tmp.c_str());
      return MakeError(display_path, "", std::string("write failed: ") + strerror(err));
    }
    done += static_cast<size_t>(w);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    unlink(tmp.c_str());
    return MakeError(display_path, "", std::string("flush failed: ") + strerror(errno));
  }
  if (rename(tmp.c_str(), abs_path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return MakeError(display_path, "", std::string("cannot rename temporary file: ") + strerror(err));
  }
  return Status::Ok();
}

Result<nlohmann::ordered_json> ReadConfigJson(const std::string& abs_path, const std::string& display_path,
                                             size_t max_bytes, const char* what) {
  // The builder's reader: a regular file only, opened non-blocking (a FIFO
  // cannot hang the read, a device such as /dev/zero is refused before
  // anything is read) and refused past `max_bytes` before it is read.
  auto read = ReadFileToString(abs_path, max_bytes);
  if (!read.ok()) {
    Error e = read.error();
    e.file = display_path;  // never the server's absolute path
    e.message = std::string(what) + ": " + e.message;
    return e;
  }
  const std::string& text = *read;
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::string msg = e.what();
    size_t p = msg.find("parse error");
    return MakeError(display_path, "byte " + std::to_string(e.byte), p == std::string::npos ? msg : msg.substr(p));
  }
}

}  // namespace graph_ascend::service
