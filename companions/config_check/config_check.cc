#include "config_check/config_check.h"

#include <algorithm>
#include <map>
#include <set>

#include "config_check/checks.h"
#include "torch_save/zip_archive.h"

namespace graph_ascend::config_check {

bool StartsWith(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

bool EndsWith(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

Result<Json> ParseJson(const Pack& pack, const std::string& member) {
  auto it = pack.files.find(member);
  if (it == pack.files.end()) return Error{pack.path, member, "missing pack member"};
  try {
    return Json::parse(it->second);
  } catch (const Json::parse_error& e) {
    return Error{pack.path, member + " byte " + std::to_string(e.byte), "bad JSON"};
  }
}

namespace {

bool HasPrefix(const Pack& p, const std::string& prefix) {
  for (const auto& [name, text] : p.files)
    if (StartsWith(name, prefix)) return true;
  return false;
}

// msprobe's verdict of a sheet: error if any error, else warning if any warning, else pass.
std::string Verdict(const std::vector<std::string>& levels) {
  if (std::find(levels.begin(), levels.end(), kError) != levels.end()) return kError;
  if (std::find(levels.begin(), levels.end(), kWarning) != levels.end()) return kWarning;
  return kPass;
}

// Sheets whose "equal"/"check_result" column decides: error if any false;
// warning if any row is on one side only ("only bench have"; msprobe: pass).
std::string EqualVerdict(const Sheet& s, size_t column) {
  std::vector<std::string> levels;
  for (const auto& r : s.rows) {
    if (column >= r.size()) continue;
    if (std::holds_alternative<bool>(r[column]) && !std::get<bool>(r[column])) levels.push_back(kError);
    if (std::holds_alternative<std::string>(r[column])) levels.push_back(kWarning);
  }
  return Verdict(levels);
}

std::string LevelVerdict(const Sheet& s) {
  std::vector<std::string> levels;
  for (const auto& r : s.rows)
    if (!r.empty() && std::holds_alternative<std::string>(r.back())) levels.push_back(std::get<std::string>(r.back()));
  return Verdict(levels);
}

// The check that reads a pack member ("" for members no check reads).
std::string CheckOf(const std::string& member) {
  if (member == "env" || member == "pip") return member;
  if (member == "hyperparameters/hyperparameters_static.json" ||
      member == "hyperparameters/hyperparameters_dynamic.json") {
    return "hyperparameters";
  }
  int64_t step, rank;
  if (EndsWith(member, ".json") && StepRank(member, "weights", &step, &rank)) return "weights";
  if (EndsWith(member, "/dataset.json") && StepRank(member, "dataset", &step, &rank)) return "dataset";
  if (StartsWith(member, "random/rank") && EndsWith(member, ".json")) return "random";
  return "";
}

}  // namespace

Result<Pack> ReadPack(const std::string& zip_path) {
  auto zip = zip::ZipArchive::Open(zip_path);
  if (!zip.ok()) return zip.error();
  Pack p;
  p.path = zip_path;
  for (const std::string& name : zip->Names()) {
    if (name.empty() || name.back() == '/') continue;
    auto text = zip->Read(name, size_t{1} << 28);
    if (!text.ok()) return text.error();
    p.files[name] = std::move(*text);
  }
  bool any = p.files.count("env") || p.files.count("pip");
  for (const char* dir : {"hyperparameters/", "weights/", "dataset/", "random/"}) any = any || HasPrefix(p, dir);
  if (!any) {
    return Error{zip_path, "",
                 "not a config_check pack (no env, pip, hyperparameters/, weights/, dataset/ or random/ member)"};
  }
  return p;
}

namespace {

Result<std::vector<Sheet>> CompareAll(const Pack& bench, const Pack& cmp) {
  Sheet summary{"summary", {"filename", "pass_check"}, {}};
  Sheet members{kMembersSheet, {"check", "member", "only_in", "level"}, {}};
  // check -> its members in each pack
  std::map<std::string, std::set<std::string>> in_bench, in_cmp;
  for (const auto& [m, text] : bench.files)
    if (std::string c = CheckOf(m); !c.empty()) in_bench[c].insert(m);
  for (const auto& [m, text] : cmp.files)
    if (std::string c = CheckOf(m); !c.empty()) in_cmp[c].insert(m);

  std::vector<Sheet> sheets;
  // msprobe's order of checks; msprobe skips a check that one pack lacks without a word.
  using Check = Result<Sheet> (*)(const Pack&, const Pack&);
  const struct {
    const char* name;
    Check run;
    size_t equal_column;  // 0: the level column decides
  } kChecks[] = {{"env", CompareEnv, 0},
                 {"pip", ComparePip, 0},
                 {"dataset", CompareDataset, 3},
                 {"weights", CompareWeights, 3},
                 {"hyperparameters", CompareHyperparameters, 0},
                 {"random", CompareRandom, 6}};
  for (const auto& check : kChecks) {
    const auto& b = in_bench[check.name];
    const auto& c = in_cmp[check.name];
    if (b.empty() && c.empty()) continue;
    bool is_file = std::string(check.name) == "env" || std::string(check.name) == "pip";
    if (b.empty() || c.empty()) {
      // The whole check is in one pack only: nothing to compare, said as a warning.
      members.rows.push_back({check.name, is_file ? check.name : std::string(check.name) + "/",
                              std::string(b.empty() ? "cmp" : "bench"), kWarning});
      summary.rows.push_back({check.name, kWarning});
      continue;
    }
    bool one_sided = false;
    for (const std::string& m : b)
      if (!c.count(m)) members.rows.push_back({check.name, m, "bench", kWarning}), one_sided = true;
    for (const std::string& m : c)
      if (!b.count(m)) members.rows.push_back({check.name, m, "cmp", kWarning}), one_sided = true;
    auto sheet = check.run(bench, cmp);
    if (!sheet.ok()) return sheet.error();
    std::string verdict = check.equal_column ? EqualVerdict(*sheet, check.equal_column) : LevelVerdict(*sheet);
    if (one_sided && verdict == kPass) verdict = kWarning;
    summary.rows.push_back({check.name, verdict});
    sheets.push_back(std::move(*sheet));
  }
  sheets.insert(sheets.begin(), std::move(summary));
  if (!members.rows.empty()) sheets.push_back(std::move(members));
  return sheets;
}

}  // namespace

Result<std::vector<Sheet>> ComparePacks(const Pack& bench, const Pack& cmp) {
  try {
    return CompareAll(bench, cmp);
  } catch (const nlohmann::json::exception& e) {
    // A member of an unexpected shape (e.g. a number where statistics belong).
    return Error{bench.path + " / " + cmp.path, "", std::string("unexpected pack content: ") + e.what()};
  }
}

}  // namespace graph_ascend::config_check
