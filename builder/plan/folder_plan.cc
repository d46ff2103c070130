// Plans a run's folders (reference §2.4, §2.5, §9): which rank, step and
// stage folders of the two sides are paired into which output files.
#include "plan/folder_plan.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include "base/confine.h"
#include "base/mapped_file.h"
#include "plan/stage_layout.h"

namespace graph_ascend::job {

Result<std::vector<std::string>> SortedEntries(const std::string& dir) {
  GA_RETURN_IF_ERROR(CheckConfined(dir));
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return Error{dir, "", std::string("cannot read directory: ") + strerror(errno)};
  if (Status inside = CheckConfined(dir, dirfd(d)); !inside.ok()) {
    closedir(d);
    return inside.error();
  }
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

bool MatchesNumbered(const std::string& name, const std::string& prefix, bool allow_bare) {
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  std::string rest = name.substr(prefix.size());
  if (rest.empty()) return allow_bare;
  if (rest.size() > 1 && rest[0] == '0') return false;
  return std::all_of(rest.begin(), rest.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// The folder of a non-distributed process, named after its pid: "procN"
// (msprobe 26's PrecisionDebugger) or "pidN" (its AclGraphDumper, graph mode).
bool IsProcessFolder(const std::string& n) {
  return MatchesNumbered(n, "proc", false) || MatchesNumbered(n, "pid", false);
}

// A rank-level folder: "rank", "rankN", or a process folder.
bool IsRankFolder(const std::string& n) { return MatchesNumbered(n, "rank", true) || IsProcessFolder(n); }

// The rank (or step) folders of `dir`: every entry must be "<prefix>N" (§2.5).
Result<std::vector<std::string>> Numbered(const std::string& dir, const std::string& prefix) {
  auto names = SortedEntries(dir);
  if (!names.ok()) return names.error();
  for (const std::string& n : *names) {
    if (prefix == "rank" ? !IsRankFolder(n) : !MatchesNumbered(n, prefix, false)) {
      return Error{dir + "/" + n, "", "unexpected entry: every entry of " + dir + " must be a folder named " + prefix +
                                          "<N> (msprobe's dump layout)"};
    }
    if (!IsDirectory(dir + "/" + n)) return Error{dir + "/" + n, "", "expected a directory"};
  }
  return names;
}

int RankNumber(const std::string& folder) {
  if (IsProcessFolder(folder)) return 0;  // one process per run
  std::string digits = folder.substr(4);
  return digits.empty() ? 0 : std::atoi(digits.c_str());
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

Status SameNames(const std::vector<std::string>& a, const std::vector<std::string>& b, const std::string& what,
                 const CompareConfig& config) {
  if (a == b) return Status::Ok();
  return Error{config.path, "", "the npu and bench runs have different " + what + " folders: npu has [" + Join(a) +
                                    "], bench has [" + Join(b) + "]"};
}

// The rank (or step) folders of `dir` under the config's pairing rule. Under
// kIntersect (msprobe 26) other entries are skipped, and a dir without
// rank folders must hold exactly one proc<pid> folder.
Result<std::vector<std::string>> Folders(const std::string& dir, const std::string& prefix,
                                         const CompareConfig& config) {
  if (config.pairing == FolderPairing::kSame) return Numbered(dir, prefix);
  auto names = SortedEntries(dir);
  if (!names.ok()) return names.error();
  std::vector<std::string> out, procs;
  for (const std::string& n : *names) {
    if (!IsDirectory(dir + "/" + n)) continue;
    if (MatchesNumbered(n, prefix, prefix == "rank")) out.push_back(n);
    if (prefix == "rank" && IsProcessFolder(n)) procs.push_back(n);
  }
  if (out.empty() && procs.size() == 1) return procs;
  if (out.empty()) {
    return Error{dir, "", procs.empty() ? "no " + prefix + "<N> folder" + (prefix == "rank" ? " and no proc<pid> folder" : "")
                                       : "no rank<N> folder but " + std::to_string(procs.size()) +
                                             " proc<pid> folders (" + Join(procs) + "): expected exactly one"};
  }
  return out;
}

// The folders of the npu side `a` paired with those of the bench side `b`:
// the same under kSame, their intersection (in number order) under kIntersect.
Result<std::vector<std::string>> Pair(const std::vector<std::string>& a, const std::vector<std::string>& b,
                                      const std::string& what, const CompareConfig& config) {
  if (config.pairing == FolderPairing::kSame) {
    GA_RETURN_IF_ERROR(SameNames(a, b, what, config));
    return a;
  }
  std::vector<std::string> common;
  std::set<std::string> in_b(b.begin(), b.end());
  for (const std::string& n : a) {
    if (in_b.count(n)) common.push_back(n);
  }
  if (common.empty()) {
    return Error{config.path, "", "the npu and bench runs have no " + what + " folder in common: npu has [" + Join(a) +
                                      "], bench has [" + Join(b) + "]"};
  }
  std::stable_sort(common.begin(), common.end(),
                   [](const std::string& x, const std::string& y) { return RankNumber(x) < RankNumber(y); });
  return common;
}

// The step folders of a steps layout, paired between the two sides.
Result<std::vector<std::string>> StepNames(const CompareConfig& config) {
  auto ns = Folders(config.npu_path, "step", config);
  if (!ns.ok()) return ns.error();
  if (config.bench_path.empty()) return ns;
  auto bs = Folders(config.bench_path, "step", config);
  if (!bs.ok()) return bs.error();
  return Pair(*ns, *bs, "step", config);
}

}  // namespace

Result<DirKind> ClassifyDir(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) return Error{dir, "", std::string("cannot open: ") + strerror(errno)};
  if (!S_ISDIR(st.st_mode)) return Error{dir, "", "expected a dump directory, found a file"};
  auto names = SortedEntries(dir);
  if (!names.ok()) return names.error();
  if (names->empty()) return Error{dir, "", "the directory is empty"};
  bool all_files = true;
  std::vector<std::string> dirs;
  for (const std::string& n : *names) {
    if (n == "dump_tensor_data") return DirKind::kFiles;
    if (IsDirectory(dir + "/" + n)) {
      all_files = false;
      dirs.push_back(n);
    }
  }
  if (all_files) return DirKind::kFiles;
  if (*names == std::vector<std::string>{"rank"}) return DirKind::kRanks;
  auto all = [&](const char* prefix) {
    return std::all_of(dirs.begin(), dirs.end(), [&](const std::string& n) { return MatchesNumbered(n, prefix, false); });
  };
  if (std::all_of(dirs.begin(), dirs.end(), IsRankFolder)) return DirKind::kRanks;
  if (all("step")) return DirKind::kSteps;
  bool any_msprobe = std::any_of(dirs.begin(), dirs.end(), [](const std::string& n) {
    return IsRankFolder(n) || MatchesNumbered(n, "step", false);
  });
  // msprobe's own files beside the folders: a damaged dump folder, not stages.
  bool dump_files = std::any_of(names->begin(), names->end(), [](const std::string& n) {
    return n == "dump.json" || n == "construct.json" || n == "stack.json";
  });
  if (!any_msprobe && !dump_files) return DirKind::kStages;
  return Error{dir, "", "the folder layout is not msprobe's: expected dump files, rank<N> folders, step<N> folders "
                        "or stage folders (verl's step_<N>/<stage>), not a mix of them"};
}

Result<std::vector<std::vector<PairJob>>> PlanJobs(const CompareConfig& config, const std::string& ts) {
  bool compare = !config.bench_path.empty();
  auto npu_kind = ClassifyDir(config.npu_path);
  if (!npu_kind.ok()) return npu_kind.error();
  DirKind bench_kind = *npu_kind;
  if (compare) {
    auto k = ClassifyDir(config.bench_path);
    if (!k.ok()) return k.error();
    bench_kind = *k;
    if (bench_kind != *npu_kind) {
      return Error{config.path, "", "the directory structures of npu_path and bench_path are inconsistent (one holds "
                                    "dump files, rank folders or step folders, the other does not)"};
    }
  }
  std::string prefix = compare ? "compare" : "build";
  std::vector<std::vector<PairJob>> plan;
  auto ranks_of = [&](const std::string& npu, const std::string& bench,
                      const std::string& step) -> Result<std::vector<PairJob>> {
    auto nr = Folders(npu, "rank", config);
    if (!nr.ok()) return nr.error();
    std::vector<std::string> ranks = *nr;
    std::vector<std::string> bench_ranks = ranks;
    if (compare) {
      auto br = Folders(bench, "rank", config);
      if (!br.ok()) return br.error();
      bench_ranks = *br;
      // Two single-process runs pair their one folder whatever its pid
      // (msprobe names it proc<pid>); differing rank numbers still differ.
      bool single = ranks.size() == 1 && br->size() == 1 &&
                    (IsProcessFolder(ranks[0]) || IsProcessFolder((*br)[0]));
      if (!single) {
        auto common = Pair(ranks, *br, step.empty() ? "rank" : step + " rank", config);
        if (!common.ok()) return common.error();
        ranks = bench_ranks = *common;
      }
    }
    std::sort(ranks.begin(), ranks.end(), [](const std::string& a, const std::string& b) {
      return RankNumber(a) != RankNumber(b) ? RankNumber(a) < RankNumber(b) : a < b;
    });
    std::vector<PairJob> jobs;
    for (const std::string& rank : ranks) {
      PairJob j;
      j.npu_dir = npu + "/" + rank;
      if (compare) j.bench_dir = bench + "/" + (ranks.size() == 1 ? bench_ranks[0] : rank);
      j.step = step;
      j.rank = rank;
      j.rank_number = RankNumber(rank);
      j.output_name = prefix + "_" + (step.empty() ? "" : step + "_") + rank + "_" + ts + ".vis";
      jobs.push_back(std::move(j));
    }
    return jobs;
  };
  switch (*npu_kind) {
    case DirKind::kFiles: {
      PairJob j;
      j.npu_dir = config.npu_path;
      j.bench_dir = config.bench_path;
      j.output_name = prefix + "_" + ts + ".vis";
      plan.push_back({j});
      break;
    }
    case DirKind::kRanks: {
      auto jobs = ranks_of(config.npu_path, config.bench_path, "");
      if (!jobs.ok()) return jobs.error();
      plan.push_back(std::move(*jobs));
      break;
    }
    case DirKind::kStages: {
      auto ns = StagePaths(config.npu_path);
      if (!ns.ok()) return ns.error();
      std::vector<std::string> stages = *ns;
      if (compare) {
        auto bs = StagePaths(config.bench_path);
        if (!bs.ok()) return bs.error();
        std::set<std::string> in_bench(bs->begin(), bs->end());
        stages.clear();
        for (const std::string& s : *ns) {
          if (in_bench.count(s)) stages.push_back(s);
        }
        if (stages.empty()) {
          return Error{config.path, "", "the npu and bench runs have no stage folder in common: npu has [" + Join(*ns) +
                                            "], bench has [" + Join(*bs) + "]"};
        }
      }
      std::set<std::string> names;
      for (const std::string& stage : stages) {
        CompareConfig inner = config;
        inner.npu_path = config.npu_path + "/" + stage;
        if (compare) inner.bench_path = config.bench_path + "/" + stage;
        auto sub = PlanJobs(inner, ts);
        if (!sub.ok()) return sub.error();
        for (std::vector<PairJob>& group : *sub) {
          for (PairJob& j : group) {
            j.stage = stage;
            j.output_name = j.output_name.substr(0, j.output_name.size() - 4) + "_" + StageLabel(stage) + ".vis";
            // '/' and '.' both read '.': two stages that differ only there would write one file.
            if (!names.insert(j.output_name).second) {
              return Error{config.npu_path + "/" + stage, "", "two stage folders give the same output name " +
                                                                 j.output_name + " ('/' is written '.')"};
            }
          }
          plan.push_back(std::move(group));
        }
      }
      break;
    }
    case DirKind::kSteps: {
      auto ns = StepNames(config);
      if (!ns.ok()) return ns.error();
      for (const std::string& step : *ns) {
        auto jobs = ranks_of(config.npu_path + "/" + step, compare ? config.bench_path + "/" + step : "", step);
        if (!jobs.ok()) return jobs.error();
        plan.push_back(std::move(*jobs));
      }
      break;
    }
  }
  return plan;
}

std::string MergedOutputName(bool compare, const std::string& step, size_t index, const std::string& timestamp) {
  return std::string(compare ? "compare" : "build") + (step.empty() ? "" : "_" + step) + "_merged" +
         std::to_string(index) + "_" + timestamp + ".vis";
}

Result<std::vector<MergeStepJob>> PlanMergeJobs(const CompareConfig& config) {
  bool compare = !config.bench_path.empty();
  auto npu_kind = ClassifyDir(config.npu_path);
  if (!npu_kind.ok()) return npu_kind.error();
  if (compare) {
    auto bench_kind = ClassifyDir(config.bench_path);
    if (!bench_kind.ok()) return bench_kind.error();
    if (*bench_kind != *npu_kind) {
      return Error{config.path, "", "the directory structures of npu_path and bench_path are inconsistent (one holds "
                                    "dump files, rank folders or step folders, the other does not)"};
    }
  }
  if (*npu_kind == DirKind::kStages) {
    return Error{config.path, "key npu_path",
                 config.npu_path + " holds stage folders (verl's step_<N>/<stage>); parallel merge merges the ranks "
                                   "of one stage: point npu_path (and bench_path) at that stage's folder"};
  }
  if (*npu_kind == DirKind::kFiles) {
    return Error{config.path, "key npu_path",
                 config.npu_path + " holds the dump files of one rank, but parallel merge merges the ranks of a "
                                   "run: point npu_path (and bench_path) at the folder of the rank<N> folders"};
  }
  auto ranks_of = [&](const std::string& dir) -> Result<std::vector<RankFolder>> {
    auto names = Folders(dir, "rank", config);
    if (!names.ok()) return names.error();
    std::vector<RankFolder> out;
    for (const std::string& n : *names) {
      if (!MatchesNumbered(n, "rank", true)) {
        return Error{dir + "/" + n, "", "parallel merge needs rank<N> folders (the rank numbers form the "
                                        "parallel groups), not a per-process folder"};
      }
      out.push_back(RankFolder{dir + "/" + n, RankNumber(n)});
    }
    std::stable_sort(out.begin(), out.end(), [](const RankFolder& a, const RankFolder& b) { return a.rank < b.rank; });
    return out;
  };
  auto step_job = [&](const std::string& step, const std::string& npu, const std::string& bench)
      -> Result<MergeStepJob> {
    MergeStepJob job;
    job.step = step;
    job.npu_dir = npu;
    job.bench_dir = bench;
    auto n = ranks_of(npu);
    if (!n.ok()) return n.error();
    job.npu_ranks = std::move(*n);
    if (compare) {
      auto b = ranks_of(bench);
      if (!b.ok()) return b.error();
      job.bench_ranks = std::move(*b);
    }
    return job;
  };
  std::vector<MergeStepJob> plan;
  if (*npu_kind == DirKind::kRanks) {
    auto job = step_job("", config.npu_path, config.bench_path);
    if (!job.ok()) return job.error();
    plan.push_back(std::move(*job));
    return plan;
  }
  auto ns = StepNames(config);
  if (!ns.ok()) return ns.error();
  for (const std::string& step : *ns) {
    auto job = step_job(step, config.npu_path + "/" + step, compare ? config.bench_path + "/" + step : "");
    if (!job.ok()) return job.error();
    plan.push_back(std::move(*job));
  }
  return plan;
}

}  // namespace graph_ascend::job
