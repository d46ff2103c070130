#include "log_dir.h"

#include "base/confine.h"
#include "base/strings.h"

#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace graph_ascend::service {
namespace {

bool RealPath(const std::string& path, std::string* out) {
  char* r = realpath(path.c_str(), nullptr);
  if (r == nullptr) return false;
  *out = r;
  free(r);
  return true;
}

}  // namespace

bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    bool da = isdigit(static_cast<unsigned char>(a[i])), db = isdigit(static_cast<unsigned char>(b[j]));
    if (da && db) {
      size_t ie = i, je = j;
      while (ie < a.size() && isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && isdigit(static_cast<unsigned char>(b[je]))) ++je;
      size_t is = i, js = j;
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      if (ie - is != je - js) return ie - is < je - js;
      int c = a.compare(is, ie - is, b, js, je - js);
      if (c != 0) return c < 0;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i;
      ++j;
    }
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;
}

void ParseRunName(const std::string& name, RunEntry* e) {
  std::string stem = EndsWith(name, ".vis") ? name.substr(0, name.size() - 4) : name;
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t p = stem.find('_', start);
    parts.push_back(stem.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  e->kind.clear();
  e->step.clear();
  e->rank.clear();
  e->stage.clear();
  e->group = stem;
  if (parts.size() < 2 || (parts[0] != "build" && parts[0] != "compare")) {
    if (parts[0] == "build" || parts[0] == "compare") e->kind = parts[0];
    return;
  }
  e->kind = parts[0];
  // Step and rank come before the time stamp and never hold '_' or only
  // digits, so the first all-digit part is the time stamp and the rest the
  // stage, whatever '_' it holds.
  std::string step, rank;
  size_t i = 1;
  for (; i < parts.size() && !IsDigits(parts[i]); ++i) {
    const std::string& p = parts[i];
    if (p.rfind("step", 0) == 0 && step.empty()) {
      step = p;
    } else if ((p.rfind("rank", 0) == 0 || p.rfind("merged", 0) == 0) && rank.empty()) {
      rank = p;
    } else {
      return;  // e.g. "compare_my_model_2025...": the whole stem is the group
    }
  }
  if (i == parts.size()) return;  // no time stamp: not a batch-style name, the file is its own group
  std::string stage;
  for (size_t j = i + 1; j < parts.size(); ++j) stage += (stage.empty() ? "" : "_") + parts[j];
  if (i + 1 < parts.size() && stage.empty()) return;  // "compare_2025_.vis": no stage after all
  e->step = step;
  e->rank = rank;
  e->stage = stage;
  e->group = e->kind + "_" + parts[i] + (stage.empty() ? "" : "_" + stage);
}

Result<LogDir> LogDir::Open(const std::string& path) {
  std::string real;
  if (!RealPath(path, &real)) return MakeError(path, "", std::string("cannot open log directory: ") + strerror(errno));
  struct stat st;
  if (stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return MakeError(path, "", "log directory is not a directory");
  while (real.size() > 1 && real.back() == '/') real.pop_back();
  return LogDir(real);
}

bool LogDir::Inside(const std::string& real) const { return PathInside(real, root_); }

Status LogDir::CheckName(const std::string& relative) const {
  if (relative.empty()) return Error{relative, "", "empty file path"};
  if (relative.size() > 4096) return Error{relative.substr(0, 64) + "...", "", "file path too long"};
  if (relative.find('\0') != std::string::npos) return Error{relative, "", "file path contains a NUL byte"};
  if (relative[0] == '/' || relative[0] == '\\') {
    return Error{relative, "", "absolute paths are not allowed; name files relative to the log directory"};
  }
  size_t start = 0;
  while (start <= relative.size()) {
    size_t p = relative.find('/', start);
    std::string part = relative.substr(start, p == std::string::npos ? std::string::npos : p - start);
    if (part == "..") return Error{relative, "", "'..' is not allowed in file paths"};
    if (p == std::string::npos) break;
    start = p + 1;
  }
  return Status::Ok();
}

Result<std::string> LogDir::Resolve(const std::string& relative, bool must_exist, bool* missing) const {
  if (missing != nullptr) *missing = false;
  GA_RETURN_IF_ERROR(CheckName(relative));
  std::string joined = root_ + "/" + relative;
  std::string real;
  if (RealPath(joined, &real)) {
    if (!Inside(real)) return MakeError(relative, "", "path leaves the log directory (symlink)");
    struct stat st;
    if (stat(real.c_str(), &st) != 0) return MakeError(relative, "", std::string("cannot stat: ") + strerror(errno));
    if (!S_ISREG(st.st_mode)) return MakeError(relative, "", "not a regular file");
    return real;
  }
  if (must_exist || errno != ENOENT) {
    if (missing != nullptr) *missing = errno == ENOENT;
    return MakeError(
        relative, "",
        errno == ENOENT ? "no such file in the log directory" : std::string("cannot open: ") + strerror(errno));
  }
  // A file to be created: its directory must resolve inside, and the name
  // itself must not be a dangling symlink.
  size_t slash = joined.rfind('/');
  std::string dir = joined.substr(0, slash), base = joined.substr(slash + 1);
  struct stat lst;
  if (lstat(joined.c_str(), &lst) == 0) return MakeError(relative, "", "refusing to write through a dangling symlink");
  std::string real_dir;
  if (!RealPath(dir, &real_dir) || !Inside(real_dir)) {
    return MakeError(relative, "", "directory does not exist inside the log directory");
  }
  return real_dir + "/" + base;
}

Result<std::string> LogDir::ResolveDir(const std::string& relative) const {
  if (relative.empty() || relative == ".") return root_;
  GA_RETURN_IF_ERROR(CheckName(relative));
  std::string real;
  if (!RealPath(root_ + "/" + relative, &real)) {
    return MakeError(relative, "", errno == ENOENT ? "no such folder in the log directory"
                                                   : std::string("cannot open: ") + strerror(errno));
  }
  if (!Inside(real)) return MakeError(relative, "", "path leaves the log directory (symlink)");
  struct stat st;
  if (stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return MakeError(relative, "", "not a folder");
  return real;
}

Result<std::string> LogDir::ResolveNewDir(const std::string& relative) const {
  GA_RETURN_IF_ERROR(CheckName(relative));
  std::string rel = relative;
  while (!rel.empty() && rel.back() == '/') rel.pop_back();
  if (rel.empty() || rel == ".") return MakeError(relative, "", "name a folder inside the log directory");
  // The deepest part that exists must be a folder inside; the rest is created.
  std::string existing = rel, missing_tail;
  while (true) {
    struct stat lst;
    if (lstat((root_ + "/" + existing).c_str(), &lst) == 0) break;
    size_t slash = existing.rfind('/');
    missing_tail = existing.substr(slash == std::string::npos ? 0 : slash + 1) +
                   (missing_tail.empty() ? "" : "/" + missing_tail);
    if (slash == std::string::npos) {
      existing.clear();
      break;
    }
    existing = existing.substr(0, slash);
  }
  auto dir = ResolveDir(existing);
  if (!dir.ok()) return MakeError(relative, "", dir.error().message);
  return missing_tail.empty() ? *dir : *dir + "/" + missing_tail;
}

std::vector<RunEntry> LogDir::ListRuns() const {
  std::vector<RunEntry> out;
  std::vector<std::string> pending = {""};  // relative directories still to read
  size_t visited = 0;
  while (!pending.empty() && visited < 100000) {
    std::string rel = std::move(pending.back());
    pending.pop_back();
    ++visited;
    std::string abs = rel.empty() ? root_ : root_ + "/" + rel;
    DIR* d = opendir(abs.c_str());
    if (d == nullptr) continue;
    while (struct dirent* ent = readdir(d)) {
      std::string name = ent->d_name;
      if (name == "." || name == "..") continue;
      std::string child_rel = rel.empty() ? name : rel + "/" + name;
      std::string child_abs = abs + "/" + name;
      struct stat lst;
      if (lstat(child_abs.c_str(), &lst) != 0) continue;
      if (S_ISDIR(lst.st_mode)) {
        if (name.rfind(kPrivateFolderPrefix, 0) != 0) pending.push_back(child_rel);
        continue;
      }
      if (!EndsWith(name, ".vis") && !EndsWith(name, ".vis.db")) continue;
      struct stat st = lst;
      if (S_ISLNK(lst.st_mode)) {
        std::string real;
        if (!RealPath(child_abs, &real) || !Inside(real) || stat(real.c_str(), &st) != 0) continue;
      }
      if (!S_ISREG(st.st_mode)) continue;
      RunEntry e;
      e.path = child_rel;
      e.dir = rel;
      e.name = name;
      e.size = static_cast<uint64_t>(st.st_size);
      e.mtime_unix = static_cast<int64_t>(st.st_mtime);
      ParseRunName(name, &e);
      e.group = rel.empty() ? e.group : rel + "/" + e.group;
      out.push_back(std::move(e));
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end(), [](const RunEntry& a, const RunEntry& b) { return NaturalLess(a.path, b.path); });
  // A batch of one graph is a single graph: one step of one rank has nothing to pick or overview.
  std::unordered_map<std::string, uint32_t> members;
  for (const RunEntry& e : out) ++members[e.group];
  for (RunEntry& e : out) {
    if (members[e.group] != 1) continue;
    e.step.clear();
    e.rank.clear();
  }
  return out;
}

}  // namespace graph_ascend::service
