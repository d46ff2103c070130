#include "base/confine.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace graph_ascend {
namespace {

std::string& Root() {
  static std::string root;
  return root;
}

bool RealPath(const std::string& path, std::string* out) {
  char* r = realpath(path.c_str(), nullptr);
  if (r == nullptr) return false;
  *out = r;
  free(r);
  return true;
}

// The path of the open descriptor as the kernel resolved it: no race with a
// link swapped in after a check by name.
bool RealPathOf(int fd, std::string* out) {
  char link[64], target[PATH_MAX + 1];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, PATH_MAX);
  if (n <= 0) return false;
  out->assign(target, static_cast<size_t>(n));
  return (*out)[0] == '/';
}

}  // namespace

Status ConfineReadsTo(const std::string& dir) {
  std::string real;
  if (!RealPath(dir, &real)) return Error{dir, "", std::string("--confine: ") + strerror(errno)};
  struct stat st;
  if (stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return Error{dir, "", "--confine: not a folder"};
  while (real.size() > 1 && real.back() == '/') real.pop_back();
  Root() = real;
  return Status::Ok();
}

const std::string& ConfinedRoot() { return Root(); }

bool PathInside(const std::string& real, const std::string& root) {
  if (real == root) return true;
  if (root == "/") return !real.empty() && real[0] == '/';
  return real.size() > root.size() && real.compare(0, root.size(), root) == 0 && real[root.size()] == '/';
}

Status CheckConfined(const std::string& path, int fd) { return CheckConfinedTo(Root(), path, fd); }

Status CheckConfinedTo(const std::string& root, const std::string& path, int fd) {
  if (root.empty()) return Status::Ok();
  std::string real;
  bool resolved = fd >= 0 ? RealPathOf(fd, &real) : RealPath(path, &real);
  // A path that does not resolve is left to the open that follows (its own
  // error); an open descriptor whose path cannot be read is refused.
  if (!resolved && fd < 0) return Status::Ok();
  if (!resolved || !PathInside(real, root)) return Error{path, "", "path leaves the log directory (symlink)"};
  return Status::Ok();
}

}  // namespace graph_ascend
