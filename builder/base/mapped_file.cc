#include "base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace graph_ascend {

Result<MappedFile> MappedFile::Open(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return MakeError(path, "", std::string("cannot open: ") + strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return MakeError(path, "", std::string("cannot stat: ") + strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return MakeError(path, "", "is a directory, expected a file");
  }
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

Result<std::string> ReadFileToString(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return MakeError(path, "", std::string("cannot open: ") + strerror(errno));
  if (S_ISDIR(st.st_mode)) return MakeError(path, "", "is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(path, "", std::string("cannot open: ") + strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace graph_ascend
