// Reads compare.json (reference §2.3): the two dumps, or more than two runs,
// and the options; the folders they hold are planned in plan/folder_plan.cc.
#include "plan/compare_config.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/mapped_file.h"
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

}  // namespace graph_ascend::job
