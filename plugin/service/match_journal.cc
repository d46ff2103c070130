#include "match_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "config_files.h"
#include "open_graph.h"

namespace graph_ascend::service {
namespace {

// A journal holds at most this much (a subtree match of 10^6 nodes is ~200 MB).
constexpr size_t kMaxJournalBytes = size_t{1} << 30;

Error Failed(const std::string& path, const std::string& what) {
  return MakeError(path, "", what + ": " + strerror(errno));
}

Status WriteAll(int fd, const std::string& text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t w = write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return Failed(path, "cannot append to the edit journal");
    done += static_cast<size_t>(w);
  }
  return Status::Ok();
}

std::string Dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

std::string Header(const std::string& relative, const std::string& base) {
  return Dump({{"journal", 1}, {"file", relative}, {"base", base}}) + "\n";
}

std::string EditLine(bool match, const std::string& npu, const std::string& bench) {
  return Dump({{"op", match ? "match" : "unmatch"}, {"npu", npu}, {"bench", bench}}) + "\n";
}

}  // namespace

std::string JournalPath(const std::string& dir, const std::string& logdir_root, const std::string& relative) {
  const std::string hash = KeyHash(logdir_root + std::string(1, '\0') + relative);
  std::string name = relative.substr(relative.rfind('/') + 1);
  for (char& c : name) {
    if (c == '#') c = '_';
  }
  return dir + "/" + hash + "-" + name + ".journal";
}

Status AppendToJournal(const std::string& path, const std::string& relative, const std::string& base, bool match,
                       const std::vector<PairOutcome>& outcomes, size_t* size) {
  std::string lines;
  for (const PairOutcome& o : outcomes) {
    if (o.ok) lines += EditLine(match, o.npu, o.bench);
  }
  if (lines.empty()) return Status::Ok();
  const std::string dir = path.substr(0, path.rfind('/'));
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return Failed(dir, "cannot create the edit journal folder");
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Failed(path, "cannot open the edit journal");
  struct stat st;
  const bool known = fstat(fd, &st) == 0;
  if (known && st.st_size == 0) lines = Header(relative, base) + lines;
  Status s = WriteAll(fd, lines, path);
  if (s.ok() && fsync(fd) != 0) s = Failed(path, "cannot flush the edit journal");
  close(fd);
  if (s.ok() && known && size != nullptr) *size = static_cast<size_t>(st.st_size) + lines.size();
  return s;
}

std::vector<PairEdit> CurrentEdits(const OpenGraph& f) {
  std::vector<PairEdit> edits;
  edits.reserve(f.removed_automatic().size() + f.manual_matches().size());
  // Unmatches first: a manual match may take a node whose automatic pair was removed.
  for (const auto& [npu, bench] : f.removed_automatic()) edits.push_back({false, npu, bench});
  for (const auto& [npu, bench] : f.manual_matches()) edits.push_back({true, npu, bench});
  return edits;
}

Result<size_t> CompactJournal(const std::string& path, const std::string& relative,
                              const std::vector<PairEdit>& edits) {
  std::string text = Header(relative, "");
  for (const PairEdit& e : edits) text += EditLine(e.match, e.npu, e.bench);
  GA_RETURN_IF_ERROR(WriteAtomically(path, path, text));
  return text.size();
}

Result<Journal> RecoverJournal(const std::string& path) {
  Journal journal;
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return journal;
    return Failed(path, "cannot read the edit journal");
  }
  if (!S_ISREG(st.st_mode)) return MakeError(path, "", "the edit journal is not a regular file");
  auto read = ReadFileToString(path, kMaxJournalBytes);
  if (!read.ok()) return read.error();
  const std::string& text = *read;
  size_t start = 0, line = 0;
  while (start < text.size()) {
    ++line;
    size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      // The server died mid-append: that edit never answered; cut it off so
      // that the next append starts on a line of its own.
      journal.warnings.push_back(path + ": line " + std::to_string(line) + ": torn last line (" +
                                 std::to_string(text.size() - start) + " bytes) ignored");
      if (truncate(path.c_str(), static_cast<off_t>(start)) != 0) {
        return Failed(path, "cannot cut the torn last line of the edit journal");
      }
      break;
    }
    nlohmann::json j = nlohmann::json::parse(text.begin() + static_cast<std::ptrdiff_t>(start),
                                             text.begin() + static_cast<std::ptrdiff_t>(end), nullptr, false);
    start = end + 1;
    auto field = [&j](const char* key) {
      auto it = j.find(key);
      return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    if (j.is_object() && j.contains("journal")) {
      journal.base = field("base");
      continue;
    }
    std::string op = j.is_object() ? field("op") : "";
    if ((op != "match" && op != "unmatch") || field("npu").empty() || field("bench").empty()) {
      journal.warnings.push_back(path + ": line " + std::to_string(line) + ": not an edit; skipped");
      continue;
    }
    journal.entries.push_back({op == "match", field("npu"), field("bench")});
  }
  return journal;
}

Status RemoveJournal(const std::string& path) {
  if (unlink(path.c_str()) != 0 && errno != ENOENT) return Failed(path, "cannot remove the edit journal");
  return Status::Ok();
}

}  // namespace graph_ascend::service
