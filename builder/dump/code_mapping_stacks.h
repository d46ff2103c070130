// A code_mapping result as the stack source of a MindSpore static-graph dump
// (issue 15, point 3).
//
// msprobe's static-graph cell dump (MindSpore graph mode / jit, level L0,
// through TensorDump) writes dump.json and construct.json of Cell nodes
// ("Cell.{path}.{Class}.{forward|backward}.{n}") and a stack.json in which
// every cell's stack is empty: the code is not known at run time. A
// code_mapping result (graph-ascend code_mapping's code_mapping_<time>.csv,
// msprobe's, or a statistic.csv with the "Code Stack" and "Scope Name"
// columns) ties each kernel's scope ("Default/network-WithLossCell/
// _backbone-Net/dense-Dense/MatMul-op0") to the code lines that made it.
// A cell's scope segments are "{attribute}-{Class}", so a Cell node's path
// and class name the kernels it contains; the node's stack is the code lines
// those kernels share (the call chain down to the cell).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "base/string_pool.h"
#include "dump/dump_data.h"

namespace graph_ascend::dump {

struct CodeMapping {
  std::string path;
  struct Scope {
    std::string scope;               // "Default/.../dense-Dense/MatMul-op0"
    std::vector<std::string> lines;  // its "In file ..." code lines, outermost call first
  };
  std::vector<Scope> scopes;  // one per distinct scope, in file order
  size_t rows = 0;            // data rows read
  size_t rows_without_scope = 0;
};

// Reads a code_mapping CSV: its header must have "Code Stack" and "Scope
// Name". Errors name the file and the line (malformed CSV, a row without
// those fields, a file without data rows or without any scope).
Result<CodeMapping> ReadCodeMapping(const std::string& path);

// Gives every Cell node of `construct` and `dump` whose stack in `stacks` is
// missing or empty the code lines common to the kernels of its scope
// (backward nodes: the "Gradients/" kernels), and returns how many nodes got
// one. The cell path may start below the scopes' top cell (msprobe names
// cells from the model handed to it): the scope prefix that names the most
// cells is taken for all.
size_t AddCodeMappingStacks(const CodeMapping& mapping, const ConstructData& construct, const DumpData& dump,
                            StringPool* pool, StackData* stacks);

}  // namespace graph_ascend::dump
