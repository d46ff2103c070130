// A read-only memory map of an input file. Large dump files are parsed in
// place; Release() hands already-parsed pages back to the kernel so that the
// resident size stays bounded however large the file is.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace graph_ascend {

class MappedFile {
 public:
  // Only regular files are opened (never blocking: a FIFO or device is an
  // Error, not a hang or an endless read).
  // `root`: the file must lie inside this absolute real path (base/confine.h,
  // CheckConfinedTo); "" keeps the process's --confine root.
  static Result<MappedFile> Open(const std::string& path, const std::string& root = "");
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::string_view text() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

  // Drops resident pages below `offset` (they are re-read if touched again).
  void Release(size_t offset);
  // Drops the resident pages that lie wholly in [begin, end), for a reader
  // of one part of the file (several threads may call it for disjoint parts).
  void ReleaseRange(size_t begin, size_t end) const;

 private:
  std::string path_;
  const char* data_ = nullptr;
  size_t size_ = 0;
  size_t released_ = 0;
};

// Reads a whole (small) regular file into a string; a file larger than
// `max_bytes`, a FIFO or a device is an Error.
inline constexpr size_t kMaxSmallFileBytes = 64u << 20;
Result<std::string> ReadFileToString(const std::string& path, size_t max_bytes = kMaxSmallFileBytes);

// Whether `path` is a directory (or a link to one).
bool IsDirectory(const std::string& path);

// The first `n` bytes of a regular file (fewer when it is shorter); a FIFO,
// device or directory is an Error, never a blocked open() (format sniffing).
Result<std::string> ReadFileHead(const std::string& path, size_t n);

}  // namespace graph_ascend
