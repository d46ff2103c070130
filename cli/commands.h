// The commands of graph-ascend. Each returns the process exit status:
// 0 on success, 2 on bad input or usage (after printing one message).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "vis.pb.h"

namespace graph_ascend::cli {

int GraphCommand(const std::vector<std::string>& args, const std::vector<std::string>& argv);
// msprobe 26's `graph_visualize` flags over the same jobs as GraphCommand.
int VisualizeCommand(const std::vector<std::string>& args, const std::vector<std::string>& argv);
// After the shards of a batch: the cross-rank links.
int LinkCommand(const std::vector<std::string>& args);
int InfoCommand(const std::vector<std::string>& args);
// A CI gate: 0 when no compare diverges beyond noise, 1 when one does, 2 on bad input.
int CheckCommand(const std::vector<std::string>& args);
// A compare as one self-contained HTML report (builder/report).
int ReportCommand(const std::vector<std::string>& args);
int ExportCommand(const std::vector<std::string>& args);
int ImportCommand(const std::vector<std::string>& args);
int OpGenerateCommand(const std::vector<std::string>& args);
int CodeMappingCommand(const std::vector<std::string>& args);
int CkptCompareCommand(const std::vector<std::string>& args);
int ConfigCheckCommand(const std::vector<std::string>& args);

// graph's --ckpt A B (compared now) or --ckpt-json FILE (read): the parameters
// to map onto the module nodes (job::GraphOptions::ckpt). Prints warnings.
Result<std::shared_ptr<const vis::CkptSimilarity>> CkptOption(const std::string& a, const std::string& b,
                                                              const std::string& json);

// Prints "graph-ascend: error: <message>" to stderr as one line (control
// characters escaped, base/status.h OneLine), then `usage` when given after a
// blank line, and returns 2.
int Fail(const std::string& message, const char* usage = nullptr);
// "graph-ascend: warning: <message>", one line.
void Warn(const std::string& message);

}  // namespace graph_ascend::cli
