#include "plan/compare_config.h"

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
#include "json/json_reader.h"

namespace graph_ascend::job {
namespace {

using json::JsonReader;
using json::JsonType;

bool Exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}


std::string DirName(const std::string& p) {
  size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

std::string Resolve(const std::string& config_path, const std::string& p) {
  if (p.empty() || p[0] == '/') return p;
  std::string beside = DirName(config_path) + "/" + p;
  if (Exists(beside) || !Exists(p)) return beside;
  return p;
}

// One side of "parallel_merge"; `members` counts its keys (msprobe treats an
// empty section as absent).
Status ReadParallel(JsonReader* r, ParallelParams* out, const std::string& key, int* members) {
  GA_RETURN_IF_ERROR(r->EnterObject());
  std::string_view k;
  for (;;) {
    auto more = r->NextMember(&k);
    if (!more.ok()) return more.error();
    if (!*more) break;
    ++*members;
    std::string name(k);
    if (name == "order") {
      auto t = r->Peek();
      if (!t.ok()) return t.error();
      if (*t != JsonType::kString) return r->ErrorHere("key " + key + ".order: expected a string");
      auto s = r->ReadString();
      if (!s.ok()) return s.error();
      out->order.assign(*s);
      continue;
    }
    int* field = name == "rank_size" ? &out->rank_size
                 : name == "tp"      ? &out->tp
                 : name == "pp"      ? &out->pp
                 : name == "vpp"     ? &out->vpp
                                     : nullptr;
    if (field == nullptr) {
      GA_RETURN_IF_ERROR(r->Skip());
      continue;
    }
    auto t = r->Peek();
    if (!t.ok()) return t.error();
    if (*t != JsonType::kNumber) return r->ErrorHere("key " + key + "." + name + ": expected a positive integer");
    auto n = r->ReadNumber();
    if (!n.ok()) return n.error();
    if (!n->is_integer || n->integer <= 0 || n->integer > 1000000) {
      return r->ErrorHere("key " + key + "." + name + ": expected a positive integer");
    }
    *field = static_cast<int>(n->integer);
  }
  return Status::Ok();
}

}  // namespace

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

// A compare.json with "runs": checked and resolved; the reference as an index.
Result<CompareConfig> RunsConfig(CompareConfig c, bool has_npu, int64_t reference_index,
                                 const std::string& reference_path) {
  if (has_npu || !c.bench_path.empty()) {
    return Error{c.path, "key runs", "give either runs (and reference) or npu_path and bench_path, not both"};
  }
  if (c.runs.size() < 2) {
    return Error{c.path, "key runs", "needs at least two dump paths (" + std::to_string(c.runs.size()) + " given)"};
  }
  if (c.parallel_merge) return Error{c.path, "key runs", "cannot be combined with parallel_merge"};
  for (std::string& run : c.runs) run = Resolve(c.path, run);
  if (!reference_path.empty()) {
    std::string ref = Resolve(c.path, reference_path);
    auto it = std::find(c.runs.begin(), c.runs.end(), ref);
    if (it == c.runs.end()) return Error{c.path, "key reference", "\"" + reference_path + "\" is not one of runs"};
    c.reference = static_cast<int>(it - c.runs.begin());
  } else {
    if (reference_index < 0 || reference_index >= static_cast<int64_t>(c.runs.size())) {
      return Error{c.path, "key reference",
                   "expected the index of a run, 0 to " + std::to_string(c.runs.size() - 1) + ": got " +
                       std::to_string(reference_index)};
    }
    c.reference = static_cast<int>(reference_index);
  }
  for (size_t i = 0; i + 1 < c.runs.size(); ++i) {
    for (size_t j = i + 1; j < c.runs.size(); ++j) {
      if (c.runs[i] == c.runs[j]) {
        return Error{c.path, "key runs", "lists " + c.runs[i] + " twice (runs " + std::to_string(i) + " and " +
                                             std::to_string(j) + ")"};
      }
    }
  }
  return c;
}

}  // namespace

Result<CompareConfig> ReadCompareConfig(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return text.error();
  CompareConfig c;
  c.path = path;
  JsonReader r(*text, path);
  auto t = r.Peek();
  if (!t.ok()) return t.error();
  if (*t != JsonType::kObject) return r.ErrorHere("compare.json must be a JSON object with \"npu_path\"");
  GA_RETURN_IF_ERROR(r.EnterObject());
  std::string_view key;
  bool has_npu = false;
  bool has_reference = false;
  int64_t reference_index = 0;
  std::string reference_path;
  for (;;) {
    auto more = r.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) break;
    std::string k(key);
    auto vt = r.Peek();
    if (!vt.ok()) return vt.error();
    if (k == "npu_path" || k == "bench_path") {
      if (*vt == JsonType::kNull && k == "bench_path") {
        GA_RETURN_IF_ERROR(r.ReadNull());
        continue;
      }
      if (*vt != JsonType::kString) return r.ErrorHere("key " + k + ": expected a path string");
      auto s = r.ReadString();
      if (!s.ok()) return s.error();
      if (k == "npu_path") {
        c.npu_path = std::string(*s);
        has_npu = true;
      } else {
        c.bench_path = std::string(*s);
      }
    } else if (k == "runs") {
      if (*vt != JsonType::kArray) return r.ErrorHere("key runs: expected a list of dump paths");
      GA_RETURN_IF_ERROR(r.EnterArray());
      for (;;) {
        auto more_runs = r.NextElement();
        if (!more_runs.ok()) return more_runs.error();
        if (!*more_runs) break;
        auto et = r.Peek();
        if (!et.ok()) return et.error();
        if (*et != JsonType::kString) return r.ErrorHere("key runs: expected a path string");
        auto s = r.ReadString();
        if (!s.ok()) return s.error();
        if (s->empty()) return r.ErrorHere("key runs: an empty path");
        c.runs.emplace_back(*s);
      }
    } else if (k == "reference") {
      if (*vt == JsonType::kNumber) {
        auto n = r.ReadNumber();
        if (!n.ok()) return n.error();
        if (!n->is_integer) return r.ErrorHere("key reference: expected the index of a run (an integer)");
        reference_index = n->integer;
      } else if (*vt == JsonType::kString) {
        auto s = r.ReadString();
        if (!s.ok()) return s.error();
        reference_path = std::string(*s);
      } else {
        return r.ErrorHere("key reference: expected the index of a run in runs or one of its paths");
      }
      has_reference = true;
    } else if (k == "is_print_compare_log") {
      if (*vt != JsonType::kBool) return r.ErrorHere("key is_print_compare_log: expected true or false");
      auto b = r.ReadBool();
      if (!b.ok()) return b.error();
      c.is_print_compare_log = *b;
    } else if (k == "parallel_merge") {
      if (*vt == JsonType::kNull) {
        GA_RETURN_IF_ERROR(r.ReadNull());
        continue;
      }
      if (*vt != JsonType::kObject) return r.ErrorHere("key parallel_merge: expected an object with npu and bench");
      GA_RETURN_IF_ERROR(r.EnterObject());
      std::string_view side;
      for (;;) {
        auto m = r.NextMember(&side);
        if (!m.ok()) return m.error();
        if (!*m) break;
        std::string s(side);
        auto st = r.Peek();
        if (!st.ok()) return st.error();
        if ((s == "npu" || s == "bench") && *st == JsonType::kObject) {
          ParallelParams* p = s == "npu" ? &c.npu_parallel : &c.bench_parallel;
          p->file = path;
          p->side = s;
          int members = 0;
          GA_RETURN_IF_ERROR(ReadParallel(&r, p, "parallel_merge." + s, &members));
          if (s == "npu") c.parallel_merge = members > 0;
          if (s == "bench") c.has_bench_parallel = members > 0;
        } else if ((s == "npu" || s == "bench") && *st != JsonType::kNull) {
          return r.ErrorHere("key parallel_merge." + s + ": expected an object with rank_size, tp, pp (vpp, order)");
        } else {
          GA_RETURN_IF_ERROR(r.Skip());
        }
      }
    } else {
      GA_RETURN_IF_ERROR(r.Skip());
    }
  }
  GA_RETURN_IF_ERROR(r.ExpectEnd());
  if (!c.runs.empty() || has_reference) return RunsConfig(std::move(c), has_npu, reference_index, reference_path);
  if (!has_npu || c.npu_path.empty()) return Error{path, "key npu_path", "missing: compare.json must name the npu dump"};
  c.npu_path = Resolve(path, c.npu_path);
  if (!c.bench_path.empty()) c.bench_path = Resolve(path, c.bench_path);
  return c;
}

Result<CompareConfig> VisualizeConfig(const std::string& target, const std::string& golden) {
  CompareConfig c;
  c.path = target;
  c.npu_path = target;
  c.bench_path = golden;
  c.is_print_compare_log = false;
  c.pairing = FolderPairing::kIntersect;
  for (std::string* dir : {&c.npu_path, &c.bench_path}) {
    if (dir->empty()) continue;
    struct stat st;
    if (stat(dir->c_str(), &st) != 0) return Error{*dir, "", std::string("cannot open: ") + strerror(errno)};
    if (!S_ISDIR(st.st_mode)) return Error{*dir, "", "expected a dump directory, found a file"};
    // msprobe 26 records absolute dump paths, so a file opens from anywhere
    // (tensor data for manual matches); relative ones only from this folder.
    char* real = realpath(dir->c_str(), nullptr);
    if (real != nullptr) {
      *dir = real;
      free(real);
    }
  }
  return c;
}

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
