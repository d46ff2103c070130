// Whether two .vis files (or two output folders) hold the same graph content:
// the same sections in the same order with the same serialized bytes (the
// compressed bytes may differ: another zstd level or version), except
// FileMeta's created_unix and the recorded argv (when and how the file was
// written). `any_order` sets the order of the sections in the file aside
// (a .vis.db's NPU and Bench details are written by two threads, so their
// blocks interleave differently from run to run): sections are matched by
// kind, side and first node. Output folders must hold the same file names
// once the 14-digit time stamps are set aside, and nothing else.
#pragma once

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>
#include <vector>
#include <regex>
#include <tuple>
#include <string>

#include "vis/vis_file.h"

namespace graph_ascend::testing {

// "" when equal, else what differs first.
inline std::string GraphContentDiff(const std::string& a, const std::string& b, bool any_order = false) {
  auto ra = vis::VisReader::Open(a);
  if (!ra.ok()) return ra.error().ToString();
  auto rb = vis::VisReader::Open(b);
  if (!rb.ok()) return rb.error().ToString();
  const auto& ta = (*ra)->toc().sections();
  const auto& tb = (*rb)->toc().sections();
  if (ta.size() != tb.size()) {
    return a + ": " + std::to_string(ta.size()) + " sections, " + b + ": " + std::to_string(tb.size());
  }
  std::vector<int> oa(ta.size()), ob(tb.size());
  std::iota(oa.begin(), oa.end(), 0);
  std::iota(ob.begin(), ob.end(), 0);
  if (any_order) {
    auto by_place = [](const auto& toc) {
      return [&toc](int i, int j) {
        const vis::SectionRef &x = toc[i], &y = toc[j];
        return std::make_tuple(x.kind(), x.side(), x.first(), i) < std::make_tuple(y.kind(), y.side(), y.first(), j);
      };
    };
    std::sort(oa.begin(), oa.end(), by_place(ta));
    std::sort(ob.begin(), ob.end(), by_place(tb));
  }
  for (int i = 0; i < ta.size(); ++i) {
    const vis::SectionRef& x = ta[oa[i]];
    const vis::SectionRef& y = tb[ob[i]];
    std::string where = a + " section " + std::to_string(i) + " (kind " + std::to_string(x.kind()) + " side " +
                        std::to_string(x.side()) + " first " + std::to_string(x.first()) + ")";
    if (x.kind() != y.kind() || x.side() != y.side() || x.first() != y.first() || x.count() != y.count()) {
      return where + ": another section in " + b;
    }
    std::string pa, pb;
    if (x.kind() == vis::SECTION_META) {
      vis::FileMeta ma = (*ra)->meta(), mb = (*rb)->meta();
      for (vis::FileMeta* m : {&ma, &mb}) {
        m->clear_created_unix();
        m->mutable_flags()->clear_argv();
      }
      pa = ma.SerializeAsString();
      pb = mb.SerializeAsString();
      if (pa != pb) return where + ": meta differs:\n" + ma.DebugString() + "\nvs\n" + mb.DebugString();
      continue;
    }
    std::string fa, fb;
    auto st = (*ra)->ReadFrame(x, &fa);
    if (!st.ok()) return st.error().ToString();
    st = (*rb)->ReadFrame(y, &fb);
    if (!st.ok()) return st.error().ToString();
    if (fa == fb) continue;
    std::string raw_a, raw_b;
    st = (*ra)->ReadRaw(x, &raw_a);
    if (!st.ok()) return st.error().ToString();
    st = (*rb)->ReadRaw(y, &raw_b);
    if (!st.ok()) return st.error().ToString();
    if (raw_a == raw_b) continue;
    if (x.kind() != vis::SECTION_NODE_DETAILS) return where + ": bytes differ";
    vis::NodeDetailBlock da, db;
    st = (*ra)->ReadSection(x, &da);
    if (!st.ok()) return st.error().ToString();
    st = (*rb)->ReadSection(y, &db);
    if (!st.ok()) return st.error().ToString();
    for (int k = 0; k < da.detail_size() && k < db.detail_size(); ++k) {
      if (da.detail(k).SerializeAsString() != db.detail(k).SerializeAsString()) {
        return where + ": node " + std::to_string(da.first() + k) + " differs:\n" + da.detail(k).DebugString() +
               "\nvs\n" + db.detail(k).DebugString();
      }
    }
    return where + ": serialized bytes differ";
  }
  return "";
}

// The entries of a folder, time stamps replaced by "<ts>".
inline std::map<std::string, std::string> ByStampless(const std::string& dir) {
  std::map<std::string, std::string> out;
  static const std::regex stamp(R"(\d{14})");
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out[std::regex_replace(e.path().filename().string(), stamp, "<ts>")] = e.path().string();
  }
  return out;
}

inline std::string FolderContentDiff(const std::string& a, const std::string& b, bool any_order = false) {
  auto fa = ByStampless(a), fb = ByStampless(b);
  std::string names_a, names_b;
  for (const auto& [k, v] : fa) names_a += k + " ";
  for (const auto& [k, v] : fb) names_b += k + " ";
  if (names_a != names_b) return a + " holds [" + names_a + "], " + b + " holds [" + names_b + "]";
  if (fa.empty()) return a + " is empty";
  for (const auto& [k, v] : fa) {
    std::string d = GraphContentDiff(v, fb[k], any_order);
    if (!d.empty()) return d;
  }
  return "";
}

}  // namespace graph_ascend::testing
