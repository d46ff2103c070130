#include "convert_inputs.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "base/strings.h"

namespace graph_ascend::service {
namespace {

constexpr int kMaxDepth = 8;
constexpr size_t kMaxFolders = 20000;

struct Entry {
  std::string name;
  bool dir = false;
};

std::vector<Entry> Read(const std::string& abs) {
  std::vector<Entry> out;
  DIR* d = opendir(abs.c_str());
  if (d == nullptr) return out;
  while (struct dirent* ent = readdir(d)) {
    std::string name = ent->d_name;
    if (name == "." || name == "..") continue;
    struct stat lst;
    if (lstat((abs + "/" + name).c_str(), &lst) != 0) continue;
    if (S_ISDIR(lst.st_mode) || S_ISREG(lst.st_mode)) out.push_back({name, S_ISDIR(lst.st_mode)});
  }
  closedir(d);
  return out;
}

bool Numbered(const std::string& name, const char* prefix) {
  size_t n = std::char_traits<char>::length(prefix);
  if (name.compare(0, n, prefix) != 0) return false;
  if (name.size() == n) return std::string(prefix) == "rank";  // msprobe's single "rank" folder
  return std::all_of(name.begin() + n, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// pid<N>: msprobe's AclGraphDumper (graph mode) names a non-distributed process so.
bool IsRankName(const std::string& n) { return Numbered(n, "rank") || Numbered(n, "proc") || Numbered(n, "pid"); }

bool HasDump(const std::string& abs) {
  struct stat st;
  return lstat((abs + "/dump.json").c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Rank folders of `abs` holding a dump.json; -1 when it has other folders.
int RankFolders(const std::string& abs, const std::vector<Entry>& entries) {
  int ranks = 0;
  for (const Entry& e : entries) {
    if (!e.dir) continue;
    if (!IsRankName(e.name) || !HasDump(abs + "/" + e.name)) return -1;
    ++ranks;
  }
  return ranks;
}

// msprobe's layout: dump files, rank folders, or step folders of rank folders.
bool IsDumpLayout(const std::string& abs) {
  if (HasDump(abs)) return true;
  std::vector<Entry> entries = Read(abs);
  if (RankFolders(abs, entries) > 0) return true;
  bool steps = false;
  for (const Entry& e : entries) {
    if (!e.dir) continue;
    if (!Numbered(e.name, "step") || RankFolders(abs + "/" + e.name, Read(abs + "/" + e.name)) <= 0) return false;
    steps = true;
  }
  return steps;
}

// The stage folders under `abs` (as the builder's plan/stage_layout.h finds
// them: folders not named as msprobe's, each holding its layout, two levels at
// most, as verl's step_<N>/<stage>); 0 when some folder is neither.
uint32_t StageFolders(const std::string& abs, int depth) {
  uint32_t stages = 0;
  for (const Entry& e : Read(abs)) {
    if (!e.dir) continue;
    if (IsRankName(e.name) || Numbered(e.name, "step") || e.name == "dump_tensor_data") return 0;
    std::string child = abs + "/" + e.name;
    if (IsDumpLayout(child)) {
      ++stages;
      continue;
    }
    uint32_t inner = depth + 1 < 2 ? StageFolders(child, depth + 1) : 0;
    if (inner == 0) return 0;
    stages += inner;
  }
  return stages;
}

// The first dump.json under `abs`, following the first folder in natural order.
std::string FirstDump(std::string abs) {
  for (int depth = 0; depth < 6 && !HasDump(abs); ++depth) {
    std::string first;
    for (const Entry& e : Read(abs)) {
      if (e.dir && (first.empty() || NaturalLess(e.name, first))) first = e.name;
    }
    if (first.empty()) break;
    abs += "/" + first;
  }
  return abs + "/dump.json";
}

// dump.json starts with {"task": "...", ...}: its first kilobytes say the task.
// Read as the builder reads: a regular file only, never a blocking open.
std::string TaskOf(const std::string& dump_json) {
  auto head = ReadFileHead(dump_json, 4096);
  if (!head.ok()) return "";
  static const std::regex kTask("\"task\"\\s*:\\s*\"([A-Za-z_]{1,32})\"");
  std::smatch m;
  if (std::regex_search(*head, m, kTask)) return m[1].str();
  return "";
}

}  // namespace

void ListConvertInputs(const LogDir& dir, ConvertInputsReply* reply) {
  const std::string& root = dir.root();
  struct Pending {
    std::string rel;
    int depth;
  };
  std::vector<Pending> pending = {{"", 0}};
  std::vector<ConvertDumpDir> dumps;
  std::vector<std::string> yaml;
  size_t visited = 0;
  while (!pending.empty() && visited < kMaxFolders) {
    Pending p = std::move(pending.back());
    pending.pop_back();
    ++visited;
    std::string abs = p.rel.empty() ? root : root + "/" + p.rel;
    std::vector<Entry> entries = Read(abs);
    auto add = [&](const std::string& layout, uint32_t steps, uint32_t ranks, const std::string& first_dump) {
      ConvertDumpDir d;
      d.set_path(p.rel.empty() ? "." : p.rel);
      d.set_layout(layout);
      d.set_steps(steps);
      d.set_ranks(ranks);
      d.set_task(TaskOf(first_dump));
      dumps.push_back(std::move(d));
    };
    auto first_rank = [&](const std::string& folder) {
      std::vector<std::string> names;
      for (const Entry& e : Read(folder)) {
        if (e.dir) names.push_back(e.name);
      }
      std::sort(names.begin(), names.end(), NaturalLess);
      return names.empty() ? folder : folder + "/" + names[0];
    };
    if (HasDump(abs)) {
      add("files", 0, 1, abs + "/dump.json");
    } else {
      int ranks = RankFolders(abs, entries);
      if (ranks > 0) {
        add("ranks", 0, static_cast<uint32_t>(ranks), first_rank(abs) + "/dump.json");
      } else {
        uint32_t steps = 0;
        int first_ranks = -1;
        std::string first_step;
        bool all_steps = true;
        for (const Entry& e : entries) {
          if (!e.dir) continue;
          int r = Numbered(e.name, "step") ? RankFolders(abs + "/" + e.name, Read(abs + "/" + e.name)) : -1;
          if (r <= 0) {
            all_steps = false;
            break;
          }
          ++steps;
          if (first_step.empty() || NaturalLess(e.name, first_step)) {
            first_step = e.name;
            first_ranks = r;
          }
        }
        if (all_steps && steps > 0) {
          add("steps", steps, static_cast<uint32_t>(first_ranks), first_rank(abs + "/" + first_step) + "/dump.json");
        } else if (uint32_t stages = StageFolders(abs, 0); stages > 0) {
          add("stages", 0, 0, FirstDump(abs));
          dumps.back().set_stages(stages);
        }
      }
    }
    for (const Entry& e : entries) {
      std::string child = p.rel.empty() ? e.name : p.rel + "/" + e.name;
      if (e.dir) {
        if (p.depth + 1 <= kMaxDepth && e.name.rfind(kPrivateFolderPrefix, 0) != 0 && e.name != "dump_tensor_data") {
          pending.push_back({child, p.depth + 1});
        }
      } else if (EndsWith(e.name, ".yaml") || EndsWith(e.name, ".yml")) {
        yaml.push_back(child);
      }
    }
  }
  std::sort(dumps.begin(), dumps.end(),
            [](const ConvertDumpDir& a, const ConvertDumpDir& b) { return NaturalLess(a.path(), b.path()); });
  std::sort(yaml.begin(), yaml.end(), NaturalLess);
  for (ConvertDumpDir& d : dumps) *reply->add_dumps() = std::move(d);
  for (std::string& y : yaml) reply->add_mapping_files(std::move(y));
}

}  // namespace graph_ascend::service
