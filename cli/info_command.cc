#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "base/py_format.h"
#include "base/strings.h"
#include "compare/pair_compare.h"
#include "divergence/divergence.h"
#include "profile/layer_profile.h"
#include "runs/run_spread.h"
#include "verdict/verdict.h"
#include "vis/vis_index.h"
#include "weights/ckpt_similarity.h"

namespace graph_ascend::cli {
namespace {

const char* kInfoUsage =
    "usage: graph-ascend info FILE.vis [--profile [--depth N]]\n"
    "\n"
    "Prints the mode, nodes per side, matched and unmatched counts, nodes per colour bucket,\n"
    "overflow counts, both gradings (msprobe 8.x's index and msprobe 26's pass/warning/error),\n"
    "the first divergence with the divergence ranking (docs/DIVERGENCE.md) and the ten worst\n"
    "nodes in execution order; for a file built with --ckpt / --ckpt-json, the ten modules whose\n"
    "weights differ most (lowest cos, then largest l2).\n"
    "\n"
    "  --profile     print only the layer profile of a compare: for each decoder layer (the repeated\n"
    "                modules such as Module.model.layers.N) the largest output error of its forward\n"
    "                calls, its backward calls and the parameter gradients inside it, each with its\n"
    "                noise floor, and the divergence ranking's entries inside it\n"
    "  --depth N     with --profile: each module at depth N of the NPU hierarchy instead (the root's\n"
    "                children are depth 1)\n"
    "\n"
    "usage: graph-ascend info OUT/runs.json\n"
    "\n"
    "For a graph over more than two runs ({\"runs\": [...]} in compare.json): the runs, the\n"
    "reference and, per step and rank, where the runs first disagree and by how much.\n";

void PrintSide(const char* label, const vis::SideIndex& s, bool compare, const vis::FileMeta& meta) {
  uint32_t matched = 0, overflow[4] = {0, 0, 0, 0}, distributed = 0;
  for (uint32_t n = 0; n < s.size(); ++n) {
    if (s.matched[n] >= 0) ++matched;
    ++overflow[std::min<uint8_t>(s.overflow[n], 3)];
    if (s.flags[n] & vis::FLAG_DISTRIBUTED) ++distributed;
  }
  printf("%s: %u nodes\n", label, s.size());
  if (compare) printf("  matched %u, unmatched %u\n", matched, s.size() - matched);
  if (meta.overflow_checked()) {
    printf("  overflow: critical %u, high %u, medium %u\n", overflow[3], overflow[2], overflow[1]);
  }
  if (distributed > 0) printf("  nodes linked across ranks: %u\n", distributed);
}

// The checkpoint similarity of a file built with --ckpt / --ckpt-json: the ten worst modules.
Status PrintCkpt(const vis::VisReader& reader, const vis::SideIndex& npu) {
  const vis::FileMeta& meta = reader.meta();
  if (!meta.ckpt_compared()) return Status::Ok();
  auto s = reader.ReadCkpt();
  if (!s.ok()) return s.error();
  if (s->json().empty()) {
    printf("checkpoint similarity: %s vs %s\n", s->checkpoint_a().c_str(), s->checkpoint_b().c_str());
  } else {
    printf("checkpoint similarity: %s\n", s->json().c_str());
  }
  weights::Tolerance t;
  printf("  %d parameters, %u on no module node; %u of %d modules differ (cos < 1 - %g or l2 > %g)\n",
         s->param_size(), meta.ckpt_unmapped_count(), meta.ckpt_differing_modules(), s->module_size(), t.cos, t.l2);
  std::vector<uint32_t> worst = weights::WorstModules(*s, t, 10);
  printf("modules whose weights differ most:\n");
  if (worst.empty()) printf("  none: every module's parameters are equal\n");
  for (uint32_t i : worst) {
    const vis::CkptModule& m = s->module(static_cast<int>(i));
    std::string cos = m.has_cos() ? PyRepr(m.worst_cos()) : "-", l2 = m.has_l2() ? PyRepr(m.max_l2()) : "-";
    uint32_t node = m.node(0);
    std::string_view name = node < npu.size() ? npu.Name(node) : std::string_view("?");
    printf("  cos %-22s l2 %-22s %s%s (%d parameter%s; %.*s)\n", cos.c_str(), l2.c_str(), m.path().c_str(),
           m.incomparable() ? " [shapes differ]" : "", m.param_size(), m.param_size() == 1 ? "" : "s",
           static_cast<int>(name.size()), name.data());
  }
  return Status::Ok();
}

// A runs.json (graph over more than two runs): where the runs first disagree.
int PrintRuns(const std::string& path) {
  auto summary = runs::ReadSummaryJson(path);
  if (!summary.ok()) return Fail(summary.error().ToString());
  printf("file: %s\n", path.c_str());
  for (size_t i = 0; i < summary->runs.size(); ++i) {
    printf("%s: run %zu %s\n", static_cast<int>(i) == summary->reference ? "reference" : "run", i,
           summary->runs[i].c_str());
  }
  for (const std::string& line : summary->lines) printf("%s\n", line.c_str());
  return 0;
}

// info --profile: the layer profile alone.
int PrintProfile(const std::string& path, int depth) {
  auto reader = vis::VisReader::Open(path);
  if (!reader.ok()) return Fail(reader.error().ToString());
  const vis::FileMeta& meta = (*reader)->meta();
  if (meta.kind() != vis::GRAPH_COMPARE || meta.mode() == vis::MODE_STRUCTURE) {
    return Fail(Error{path, "", "is not a compare of values (a build, or a structure compare): it has no layer profile"}
                    .ToString());
  }
  auto npu = vis::LoadSideIndex(**reader, vis::SIDE_NPU);
  if (!npu.ok()) return Fail(npu.error().ToString());
  auto bench = vis::LoadSideIndex(**reader, vis::SIDE_BENCH);
  if (!bench.ok()) return Fail(bench.error().ToString());
  auto v = verdict::ReadVerdict(**reader, *npu, path);
  if (!v.ok()) return Fail(v.error().ToString());
  auto p = profile::ReadProfile(**reader, *npu, *bench, *v, depth);
  if (!p.ok()) return Fail(p.error().ToString());
  printf("file: %s\nmode: %s\n%s", path.c_str(), vis::CompareModeName(meta.mode()),
         profile::ProfileText(*p).c_str());
  return 0;
}

}  // namespace

int InfoCommand(const std::vector<std::string>& args) {
  if (args.size() == 1 && (args[0] == "-h" || args[0] == "--help")) {
    fputs(kInfoUsage, stdout);
    return 0;
  }
  std::string path;
  bool profile = false;
  int depth = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--profile") {
      profile = true;
    } else if (args[i] == "--depth") {
      if (i + 1 == args.size()) return Fail("--depth needs a value", kInfoUsage);
      const std::string& value = args[++i];
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), depth);
      if (ec != std::errc() || end != value.data() + value.size() || depth < 1) {
        return Fail("--depth '" + value + "': expected a depth from 1", kInfoUsage);
      }
    } else if (!args[i].empty() && args[i][0] == '-') {
      return Fail("unknown option '" + args[i] + "'", kInfoUsage);
    } else if (!path.empty()) {
      return Fail("info takes one .vis file", kInfoUsage);
    } else {
      path = args[i];
    }
  }
  if (path.empty()) return Fail("info takes one .vis file", kInfoUsage);
  if (EndsWith(path, ".json")) {
    if (profile) return Fail("--profile reads a compare .vis, not a runs.json", kInfoUsage);
    return PrintRuns(path);
  }
  if (depth > 0 && !profile) return Fail("--depth goes with --profile", kInfoUsage);
  if (profile) return PrintProfile(path, depth);
  auto reader = vis::VisReader::Open(path);
  if (!reader.ok()) return Fail(reader.error().ToString());
  const vis::FileMeta& meta = (*reader)->meta();
  bool compare = meta.kind() == vis::GRAPH_COMPARE;
  auto npu = vis::LoadSideIndex(**reader, vis::SIDE_NPU);
  if (!npu.ok()) return Fail(npu.error().ToString());
  printf("file: %s\n", path.c_str());
  printf("written by: %s\n", meta.writer().c_str());
  printf("kind: %s, mode: %s, task: %s\n", compare ? "compare" : "build", vis::CompareModeName(meta.mode()),
         meta.task().c_str());
  if (!meta.stage().empty()) printf("stage: %s\n", meta.stage().c_str());
  if (!meta.step().empty() || !meta.rank().empty()) printf("step: %s, rank: %s\n", meta.step().c_str(), meta.rank().c_str());
  printf("micro steps: %u\n", meta.micro_steps());
  printf("npu dump: %s (%s)\n", meta.npu().dump_path().c_str(), meta.npu().framework().c_str());
  if (compare) printf("bench dump: %s (%s)\n", meta.bench().dump_path().c_str(), meta.bench().framework().c_str());
  for (const vis::GraphMeta* g : {&meta.npu(), &meta.bench()}) {
    if (g->code_mapping().empty()) continue;
    printf("%s stacks: %u nodes from code mapping %s\n", g == &meta.npu() ? "npu" : "bench", g->code_mapping_nodes(),
           g->code_mapping().c_str());
  }
  PrintSide("NPU", *npu, compare, meta);
  if (compare) {
    auto bench = vis::LoadSideIndex(**reader, vis::SIDE_BENCH);
    if (!bench.ok()) return Fail(bench.error().ToString());
    PrintSide("Bench", *bench, compare, meta);
  }
  if (Status st = PrintCkpt(**reader, *npu); !st.ok()) return Fail(st.error().ToString());
  if (!compare || meta.mode() == vis::MODE_STRUCTURE) return 0;

  // Colour buckets of the NPU nodes, by the file's own legend.
  std::vector<uint32_t> counts(meta.legend_size(), 0);
  int unmatched = compare::UnmatchedBucket(meta.legend());
  for (uint32_t n = 1; n < npu->size(); ++n) {
    int b = npu->matched[n] < 0 && std::isnan(npu->precision[n]) ? unmatched : compare::BucketOf(meta.legend(), npu->precision[n]);
    if (b >= 0) ++counts[b];
  }
  printf("colour buckets (NPU nodes):\n");
  for (int i = 0; i < meta.legend_size(); ++i) {
    const vis::ColorBucket& b = meta.legend(i);
    printf("  %s %-12s %u\n", b.color().c_str(), b.name().c_str(), counts[i]);
  }

  // msprobe 26's grades beside the 8.x index; the file says which one the
  // page shows first.
  printf("default grading: %s\n", meta.grading() == vis::GRADING_26 ? "msprobe 26 (pass/warning/error)"
                                                                      : "precision index (msprobe 8.x)");
  if (meta.grade_legend_size() == 0) {
    printf("msprobe 26 grades: not stored (the file predates them)\n");
  } else {
    uint32_t grades[4] = {0, 0, 0, 0};  // pass, warning, error, unmatched
    uint32_t first_error = 0;
    for (uint32_t n = 1; n < npu->size(); ++n) {
      double g = npu->grade[n];
      if (std::isnan(g)) {
        grades[3] += npu->matched[n] < 0;
        continue;
      }
      ++grades[g >= 1 ? 2 : g > 0 ? 1 : 0];
    }
    for (uint32_t n : npu->PreOrder()) {
      bool leaf = npu->child_offset[n + 1] == npu->child_offset[n];
      if (n != 0 && leaf && npu->grade[n] >= 1) {
        first_error = n;
        break;
      }
    }
    printf("msprobe 26 grades (NPU nodes): pass %u, warning %u, error %u, unmatched %u\n", grades[0], grades[1],
           grades[2], grades[3]);
    if (first_error != 0) {
      printf("first error by msprobe 26's grading, in execution order: %.*s (%s)\n",
             static_cast<int>(npu->Name(first_error).size()), npu->Name(first_error).data(),
             verdict::NodeTypeName(npu->node_type[first_error]));
    }
  }

  // The first divergence: the file's ranking (docs/DIVERGENCE.md); files
  // written before it get the old rule, the first leaf in execution order
  // whose index is not the best value.
  bool md5 = meta.mode() == vis::MODE_MD5;
  std::vector<uint32_t> order = npu->PreOrder();
  auto ranking = verdict::ReadVerdict(**reader, *npu, path);
  if (!ranking.ok()) return Fail(ranking.error().ToString());
  auto name_of = [&](uint32_t n) { return std::string(npu->Name(n)); };
  if (ranking->ranked) {
    const verdict::Verdict& v = *ranking;
    if (v.entries.empty() && v.noise_rule) {
      // The verdict, with the largest margin seen (docs/DIVERGENCE.md).
      printf("first divergence, in execution order: none: %s\n", verdict::QuietSentence(v).c_str());
    } else if (v.entries.empty()) {
      printf("first divergence, in execution order: none\n");
    }
    for (size_t i = 0; i < v.entries.size(); ++i) {
      const verdict::Entry& e = v.entries[i];
      if (i == 0) {
        if (e.unmatched) {
          printf("first divergence, in execution order: %s (%s, unmatched)\n", e.name.c_str(), e.node_type);
        } else {
          printf("first divergence, in execution order: %s (%s, index %g)\n", e.name.c_str(), e.node_type, e.index);
        }
        if (!v.peers.empty()) {
          printf("  it receives from rank");
          for (int32_t r : v.peers) printf(" %d", r);
          printf(": the divergence may come from there\n");
        }
        printf("divergence ranking (%zu):\n", v.entries.size());
      }
      if (i >= 20) {
        printf("  ... %zu more\n", v.entries.size() - i);
        break;
      }
      printf("  %-36s %s", divergence::ReasonName(e.reason), e.name.c_str());
      if (e.reason != vis::DIVERGENCE_UNMATCHED) {
        if (v.noise_rule) {
          printf(" (%s; inputs %g, outputs %g)", verdict::MarginText(v, e).c_str(), e.input_error, e.output_error);
        } else {
          printf(" (inputs %g, outputs %g, floor %g)", e.input_error, e.output_error, e.floor);
        }
      }
      if (!e.note.empty()) printf(" %s", e.note.c_str());
      printf("\n");
    }
  } else {
    for (uint32_t n : order) {
      bool leaf = npu->child_offset[n + 1] == npu->child_offset[n];
      if (n == 0 || !leaf || std::isnan(npu->precision[n])) continue;
      if (md5 ? npu->precision[n] < 1 : npu->precision[n] > 0) {
        printf("first divergence, in execution order: %s (%s, index %g)\n", name_of(n).c_str(),
               verdict::NodeTypeName(npu->node_type[n]), npu->precision[n]);
        break;
      }
    }
  }

  // The ten worst nodes, listed in execution order.
  std::vector<std::pair<double, size_t>> ranked;  // (badness, position in execution order)
  for (size_t i = 0; i < order.size(); ++i) {
    uint32_t n = order[i];
    if (n == 0 || npu->node_type[n] == 9 || std::isnan(npu->precision[n])) continue;
    double bad = md5 ? 1 - npu->precision[n] : npu->precision[n];
    if (bad > 0) ranked.emplace_back(bad, i);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.first > b.first; });
  if (ranked.size() > 10) ranked.resize(10);
  std::sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.second < b.second; });
  printf("worst nodes, in execution order:\n");
  if (ranked.empty()) printf("  none: every compared node is in the best bucket\n");
  for (auto& [bad, pos] : ranked) {
    uint32_t n = order[pos];
    int b = compare::BucketOf(meta.legend(), npu->precision[n]);
    printf("  %-10g %-8s %-15s %.*s\n", npu->precision[n], b >= 0 ? meta.legend(b).color().c_str() : "",
           verdict::NodeTypeName(npu->node_type[n]), static_cast<int>(npu->Name(n).size()), npu->Name(n).data());
  }
  return 0;
}

}  // namespace graph_ascend::cli
