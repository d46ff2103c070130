// The name mapping of layer-mapping matching (reference §6.3.3): every NPU
// dump name is placed in a scope tree by its module path (and, for APIs, the
// framework function that called it), the NPU scope is translated with the
// yaml's per-class renames, and the Bench call at the same translated scope,
// state and call position is its counterpart.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "base/status.h"
#include "graph/graph_builder.h"

namespace graph_ascend::match {

class NameMapping {
 public:
  // `yaml_path` may be empty (a bare -lm). Errors: a yaml that cannot be
  // read or parsed, or whose entries name nothing in the NPU dump.
  static Result<NameMapping> Build(const graph::Side& npu, const graph::Side& bench, const std::string& yaml_path);

  enum class Kind { kSameName, kMapped, kNoCounterpart };
  // The Bench name for an NPU name id (set when kMapped).
  Kind Lookup(uint32_t npu_name, uint32_t* bench_name) const;

  size_t mapped() const { return mapped_; }
  size_t unmapped() const { return unmapped_; }
  size_t yaml_entries_used() const { return yaml_used_; }

 private:
  std::unordered_map<uint32_t, int64_t> map_;  // npu name -> bench name, -1 for none
  size_t mapped_ = 0, unmapped_ = 0, yaml_used_ = 0;
};

// Parses a layer-mapping yaml held in `text` (named `path` in errors) without
// applying it: the reader alone, for tests and fuzzing.
Status CheckLayerMappingYaml(const std::string& path, const std::string& text);

}  // namespace graph_ascend::match
