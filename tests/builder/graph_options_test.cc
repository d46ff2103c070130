// The rules between the graph command's options (job::CheckGraphOptions, issue 34): each rule once, in both
// dialects where the messages differ.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "job/graph_job.h"

namespace graph_ascend::job {
namespace {

CompareConfig Build() {
  CompareConfig c;
  c.path = "/runs/compare.json";
  c.npu_path = "/runs/npu";
  return c;
}

CompareConfig Compare() {
  CompareConfig c = Build();
  c.bench_path = "/runs/bench";
  return c;
}

std::string Message(const CompareConfig& c, const GraphOptions& o) {
  Status st = CheckGraphOptions(c, o);
  return st.ok() ? "ok" : st.error().ToString();
}

std::shared_ptr<const dump::CodeMapping> Mapping(const std::string& path) {
  auto m = std::make_shared<dump::CodeMapping>();
  m->path = path;
  return m;
}

TEST(CheckGraphOptionsTest, PlainRunsPass) {
  GraphOptions o;
  EXPECT_EQ(Message(Build(), o), "ok");
  o.fuzzy_match = true;
  EXPECT_EQ(Message(Compare(), o), "ok");
}

TEST(CheckGraphOptionsTest, FuzzyAndLayerMappingTogether) {
  GraphOptions o;
  o.fuzzy_match = o.layer_mapping = true;
  EXPECT_EQ(Message(Compare(), o),
            "-f (fuzzy match) and -lm (layer mapping) cannot be used together: pick one matching rule");
  o.dialect = Dialect::kVisualize;
  EXPECT_EQ(Message(Compare(), o),
            "-fm (fuzzy match) and -lm (layer mapping) cannot be used together: pick one matching rule");
}

TEST(CheckGraphOptionsTest, MatchingNeedsABench) {
  GraphOptions o;
  o.fuzzy_match = true;
  EXPECT_EQ(Message(Build(), o),
            "/runs/compare.json: -f (fuzzy match) pairs nodes of two runs: it needs a bench_path (this is a build)");
  o.fuzzy_match = false;
  o.layer_mapping = true;
  o.dialect = Dialect::kVisualize;
  EXPECT_EQ(Message(Build(), o),
            "-lm (layer mapping) pairs nodes of two runs: it needs -gp/--golden_path (this is a build)");
}

TEST(CheckGraphOptionsTest, BenchCodeMappingNeedsABench) {
  GraphOptions o;
  o.code_mapping = Mapping("/m/npu.csv");
  EXPECT_EQ(Message(Build(), o), "ok");
  o.bench_code_mapping = Mapping("/m/bench.csv");
  EXPECT_EQ(Message(Build(), o), "/m/bench.csv: a second --code_mapping file is for the bench side, and this is a build");
  EXPECT_EQ(Message(Compare(), o), "ok");
}

TEST(CheckGraphOptionsTest, CodeMappingNotWithAParallelMerge) {
  GraphOptions o;
  o.code_mapping = Mapping("/m/npu.csv");
  CompareConfig c = Build();
  c.parallel_merge = true;
  EXPECT_EQ(Message(c, o), "/m/npu.csv: --code_mapping cannot be used with a parallel merge");
}

TEST(CheckGraphOptionsTest, ShardNotWithAVisDb) {
  GraphOptions o;
  o.shard = {0, 2};
  EXPECT_EQ(Message(Build(), o), "ok");
  o.output_format = OutputFormat::kVisDb;
  EXPECT_EQ(Message(Build(), o).rfind("flag --shard: cannot be used with --output_format db", 0), 0u);
}

TEST(CheckGraphOptionsTest, ShardNotWithAMergedDump) {
  GraphOptions o;
  o.shard = {1, 2};
  o.output_format = OutputFormat::kMergedDump;
  EXPECT_EQ(Message(Build(), o), "flag --shard: cannot be used with --file_type json (a merge build is one share)");
}

}  // namespace
}  // namespace graph_ascend::job
