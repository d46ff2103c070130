#include "code_mapping/file_set.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "base/temp_files.h"

namespace graph_ascend::code_mapping {

namespace fs = std::filesystem;

namespace {

Status WriteOne(const std::string& path, const std::string& text) {
  FILE* f = fopen(path.c_str(), "wb");
  if (f == nullptr) return MakeError(path, "", std::string("cannot create: ") + strerror(errno));
  bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = fflush(f) == 0 && ok;
  ok = fclose(f) == 0 && ok;
  if (!ok) return MakeError(path, "", "cannot write (disk full?)");
  return Status::Ok();
}

// A second name for the file at `path`: a hard link, or a copy where the
// file system has none.
bool KeepOriginal(const std::string& path, const std::string& backup) {
  if (link(path.c_str(), backup.c_str()) == 0) return true;
  std::error_code ec;
  return fs::copy_file(path, backup, fs::copy_options::overwrite_existing, ec) && !ec;
}

}  // namespace

Status WriteFileSet(const std::vector<OutputFile>& files, RenameFn rename_fn) {
  if (rename_fn == nullptr) rename_fn = &::rename;
  const std::string pid = std::to_string(getpid());
  struct Pending {
    std::string temp, backup;  // backup: "" when the path held no file
    std::unique_ptr<TemporaryFile> registered;
    bool temp_exists = false, renamed = false;
  };
  std::vector<Pending> pending(files.size());
  // Puts back the first `renamed_count` paths, then removes the temporaries and backups left.
  auto undo = [&](size_t renamed_count) {
    for (size_t i = 0; i < renamed_count; ++i) {
      if (!pending[i].backup.empty()) {
        rename_fn(pending[i].backup.c_str(), files[i].path.c_str());
        pending[i].backup.clear();
      } else {
        unlink(files[i].path.c_str());
      }
    }
    for (Pending& p : pending) {
      if (p.temp_exists && !p.renamed) unlink(p.temp.c_str());
      if (!p.backup.empty()) unlink(p.backup.c_str());
    }
  };

  for (size_t i = 0; i < files.size(); ++i) {
    Pending& p = pending[i];
    p.temp = files[i].path + ".tmp-" + pid;
    p.registered = std::make_unique<TemporaryFile>(p.temp);
    p.temp_exists = true;
    Status s = WriteOne(p.temp, files[i].text);
    if (!s.ok()) {
      undo(0);
      return s;
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    struct stat st;
    if (lstat(files[i].path.c_str(), &st) != 0) continue;
    if (!S_ISREG(st.st_mode)) {
      undo(0);
      return MakeError(files[i].path, "", "not a regular file: left as it is, nothing written");
    }
    std::string backup = files[i].path + ".bak-" + pid;
    if (!KeepOriginal(files[i].path, backup)) {
      undo(0);
      return MakeError(files[i].path, "", "cannot keep the original while replacing it: nothing written");
    }
    pending[i].backup = backup;
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (rename_fn(pending[i].temp.c_str(), files[i].path.c_str()) != 0) {
      std::string why = strerror(errno);
      undo(i);
      return MakeError(
          files[i].path, "",
          "cannot rename the temporary file into place (" + why + "): every output was put back as it was");
    }
    pending[i].renamed = true;
    pending[i].registered->Release();
  }
  for (Pending& p : pending) {
    if (!p.backup.empty()) unlink(p.backup.c_str());
  }
  return Status::Ok();
}

}  // namespace graph_ascend::code_mapping
