#include "cli/graph_flags.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "base/cores.h"
#include "cli/shard_flag.h"

namespace graph_ascend::cli {
namespace {

using Values = std::vector<std::string>;
using Argv = std::vector<std::string>;

// ------------------------------------------------------------ setting and writing one field, by its kind

template <bool GraphFlags::*field>
std::string SetSwitch(GraphFlags* f, const std::string&, const Values&) {
  f->*field = true;
  return "";
}

template <bool GraphFlags::*field>
void PutSwitch(const GraphFlags& f, const std::string& name, Argv* argv) {
  if (f.*field) argv->push_back(name);
}

template <std::string GraphFlags::*field>
std::string SetText(GraphFlags* f, const std::string&, const Values& v) {
  f->*field = v[0];
  return "";
}

template <std::string GraphFlags::*field>
void PutText(const GraphFlags& f, const std::string& name, Argv* argv) {
  if ((f.*field).empty()) return;
  argv->push_back(name);
  argv->push_back(f.*field);
}

// A text with a default (--file_type db, --output_format vis): written only when it is not the default.
template <std::string GraphFlags::*field>
void PutChoice(const GraphFlags& f, const std::string& name, Argv* argv) {
  if (f.*field != GraphFlags().*field) {
    argv->push_back(name);
    argv->push_back(f.*field);
  }
}

const char* const kCounted = " needs a value (two, npu bench, in a compare)";

template <std::vector<int> job::ParallelFlags::*field>
std::string SetInts(GraphFlags* f, const std::string& flag, const Values& v) {
  std::vector<int>& out = f->parallel.*field;
  if (!out.empty()) return flag + " is given twice";
  for (const std::string& text : v) {
    char* end = nullptr;
    errno = 0;
    long n = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || n < INT_MIN || n > INT_MAX) {
      return flag + " takes integers, got '" + text + "'";
    }
    out.push_back(static_cast<int>(n));
  }
  return "";
}

template <std::vector<int> job::ParallelFlags::*field>
void PutInts(const GraphFlags& f, const std::string& name, Argv* argv) {
  const std::vector<int>& v = f.parallel.*field;
  if (v.empty()) return;
  argv->push_back(name);
  for (int n : v) argv->push_back(std::to_string(n));
}

std::string SetOrder(GraphFlags* f, const std::string& flag, const Values& v) {
  if (!f->parallel.order.empty()) return flag + " is given twice";
  f->parallel.order = v;
  return "";
}

void PutOrder(const GraphFlags& f, const std::string& name, Argv* argv) {
  if (f.parallel.order.empty()) return;
  argv->push_back(name);
  argv->insert(argv->end(), f.parallel.order.begin(), f.parallel.order.end());
}

// ------------------------------------------------------------ the fields with their own rules

std::string SetLayerMapping(GraphFlags* f, const std::string&, const Values& v) {
  f->layer_mapping = true;
  if (!v.empty()) f->layer_mapping_file = v[0];
  return "";
}

void PutLayerMapping(const GraphFlags& f, const std::string& name, Argv* argv) {
  if (!f.layer_mapping && f.layer_mapping_file.empty()) return;
  argv->push_back(name);
  if (!f.layer_mapping_file.empty()) argv->push_back(f.layer_mapping_file);
}

std::string SetFileType(GraphFlags* f, const std::string&, const Values& v) {
  if (v[0] != "db" && v[0] != "json") return "--file_type takes db or json";
  f->file_type = v[0];
  return "";
}

std::string SetOutputFormat(GraphFlags* f, const std::string&, const Values& v) {
  if (v[0] != "vis" && v[0] != "db") return "--output_format takes vis or db";
  f->output_format = v[0];
  return "";
}

std::string SetJobs(GraphFlags* f, const std::string&, const Values& v) {
  const std::string& value = v[0];
  if (value.empty() || value.size() > 6 || value.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(value) == 0) {
    return "--jobs '" + value + "': expected a positive number of pairs to run at once";
  }
  f->jobs = std::stoi(value);
  return "";
}

void PutJobs(const GraphFlags& f, const std::string& name, Argv* argv) {
  if (f.jobs <= 0) return;
  argv->push_back(name);
  argv->push_back(std::to_string(f.jobs));
}

std::string SetThreads(GraphFlags* f, const std::string&, const Values& v) {
  const std::string& value = v[0];
  if (value.empty() || value.size() > 4 || value.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(value) == 0) {
    return "--threads '" + value + "': expected a positive number of threads for each pair";
  }
  f->threads = std::stoi(value);
  return "";
}

void PutThreads(const GraphFlags& f, const std::string& name, Argv* argv) {
  if (f.threads <= 0) return;
  argv->push_back(name);
  argv->push_back(std::to_string(f.threads));
}

std::string SetMaxMemory(GraphFlags* f, const std::string&, const Values& v) {
  auto bytes = ParseByteSize(v[0], "flag --max-memory");
  if (!bytes.ok()) return bytes.error().ToString();
  f->max_memory = *bytes;
  return "";
}

void PutMaxMemory(const GraphFlags& f, const std::string& name, Argv* argv) {
  if (f.max_memory == 0) return;
  argv->push_back(name);
  argv->push_back(std::to_string(f.max_memory));
}

std::string SetShard(GraphFlags* f, const std::string&, const Values& v) {
  auto spec = ParseShard(v.empty() ? "auto" : v[0], getenv);
  if (!spec.ok()) return spec.error().ToString();
  f->shard = *spec;
  return "";
}

void PutShard(const GraphFlags& f, const std::string& name, Argv* argv) {
  if (!f.shard.given()) return;
  argv->push_back(name);
  argv->push_back(std::to_string(f.shard.index) + "/" + std::to_string(f.shard.count));
}

std::string SetCkpt(GraphFlags* f, const std::string&, const Values& v) {
  f->ckpt_a = v[0];
  f->ckpt_b = v[1];
  return "";
}

void PutCkpt(const GraphFlags& f, const std::string& name, Argv* argv) {
  if (f.ckpt_a.empty()) return;
  argv->insert(argv->end(), {name, f.ckpt_a, f.ckpt_b});
}

const char* const kCodeMappingValues =
    "takes a code_mapping CSV (and a second one for the bench side of a compare)";

std::string SetCodeMapping(GraphFlags* f, const std::string&, const Values& v) {
  if (v.size() > 2) return std::string("--code_mapping ") + kCodeMappingValues;
  f->code_mapping = v;
  return "";
}

void PutCodeMapping(const GraphFlags& f, const std::string& name, Argv* argv) {
  if (f.code_mapping.empty()) return;
  argv->push_back(name);
  argv->insert(argv->end(), f.code_mapping.begin(), f.code_mapping.end());
}

// ------------------------------------------------------------ the table

using Shape = ValueShape;
constexpr FlagGroup kRun = FlagGroup::kRun;
constexpr FlagGroup kMerge = FlagGroup::kMerge;

const std::vector<FlagRow> kRows = {
    {"-i, --input_path", nullptr, Shape::kOne, "COMPARE_JSON", "needs a compare.json path", SetText<&GraphFlags::input>,
     PutText<&GraphFlags::input>, kRun, true, "compare.json: {\"npu_path\": DIR, \"bench_path\": DIR}"},
    {nullptr, "-tp, --target_path", Shape::kOne, "TARGET_DIR", "needs the target dump directory",
     SetText<&GraphFlags::target>, PutText<&GraphFlags::target>, kRun, true, "the dump to debug (npu side)"},
    {nullptr, "-gp, --golden_path", Shape::kOne, "GOLDEN_DIR", "needs the golden dump directory",
     SetText<&GraphFlags::golden>, PutText<&GraphFlags::golden>, kRun, false,
     "the baseline dump (bench side); makes it a compare"},
    {"-o, --output_path", "-o, --output_path", Shape::kOne, "OUTPUT_DIR", "needs an output directory",
     SetText<&GraphFlags::output>, PutText<&GraphFlags::output>, kRun, true, "output directory (created if missing)"},
    {"-oc, --overflow_check", "-oc, --overflow_check", Shape::kNone, "", "", SetSwitch<&GraphFlags::overflow_check>,
     PutSwitch<&GraphFlags::overflow_check>, kRun, false,
     "mark nodes whose inputs or outputs overflow (medium/high/critical)"},
    // graph_visualize always keeps whole stacks (msprobe 26 has no -cs any more).
    {"-cs, --complete_stack", nullptr, Shape::kNone, "", "", SetSwitch<&GraphFlags::complete_stack>,
     PutSwitch<&GraphFlags::complete_stack>, kRun, false, "keep whole call stacks instead of the user's line"},
    {"-f, --fuzzy_match", "-fm, --fuzzy_match", Shape::kNone, "", "", SetSwitch<&GraphFlags::fuzzy_match>,
     PutSwitch<&GraphFlags::fuzzy_match>, kRun, false, "match modules by name and their APIs by call order"},
    {"-lm, --layer_mapping", "-lm, --layer_mapping", Shape::kOptional, "[YAML]", "", SetLayerMapping, PutLayerMapping,
     kRun, false, "match by name mapping (across suites or frameworks)"},
    {nullptr, "-tensor_log, --is_print_compare_log", Shape::kNone, "", "", SetSwitch<&GraphFlags::compare_log>,
     PutSwitch<&GraphFlags::compare_log>, kRun, false, "print each compared node of a tensor compare"},
    {nullptr, "-progress_log, --is_print_progress_log", Shape::kNone, "", "", SetSwitch<&GraphFlags::progress_log>,
     PutSwitch<&GraphFlags::progress_log>, kRun, false, "print PROGRESS: {...} lines on stdout (as msprobe 26)"},
    {nullptr, "--file_type", Shape::kOne, "db|json", "takes db or json", SetFileType, PutChoice<&GraphFlags::file_type>,
     kRun, false,
     "db (default): graph files; json (with --rank_size): each merged graph as a dump folder "
     "OUT/step<N>/rank<R>/{construct,dump,stack}.json"},
    {nullptr, "--output_format", Shape::kOne, "vis|db", "takes vis or db", SetOutputFormat,
     PutChoice<&GraphFlags::output_format>, kRun, false,
     "vis (default): graph-ascend .vis files; db: msprobe's .vis.db"},
    {"-v, --verbose", "-v, --verbose", Shape::kNone, "", "", SetSwitch<&GraphFlags::verbose>,
     PutSwitch<&GraphFlags::verbose>, kRun, false, "print what is being done (stderr)"},
    {"--progress_json", "--progress_json", Shape::kNone, "", "", SetSwitch<&GraphFlags::progress_json>,
     PutSwitch<&GraphFlags::progress_json>, kRun, false,
     "print stage and progress as JSON lines on stderr (for programs)"},
    {"--jobs", "--jobs", Shape::kOne, "N", "needs a number of pairs to run at once", SetJobs, PutJobs, kRun, false,
     "build N (step, rank) pairs at once (default: the cores the process may use, by taskset and cgroup); the files "
     "are the same for any N"},
    {"--threads", "--threads", Shape::kOne, "N", "needs a number of threads for each pair", SetThreads, PutThreads,
     kRun, false,
     "read, compare and write each pair on N threads (default: the cores --jobs leaves it, at most 16); the files "
     "are the same for any N"},
    {"--max-memory", "--max-memory", Shape::kOne, "SIZE", "needs a size (8G, 512M)", SetMaxMemory, PutMaxMemory, kRun,
     false,
     "start a pair only while the pairs in flight fit in SIZE (8G, 512M; default 3/4 of the free memory, by "
     "MemAvailable and cgroup)"},
    {"--shard", "--shard", Shape::kOptional, "I/N|auto|auto/N", "", SetShard, PutShard, kRun, false,
     "build only shard I of N of a batch's (step, rank) pairs; auto takes I and N from Slurm arrays, Open MPI, PMI "
     "or srun, auto/N takes I from JOB_COMPLETION_INDEX too; then run graph-ascend link OUTPUT_DIR once "
     "(docs/SCALE.md)"},
    {"--ckpt", nullptr, Shape::kTwo, "CKPT_A CKPT_B",
     "needs two checkpoint folders (of the npu run, then of the bench run)", SetCkpt, PutCkpt, kRun, false,
     "compare two Megatron checkpoints (A of the npu run, B of the bench run; as ckpt_compare) and show each "
     "module's parameter similarity (worst cos, largest l2) on its NPU nodes"},
    {"--ckpt-json", nullptr, Shape::kOne, "FILE", "needs a ckpt_compare JSON file", SetText<&GraphFlags::ckpt_json>,
     PutText<&GraphFlags::ckpt_json>, kRun, false, "the same from a ckpt_compare JSON (graph-ascend's or msprobe's)"},
    {"--code_mapping", "--code_mapping", Shape::kList, "CSV [BENCH_CSV]", kCodeMappingValues, SetCodeMapping,
     PutCodeMapping, kRun, false,
     "MindSpore static graph: a code_mapping result (code_mapping_<time>.csv or a statistic.csv with its columns) "
     "as the stack source of the Cell nodes, whose stack.json stacks are empty (a second file: the {bench} side)"},
    // The help row: no field (the parser answers kHelp).
    {"-h, --help", "-h, --help", Shape::kNone, "", "", nullptr, nullptr, kRun, false, "this help"},
    {"--rank_size", "--rank_size", Shape::kList, "N [B]", kCounted + 1, SetInts<&job::ParallelFlags::rank_size>,
     PutInts<&job::ParallelFlags::rank_size>, kMerge, false, "number of ranks (rank folders)"},
    {"--tp", "--tp", Shape::kList, "N [B]", kCounted + 1, SetInts<&job::ParallelFlags::tp>,
     PutInts<&job::ParallelFlags::tp>, kMerge, false, "tensor-parallel size"},
    {"--pp", "--pp", Shape::kList, "N [B]", kCounted + 1, SetInts<&job::ParallelFlags::pp>,
     PutInts<&job::ParallelFlags::pp>, kMerge, false, "pipeline-parallel size"},
    {"--vpp", "--vpp", Shape::kList, "N [B]", kCounted + 1, SetInts<&job::ParallelFlags::vpp>,
     PutInts<&job::ParallelFlags::vpp>, kMerge, false, "virtual-pipeline chunks (default 1)"},
    {"--order", "--order", Shape::kList, "S [B]", kCounted + 1, SetOrder, PutOrder, kMerge, false,
     "Megatron's rank order (default tp-cp-ep-dp-pp)"},
};

// ------------------------------------------------------------ --help

struct DialectText {
  const char* command;
  const char* intro;
  const char* merge;  // the paragraph above the merge group
  const char* bench;  // the word for the second run
};

const DialectText kGraphText = {
    "graph",
    "Builds (npu_path only) or compares (npu_path and bench_path) msprobe dumps named in COMPARE_JSON into .vis "
    "files in OUTPUT_DIR: build_<time>.vis, compare_<time>.vis, or one file per rank (and step) for rank*/ and "
    "step*/rank*/ layouts. Same flags as msprobe graph. More than two runs of one job ({\"runs\": [DIR, ...], "
    "\"reference\": I} instead of npu_path and bench_path): each run compared with the reference into "
    "OUTPUT_DIR/run<i>/, and where the runs first disagree into OUTPUT_DIR/runs.json (graph-ascend info reads it).",
    "Parallel merge (msprobe 26 flags; or compare.json's \"parallel_merge\" section, not both): merge the rank<N> "
    "folders of a tensor/pipeline-parallel run into one graph per data-parallel replica, written as "
    "build[_step]_merged<i>_<time>.vis or compare[_step]_merged<i>_<time>.vis. One value each for a build, two "
    "(npu bench) for a compare; merged compares match fuzzily.",
    "bench",
};

const DialectText kVisualizeText = {
    "graph_visualize",
    "msprobe 26's graph_visualize arguments. Builds TARGET_DIR (or compares it with GOLDEN_DIR) into .vis files in "
    "OUTPUT_DIR. Each directory holds the dump files of one rank, rank<N> folders (ranks common to both sides are "
    "compared), step<N>/rank<N> folders, or one proc<pid> folder.",
    "Parallel merge: merge the rank<N> folders of a tensor/pipeline-parallel run into one graph per data-parallel "
    "replica. One value each for a build, two (target golden) for a compare; merged compares match fuzzily.",
    "golden",
};

constexpr size_t kWidth = 112;
constexpr size_t kHelpColumn = 34;

const DialectText& Text(job::Dialect d) { return d == job::Dialect::kGraph ? kGraphText : kVisualizeText; }

const char* Names(const FlagRow& row, job::Dialect d) { return d == job::Dialect::kGraph ? row.graph : row.visualize; }

// `words` appended to `out` from column `column`, lines broken before kWidth and continued at `indent`.
void Wrap(const std::string& words, size_t column, size_t indent, std::string* out) {
  size_t at = column;
  bool first = true;
  size_t i = 0;
  while (i < words.size()) {
    size_t end = words.find(' ', i);
    if (end == std::string::npos) end = words.size();
    std::string word = words.substr(i, end - i);
    i = end + 1;
    if (!first && at + 1 + word.size() > kWidth) {
      *out += "\n" + std::string(indent, ' ');
      at = indent;
      first = true;
    }
    if (!first) {
      *out += ' ';
      ++at;
    }
    *out += word;
    at += word.size();
    first = false;
  }
}

std::string ReplaceBench(std::string help, const char* bench) {
  size_t at = help.find("{bench}");
  if (at != std::string::npos) help.replace(at, 7, bench);
  return help;
}

std::string MakeHelp(job::Dialect d) {
  const DialectText& text = Text(d);
  std::string usage = std::string("usage: graph-ascend ") + text.command;
  std::string synopsis;
  for (const FlagRow& row : kRows) {
    if (Names(row, d) == nullptr) continue;
    std::string one = FlagNames(row, d)[0];
    if (*row.value) one += std::string(" ") + row.value;
    synopsis += (synopsis.empty() ? "" : " ") + (row.required ? one : "[" + one + "]");
  }
  // Usage words are broken at flags only: "[--jobs N]" stays on one line.
  std::string out = usage;
  size_t at = usage.size();
  size_t i = 0;
  while (i < synopsis.size()) {
    size_t end = i;
    int depth = 0;
    while (end < synopsis.size() && (synopsis[end] != ' ' || depth > 0)) {
      depth += synopsis[end] == '[' ? 1 : synopsis[end] == ']' ? -1 : 0;
      ++end;
    }
    std::string word = synopsis.substr(i, end - i);
    i = end + 1;
    if (at + 1 + word.size() > kWidth) {
      out += "\n" + std::string(usage.size(), ' ');
      at = usage.size();
    } else {
      out += ' ';
      ++at;
    }
    out += word;
    at += word.size();
  }
  out += "\n\n";
  Wrap(text.intro, 0, 0, &out);
  out += "\n";
  for (FlagGroup group : {FlagGroup::kRun, FlagGroup::kMerge}) {
    out += "\n";
    if (group == FlagGroup::kMerge) {
      Wrap(text.merge, 0, 0, &out);
      out += "\n";
    }
    for (const FlagRow& row : kRows) {
      if (row.group != group || Names(row, d) == nullptr) continue;
      std::string left = std::string("  ") + Names(row, d) + (*row.value ? std::string(" ") + row.value : "");
      if (left.size() + 1 > kHelpColumn) {
        out += left + "\n" + std::string(kHelpColumn, ' ');
      } else {
        out += left + std::string(kHelpColumn - left.size(), ' ');
      }
      Wrap(ReplaceBench(row.help, text.bench), kHelpColumn, kHelpColumn, &out);
      out += "\n";
    }
  }
  return out;
}

// argparse also takes "--flag=value".
Values SplitEquals(const Values& args) {
  Values out;
  for (const std::string& a : args) {
    size_t eq = a.find('=');
    if (a.compare(0, 2, "--") == 0 && eq != std::string::npos) {
      out.push_back(a.substr(0, eq));
      out.push_back(a.substr(eq + 1));
    } else {
      out.push_back(a);
    }
  }
  return out;
}

bool IsFlag(const std::string& a) { return a.size() > 1 && a[0] == '-'; }

bool IsNegativeNumber(const std::string& a) {
  return a.size() > 1 && a[0] == '-' && std::isdigit(static_cast<unsigned char>(a[1]));
}

const FlagRow* Find(const std::string& flag, job::Dialect d) {
  for (const FlagRow& row : kRows) {
    for (const std::string& name : FlagNames(row, d)) {
      if (name == flag) return &row;
    }
  }
  return nullptr;
}

FlagParse Failed(std::string message, bool usage = false) {
  FlagParse p;
  p.outcome = FlagParse::kError;
  p.error = std::move(message);
  p.usage = usage;
  return p;
}

}  // namespace

const std::vector<FlagRow>& GraphFlagRows() { return kRows; }

std::vector<std::string> FlagNames(const FlagRow& row, job::Dialect dialect) {
  std::vector<std::string> names;
  const char* text = Names(row, dialect);
  if (text == nullptr) return names;
  std::string all = text;
  for (size_t i = 0; i <= all.size();) {
    size_t comma = all.find(", ", i);
    if (comma == std::string::npos) comma = all.size();
    names.push_back(all.substr(i, comma - i));
    i = comma + 2;
  }
  return names;
}

const std::string& GraphHelp(job::Dialect dialect) {
  static const std::string graph = MakeHelp(job::Dialect::kGraph);
  static const std::string visualize = MakeHelp(job::Dialect::kVisualize);
  return dialect == job::Dialect::kGraph ? graph : visualize;
}

FlagParse ParseGraphFlags(const std::vector<std::string>& raw, GraphFlags* flags) {
  bool visualize = flags->dialect == job::Dialect::kVisualize;
  const Values args = visualize ? SplitEquals(raw) : raw;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const FlagRow* row = Find(a, flags->dialect);
    if (row == nullptr) {
      // graph prints its help after the message, as it always did; graph_visualize names its --help.
      if (visualize) return Failed("unknown option '" + a + "' (graph-ascend graph_visualize --help lists the options)");
      return Failed("unknown option '" + a + "'", true);
    }
    if (row->set == nullptr) {
      FlagParse help;
      help.outcome = FlagParse::kHelp;
      return help;
    }
    Values values;
    auto value = [&] {
      if (i + 1 >= args.size() || IsFlag(args[i + 1])) return false;
      values.push_back(args[++i]);
      return true;
    };
    bool missing = false;
    switch (row->shape) {
      case ValueShape::kNone:
        break;
      case ValueShape::kOne:
        missing = !value();
        break;
      case ValueShape::kOptional:
        value();
        break;
      case ValueShape::kTwo:
        missing = !value() || !value();
        break;
      case ValueShape::kList:
        while (i + 1 < args.size() && (!IsFlag(args[i + 1]) || IsNegativeNumber(args[i + 1]))) {
          values.push_back(args[++i]);
        }
        missing = values.empty();
        break;
    }
    if (missing) return Failed(a + " " + row->missing);
    std::string error = row->set(flags, a, values);
    if (!error.empty()) return Failed(error);
  }
  return FlagParse{};
}

std::vector<std::string> GraphArgv(const GraphFlags& flags) {
  Argv argv = {Text(flags.dialect).command};
  for (const FlagRow& row : kRows) {
    if (Names(row, flags.dialect) == nullptr || row.put == nullptr) continue;
    row.put(flags, FlagNames(row, flags.dialect)[0], &argv);
  }
  return argv;
}

}  // namespace graph_ascend::cli
