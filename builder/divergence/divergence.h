// The divergence ranking (docs/DIVERGENCE.md): which NPU nodes make the two
// runs part, in execution order, each with its reason.
//
// Two steps. While the builder compares a matched pair it summarises what
// the compared items say (EvidenceOf); after every pair is compared, Rank
// walks the NPU graph in execution order (forward, backward, optimizer) and
// keeps the nodes whose own inputs agree with the baseline while their
// outputs do not, holding errors against a noise floor set by the dtype and
// by what upstream operators showed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compare/pair_compare.h"
#include "graph/graph.h"
#include "vis.pb.h"

namespace graph_ascend::divergence {

// What the compared items of one matched pair say. Errors are the mode's
// measure: the worst relative error of Max/Min/Mean/Norm (statistics), the
// share of elements off by more than 1/1000 (tensor), 0 or 1 (md5).
struct Evidence {
  bool compared = false;      // the pair had compared items
  bool has_input = false;     // an input item was compared
  bool has_output = false;
  double input_error = 0;
  double output_error = 0;
  double floor = 0;           // the dtype floor of the outputs (the coarser side's)
  bool input_changed = false;   // an input's dtype, shape or requires_grad differs
  bool output_changed = false;  // an output's dtype, shape or requires_grad differs
  bool input_nonfinite = false;   // an NPU input's Max or Min is Inf/NaN, the bench's finite
  bool output_nonfinite = false;  // an NPU output's Max or Min is Inf/NaN, the bench's finite
  std::string note;             // the first output change, e.g. "output.0 dtype torch.bfloat16 vs torch.float32"
  // For the noise rule (statistics mode; docs/DIVERGENCE.md). A change is
  // measured against the tensor's scale (max |Max|, |Min| of both sides;
  // the Norm against the larger Norm), never as a bare relative error.
  double input_change = 0;     // what the tensor inputs' changes can do to the output (docs/DIVERGENCE.md)
  double input_change_max = 0; // the largest tensor input's change
  double output_change = -1;   // the worst output's change; -1 when none was measured
  double ulp = 0;              // one unit in the last place of the coarsest output dtype, relative
  uint8_t precision = 0;       // the float dtypes of inputs, parameters and outputs (bits of kPrecision*)
  bool has_parameters = false;        // the node dumped its own parameters (a module)
  bool input_shape_changed = false;   // an input's shape or requires_grad differs (not only its dtype)
  bool output_shape_changed = false;  // an output's shape or requires_grad differs
};

enum : uint8_t { kPrecisionBf16 = 1, kPrecisionFp16 = 2, kPrecisionFp32 = 4, kPrecisionFp64 = 8, kPrecisionInt = 16 };

// Reads the metrics ComparePair stored on `npu` and the fields of both sides.
Evidence EvidenceOf(vis::CompareMode mode, const vis::NodeDetail& npu, const vis::NodeDetail& bench);
// The same with the items already paired (compare::PairItems) and the
// metrics ComparePair gave them. Items pair k-th with k-th of a state,
// parameter gradients by parameter name (as their metrics).
Evidence EvidenceOf(vis::CompareMode mode, const compare::ItemPairing& pairing, const compare::PairMetrics& metrics);

// The noise floor of a dtype name ("torch.bfloat16", "Float16", ...) in a mode.
double DtypeFloor(vis::CompareMode mode, const std::string& dtype);

// The nodes of `npu` in execution order: pre-order, forward first, then
// backward, then the optimizer (stable within each phase).
std::vector<uint32_t> ExecutionOrder(const graph::Graph& npu);

// The ranking. `evidence` is indexed by NPU node (entries of unmatched nodes
// are ignored). Nodes in it are leaves (APIs, modules without children) and
// modules none of whose matched descendants diverges by itself.
vis::DivergenceRanking Rank(const graph::Graph& npu, const std::vector<Evidence>& evidence,
                            vis::CompareMode mode);

// The noise rule's margin: an op diverges by itself when its output change
// is more than this many times the noise that its kind, inputs and precision
// explain.
inline constexpr double kNoiseMargin = 5;

// A short English name of a reason ("outputs differ", "md5 differs", ...).
const char* ReasonName(vis::DivergenceReason reason);

}  // namespace graph_ascend::divergence
