#include "torch_save/zip_archive.h"

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>

namespace graph_ascend::zip {
namespace {

uint64_t Le(const char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

std::string At(uint64_t byte) { return "byte " + std::to_string(byte); }

// [off, off + len) lies within a file of `total` bytes (without overflowing).
bool Fits(uint64_t off, uint64_t len, uint64_t total) { return off <= total && len <= total - off; }

}  // namespace

Result<ZipArchive> ZipArchive::Open(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  ZipArchive zip;
  zip.file_ = std::move(*file);
  zip.path_ = path;
  GA_RETURN_IF_ERROR(zip.ReadDirectory(zip.file_.text()));
  return zip;
}

Result<ZipArchive> ZipArchive::FromBytes(std::string_view bytes, const std::string& path) {
  ZipArchive zip;
  zip.path_ = path;
  GA_RETURN_IF_ERROR(zip.ReadDirectory(bytes));
  return zip;
}

Status ZipArchive::ReadDirectory(std::string_view d) {
  const std::string& path = path_;
  ZipArchive& zip = *this;
  const Error not_zip{path, "", "not a zip archive (no end of central directory; truncated or not a torch.save file)"};
  if (d.size() < 22) return not_zip;
  size_t eocd = std::string_view::npos;
  for (size_t i = d.size() - 22;; --i) {
    if (Le(d.data() + i, 4) == 0x06054b50) {
      eocd = i;
      break;
    }
    if (i == 0 || d.size() - i > 65557) break;
  }
  if (eocd == std::string_view::npos) return not_zip;
  uint64_t count = Le(d.data() + eocd + 10, 2);
  uint64_t dir = Le(d.data() + eocd + 16, 4);
  // Zip64: a locator just before the record points at the 64-bit record.
  if (eocd >= 20 && Le(d.data() + eocd - 20, 4) == 0x07064b50) {
    uint64_t rec = Le(d.data() + eocd - 20 + 8, 8);
    if (!Fits(rec, 56, d.size()) || Le(d.data() + rec, 4) != 0x06064b50) {
      return Error{path, At(rec), "damaged zip64 record"};
    }
    count = Le(d.data() + rec + 32, 8);
    dir = Le(d.data() + rec + 48, 8);
  }
  uint64_t at = dir;
  for (uint64_t e = 0; e < count; ++e) {
    if (!Fits(at, 46, d.size()) || Le(d.data() + at, 4) != 0x02014b50) {
      return Error{path, At(at), "damaged zip directory"};
    }
    uint32_t method = static_cast<uint32_t>(Le(d.data() + at + 10, 2));
    uint64_t packed = Le(d.data() + at + 20, 4), size = Le(d.data() + at + 24, 4);
    uint64_t name_len = Le(d.data() + at + 28, 2), extra_len = Le(d.data() + at + 30, 2),
             comment_len = Le(d.data() + at + 32, 2);
    uint64_t local = Le(d.data() + at + 42, 4);
    if (!Fits(at + 46, name_len + extra_len, d.size())) return Error{path, At(at), "damaged zip directory"};
    std::string name(d.substr(at + 46, name_len));
    // Zip64 extra field: the 64-bit values replace the saturated 32-bit ones, in this order.
    std::string_view extra = d.substr(at + 46 + name_len, extra_len);
    for (size_t x = 0; x + 4 <= extra.size();) {
      uint64_t id = Le(extra.data() + x, 2), len = Le(extra.data() + x + 2, 2);
      if (id == 1) {
        size_t p = x + 4;
        auto take = [&](uint64_t* v) {
          if (*v == 0xffffffffu && p + 8 <= x + 4 + len && p + 8 <= extra.size()) {
            *v = Le(extra.data() + p, 8);
            p += 8;
          }
        };
        take(&size);
        take(&packed);
        take(&local);
      }
      x += 4 + len;
    }
    at += 46 + name_len + extra_len + comment_len;
    if (!Fits(local, 30, d.size()) || Le(d.data() + local, 4) != 0x04034b50) {
      return Error{path, name + " (" + At(local) + ")", "damaged zip entry"};
    }
    uint64_t data = local + 30 + Le(d.data() + local + 26, 2) + Le(d.data() + local + 28, 2);
    if (method == 8) {
      if (!Fits(data, packed, d.size())) return Error{path, name + " (" + At(data) + ")", "truncated zip member"};
      zip.deflated_[name] = Deflated{d.substr(data, packed), size};
      continue;
    }
    if (method != 0) {
      zip.unsupported_[name] = method;
      continue;
    }
    if (!Fits(data, size, d.size())) {
      return Error{path, name + " (" + At(data) + ")",
                   "truncated member: " + std::to_string(size) + " bytes expected, " +
                       std::to_string(d.size() > data ? d.size() - data : 0) + " present"};
    }
    zip.members_[name] = d.substr(data, size);
  }
  return Status::Ok();
}

Result<std::string_view> ZipArchive::Member(const std::string& name) const {
  auto it = members_.find(name);
  if (it != members_.end()) return it->second;
  if (deflated_.count(name) || unsupported_.count(name)) return Error{path(), name, "compressed zip member"};
  return Error{path(), name, "missing zip member"};
}

void ZipArchive::Release(std::string_view bytes) const {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  auto begin = reinterpret_cast<uintptr_t>(bytes.data()), end = begin + bytes.size();
  begin = (begin + page - 1) / page * page;
  end = end / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

std::vector<std::string> ZipArchive::Names() const {
  std::vector<std::string> names;
  for (const auto& [n, b] : members_) names.push_back(n);
  for (const auto& [n, b] : deflated_) names.push_back(n);
  for (const auto& [n, b] : unsupported_) names.push_back(n);
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::string> ZipArchive::Read(const std::string& name, size_t limit) const {
  auto it = deflated_.find(name);
  if (it == deflated_.end()) {
    if (unsupported_.count(name)) {
      return Error{path(), name, "unsupported zip compression method " + std::to_string(unsupported_.at(name))};
    }
    auto stored = Member(name);
    if (!stored.ok()) return stored.error();
    return std::string(*stored);
  }
  if (it->second.size > limit) return Error{path(), name, "member larger than " + std::to_string(limit) + " bytes"};
  std::string out(it->second.size, '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return Error{path(), name, "cannot inflate"};
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(it->second.bytes.data()));
  z.avail_in = static_cast<uInt>(it->second.bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = inflate(&z, Z_FINISH);
  size_t produced = out.size() - z.avail_out;
  inflateEnd(&z);
  if (rc != Z_STREAM_END || produced != out.size()) return Error{path(), name, "damaged deflated zip member"};
  return out;
}

}  // namespace graph_ascend::zip
