#include "zip/zip_writer.h"

#include <zlib.h>

#include <filesystem>

#include "output/output_file.h"

namespace graph_ascend::zip {
namespace {

void Put(std::string* out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

Status WriteZip(const std::string& path, const std::vector<std::pair<std::string, std::string>>& members,
                bool overwrite) {
  std::error_code ec;
  if (!overwrite && std::filesystem::exists(path, ec)) {
    return Error{path, "", "output exists; remove it or pass --force to overwrite"};
  }
  auto bytes = ZipBytes(path, members);
  if (!bytes.ok()) return bytes.error();
  return output::WriteFileAtomically(path, *bytes, true);
}

Result<std::string> ZipBytes(const std::string& path, const std::vector<std::pair<std::string, std::string>>& members) {
  std::string data, dir;
  for (const auto& [name, content] : members) {
    if (content.size() >= 0xffffffffu || data.size() >= 0xffffffffu) return Error{path, name, "member too large"};
    uint32_t crc = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(content.data()),
                                                static_cast<uInt>(content.size())));
    uint64_t offset = data.size();
    // Local header: version 20, no flags, stored, DOS time 1980-01-01 00:00.
    Put(&data, 0x04034b50, 4);
    Put(&data, 20, 2);
    Put(&data, 0, 2);
    Put(&data, 0, 2);
    Put(&data, 0, 2);
    Put(&data, 0x21, 2);
    Put(&data, crc, 4);
    Put(&data, content.size(), 4);
    Put(&data, content.size(), 4);
    Put(&data, name.size(), 2);
    Put(&data, 0, 2);
    data += name;
    data += content;
    Put(&dir, 0x02014b50, 4);
    Put(&dir, 0x0314, 2);  // made by: Unix, 2.0
    Put(&dir, 20, 2);
    Put(&dir, 0, 2);
    Put(&dir, 0, 2);
    Put(&dir, 0, 2);
    Put(&dir, 0x21, 2);
    Put(&dir, crc, 4);
    Put(&dir, content.size(), 4);
    Put(&dir, content.size(), 4);
    Put(&dir, name.size(), 2);
    Put(&dir, 0, 2);
    Put(&dir, 0, 2);
    Put(&dir, 0, 2);
    Put(&dir, 0, 2);
    Put(&dir, uint64_t{0100644} << 16, 4);  // regular file, rw-r--r--
    Put(&dir, offset, 4);
    dir += name;
  }
  std::string end;
  Put(&end, 0x06054b50, 4);
  Put(&end, 0, 2);
  Put(&end, 0, 2);
  Put(&end, members.size(), 2);
  Put(&end, members.size(), 2);
  Put(&end, dir.size(), 4);
  Put(&end, data.size(), 4);
  Put(&end, 0, 2);
  return data + dir + end;
}

}  // namespace graph_ascend::zip
