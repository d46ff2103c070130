// The flags of `graph` and `graph_visualize` as one table: a row names a flag in each dialect, the field it sets,
// the shape of its value and its help. Both commands parse with it and print their --help from it, and the graph
// service writes a builder child's command line from it (GraphArgv), so the three cannot drift apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/run_flags.h"

namespace graph_ascend::cli {

// What the flags say, as given: paths and numbers, no file read yet (the command reads the --code_mapping and
// --ckpt files; the service fills this from a request).
struct GraphFlags {
  job::Dialect dialect = job::Dialect::kGraph;
  std::string input;           // graph -i: compare.json
  std::string target, golden;  // graph_visualize -tp, -gp
  std::string output;          // -o
  bool overflow_check = false;
  bool complete_stack = false;
  bool fuzzy_match = false;
  bool layer_mapping = false;
  std::string layer_mapping_file;  // -lm FILE
  bool verbose = false;
  bool progress_json = false;
  bool compare_log = false;   // graph_visualize -tensor_log
  bool progress_log = false;  // graph_visualize -progress_log
  std::string file_type = "db", output_format = "vis";
  int jobs = 0;                           // --jobs; 0: not given
  int threads = 0;                        // --threads; 0: not given
  uint64_t max_memory = 0;                // --max-memory in bytes; 0: not given
  job::ShardSpec shard;                   // --shard I/N (auto resolved from the environment)
  std::string ckpt_a, ckpt_b, ckpt_json;  // graph --ckpt A B, --ckpt-json FILE
  std::vector<std::string> code_mapping;  // --code_mapping NPU_CSV [BENCH_CSV]
  job::ParallelFlags parallel;            // --rank_size --tp --pp --vpp --order
};

// How a flag takes its value (what the parser reads after it).
enum class ValueShape {
  kNone,      // a switch
  kOne,       // exactly one value, not starting with '-'
  kOptional,  // one value if the next argument is not a flag
  kTwo,       // exactly two values
  kList,      // the values up to the next flag (a negative number is a value)
};

// Where a row appears in --help.
enum class FlagGroup { kRun, kMerge };

struct FlagRow {
  const char* graph;      // the names under graph, short first ("-i, --input_path"); null: not a graph flag
  const char* visualize;  // the names under graph_visualize; null: not one of its flags
  ValueShape shape;
  const char* value;    // the value as usage and help show it: "FILE", "[YAML]", "N [B]"
  const char* missing;  // the error after the flag when the value is missing: "needs an output directory"
  // Sets the field from the values read ("" or an error message naming `flag`, the name as typed).
  std::string (*set)(GraphFlags* f, const std::string& flag, const std::vector<std::string>& values);
  // Appends `name` and the field's values to argv when the field is set (GraphArgv).
  void (*put)(const GraphFlags& f, const std::string& name, std::vector<std::string>* argv);
  FlagGroup group;
  bool required;     // shown without brackets in the usage line
  const char* help;  // "{bench}" is "bench" under graph, "golden" under graph_visualize
};

// Every row, in the order --help lists them.
const std::vector<FlagRow>& GraphFlagRows();

// The names of `row` in `dialect` ("-i", "--input_path"); empty when it is not a flag of that dialect.
std::vector<std::string> FlagNames(const FlagRow& row, job::Dialect dialect);

// The command's --help: usage line, description, the rows of each group.
const std::string& GraphHelp(job::Dialect dialect);

struct FlagParse {
  enum Outcome { kRun, kHelp, kError } outcome = kRun;
  std::string error;   // kError: the message
  bool usage = false;  // kError: print the help after it (graph's unknown options, as before)
};

// Parses the arguments after the command name into `flags` (dialect set by the caller; graph_visualize takes
// "--flag=value" as argparse does).
FlagParse ParseGraphFlags(const std::vector<std::string>& args, GraphFlags* flags);

// The command line that gives `flags`: the command name, then each set field's flag (its first name in the
// dialect) and values, in table order. ParseGraphFlags of it (after the name) gives `flags` back.
std::vector<std::string> GraphArgv(const GraphFlags& flags);

}  // namespace graph_ascend::cli
