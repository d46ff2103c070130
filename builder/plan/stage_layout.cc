#include "plan/stage_layout.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>

#include "base/mapped_file.h"
#include "plan/folder_plan.h"

namespace graph_ascend::job {

// How deep stage folders may nest above msprobe's layout: verl's step_<N>/<stage>.
constexpr int kStageDepth = 2;

namespace {

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Status CollectStages(const std::string& root, const std::string& rel, int depth, std::vector<std::string>* out) {
  std::string dir = rel.empty() ? root : root + "/" + rel;
  auto names = SortedEntries(dir);
  if (!names.ok()) return names.error();
  for (const std::string& n : *names) {
    std::string path = dir + "/" + n;
    if (!IsDirectory(path)) continue;  // notes or configs a framework leaves beside its stages
    std::string stage = rel.empty() ? n : rel + "/" + n;
    auto kind = ClassifyDir(path);
    if (!kind.ok()) return kind.error();
    if (*kind == DirKind::kFiles && !IsRegularFile(path + "/dump.json")) {
      // Notes or outputs of other tools beside the stages: not a dump, and not to be skipped silently.
      return Error{path, "", "no dump.json: every folder of a stages folder must hold an msprobe dump (dump files, "
                             "rank<N> or step<N> folders) or stage folders"};
    }
    if (*kind != DirKind::kStages) {
      out->push_back(stage);
    } else if (depth + 1 < kStageDepth) {
      GA_RETURN_IF_ERROR(CollectStages(root, stage, depth + 1, out));
    } else {
      return Error{path, "", "no msprobe dump (dump files, rank<N> or step<N> folders) within " +
                                 std::to_string(kStageDepth) + " folder levels of " + root +
                                 " (verl's layout is step_<N>/<stage>/step<N>/rank<N>)"};
    }
  }
  return Status::Ok();
}

// Digits compare as numbers, so that step_2 sorts before step_10.
bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    bool da = std::isdigit(static_cast<unsigned char>(a[i])), db = std::isdigit(static_cast<unsigned char>(b[j]));
    if (da && db) {
      size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      std::string na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      na.erase(0, std::min(na.find_first_not_of('0'), na.size()));
      nb.erase(0, std::min(nb.find_first_not_of('0'), nb.size()));
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

Result<std::vector<std::string>> StagePaths(const std::string& dir) {
  std::vector<std::string> out;
  GA_RETURN_IF_ERROR(CollectStages(dir, "", 0, &out));
  if (out.empty()) return Error{dir, "", "no stage folder holds an msprobe dump"};
  std::stable_sort(out.begin(), out.end(), NaturalLess);
  return out;
}

std::string StageLabel(const std::string& stage) {
  std::string label = stage;
  std::replace(label.begin(), label.end(), '/', '.');
  return label;
}

}  // namespace graph_ascend::job
