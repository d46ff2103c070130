#include "output/output_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace graph_ascend::output {

Status WriteFileAtomically(const std::string& path, const std::string& text, bool overwrite) {
  std::error_code ec;
  if (!overwrite && std::filesystem::exists(path, ec)) {
    return Error{path, "", "output exists; remove it or pass --force to overwrite"};
  }
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  FILE* f = fopen(tmp.c_str(), "wb");
  if (!f) return Error{path, "", std::string("cannot write: ") + strerror(errno)};
  bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = strerror(errno);
    unlink(tmp.c_str());
    return Error{path, "", "cannot write: " + why};
  }
  return Status::Ok();
}

}  // namespace graph_ascend::output
