// The part of a MindSpore IR text file (save_graphs: *.ir) that ties kernels
// to code: each node's full scope name ("Default/dense-Dense/MatMul-op0")
// and the "# In file ..." lines of its Python call stack below it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace graph_ascend::code_mapping {

struct IrNode {
  std::string variable;   // "x" in "%1(x) = PrimFunc_MatMul(...)"
  std::string op;         // "PrimFunc_MatMul"
  std::string scope;      // the "Fullname with scope" value, "" when there is none
  std::vector<std::string> code;  // the comment lines after the scope, without "# " and the trailing "/"
  std::string unique_id;  // cnode_primal_attrs unique_id / forward_unique_id, "" when absent
};

// Parses IR text. A backward node (scope "Gradients/...") takes the code
// stack of the forward node with the same unique_id. An error when `text`
// has neither an "# IR entry" header nor any node line.
Result<std::vector<IrNode>> ParseIr(std::string_view text, const std::string& file);

// Reads and parses an IR file.
Result<std::vector<IrNode>> ReadIr(const std::string& path);

}  // namespace graph_ascend::code_mapping
