#include "file_cache.h"

#include <sys/stat.h>

#include <chrono>

namespace graph_ascend::service {
namespace {

bool ChangedOnDisk(const OpenGraph& f) {
  struct stat st;
  if (stat(f.abs_path().c_str(), &st) != 0) return true;
  int64_t mtime = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
  return static_cast<uint64_t>(st.st_size) != f.file_size() || mtime != f.mtime_ns();
}

}  // namespace

Result<std::shared_ptr<OpenGraph>> FileCache::Get(const std::string& abs_path, const std::string& relative,
                                                  const ProgressFn& progress, const DetailsFileFn& details_file,
                                                  const NodeDetailFn& node_detail,
                                                  std::shared_ptr<const SideIndexes> index) {
  std::shared_ptr<Opening> opening;
  bool opener = false;
  {
    std::unique_lock<std::mutex> l(mu_);
    auto it = files_.find(abs_path);
    if (it != files_.end()) {
      if (it->second.file->dirty() || !ChangedOnDisk(*it->second.file)) {
        lru_.splice(lru_.begin(), lru_, it->second.lru);
        return it->second.file;
      }
      lru_.erase(it->second.lru);
      files_.erase(it);
    }
    auto op = opening_.find(abs_path);
    if (op != opening_.end()) {
      opening = op->second;
    } else {
      opening = std::make_shared<Opening>();
      opening_[abs_path] = opening;
      opener = true;
    }
  }
  if (!opener) {
    // Another request opens this file: wait for it, relaying its progress.
    std::unique_lock<std::mutex> l(mu_);
    while (!opening->done) {
      cv_.wait_for(l, std::chrono::milliseconds(100));
      if (!opening->done && progress) {
        double f = opening->fraction;
        std::string stage = opening->stage;
        l.unlock();
        progress(f, stage);
        l.lock();
      }
    }
    return opening->result;
  }
  // Whatever happens, the opener publishes a result: waiters must never hang.
  Result<std::shared_ptr<OpenGraph>> result = Error{};
  try {
    result = OpenGraph::Open(
        abs_path, relative,
        [&](double f, const std::string& stage) {
          {
            std::lock_guard<std::mutex> l(mu_);
            opening->fraction = f;
            opening->stage = stage;
          }
          if (progress) progress(f, stage);
        },
        details_file, node_detail, std::move(index));
  } catch (const std::exception& e) {
    result = MakeError(relative, "", std::string("cannot open: ") + e.what());
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    opening->result = result;
    opening->done = true;
    opening_.erase(abs_path);
    if (result.ok()) {
      lru_.push_front(abs_path);
      files_[abs_path] = Entry{*result, (*result)->MemoryBytes(), lru_.begin()};
      EvictLocked(abs_path);
    }
  }
  cv_.notify_all();
  return result;
}

void FileCache::EvictLocked(const std::string& keep) {
  size_t total = 0;
  for (const auto& [path, e] : files_) total += e.bytes;
  for (auto it = lru_.end(); total > budget_ && it != lru_.begin();) {
    --it;
    auto f = files_.find(*it);
    if (*it == keep || f->second.file->dirty() || f->second.file.use_count() > 1) continue;
    total -= f->second.bytes;
    files_.erase(f);
    it = lru_.erase(it);
  }
}

size_t FileCache::open_files() const {
  std::lock_guard<std::mutex> l(mu_);
  return files_.size();
}

size_t FileCache::memory_bytes() const {
  std::lock_guard<std::mutex> l(mu_);
  size_t total = 0;
  for (const auto& [path, e] : files_) total += e.bytes;
  return total;
}

}  // namespace graph_ascend::service
