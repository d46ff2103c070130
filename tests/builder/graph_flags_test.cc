// The flag table of graph and graph_visualize (cli/graph_flags.h, issue 34): every row parses in each dialect it
// belongs to and sets its field, --help lists every row, unknown flags and missing values give the messages the
// two hand-written loops gave, and GraphArgv writes back what was parsed.
#include "cli/graph_flags.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace graph_ascend::cli {
namespace {

using job::Dialect;
using Args = std::vector<std::string>;

const Dialect kDialects[] = {Dialect::kGraph, Dialect::kVisualize};

// A value each row takes, by the row's last name (its long name). A new row needs one here.
const std::map<std::string, Args> kExamples = {
    {"--input_path", {"runs/compare.json"}},
    {"--target_path", {"runs/npu"}},
    {"--golden_path", {"runs/bench"}},
    {"--output_path", {"out"}},
    {"--overflow_check", {}},
    {"--complete_stack", {}},
    {"--fuzzy_match", {}},
    {"--layer_mapping", {"mapping.yaml"}},
    {"--is_print_compare_log", {}},
    {"--is_print_progress_log", {}},
    {"--file_type", {"json"}},
    {"--output_format", {"db"}},
    {"--verbose", {}},
    {"--progress_json", {}},
    {"--jobs", {"3"}},
    {"--threads", {"5"}},
    {"--max-memory", {"8G"}},
    {"--shard", {"1/4"}},
    {"--ckpt", {"ckpt/npu", "ckpt/bench"}},
    {"--ckpt-json", {"similarity.json"}},
    {"--code_mapping", {"npu.csv", "bench.csv"}},
    {"--help", {}},
    {"--rank_size", {"8", "4"}},
    {"--tp", {"2", "2"}},
    {"--pp", {"4", "2"}},
    {"--vpp", {"2", "1"}},
    {"--order", {"tp-pp-dp", "tp-dp-pp"}},
};

FlagParse Parse(Dialect d, const Args& args, GraphFlags* flags) {
  flags->dialect = d;
  return ParseGraphFlags(args, flags);
}

std::string ErrorOf(Dialect d, const Args& args) {
  GraphFlags flags;
  FlagParse p = Parse(d, args, &flags);
  return p.outcome == FlagParse::kError ? p.error : "no error";
}

const char* Name(Dialect d) { return d == Dialect::kGraph ? "graph" : "graph_visualize"; }

TEST(GraphFlagsTest, EachRowSetsItsFieldInEachOfItsDialects) {
  for (const FlagRow& row : GraphFlagRows()) {
    bool somewhere = false;
    for (Dialect d : kDialects) {
      std::vector<std::string> names = FlagNames(row, d);
      if (names.empty()) continue;
      somewhere = true;
      auto example = kExamples.find(names.back());
      ASSERT_NE(example, kExamples.end()) << names.back() << " has no example value in this test";
      for (const std::string& name : names) {
        Args args = {name};
        args.insert(args.end(), example->second.begin(), example->second.end());
        GraphFlags flags;
        FlagParse p = Parse(d, args, &flags);
        if (row.set == nullptr) {
          EXPECT_EQ(p.outcome, FlagParse::kHelp) << Name(d) << " " << name;
          continue;
        }
        ASSERT_EQ(p.outcome, FlagParse::kRun) << Name(d) << " " << name << ": " << p.error;
        // The field is set: the command line written back holds the flag (by its first name) and its values.
        GraphFlags plain;
        plain.dialect = d;
        Args written = GraphArgv(flags);
        ASSERT_NE(written, GraphArgv(plain)) << Name(d) << " " << name << " set nothing";
        Args expected = {Name(d), names[0]};
        expected.insert(expected.end(), example->second.begin(), example->second.end());
        if (name == "--max-memory") expected.back() = "8589934592";  // written in bytes
        EXPECT_EQ(written, expected) << Name(d) << " " << name;
      }
    }
    EXPECT_TRUE(somewhere) << "a row of neither dialect";
  }
}

TEST(GraphFlagsTest, TheWrittenCommandLineParsesBack) {
  GraphFlags flags;
  Args args = {"-i", "c.json", "-o", "out", "-oc", "-cs", "-lm", "--jobs", "2", "--max-memory", "512M",
               "--shard", "0/2", "--code_mapping", "a.csv", "--rank_size", "4", "--tp", "2", "--pp", "2",
               "--order", "tp-dp-pp", "--ckpt-json", "s.json", "-v", "--progress_json"};
  ASSERT_EQ(Parse(Dialect::kGraph, args, &flags).outcome, FlagParse::kRun);
  Args written = GraphArgv(flags);
  GraphFlags again;
  ASSERT_EQ(Parse(Dialect::kGraph, Args(written.begin() + 1, written.end()), &again).outcome, FlagParse::kRun);
  EXPECT_EQ(GraphArgv(again), written);
  EXPECT_EQ(again.max_memory, 512u << 20);
  EXPECT_EQ(again.shard.count, 2u);
  EXPECT_EQ(again.parallel.order, Args{"tp-dp-pp"});
}

TEST(GraphFlagsTest, HelpListsEveryRowOfItsDialect) {
  for (Dialect d : kDialects) {
    const std::string& help = GraphHelp(d);
    EXPECT_EQ(help.rfind(std::string("usage: graph-ascend ") + Name(d) + " ", 0), 0u) << help;
    for (const FlagRow& row : GraphFlagRows()) {
      const char* names = d == Dialect::kGraph ? row.graph : row.visualize;
      std::string line = std::string("\n  ") + (names ? names : row.graph ? row.graph : row.visualize);
      if (*row.value) line += std::string(" ") + row.value;
      EXPECT_EQ(help.find(line) != std::string::npos, names != nullptr) << Name(d) << ":" << line;
    }
    size_t start = 0;
    for (size_t end = help.find('\n'); end != std::string::npos; start = end + 1, end = help.find('\n', start)) {
      EXPECT_LE(end - start, 112u) << help.substr(start, end - start);
    }
    EXPECT_EQ(help.find("{bench}"), std::string::npos);
  }
  EXPECT_NE(GraphHelp(Dialect::kGraph).find("merged<i>"), std::string::npos);
  EXPECT_NE(GraphHelp(Dialect::kVisualize).find("the golden side"), std::string::npos);
}

TEST(GraphFlagsTest, UnknownFlagsAreTheErrorsTheyWere) {
  GraphFlags flags;
  FlagParse p = Parse(Dialect::kGraph, {"-i", "c.json", "--nope"}, &flags);
  EXPECT_EQ(p.outcome, FlagParse::kError);
  EXPECT_EQ(p.error, "unknown option '--nope'");
  EXPECT_TRUE(p.usage);
  p = Parse(Dialect::kVisualize, {"-tp", "npu", "--nope"}, &flags);
  EXPECT_EQ(p.error, "unknown option '--nope' (graph-ascend graph_visualize --help lists the options)");
  EXPECT_FALSE(p.usage);
  // Each dialect's own flags are unknown to the other; graph takes no --flag=value.
  EXPECT_EQ(ErrorOf(Dialect::kGraph, {"-tp", "npu"}), "unknown option '-tp'");
  EXPECT_EQ(ErrorOf(Dialect::kGraph, {"-fm"}), "unknown option '-fm'");
  EXPECT_EQ(ErrorOf(Dialect::kGraph, {"--output_path=out"}), "unknown option '--output_path=out'");
  EXPECT_EQ(ErrorOf(Dialect::kGraph, {"c.json"}), "unknown option 'c.json'");
  for (const char* flag : {"-i", "-cs", "-f", "--ckpt"}) {
    EXPECT_EQ(ErrorOf(Dialect::kVisualize, {flag}),
              std::string("unknown option '") + flag + "' (graph-ascend graph_visualize --help lists the options)");
  }
}

TEST(GraphFlagsTest, MissingValuesAreTheErrorsTheyWere) {
  for (Dialect d : kDialects) {
    for (const FlagRow& row : GraphFlagRows()) {
      if (row.shape == ValueShape::kNone || row.shape == ValueShape::kOptional) continue;
      for (const std::string& name : FlagNames(row, d)) {
        EXPECT_EQ(ErrorOf(d, {name, "-v"}), name + " " + row.missing) << Name(d);
      }
    }
  }
  // The messages of the two loops the table replaced.
  EXPECT_EQ(ErrorOf(Dialect::kGraph, {"-i"}), "-i needs a compare.json path");
  EXPECT_EQ(ErrorOf(Dialect::kGraph, {"--input_path", "-o"}), "--input_path needs a compare.json path");
  EXPECT_EQ(ErrorOf(Dialect::kVisualize, {"-tp"}), "-tp needs the target dump directory");
  EXPECT_EQ(ErrorOf(Dialect::kVisualize, {"--golden_path"}), "--golden_path needs the golden dump directory");
  EXPECT_EQ(ErrorOf(Dialect::kGraph, {"-o"}), "-o needs an output directory");
  EXPECT_EQ(ErrorOf(Dialect::kGraph, {"--ckpt", "a"}),
            "--ckpt needs two checkpoint folders (of the npu run, then of the bench run)");
  EXPECT_EQ(ErrorOf(Dialect::kGraph, {"--ckpt-json"}), "--ckpt-json needs a ckpt_compare JSON file");
  EXPECT_EQ(ErrorOf(Dialect::kVisualize, {"--jobs"}), "--jobs needs a number of pairs to run at once");
  EXPECT_EQ(ErrorOf(Dialect::kGraph, {"--max-memory"}), "--max-memory needs a size (8G, 512M)");
  EXPECT_EQ(ErrorOf(Dialect::kGraph, {"--tp"}), "--tp needs a value (two, npu bench, in a compare)");
  EXPECT_EQ(ErrorOf(Dialect::kVisualize, {"--order", "-v"}), "--order needs a value (two, npu bench, in a compare)");
  for (Dialect d : kDialects) {
    EXPECT_EQ(ErrorOf(d, {"--code_mapping"}),
              "--code_mapping takes a code_mapping CSV (and a second one for the bench side of a compare)");
    EXPECT_EQ(ErrorOf(d, {"--code_mapping", "a", "b", "c"}),
              "--code_mapping takes a code_mapping CSV (and a second one for the bench side of a compare)");
  }
  EXPECT_EQ(ErrorOf(Dialect::kVisualize, {"--file_type"}), "--file_type takes db or json");
  EXPECT_EQ(ErrorOf(Dialect::kVisualize, {"--file_type=csv"}), "--file_type takes db or json");
  EXPECT_EQ(ErrorOf(Dialect::kVisualize, {"--output_format", "xlsx"}), "--output_format takes vis or db");
}

TEST(GraphFlagsTest, BadValuesAreNamed) {
  for (Dialect d : kDialects) {
    EXPECT_EQ(ErrorOf(d, {"--jobs", "0"}), "--jobs '0': expected a positive number of pairs to run at once");
    EXPECT_EQ(ErrorOf(d, {"--max-memory", "lots"}),
              "flag --max-memory: 'lots': expected a positive size in bytes, or with K, M, G or T (8G)");
    EXPECT_EQ(ErrorOf(d, {"--shard", "2/2"}), "flag --shard: '2/2': shard 2 of 2 (shards are numbered from 0)");
    EXPECT_EQ(ErrorOf(d, {"--tp", "two"}), "--tp takes integers, got 'two'");
    EXPECT_EQ(ErrorOf(d, {"--pp", "2", "--pp", "2"}), "--pp is given twice");
    EXPECT_EQ(ErrorOf(d, {"--order", "a", "--order", "b"}), "--order is given twice");
  }
}

TEST(GraphFlagsTest, ValuesAsEachDialectReadsThem) {
  GraphFlags flags;
  // A negative number is a value of a list; -lm takes a file only when one follows.
  ASSERT_EQ(Parse(Dialect::kGraph, {"--vpp", "-1", "2", "-lm", "-oc"}, &flags).outcome, FlagParse::kRun);
  EXPECT_EQ(flags.parallel.vpp, (std::vector<int>{-1, 2}));
  EXPECT_TRUE(flags.layer_mapping);
  EXPECT_EQ(flags.layer_mapping_file, "");
  EXPECT_TRUE(flags.overflow_check);
  GraphFlags v;
  ASSERT_EQ(Parse(Dialect::kVisualize, {"--target_path=npu", "--output_path=out", "-fm", "--output_format=db"}, &v)
                .outcome,
            FlagParse::kRun);
  EXPECT_EQ(v.target, "npu");
  EXPECT_EQ(v.output, "out");
  EXPECT_TRUE(v.fuzzy_match);
  EXPECT_EQ(v.output_format, "db");
}

}  // namespace
}  // namespace graph_ascend::cli
