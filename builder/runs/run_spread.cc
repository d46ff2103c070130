#include "runs/run_spread.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/py_format.h"
#include "base/string_pool.h"
#include "dump/dump_data.h"
#include "base/mapped_file.h"
#include "json/json_reader.h"
#include "json/json_writer.h"

namespace graph_ascend::runs {
namespace {

using dump::DumpData;
using dump::DumpEntry;
using dump::DumpItem;
using dump::Field;
using dump::Value;
using dump::ValueKind;

bool SameValue(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case ValueKind::kNull:
      return true;
    case ValueKind::kBool:
      return a.boolean == b.boolean;
    case ValueKind::kInteger:
      return a.integer == b.integer;
    case ValueKind::kNumber:
      // Bit for bit: -0.0 and 0.0 differ in a run, two NaNs of one kind do not.
      return memcmp(&a.number, &b.number, sizeof(double)) == 0 || (std::isnan(a.number) && std::isnan(b.number));
    case ValueKind::kString:
    case ValueKind::kJson:
      return a.string == b.string;  // one pool for every run: equal text, equal id
  }
  return false;
}

std::string Text(const Value& v, const StringPool& pool) {
  switch (v.kind) {
    case ValueKind::kNull:
      return "null";
    case ValueKind::kBool:
      return v.boolean ? "true" : "false";
    case ValueKind::kInteger:
      return std::to_string(v.integer);
    case ValueKind::kNumber:
      return PyRepr(v.number);
    case ValueKind::kString:
    case ValueKind::kJson:
      return std::string(pool.Get(v.string));
  }
  return "";
}

bool Numeric(const Value& v) { return v.kind == ValueKind::kNumber || v.kind == ValueKind::kInteger; }
double Number(const Value& v) { return v.kind == ValueKind::kNumber ? v.number : static_cast<double>(v.integer); }

const Value* FieldOf(const DumpData& d, const DumpItem& item, uint32_t name) {
  for (uint32_t f = item.first_field; f < item.first_field + item.field_count; ++f) {
    if (d.fields[f].name == name) return &d.fields[f].value;
  }
  return nullptr;
}

uint32_t ItemCount(const DumpEntry& e) { return e.input_count + e.output_count; }

// The item's key as the user reads it: the entry name plus ".output.0".
std::string ItemName(const DumpData& d, const DumpEntry& e, const DumpItem& item, const StringPool& pool) {
  std::string key(pool.Get(item.key));
  if (item.flags & dump::kItemFullKey) return key;
  return std::string(pool.Get(e.name)) + key;
}

// Fills the spread of a field from the runs' values (null where a run lacks it).
void Spread(const std::vector<const Value*>& values, const StringPool& pool, int reference, Disagreement* out) {
  double lo = INFINITY, hi = -INFINITY, largest = 0;
  bool numeric = true;
  for (size_t r = 0; r < values.size(); ++r) {
    const Value* v = values[r];
    out->values.push_back(v == nullptr ? "" : Text(*v, pool));
    const Value* ref = values[reference];
    bool same = (v == nullptr && ref == nullptr) || (v != nullptr && ref != nullptr && SameValue(*v, *ref));
    if (!same) out->differing_runs.push_back(static_cast<int>(r));
    if (v == nullptr || !Numeric(*v)) {
      numeric = false;
      continue;
    }
    double x = Number(*v);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    largest = std::max(largest, std::fabs(x));
  }
  out->spread = numeric ? hi - lo : NAN;
  out->relative_spread = !numeric ? NAN : largest > 0 ? (hi - lo) / largest : 0.0;
}

}  // namespace

Result<GraphSpread> FirstDisagreement(const std::vector<std::string>& dirs, int reference) {
  if (dirs.size() < 2 || reference < 0 || reference >= static_cast<int>(dirs.size())) {
    return Error{dirs.empty() ? std::string() : dirs[0], "", "comparing runs needs at least two runs and a reference"};
  }
  StringPool pool;
  std::vector<DumpData> runs;
  runs.reserve(dirs.size());
  for (const std::string& dir : dirs) {
    auto d = dump::ReadDumpJson(dir + "/dump.json", &pool, {});
    if (!d.ok()) return d.error();
    runs.push_back(std::move(*d));
  }
  GraphSpread g;
  g.dirs = dirs;
  const DumpData& ref = runs[reference];
  const size_t k = runs.size();
  Disagreement structural;
  for (uint32_t i = 0; i < ref.entries.size(); ++i) {
    const DumpEntry& e = ref.entries[i];
    ++g.entries;
    std::vector<const DumpEntry*> entry(k, nullptr);
    bool all_present = true, same_shape = true;
    for (size_t r = 0; r < k; ++r) {
      entry[r] = runs[r].Find(e.name);
      all_present = all_present && entry[r] != nullptr;
      same_shape = same_shape && entry[r] != nullptr && ItemCount(*entry[r]) == ItemCount(e);
    }
    Disagreement d;
    d.name = std::string(pool.Get(e.name));
    d.index = i;
    if (!all_present || !same_shape) {
      // A call some run does not make (rank 0 of a data-parallel job sends what the others receive) is
      // remembered; the values of the calls every run makes decide first.
      d.field = all_present ? "item count" : "entry";
      for (size_t r = 0; r < k; ++r) {
        d.values.push_back(entry[r] == nullptr ? "" : std::to_string(ItemCount(*entry[r])) + " items");
        if (entry[r] == nullptr || ItemCount(*entry[r]) != ItemCount(e)) d.differing_runs.push_back(static_cast<int>(r));
      }
      d.spread = d.relative_spread = NAN;
      if (g.missing++ == 0) structural = std::move(d);
      continue;
    }
    for (uint32_t it = 0; it < ItemCount(e); ++it) {
      const DumpItem& item = ref.items[e.first_item + it];
      // Every field of the reference item, then fields only another run has.
      std::vector<uint32_t> names;
      for (size_t r = 0; r < k; ++r) {
        const DumpItem& ri = runs[r].items[entry[r]->first_item + it];
        for (uint32_t f = ri.first_field; f < ri.first_field + ri.field_count; ++f) {
          uint32_t n = runs[r].fields[f].name;
          if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
        }
      }
      for (uint32_t name : names) {
        std::vector<const Value*> values(k);
        bool same = true;
        for (size_t r = 0; r < k; ++r) {
          values[r] = FieldOf(runs[r], runs[r].items[entry[r]->first_item + it], name);
          const Value* a = values[r];
          const Value* b = values[0];
          same = same && ((a == nullptr && b == nullptr) || (a != nullptr && b != nullptr && SameValue(*a, *b)));
        }
        if (same) continue;
        d.item = ItemName(ref, e, item, pool);
        d.field = std::string(pool.Get(name));
        Spread(values, pool, reference, &d);
        g.agree = false;
        g.first = std::move(d);
        for (uint32_t j = i + 1; j < ref.entries.size(); ++j) {
          for (size_t r = 0; r < k; ++r) {
            if (runs[r].Find(ref.entries[j].name) == nullptr) {
              ++g.missing;
              break;
            }
          }
        }
        return g;
      }
    }
  }
  if (g.missing > 0) {
    g.agree = false;
    g.first = std::move(structural);
  }
  return g;
}

std::string Describe(const GraphSpread& g, int reference) {
  std::string where;
  for (const std::string* part : {&g.stage, &g.step, &g.rank}) {
    if (part->empty()) continue;
    where += (where.empty() ? "" : " ") + *part;
  }
  std::string head = where.empty() ? "" : where + ": ";
  if (g.agree) {
    return head + "the " + std::to_string(g.dirs.size()) + " runs agree on all " + std::to_string(g.entries) +
           " entries";
  }
  const Disagreement& d = g.first;
  std::string s = head + "first disagreement at " + d.name + " (entry " + std::to_string(d.index) + ")";
  if (d.field == "entry" || d.field == "item count") {
    s += d.field == "entry" ? ": missing in some runs" : ": the runs record different numbers of items";
  } else {
    std::string item = d.item.size() > d.name.size() && d.item.compare(0, d.name.size(), d.name) == 0
                           ? d.item.substr(d.name.size() + 1)
                           : d.item;
    s += ", " + item + " " + d.field;
    if (!std::isnan(d.spread)) s += ": spread " + PyRepr(d.spread) + " (relative " + PyRepr(d.relative_spread) + ")";
  }
  s += "; run";
  s += d.differing_runs.size() == 1 ? " " : "s ";
  for (size_t i = 0; i < d.differing_runs.size(); ++i) s += (i ? ", " : "") + std::to_string(d.differing_runs[i]);
  s += (d.differing_runs.size() == 1 ? " differs" : " differ") + std::string(" from run ") + std::to_string(reference);
  if (g.missing > 0 && d.field != "entry" && d.field != "item count") {
    s += "; " + std::to_string(g.missing) + (g.missing == 1 ? " call is" : " calls are") + " not made by every run";
  }
  return s;
}

std::string SummaryJson(const std::vector<std::string>& runs, int reference, const std::vector<GraphSpread>& graphs) {
  std::string out;
  json::JsonWriter w(&out, 1);
  auto number = [&](double x) {
    if (std::isnan(x)) {
      w.Null();
    } else {
      w.Raw(PyRepr(x));
    }
  };
  w.BeginObject();
  w.Key("runs");
  w.BeginArray();
  for (const std::string& r : runs) w.String(r);
  w.EndArray();
  w.Key("reference");
  w.Raw(std::to_string(reference));
  w.Key("graphs");
  w.BeginArray();
  for (const GraphSpread& g : graphs) {
    w.BeginObject();
    w.Key("stage");
    w.String(g.stage);
    w.Key("step");
    w.String(g.step);
    w.Key("rank");
    w.String(g.rank);
    w.Key("entries");
    w.Raw(std::to_string(g.entries));
    w.Key("agree");
    w.Bool(g.agree);
    w.Key("missing");
    w.Raw(std::to_string(g.missing));
    w.Key("first_disagreement");
    if (g.agree) {
      w.Null();
    } else {
      const Disagreement& d = g.first;
      w.BeginObject();
      w.Key("name");
      w.String(d.name);
      w.Key("index");
      w.Raw(std::to_string(d.index));
      w.Key("item");
      w.String(d.item);
      w.Key("field");
      w.String(d.field);
      w.Key("values");
      w.BeginArray();
      for (const std::string& v : d.values) w.String(v);
      w.EndArray();
      w.Key("spread");
      number(d.spread);
      w.Key("relative_spread");
      number(d.relative_spread);
      w.Key("differing_runs");
      w.BeginArray();
      for (int r : d.differing_runs) w.Raw(std::to_string(r));
      w.EndArray();
      w.EndObject();
    }
    w.Key("summary");
    w.String(Describe(g, reference));
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  out += '\n';
  return out;
}

Result<Summary> ReadSummaryJson(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return text.error();
  json::JsonReader r(*text, path);
  Summary out;
  bool has_runs = false;
  GA_RETURN_IF_ERROR(r.EnterObject());
  std::string_view key;
  for (;;) {
    auto more = r.NextMember(&key);
    if (!more.ok()) return more.error();
    if (!*more) break;
    if (key == "runs") {
      has_runs = true;
      GA_RETURN_IF_ERROR(r.EnterArray());
      for (;;) {
        auto next = r.NextElement();
        if (!next.ok()) return next.error();
        if (!*next) break;
        auto s = r.ReadString();
        if (!s.ok()) return s.error();
        out.runs.emplace_back(*s);
      }
    } else if (key == "reference") {
      auto n = r.ReadNumber();
      if (!n.ok()) return n.error();
      if (!n->is_integer) return r.ErrorHere("key reference: expected an integer");
      out.reference = static_cast<int>(n->integer);
    } else if (key == "graphs") {
      GA_RETURN_IF_ERROR(r.EnterArray());
      for (;;) {
        auto next = r.NextElement();
        if (!next.ok()) return next.error();
        if (!*next) break;
        GA_RETURN_IF_ERROR(r.EnterObject());
        SummaryGraph g;
        std::string_view member;
        for (;;) {
          auto m = r.NextMember(&member);
          if (!m.ok()) return m.error();
          if (!*m) break;
          std::string* text = member == "summary" ? &g.line
                              : member == "step"  ? &g.step
                              : member == "rank"  ? &g.rank
                                                  : nullptr;
          if (member == "first_disagreement" && r.PeekByte() == '{') {
            // Only the entry's name: the node the page jumps to.
            GA_RETURN_IF_ERROR(r.EnterObject());
            std::string_view field;
            for (;;) {
              auto f = r.NextMember(&field);
              if (!f.ok()) return f.error();
              if (!*f) break;
              if (field != "name") {
                GA_RETURN_IF_ERROR(r.Skip());
                continue;
              }
              auto s = r.ReadString();
              if (!s.ok()) return s.error();
              g.first = std::string(*s);
            }
            continue;
          }
          if (text == nullptr) {
            GA_RETURN_IF_ERROR(r.Skip());
            continue;
          }
          auto s = r.ReadString();
          if (!s.ok()) return s.error();
          *text = std::string(*s);
        }
        out.lines.push_back(g.line);
        out.graphs.push_back(std::move(g));
      }
    } else {
      GA_RETURN_IF_ERROR(r.Skip());
    }
  }
  GA_RETURN_IF_ERROR(r.ExpectEnd());
  if (!has_runs) return Error{path, "key runs", "missing: not a runs.json written by graph-ascend graph"};
  if (out.reference < 0 || out.reference >= static_cast<int>(out.runs.size())) {
    return Error{path, "key reference", "is not the index of one of runs"};
  }
  return out;
}

std::optional<RunFile> RunFileOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return std::nullopt;
  size_t up = slash == 0 ? std::string::npos : path.rfind('/', slash - 1);
  std::string folder = path.substr(up == std::string::npos ? 0 : up + 1, slash - (up == std::string::npos ? 0 : up + 1));
  if (folder.size() < 4 || folder.size() > 12 || folder.compare(0, 3, "run") != 0) return std::nullopt;
  RunFile f;
  for (size_t i = 3; i < folder.size(); ++i) {
    if (folder[i] < '0' || folder[i] > '9') return std::nullopt;
    f.run = f.run * 10 + (folder[i] - '0');
  }
  f.parent = up == std::string::npos ? "" : path.substr(0, up + 1);
  f.summary = f.parent + "runs.json";
  f.name = path.substr(slash + 1);
  return f;
}

}  // namespace graph_ascend::runs
