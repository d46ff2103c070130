// code_mapping: ties MindSpore static-graph dump data to the Python code that
// produced it (msprobe doc 24), through the scopes of a save_graphs IR file.
//
// A dump name carries the kernel's scope with '/' written as '_'
// ("MatMul.Default_dense-Dense_MatMul-op0.0.0.<ts>.input.0....npy", or the
// "Op Name" column of statistic.csv). Every IR scope found inside that name
// contributes its code stack and scope, in the order msprobe gives them.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "code_mapping/ir_graph.h"

namespace graph_ascend::code_mapping {

// The IR scopes, searchable inside dump names.
class ScopeIndex {
 public:
  explicit ScopeIndex(const std::vector<IrNode>& nodes);
  ~ScopeIndex();
  ScopeIndex(const ScopeIndex&) = delete;
  ScopeIndex& operator=(const ScopeIndex&) = delete;

  struct Match {
    std::string code_stack;  // the matched nodes' code lines, '\n'-joined
    std::string scope_name;  // their scopes, '\n'-joined
  };
  // Every scope key that occurs in `name`, by start position, shorter first.
  Match Find(const std::string& name) const;

 private:
  struct TrieNode;
  std::unique_ptr<TrieNode> root_;
  std::vector<IrNode> nodes_;
};

struct MappingOptions {
  std::string ir_path;
  std::string dump_path;  // an .npy file, a statistic.csv, or a folder holding either
  std::string output_dir = "./";
  bool keep_original = true;  // statistic.csv: keep statistic.csv.orig beside the rewritten file
};

struct MappingResult {
  std::string csv_path;                      // code_mapping_<timestamp>.csv (tensor dumps)
  std::vector<std::string> statistic_files;  // the statistic.csv files rewritten
  size_t rows = 0;                           // dump files or statistic rows mapped
  size_t matched = 0;                        // of which found a scope
};

// The whole command. Tensor dumps (.npy anywhere below dump_path, at most
// ten levels deep) give one CSV; otherwise every statistic.csv gains the
// "Code Stack" and "Scope Name" columns. All outputs appear together
// (temporary files + rename) or not at all.
Result<MappingResult> MapDumpToCode(const MappingOptions& options);

}  // namespace graph_ascend::code_mapping
