// graph-ascend check: a CI gate over the divergence verdict of compare files
// (issue 32; README "A CI gate").
#include <dirent.h>
#include <fnmatch.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "base/mapped_file.h"
#include "formats/foreign_file.h"
#include "verdict/verdict.h"

namespace graph_ascend::cli {
namespace {

const char* kCheckUsage =
    "usage: graph-ascend check FILE.vis|DIR... [--allow NAME]... [--max-index X]\n"
    "\n"
    "A gate for CI: exit 0 when no compare in FILE... (a .vis, or a folder of them) diverges beyond\n"
    "noise, 1 when one does (one line for each: its first divergence), 2 on bad input.\n"
    "\n"
    "  --allow NAME      accept a divergence at the NPU node NAME (* and ? match any characters);\n"
    "                    repeatable, for differences a project knows and accepts\n"
    "  --max-index X     accept a divergence whose precision index is at most X (an unmatched node\n"
    "                    has none and is never accepted this way)\n"
    "  -h, --help        this help\n";

struct Gate {
  std::vector<std::string> allow;
  double max_index = NAN;  // NaN: no limit

  bool Accepts(const verdict::Entry& e) const {
    for (const std::string& pattern : allow) {
      if (fnmatch(pattern.c_str(), e.name.c_str(), 0) == 0) return true;
    }
    return !std::isnan(max_index) && !e.unmatched && !std::isnan(e.index) && e.index <= max_index;
  }
};


// The .vis files directly in `dir`, sorted; an Error when it has none.
Result<std::vector<std::string>> VisFilesIn(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return Error{dir, "", std::string("cannot open folder: ") + strerror(errno)};
  std::vector<std::string> files;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".vis") == 0) files.push_back(dir + "/" + name);
  }
  closedir(d);
  if (files.empty()) return Error{dir, "", "holds no .vis file to check"};
  std::sort(files.begin(), files.end());
  return files;
}

struct Finding {
  int status = 0;  // 0: passes, 1: diverges
  std::string line;
};

// What `path` says, or the Error of a file that cannot be checked.
Result<Finding> CheckFile(const std::string& path, const Gate& gate) {
  auto format = formats::DetectFormat(path);
  if (!format.ok()) return format.error();
  if (*format != formats::FileFormat::kVis) {
    return Error{path, "",
                 std::string("is ") + formats::FormatName(*format) +
                     ", which holds no divergence ranking: build the compare with graph-ascend graph (or "
                     "graph_visualize) and check its .vis"};
  }
  auto reader = vis::VisReader::Open(path);
  if (!reader.ok()) return reader.error();
  const vis::FileMeta& meta = (*reader)->meta();
  if (meta.kind() != vis::GRAPH_COMPARE) return Error{path, "", "is a build of one run, not a compare: nothing to check"};
  auto npu = vis::LoadSideIndex(**reader, vis::SIDE_NPU);
  if (!npu.ok()) return npu.error();
  auto v = verdict::ReadVerdict(**reader, *npu, path);
  if (!v.ok()) return v.error();
  if (!v->ranked) {
    return Error{path, "",
                 "holds no divergence ranking (written before graph-ascend ranked divergences): build it again with "
                 "graph-ascend graph"};
  }
  size_t accepted = 0;
  for (const verdict::Entry& e : v->entries) {
    if (gate.Accepts(e)) {
      ++accepted;
      continue;
    }
    return Finding{1, path + ": diverges at " + verdict::OneLine(*v, e)};
  }
  // One line of a CI log: the margin an op must pass is left to info.
  return Finding{0, path + ": " + verdict::QuietSentence(*v, {.threshold_digits = 0}, accepted)};
}

}  // namespace

int CheckCommand(const std::vector<std::string>& args) {
  Gate gate;
  std::vector<std::string> inputs;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      fputs(kCheckUsage, stdout);
      return 0;
    }
    if (a == "--allow" || a == "--max-index") {
      if (i + 1 == args.size()) return Fail(a + " needs a value", kCheckUsage);
      const std::string& value = args[++i];
      if (a == "--allow") {
        gate.allow.push_back(value);
        continue;
      }
      double x = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
      if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(x) || x < 0) {
        return Fail("--max-index '" + value + "': expected a precision index (a number from 0)", kCheckUsage);
      }
      gate.max_index = x;
    } else if (!a.empty() && a[0] == '-') {
      return Fail("unknown option '" + a + "'", kCheckUsage);
    } else {
      inputs.push_back(a);
    }
  }
  if (inputs.empty()) return Fail("check needs a .vis file or a folder of them", kCheckUsage);
  // Every input is read before the verdict: bad input is exit 2 even when
  // another file diverges.
  std::vector<std::string> files;
  for (const std::string& in : inputs) {
    if (!IsDirectory(in)) {
      files.push_back(in);
      continue;
    }
    auto in_dir = VisFilesIn(in);
    if (!in_dir.ok()) return Fail(in_dir.error().ToString());
    files.insert(files.end(), in_dir->begin(), in_dir->end());
  }
  std::vector<Finding> findings;
  for (const std::string& f : files) {
    auto r = CheckFile(f, gate);
    if (!r.ok()) return Fail(r.error().ToString());
    findings.push_back(std::move(*r));
  }
  int status = 0;
  for (const Finding& f : findings) {
    printf("%s\n", f.line.c_str());
    status = std::max(status, f.status);
  }
  return status;
}

}  // namespace graph_ascend::cli
