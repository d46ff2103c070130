#include "report/html_report.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>

#include "base/version.h"
#include "divergence/divergence.h"
#include "profile/profile_chart.h"

namespace graph_ascend::report {
namespace {

using profile::EscapeXml;

// Styles only: the report runs no script and fetches nothing.
constexpr char kStyle[] = R"(body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.file{color:#555;margin:0;word-break:break-all}.verdict{font-size:16px;padding:10px 14px;border-radius:6px}
.diverges{background:#fbe9e9;border-left:5px solid #c0392b}.agrees{background:#e9f6ec;border-left:5px solid #27ae60}
code,.name{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px;word-break:break-all}
table{border-collapse:collapse;width:100%;font-size:12.5px}th,td{border:1px solid #ddd;padding:4px 6px;vertical-align:top;
text-align:left}th{background:#f4f4f4}.paths{display:grid;grid-template-columns:1fr 1fr;gap:16px}
.paths ol{margin:0;padding-left:22px}.paths li:last-child{font-weight:bold}.muted{color:#777}.above{color:#b00;font-weight:bold}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px}dt{color:#555}dd{margin:0;word-break:break-all}
svg{max-width:100%;height:auto}footer{margin-top:32px;color:#777;font-size:12px})";

std::string Short(double x) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

std::string ValueText(const vis::Value& v) {
  switch (v.kind_case()) {
    case vis::Value::kNull: return "null";
    case vis::Value::kBoolean: return v.boolean() ? "True" : "False";
    case vis::Value::kInteger: return std::to_string(v.integer());
    case vis::Value::kNumber: {
      char buf[40];
      snprintf(buf, sizeof buf, "%.8g", v.number());
      return buf;
    }
    case vis::Value::kText: return v.text();
    case vis::Value::kJson: return v.json();
    default: return "";
  }
}

std::string FieldsText(const vis::Item* item) {
  if (item == nullptr) return "<span class=\"muted\">none</span>";
  if (item->is_null()) return "null";
  std::string out;
  for (const vis::Field& f : item->field()) {
    if (f.name() == "data_name" || f.name() == "full_op_name") continue;
    if (!out.empty()) out += "<br>";
    out += EscapeXml(f.name()) + " " + EscapeXml(ValueText(f.value()));
  }
  return out;
}

std::string MetricsText(const vis::Item& item) {
  std::string out;
  for (const vis::Metric& m : item.metric()) {
    if (!out.empty()) out += "<br>";
    out += EscapeXml(m.name()) + " " + EscapeXml(m.text());
  }
  return out.empty() ? "<span class=\"muted\">-</span>" : out;
}

std::string PathList(const vis::SideIndex& side, uint32_t node, const std::string& tail) {
  std::string out = "<ol>";
  for (uint32_t n : side.Ancestors(node)) out += "<li class=\"name\">" + EscapeXml(side.Name(n)) + "</li>";
  out += "<li class=\"name\">" + EscapeXml(side.Name(node)) + tail + "</li></ol>";
  return out;
}

const char* MatchName(vis::MatchStrategy m) {
  switch (m) {
    case vis::MATCH_FUZZY: return "fuzzy (-f)";
    case vis::MATCH_LAYER_MAPPING: return "layer mapping (-lm)";
    default: return "by name";
  }
}

// The first divergence: its path on both sides and its comparison table.
Status AppendFirst(const Input& in, const verdict::Entry& e, std::string* html) {
  const vis::SideIndex& npu = *in.npu;
  const vis::SideIndex& bench = *in.bench;
  *html += "<h2 id=\"path\">Path from the root</h2><div class=\"paths\"><div><h3>NPU</h3>" + PathList(npu, e.node, "") +
           "</div><div><h3>Bench</h3>";
  int32_t peer = npu.matched[e.node];
  if (peer >= 0 && static_cast<uint32_t>(peer) < bench.size()) {
    *html += PathList(bench, static_cast<uint32_t>(peer), "");
  } else {
    // Unmatched: the Bench side's path to its nearest matched ancestor.
    uint32_t n = e.node;
    while (npu.parent[n] >= 0 && (npu.matched[n] < 0 || static_cast<uint32_t>(npu.matched[n]) >= bench.size())) {
      n = static_cast<uint32_t>(npu.parent[n]);
    }
    int32_t anchor = npu.matched[n];
    if (anchor >= 0 && static_cast<uint32_t>(anchor) < bench.size()) {
      *html += PathList(bench, static_cast<uint32_t>(anchor), " <span class=\"muted\">(nothing below matches it)</span>");
    } else {
      *html += "<p class=\"muted\">no counterpart</p>";
    }
  }
  *html += "</div></div>\n<h2 id=\"table\">Its comparison</h2>\n";
  auto a = in.detail(vis::SIDE_NPU, e.node);
  if (!a.ok()) return a.error();
  vis::NodeDetail b;
  if (peer >= 0 && static_cast<uint32_t>(peer) < bench.size()) {
    auto read = in.detail(vis::SIDE_BENCH, static_cast<uint32_t>(peer));
    if (!read.ok()) return read.error();
    b = std::move(*read);
  }
  *html += "<table><tr><th>item</th><th>NPU</th><th>Bench</th><th>compare</th></tr>\n";
  struct State {
    const google::protobuf::RepeatedPtrField<vis::Item>& npu;
    const google::protobuf::RepeatedPtrField<vis::Item>& bench;
  };
  for (const State& s : {State{a->input(), b.input()}, State{a->output(), b.output()}}) {
    for (int k = 0; k < s.npu.size(); ++k) {
      const vis::Item& item = s.npu[k];
      const vis::Item* other = k < s.bench.size() ? &s.bench[k] : nullptr;
      *html += "<tr><td class=\"name\">" + EscapeXml(item.key()) + "</td><td>" + FieldsText(&item) + "</td><td>" +
               FieldsText(other) + "</td><td>" + MetricsText(item) + "</td></tr>\n";
    }
  }
  *html += "</table>\n";
  if (!e.note.empty()) *html += "<p>" + EscapeXml(e.note) + "</p>\n";
  return Status::Ok();
}

void AppendProfile(const Input& in, std::string* html) {
  *html += "<h2 id=\"profile\">Layer profile</h2>\n";
  std::vector<uint32_t> ranked;
  for (const verdict::Entry& e : in.verdict->entries) ranked.push_back(e.node);
  auto p = profile::MakeProfile(profile::HierarchyOf(*in.npu, *in.bench), in.detail, in.meta->mode(), in.depth, ranked);
  if (!p.ok()) {
    *html += "<p class=\"muted\">No layer profile: " + EscapeXml(p.error().where + ": " + p.error().message) + "</p>\n";
    return;
  }
  *html += "<p>By " + EscapeXml(p->grouping) +
           ": the largest output error of each module's forward calls, backward calls and the parameter gradients "
           "inside it, against its noise floor (dashed; a filled dot is above it). Shaded: modules holding entries "
           "of the divergence ranking, red the first divergence.</p>\n";
  *html += profile::ProfileSvg(*p);
  *html += "<table><tr><th>module</th>";
  for (int k = 0; k < profile::kSeriesCount; ++k) *html += std::string("<th>") + profile::SeriesName(k) + " (floor)</th>";
  *html += "<th>divergence ranking</th></tr>\n";
  for (const profile::Point& point : p->points) {
    *html += "<tr><td class=\"name\">" + EscapeXml(point.label) + "</td>";
    for (const profile::Value& v : point.value) {
      if (!v.has) {
        *html += "<td class=\"muted\">-</td>";
        continue;
      }
      *html += std::string("<td") + (v.error > v.floor ? " class=\"above\"" : "") + ">" + Short(v.error) + " (" +
               Short(v.floor) + ")</td>";
    }
    std::string ranked_text = point.ranked == 0 ? "" : std::to_string(point.ranked) + (point.ranked == 1 ? " entry" : " entries");
    if (point.first) ranked_text += ", the first divergence";
    *html += "<td>" + ranked_text + "</td></tr>\n";
  }
  *html += "</table>\n";
}

void AppendRuns(const Input& in, std::string* html) {
  const vis::FileMeta& m = *in.meta;
  auto row = [html](const std::string& key, const std::string& value) {
    *html += "<dt>" + EscapeXml(key) + "</dt><dd>" + EscapeXml(value) + "</dd>";
  };
  *html += "<h2 id=\"runs\">Runs</h2><dl>";
  row("written by", m.writer());
  if (m.created_unix() > 0) {
    time_t t = static_cast<time_t>(m.created_unix());
    char buf[64];
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    row("written", buf);
  }
  row("mode", std::string(vis::CompareModeName(m.mode())) + (m.task().empty() ? "" : ", task " + m.task()));
  row("matching", MatchName(m.match()));
  if (!m.step().empty() || !m.rank().empty()) row("step, rank", m.step() + " " + m.rank());
  row("NPU dump", m.npu().dump_path() + " (" + m.npu().framework() + ", " + std::to_string(in.npu->size()) + " nodes)");
  row("Bench dump", m.bench().dump_path() + " (" + m.bench().framework() + ", " + std::to_string(in.bench->size()) + " nodes)");
  std::string argv;
  for (const std::string& a : m.flags().argv()) argv += (argv.empty() ? "" : " ") + a;
  if (!argv.empty()) row("command line", argv);
  if (!m.flags().compare_json().empty()) row("compare.json", m.flags().compare_json());
  std::string flags;
  if (m.flags().overflow_check()) flags += " -oc";
  if (m.flags().complete_stack()) flags += " -cs";
  if (m.flags().fuzzy_match()) flags += " -f";
  if (m.flags().layer_mapping()) flags += " -lm " + m.flags().layer_mapping_file();
  row("flags", flags.empty() ? "none" : flags.substr(1));
  *html += "</dl>\n";
}

// More than two runs: which run this is against which reference, and where the runs first disagree.
void AppendRepeatedRuns(const Input& in, std::string* html) {
  if (in.runs == nullptr && in.runs_error.empty()) return;
  *html += "<h2 id=\"repeated\">More than two runs</h2>\n";
  if (in.runs == nullptr) {
    *html += "<p class=\"muted\">runs.json could not be read: " + EscapeXml(in.runs_error) + "</p>\n";
    return;
  }
  const runs::Summary& s = *in.runs;
  *html += "<p>This file compares run " + std::to_string(in.run) + " (NPU) with the reference, run " +
           std::to_string(s.reference) + " (Bench).</p><dl>";
  for (size_t i = 0; i < s.runs.size(); ++i) {
    *html += "<dt>run " + std::to_string(i) + (static_cast<int>(i) == s.reference ? " (reference)" : "") + "</dt><dd>" +
             EscapeXml(s.runs[i]) + "</dd>";
  }
  *html += "</dl>\n";
  const std::string& step = in.meta->step();
  const std::string& rank = in.meta->rank();
  for (const runs::SummaryGraph& g : s.graphs) {
    if (g.step != step || g.rank != rank) continue;
    *html += "<p class=\"verdict " + std::string(g.first.empty() ? "agrees" : "diverges") + "\">" + EscapeXml(g.line) +
             "</p>\n";
    return;
  }
  *html += "<p class=\"muted\">runs.json has no line for this step and rank.</p>\n";
}

}  // namespace

Result<std::string> RenderReport(const Input& in) {
  const verdict::Verdict& v = *in.verdict;
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                     "<title>graph-ascend report: " + EscapeXml(in.name) + "</title><style>" + kStyle +
                     "</style></head><body>\n<h1>Precision compare report</h1><p class=\"file\">" + EscapeXml(in.name) +
                     "</p>\n<h2 id=\"verdict\">Verdict</h2>\n";
  if (!v.ranked) {
    html += "<p class=\"verdict\">This file holds no divergence ranking (written before graph-ascend ranked "
            "divergences): build it again with graph-ascend graph.</p>\n";
  } else if (v.entries.empty()) {
    auto marked = [](const std::string& node) { return "<span class=\"name\">" + EscapeXml(node) + "</span>"; };
    html += "<p class=\"verdict agrees\">" +
            verdict::QuietSentence(v, {.capital = true, .margin_digits = 3, .threshold_digits = 4, .node = marked});
    if (!v.has_largest && !v.noise_rule) {
      html += " (no node's outputs differ while its inputs agree)";
    }
    html += ".</p>\n";
  } else {
    const verdict::Entry& e = v.entries[0];
    html += "<p class=\"verdict diverges\">First divergence: <span class=\"name\">" + EscapeXml(e.name) + "</span> (" +
            EscapeXml(e.node_type) + ", " + divergence::ReasonName(e.reason);
    std::string margin = verdict::MarginText(v, e);
    if (!margin.empty()) html += ", " + EscapeXml(margin);
    if (e.unmatched) {
      html += ", unmatched";
    } else if (!std::isnan(e.index)) {
      html += ", index " + Short(e.index);
    }
    html += ")</p>\n";
    if (!v.peers.empty()) {
      html += "<p>It receives from rank";
      for (int32_t r : v.peers) html += " " + std::to_string(r);
      html += ": the divergence may come from there.</p>\n";
    }
    if (Status st = AppendFirst(in, e, &html); !st.ok()) return st.error();
    html += "<h2 id=\"ranking\">Next in the ranking</h2>\n";
    if (v.entries.size() == 1) {
      html += "<p class=\"muted\">It is the only entry.</p>\n";
    } else {
      html += "<ol start=\"2\">";
      size_t end = std::min(v.entries.size(), kNextEntries + 1);
      for (size_t i = 1; i < end; ++i) html += "<li class=\"name\">" + EscapeXml(verdict::OneLine(v, v.entries[i])) + "</li>";
      html += "</ol>\n";
      if (v.entries.size() > end) html += "<p class=\"muted\">... " + std::to_string(v.entries.size() - end) + " more</p>\n";
    }
  }
  AppendRepeatedRuns(in, &html);
  AppendProfile(in, &html);
  AppendRuns(in, &html);
  html += std::string("<footer>Report by graph-ascend ") + kVersion + "; the .vis was " +
          EscapeXml(in.meta->writer().empty() ? "written by an unknown tool" : "written by " + in.meta->writer()) +
          ". docs/DIVERGENCE.md explains the verdict and the noise.</footer>\n</body></html>\n";
  return html;
}

Result<std::string> RenderReport(const vis::VisReader& reader, const std::string& path, int depth) {
  const vis::FileMeta& meta = reader.meta();
  if (meta.kind() != vis::GRAPH_COMPARE || !reader.has_side(vis::SIDE_BENCH)) {
    return Error{path, "", "is a build of one run, not a compare: nothing to report"};
  }
  if (meta.mode() == vis::MODE_STRUCTURE) return Error{path, "", "is a structure compare: it holds no values to report"};
  auto npu = vis::LoadSideIndex(reader, vis::SIDE_NPU);
  if (!npu.ok()) return npu.error();
  auto bench = vis::LoadSideIndex(reader, vis::SIDE_BENCH);
  if (!bench.ok()) return bench.error();
  auto v = verdict::ReadVerdict(reader, *npu, path);
  if (!v.ok()) return v.error();
  Input in;
  in.name = path;
  in.meta = &meta;
  in.npu = &*npu;
  in.bench = &*bench;
  in.detail = profile::BlockDetails(reader, *npu, *bench);
  in.verdict = &*v;
  in.depth = depth;
  std::optional<runs::Summary> summary;
  if (std::optional<runs::RunFile> where = runs::RunFileOf(path)) {
    if (FILE* f = fopen(where->summary.c_str(), "rb")) {  // only where runs.json is beside run<i>/
      fclose(f);
      auto read = runs::ReadSummaryJson(where->summary);
      if (read.ok() && where->run < static_cast<int>(read->runs.size())) {
        summary = std::move(*read);
        in.runs = &*summary;
        in.run = where->run;
      } else if (!read.ok()) {
        in.runs_error = read.error().ToString();
      }
    }
  }
  return RenderReport(in);
}

}  // namespace graph_ascend::report
