#include "output/output_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace graph_ascend::output {

StagedFile::StagedFile(const std::string& path)
    : path_(path), temp_(path + ".tmp-" + std::to_string(getpid())), registered_(temp_) {}

StagedFile::~StagedFile() {
  if (!committed_) unlink(temp_.c_str());
}

Result<std::unique_ptr<StagedFile>> StagedFile::Write(const std::string& path, const std::string& text) {
  std::unique_ptr<StagedFile> staged(new StagedFile(path));
  FILE* f = fopen(staged->temp_.c_str(), "wb");
  if (f == nullptr) return Error{path, "", std::string("cannot write: ") + strerror(errno)};
  bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
  int err = errno;
  if (fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) return Error{path, "", std::string("cannot write: ") + strerror(err)};  // the destructor removes it
  return staged;
}

Status StagedFile::Commit() {
  if (rename(temp_.c_str(), path_.c_str()) != 0) {
    return Error{path_, "", std::string("cannot rename the temporary file into place: ") + strerror(errno)};
  }
  committed_ = true;
  registered_.Release();
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, const std::string& text, bool overwrite) {
  std::error_code ec;
  if (!overwrite && std::filesystem::exists(path, ec)) {
    return Error{path, "", "output exists; remove it or pass --force to overwrite"};
  }
  auto staged = StagedFile::Write(path, text);
  if (!staged.ok()) return staged.error();
  return (*staged)->Commit();
}

Status WriteFilesAtomically(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> temps, done;
  auto undo = [&](const std::string& path, const std::string& why) -> Status {
    for (const std::string& t : temps) unlink(t.c_str());
    for (const std::string& d : done) unlink(d.c_str());
    return Error{path, "", "cannot write: " + why};
  };
  for (const auto& [path, text] : files) {
    std::string tmp = path + ".tmp." + std::to_string(getpid());
    FILE* f = fopen(tmp.c_str(), "wb");
    if (!f) return undo(path, strerror(errno));
    temps.push_back(tmp);
    bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = fclose(f) == 0 && ok;
    if (!ok) return undo(path, strerror(errno));
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (rename(temps[i].c_str(), files[i].first.c_str()) != 0) return undo(files[i].first, strerror(errno));
    done.push_back(files[i].first);
  }
  return Status::Ok();
}

}  // namespace graph_ascend::output
