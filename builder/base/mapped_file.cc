#include "base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/confine.h"

namespace graph_ascend {

namespace {

// Opens `path` for reading if it is a regular file. O_NONBLOCK so that a
// FIFO named by mistake (or on purpose) cannot block open() forever; devices
// such as /dev/zero are refused before anything is read. Under --confine
// (base/confine.h) the path is checked before the open (nothing outside is
// opened) and the descriptor after it (no link swapped in between).
Result<int> OpenRegular(const std::string& path, struct stat* st, const std::string& root = "") {
  auto confined = [&](int fd) { return root.empty() ? CheckConfined(path, fd) : CheckConfinedTo(root, path, fd); };
  GA_RETURN_IF_ERROR(confined(-1));
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return MakeError(path, "", std::string("cannot open: ") + strerror(errno));
  if (Status inside = confined(fd); !inside.ok()) {
    close(fd);
    return inside.error();
  }
  if (fstat(fd, st) != 0) {
    int e = errno;
    close(fd);
    return MakeError(path, "", std::string("cannot stat: ") + strerror(e));
  }
  if (!S_ISREG(st->st_mode)) {
    close(fd);
    return MakeError(path, "", S_ISDIR(st->st_mode) ? "is a directory, expected a file"
                                                    : "is not a regular file (a device, FIFO or socket)");
  }
  return fd;
}

}  // namespace

Result<MappedFile> MappedFile::Open(const std::string& path, const std::string& root) {
  struct stat st;
  auto opened = OpenRegular(path, &st, root);
  if (!opened.ok()) return opened.error();
  int fd = *opened;
  MappedFile f;
  f.path_ = path;
  f.size_ = static_cast<size_t>(st.st_size);
  if (f.size_ > 0) {
    void* p = mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      close(fd);
      return MakeError(path, "", std::string("cannot map: ") + strerror(e));
    }
    madvise(p, f.size_, MADV_SEQUENTIAL);
    f.data_ = static_cast<const char*>(p);
  }
  close(fd);
  return f;
}

MappedFile::MappedFile(MappedFile&& o) noexcept { *this = std::move(o); }

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    if (data_ != nullptr) munmap(const_cast<char*>(data_), size_);
    path_ = std::move(o.path_);
    data_ = o.data_;
    size_ = o.size_;
    released_ = o.released_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) munmap(const_cast<char*>(data_), size_);
}

void MappedFile::Release(size_t offset) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t end = offset / page * page;
  if (data_ == nullptr || end <= released_ + (16u << 20)) return;  // in 16 MiB steps
  madvise(const_cast<char*>(data_) + released_, end - released_, MADV_DONTNEED);
  released_ = end;
}

void MappedFile::ReleaseRange(size_t begin, size_t end) const {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  begin = (begin + page - 1) / page * page;
  end = std::min(end, size_) / page * page;
  if (data_ == nullptr || end <= begin) return;
  madvise(const_cast<char*>(data_) + begin, end - begin, MADV_DONTNEED);
}

Result<std::string> ReadFileToString(const std::string& path, size_t max_bytes) {
  struct stat st;
  auto opened = OpenRegular(path, &st);
  if (!opened.ok()) return opened.error();
  int fd = *opened;
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    close(fd);
    return MakeError(path, "", "file of " + std::to_string(st.st_size) + " bytes is over the limit of " +
                                   std::to_string(max_bytes) + " bytes");
  }
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < out.size()) {
    ssize_t r = read(fd, out.data() + done, out.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      close(fd);
      return MakeError(path, "byte " + std::to_string(done), std::string("read failed: ") + strerror(e));
    }
    if (r == 0) break;  // shrank while being read
    done += static_cast<size_t>(r);
  }
  close(fd);
  out.resize(done);
  return out;
}

Result<std::string> ReadFileHead(const std::string& path, size_t n) {
  struct stat st;
  auto opened = OpenRegular(path, &st);
  if (!opened.ok()) return opened.error();
  std::string head(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(*opened, head.data() + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      close(*opened);
      return MakeError(path, "", std::string("cannot read: ") + strerror(e));
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  close(*opened);
  head.resize(got);
  return head;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace graph_ascend
