// The members of a zip archive (beside the unpickler: torch.save files are zips; config_check packs too):
// stored entries as written by torch.save
// (with zip64 records for archives past 4 GiB) are views into the memory
// map; deflated ones (Python's zipfile, msprobe's config_check packs) are
// inflated on request.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/mapped_file.h"
#include "base/status.h"

namespace graph_ascend::zip {

class ZipArchive {
 public:
  // Reads the central directory. Fails on anything that is not a zip, on a
  // damaged directory and on members whose bytes run past the end of the file.
  static Result<ZipArchive> Open(const std::string& path);
  // The same over bytes in memory (`bytes` must outlive the archive); `path` names them in errors.
  static Result<ZipArchive> FromBytes(std::string_view bytes, const std::string& path);

  const std::string& path() const { return path_; }
  // Stored member name -> its bytes.
  const std::map<std::string, std::string_view>& members() const { return members_; }
  // Every member name, stored or deflated, in name order.
  std::vector<std::string> Names() const;
  // The bytes of stored member `name`, or an Error naming the missing member.
  Result<std::string_view> Member(const std::string& name) const;
  // The content of `name`, stored or deflated (at most `limit` bytes).
  Result<std::string> Read(const std::string& name, size_t limit = size_t{1} << 30) const;
  // Drops the resident pages wholly inside `bytes`, a view into this archive
  // (they are re-read from the page cache if touched again).
  void Release(std::string_view bytes) const;

 private:
  Status ReadDirectory(std::string_view d);

  MappedFile file_;  // unmapped for FromBytes
  std::string path_;
  std::map<std::string, std::string_view> members_;
  struct Deflated {
    std::string_view bytes;
    uint64_t size;
  };
  std::map<std::string, Deflated> deflated_;
  std::map<std::string, uint32_t> unsupported_;  // name -> compression method
};

}  // namespace graph_ascend::zip
