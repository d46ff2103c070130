// The weights, dataset and random checks (msprobe's weights_checker,
// dataset_checker and random_checker rules).
#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <tuple>

#include "config_check/checks.h"

namespace graph_ascend::config_check {
namespace {

// ---- weights and dataset statistics ---------------------------------------

const char* const kStats[] = {"max", "min", "mean", "norm"};

// |bench - cmp| / |bench| (msprobe divides by the signed bench value), none for a zero bench value.
Cell RelativeDiff(const Json& b, const Json& c) {
  if (!b.is_number() || !c.is_number()) return std::monostate{};
  double x = b.get<double>(), y = c.get<double>();
  if (x == 0) return std::monostate{};
  return std::fabs(x - y) / std::fabs(x);
}

bool IsStats(const Json& v) {
  if (!v.is_object() || v.size() != 4) return false;
  for (const char* k : kStats)
    if (!v.contains(k)) return false;
  return true;
}

}  // namespace

// "weights/step3/rank1/weight.json" -> step 3, rank 1.
bool StepRank(const std::string& member, const std::string& prefix, int64_t* step, int64_t* rank) {
  if (!StartsWith(member, prefix + "/step")) return false;
  size_t a = prefix.size() + 5, b = member.find('/', a);
  if (b == std::string::npos || member.compare(b + 1, 4, "rank") != 0) return false;
  size_t c = member.find('/', b + 5);
  if (c == std::string::npos) return false;
  try {
    *step = std::stoll(member.substr(a, b - a));
    *rank = std::stoll(member.substr(b + 5, c - b - 5));
  } catch (...) {
    return false;
  }
  return true;
}

Result<Sheet> CompareWeights(const Pack& bench, const Pack& cmp) {
  Sheet s{"weights",
          {"step", "rank", "weight_name", "equal", "max_relative_diff", "min_relative_diff", "mean_relative_diff",
           "norm_relative_diff"},
          {}};
  struct Row {
    int64_t step, rank;
    std::vector<Cell> cells;
  };
  std::vector<Row> rows;
  // A step/rank file of one pack only: every weight in it is "only ... have"
  // (msprobe does this for bench's files and skips cmp's).
  auto load = [](const Pack& pack, const std::string& member, Json* out) -> Status {
    if (!pack.files.count(member)) {
      *out = Json::object();
      return Status::Ok();
    }
    auto parsed = ParseJson(pack, member);
    if (!parsed.ok()) return parsed.error();
    if (!parsed->is_object()) return Error{pack.path, member, "expected a JSON object of weight statistics"};
    *out = std::move(*parsed);
    return Status::Ok();
  };
  std::set<std::string> files;
  for (const Pack* p : {&bench, &cmp})
    for (const auto& [member, text] : p->files) files.insert(member);
  for (const std::string& member : files) {
    int64_t step, rank;
    if (!EndsWith(member, ".json") || !StepRank(member, "weights", &step, &rank)) continue;
    Json b, c;
    GA_RETURN_IF_ERROR(load(bench, member, &b));
    GA_RETURN_IF_ERROR(load(cmp, member, &c));
    std::set<std::string> names;
    for (const auto& [k, v] : b.items()) names.insert(k);
    for (const auto& [k, v] : c.items()) names.insert(k);
    for (const std::string& name : names) {
      std::vector<Cell> r = {step, rank, name};
      if (!b.contains(name) || !c.contains(name)) {
        r.push_back(std::string(b.contains(name) ? "only bench have" : "only cmp have"));
        r.resize(8);
      } else {
        Json bv = b[name].is_object() ? b[name] : Json::object();
        Json cv = c[name].is_object() ? c[name] : Json::object();
        bool equal = true;
        for (const char* k : kStats) equal = equal && bv.value(k, Json()) == cv.value(k, Json());
        r.push_back(equal);
        for (const char* k : kStats) r.push_back(RelativeDiff(bv.value(k, Json()), cv.value(k, Json())));
      }
      rows.push_back({step, rank, std::move(r)});
    }
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& x, const Row& y) { return std::tie(x.step, x.rank) < std::tie(y.step, y.rank); });
  for (auto& r : rows) s.rows.push_back(std::move(r.cells));
  return s;
}

namespace {

void CompareDatasetDicts(const Json& b, const Json& c, const std::string& tag, std::vector<std::vector<Cell>>* out) {
  for (const auto& [k, v] : b.items()) {
    std::string t = tag.empty() ? k : tag + "." + k;
    if (!c.contains(k)) {
      out->push_back({t, false, std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{}});
      continue;
    }
    if (!v.is_object()) continue;
    if (IsStats(v)) {
      std::vector<Cell> r = {t, v == c[k]};
      for (const char* s : kStats) r.push_back(RelativeDiff(v[s], c[k].is_object() ? c[k].value(s, Json()) : Json()));
      out->push_back(std::move(r));
    } else if (c[k].is_object()) {
      CompareDatasetDicts(v, c[k], t, out);
    }
  }
  for (const auto& [k, v] : c.items()) {
    if (!b.contains(k)) {
      std::string t = tag.empty() ? k : tag + "." + k;
      out->push_back({t, false, std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{}});
    }
  }
}

}  // namespace

Result<Sheet> CompareDataset(const Pack& bench, const Pack& cmp) {
  Sheet s{"dataset",
          {"step", "rank", "tag", "equal", "max_relative_diff", "min_relative_diff", "mean_relative_diff",
           "norm_relative_diff"},
          {}};
  std::vector<std::tuple<int64_t, int64_t, std::vector<Cell>>> rows;
  for (const auto& [member, text] : bench.files) {
    int64_t step, rank;
    if (!EndsWith(member, "/dataset.json") || !StepRank(member, "dataset", &step, &rank)) continue;
    if (!cmp.files.count(member)) continue;
    auto b = ParseJson(bench, member);
    if (!b.ok()) return b.error();
    auto c = ParseJson(cmp, member);
    if (!c.ok()) return c.error();
    if (!b->is_object() || !c->is_object()) return Error{bench.path, member, "expected a JSON object"};
    std::vector<std::vector<Cell>> found;
    CompareDatasetDicts(*b, *c, "", &found);
    for (auto& f : found) {
      std::vector<Cell> r = {step, rank};
      r.insert(r.end(), f.begin(), f.end());
      rows.emplace_back(step, rank, std::move(r));
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    return std::tie(std::get<0>(x), std::get<1>(x)) < std::tie(std::get<0>(y), std::get<1>(y));
  });
  for (auto& r : rows) s.rows.push_back(std::move(std::get<2>(r)));
  return s;
}

namespace {

// ---- random-op call stacks -------------------------------------------------

// "File {path}, line {n}, in {func}, {code}" -> path, func, code.
std::array<std::string, 3> ParseFrame(const std::string& frame) {
  std::vector<std::string> parts;
  for (size_t a = 0, b; a <= frame.size(); a = b + 1) {
    b = frame.find(' ', a);
    if (b == std::string::npos) b = frame.size();
    parts.push_back(frame.substr(a, b - a));
  }
  if (parts.size() <= 6) return {"", "", ""};
  std::string code;
  for (size_t i = 6; i < parts.size(); ++i) code += (i > 6 ? " " : "") + parts[i];
  auto chop = [](const std::string& s) { return s.empty() ? s : s.substr(0, s.size() - 1); };
  return {chop(parts[1]), chop(parts[5]), code};
}

std::string Basename(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// Same depth, and each frame scores 0.8 or more on file name, function and code (a third each).
bool StackMatch(const Json& s1, const Json& s2) {
  if (!s1.is_array() || !s2.is_array() || s1.size() != s2.size()) return false;
  for (size_t i = 0; i < s1.size(); ++i) {
    auto a = ParseFrame(s1[i].is_string() ? s1[i].get<std::string>() : "");
    auto b = ParseFrame(s2[i].is_string() ? s2[i].get<std::string>() : "");
    double path = !a[0].empty() && !b[0].empty() && Basename(a[0]) == Basename(b[0]) ? 1.0 : 0.0;
    double func = a[1] == b[1] ? 1.0 : 0.0;
    if ((path + func + SequenceRatio(a[2], b[2])) / 3.0 < 0.8) return false;
  }
  return true;
}

std::string StackText(const Json& stack) {
  std::string out;
  for (const Json& f : stack) out += (out.empty() ? "" : "\n") + (f.is_string() ? f.get<std::string>() : f.dump());
  return out;
}

Result<std::map<int64_t, Json>> RandomRanks(const Pack& pack) {
  std::map<int64_t, Json> out;
  for (const auto& [member, text] : pack.files) {
    if (!StartsWith(member, "random/rank") || !EndsWith(member, ".json")) continue;
    std::string id = member.substr(11, member.size() - 16);
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
      return Error{pack.path, member, "cannot read a rank id from the name"};
    }
    auto j = ParseJson(pack, member);
    if (!j.ok()) return j.error();
    if (!j->is_object()) return Error{pack.path, member, "expected {op: [{count, stack}]}"};
    out[std::stoll(id)] = *j;
  }
  return out;
}

}  // namespace

Result<Sheet> CompareRandom(const Pack& bench, const Pack& cmp) {
  auto b = RandomRanks(bench);
  if (!b.ok()) return b.error();
  auto c = RandomRanks(cmp);
  if (!c.ok()) return c.error();
  Sheet s{"random", {"op", "rank", "bench_stack", "cmp_stack", "bench_count", "cmp_count", "check_result"}, {}};
  std::set<int64_t> ranks;
  for (const auto& [r, j] : *b) ranks.insert(r);
  for (const auto& [r, j] : *c) ranks.insert(r);
  for (int64_t rank : ranks) {
    Json bd = b->count(rank) ? (*b)[rank] : Json::object(), cd = c->count(rank) ? (*c)[rank] : Json::object();
    std::set<std::string> ops;
    for (const auto& [op, v] : bd.items()) ops.insert(op);
    for (const auto& [op, v] : cd.items()) ops.insert(op);
    for (const std::string& op : ops) {
      Json bs = bd.value(op, Json::array()), cs = cd.value(op, Json::array());
      auto count = [](const Json& e) -> int64_t {
        return e.is_object() && e.value("count", Json()).is_number_integer() ? e["count"].get<int64_t>() : 0;
      };
      auto stack = [](const Json& e) { return e.is_object() ? e.value("stack", Json::array()) : Json::array(); };
      for (const Json& be : bs) {
        const Json* match = nullptr;
        for (const Json& ce : cs)
          if (!match && StackMatch(stack(ce), stack(be))) match = &ce;
        if (match) {
          s.rows.push_back({op, rank, StackText(stack(be)), StackText(stack(*match)), count(be), count(*match),
                            count(be) == count(*match)});
        } else {
          s.rows.push_back({op, rank, StackText(stack(be)), "no match stack", count(be), int64_t{0}, false});
        }
      }
      for (const Json& ce : cs) {
        bool seen = false;
        for (const Json& be : bs) seen = seen || StackMatch(stack(be), stack(ce));
        if (!seen) s.rows.push_back({op, rank, "no match stack", StackText(stack(ce)), int64_t{0}, count(ce), false});
      }
    }
  }
  return s;
}

}  // namespace graph_ascend::config_check
