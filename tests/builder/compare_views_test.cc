// The builder compares a matched pair on views of the dump's arrays; the
// graph service (manual matching) on views of the details stored in the
// .vis. On every matched node of the sample compares both must give the same
// metrics, precision index, msprobe 26 grade and divergence evidence.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "compare/grading.h"
#include "compare/item_view.h"
#include "compare/pair_compare.h"
#include "compare/pair_metrics.h"
#include "divergence/divergence.h"
#include "graph/graph_builder.h"
#include "test_files.h"
#include "vis/vis_file.h"
#include "vis_writer/graph_writer.h"

namespace graph_ascend {
namespace {

namespace fs = std::filesystem;

// The mode the builder detects (§6.1).
vis::CompareMode ModeOf(const graph::Side& npu) {
  if (npu.dump.task == "tensor") return vis::MODE_TENSOR;
  if (npu.dump.task == "structure") return vis::MODE_STRUCTURE;
  return npu.dump.summary_md5 ? vis::MODE_MD5 : vis::MODE_STATISTICS;
}

void ItemsFromDump(const graph::Side& side, uint32_t node, compare::NodeItems* out) {
  const graph::Graph& g = *side.graph;
  const dump::DumpEntry* e = g.entry[node] == graph::kNoNode ? nullptr : &side.dump.entries[g.entry[node]];
  compare::ItemsOf(side.dump, e, g.Name(node), *side.pool, out);
}

// Same numbers, NaN equal to NaN.
bool Same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void ExpectSameEvidence(const divergence::Evidence& a, const divergence::Evidence& b, const std::string& where) {
  EXPECT_EQ(a.compared, b.compared) << where;
  EXPECT_EQ(a.has_input, b.has_input) << where;
  EXPECT_EQ(a.has_output, b.has_output) << where;
  EXPECT_TRUE(Same(a.input_error, b.input_error)) << where;
  EXPECT_TRUE(Same(a.output_error, b.output_error)) << where;
  EXPECT_TRUE(Same(a.floor, b.floor)) << where;
  EXPECT_EQ(a.input_changed, b.input_changed) << where;
  EXPECT_EQ(a.output_changed, b.output_changed) << where;
  EXPECT_EQ(a.input_nonfinite, b.input_nonfinite) << where;
  EXPECT_EQ(a.output_nonfinite, b.output_nonfinite) << where;
  EXPECT_EQ(a.note, b.note) << where;
}

TEST(CompareViewsTest, DumpAndStoredDetailsCompareAlike) {
  size_t samples = 0, pairs = 0;
  for (const auto& sample : fs::directory_iterator(testing::SourceDir() + "/samples")) {
    fs::path npu_step = sample.path() / "npu" / "step0", bench_step = sample.path() / "bench" / "step0";
    if (!fs::is_directory(npu_step) || !fs::is_directory(bench_step)) continue;
    for (const auto& rank : fs::directory_iterator(npu_step)) {
      fs::path bench_rank = bench_step / rank.path().filename();
      if (!fs::is_directory(bench_rank)) continue;
      StringPool pool;
      auto sides = graph::BuildSidePair(rank.path().string(), bench_rank.string(), &pool, graph::BuildOptions{});
      if (!sides.ok()) continue;  // the samples of failures
      ++samples;
      vis::CompareMode mode = ModeOf(*sides->npu);
      const graph::Graph& g = *sides->npu->graph;
      compare::NodeItems dump_npu, dump_bench, stored_npu, stored_bench;
      compare::ItemPairing from_dump, from_details;
      compare::PairMetrics dump_metrics, stored_metrics;
      for (uint32_t node = 1; node < g.size(); ++node) {
        int32_t peer = sides->bench->graph->Find(g.name[node]);
        if (peer == graph::kNoNode) continue;
        ++pairs;
        std::string name(g.Name(node));
        std::string where = rank.path().string() + " " + name;
        // The builder's way.
        ItemsFromDump(*sides->npu, node, &dump_npu);
        ItemsFromDump(*sides->bench, static_cast<uint32_t>(peer), &dump_bench);
        compare::PairItems(dump_npu, dump_bench, &from_dump);
        compare::PairVerdict v = compare::ComparePair(mode, name, from_dump, nullptr, &dump_metrics);
        double grade = compare::Grade26(mode, name, from_dump, dump_metrics, false);
        divergence::Evidence evidence = divergence::EvidenceOf(mode, from_dump, dump_metrics);
        // The service's way: the details as stored, compared, the metrics read back.
        vis::NodeDetail npu_detail, bench_detail;
        vis::FillDetail(*sides->npu, node, &npu_detail);
        vis::FillDetail(*sides->bench, static_cast<uint32_t>(peer), &bench_detail);
        // As the service reads them: keys whole.
        vis::ResolveKeys(name, &npu_detail);
        vis::ResolveKeys(sides->bench->graph->Name(static_cast<uint32_t>(peer)), &bench_detail);
        vis::NodeDetail with_dump_metrics = npu_detail;
        compare::StoreMetrics(dump_metrics, &with_dump_metrics);
        compare::PairVerdict w = compare::ComparePair(mode, name, &npu_detail, bench_detail, nullptr);
        ASSERT_EQ(npu_detail.SerializeAsString(), with_dump_metrics.SerializeAsString()) << where;
        EXPECT_EQ(v.has_precision, w.has_precision) << where;
        EXPECT_TRUE(Same(v.precision_index, w.precision_index)) << where;
        EXPECT_EQ(v.is_float, w.is_float) << where;
        EXPECT_EQ(v.md5_result, w.md5_result) << where;
        EXPECT_TRUE(Same(grade, compare::Grade26(mode, name, npu_detail, bench_detail, false))) << where;
        ExpectSameEvidence(evidence, divergence::EvidenceOf(mode, npu_detail, bench_detail), where);
        // Metrics read back from the stored detail are the ones stored.
        compare::MetricsOf(npu_detail, &stored_metrics);
        ASSERT_EQ(stored_metrics.items(), dump_metrics.items()) << where;
        for (uint32_t k = 0; k < dump_metrics.items(); ++k) {
          ASSERT_EQ(stored_metrics.end(k) - stored_metrics.begin(k), dump_metrics.end(k) - dump_metrics.begin(k));
          for (auto *a = dump_metrics.begin(k), *b = stored_metrics.begin(k); a != dump_metrics.end(k); ++a, ++b) {
            EXPECT_EQ(a->name, b->name) << where;
            EXPECT_EQ(a->kind, b->kind) << where;
            EXPECT_EQ(dump_metrics.text(*a), stored_metrics.text(*b)) << where;
          }
        }
      }
    }
  }
  RecordProperty("samples", static_cast<int>(samples));
  RecordProperty("pairs", static_cast<int>(pairs));
  EXPECT_GT(samples, 10u);
  EXPECT_GT(pairs, 500u);
}

}  // namespace
}  // namespace graph_ascend
