// Checkpoint similarity on the graph: ckpt_compare's {param: {l2, cos, numel,
// shape}} mapped onto the module nodes of a dump (docs/FORMAT.md,
// "Checkpoint similarity").
//
// The mapping is by name. A module node's path is its dump name without
// "Module.", without the trailing "<Class>.<forward|backward>.<call>", without
// leading "module" wrappers (DDP, Float16Module) and the model-chunk index
// before them (msprobe's "Module.<i>." for a list of models):
//   Module.module.decoder.layers.0.self_attention.linear_qkv.ColumnParallelLinear.forward.0
//     -> decoder.layers.0.self_attention.linear_qkv
// A parameter belongs to the module named by all but its last component
// (decoder.layers.0.self_attention.linear_qkv.weight -> the path above). One
// alias: ckpt_compare renames Transformer Engine's fused
// "self_attention.linear_qkv.layer_norm_*" to "input_layernorm.*", which such a
// model has no module for; those go back to the fused linear_qkv module.
// Parameters of modules no node stands for stay unmapped (listed, not guessed).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "vis.pb.h"

namespace graph_ascend::weights {

// When a parameter counts as changed: cos < 1 - cos or l2 > l2, or no l2
// (the shapes differ). The defaults flag any change beyond float rounding of
// the cosine and any change at all of the values.
struct Tolerance {
  double cos = 1e-6;
  double l2 = 0;
};

// Parses ckpt_compare's JSON (graph-ascend's or msprobe's): an object of
// parameters, each {l2, cos, numel, shape} with l2 / cos numbers or null.
// Parameters come back in name order. Errors name `file` and the place.
Result<std::vector<vis::CkptParam>> ParseCkptJson(std::string_view text, const std::string& file);
Result<std::vector<vis::CkptParam>> ReadCkptJson(const std::string& path);

// The module path of a module node's name, none when the name is no module
// call ("" for the model itself).
std::optional<std::string> ModulePathOf(std::string_view node_name);

// Maps `params` onto the nodes [0, node_count): `module_name(n)` is node n's
// name when it is a module node and "" otherwise.
vis::CkptSimilarity MapOntoModules(std::vector<vis::CkptParam> params, uint32_t node_count,
                                   const std::function<std::string_view(uint32_t)>& module_name);

bool Differs(const vis::CkptParam& p, const Tolerance& t);
bool Differs(const vis::CkptModule& m, const Tolerance& t);

// Module indices worst first (incomparable, then lowest cos, then largest
// l2); only modules that differ, at most `limit`.
std::vector<uint32_t> WorstModules(const vis::CkptSimilarity& s, const Tolerance& t, size_t limit);

// FileMeta's ckpt_* summary of `s`.
void Summarize(const vis::CkptSimilarity& s, vis::FileMeta* meta);

}  // namespace graph_ascend::weights
