// `graph-ascend graph`: msprobe graph's command line (-i compare.json -o ...); the flags are cli/graph_flags's.
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/graph_flags.h"
#include "cli/commands.h"
#include "job/graph_job.h"

namespace graph_ascend::cli {
int Fail(const std::string& message, const char* usage) {
  // The one place errors are printed: always one line (a path may hold a newline).
  fprintf(stderr, "graph-ascend: error: %s\n", OneLine(message).c_str());
  if (usage != nullptr) fprintf(stderr, "\n%s", usage);
  return 2;
}

void Warn(const std::string& message) { fprintf(stderr, "graph-ascend: warning: %s\n", OneLine(message).c_str()); }

int GraphCommand(const std::vector<std::string>& args, const std::vector<std::string>& argv) {
  const std::string& help = GraphHelp(job::Dialect::kGraph);
  GraphFlags flags;
  FlagParse parse = ParseGraphFlags(args, &flags);
  if (parse.outcome == FlagParse::kHelp) {
    fputs(help.c_str(), stdout);
    return 0;
  }
  if (parse.outcome == FlagParse::kError) return Fail(parse.error, parse.usage ? help.c_str() : nullptr);
  job::GraphOptions options;
  options.argv = argv;
  if (std::string error = ApplyGraphFlags(flags, &options); !error.empty()) return Fail(error);
  if (flags.input.empty() || flags.output.empty()) return Fail("-i and -o are required", help.c_str());
  if (!flags.ckpt_a.empty() && !flags.ckpt_json.empty()) {
    return Fail("--ckpt and --ckpt-json cannot be used together: pick one");
  }
  if (!flags.ckpt_a.empty() || !flags.ckpt_json.empty()) {
    auto ckpt = CkptOption(flags.ckpt_a, flags.ckpt_b, flags.ckpt_json);
    if (!ckpt.ok()) return Fail(ckpt.error().ToString());
    options.ckpt = *ckpt;
  }
  RunConsole console;
  console.Attach(flags, &options);
  auto result = job::RunGraph(flags.input, flags.output, options);
  console.Done();
  if (!result.ok()) return Fail(result.error().ToString());
  for (const std::string& p : result->outputs) printf("%s\n", p.c_str());
  for (const std::string& line : result->summary) printf("runs: %s\n", line.c_str());
  return 0;
}

}  // namespace graph_ascend::cli
