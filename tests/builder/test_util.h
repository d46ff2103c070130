// Hand-written dumps for the matching and linking units: dump entries whose
// items differ only in type and shape, and a fixture that builds an NPU and
// a Bench side from them (temp dirs, one string pool for both sides).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "graph/graph_builder.h"
#include "test_files.h"

namespace graph_ascend::testing {

// A statistics tensor leaf of the given shape; the values are fixed.
inline std::string Shaped(const std::string& shape, const std::string& dtype = "torch.float32") {
  return R"({"type": "torch.Tensor", "dtype": ")" + dtype + R"(", "shape": )" + shape +
         R"(, "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0})";
}

// A dump entry with positional inputs and outputs (comma-separated leaves).
inline std::string Entry(const std::string& inputs, const std::string& outputs) {
  return R"({"input_args": [)" + inputs + R"(], "output": [)" + outputs + "]}";
}

// One operation of a batch_isend_irecv call (§5.7): "isend" or "irecv".
inline std::string P2POp(const std::string& op, int peer, const std::string& group_id) {
  return R"({"class_type": "torch.distributed.P2POp", "tensor": )" + Shaped("[2, 8, 32]") + R"(, "op": ")" + op +
         R"(", "peer": )" + std::to_string(peer) + R"(, "tag": 0, "group_id": ")" + group_id + "\"}";
}

// A batch_isend_irecv entry of the operations `ops` (comma-separated P2POp).
inline std::string Batch(const std::string& ops) {
  return R"({"input_args": [[)" + ops + R"(]], "input_kwargs": {}, "output": [[)" + ops + "]]}";
}

// Two sides built from hand-written files.
class SidePairTest : public ::testing::Test {
 protected:
  // Writes and builds both sides from (dump data members, construct.json,
  // stack.json).
  void BuildSides(const std::string& npu_data, const std::string& npu_construct, const std::string& bench_data,
                  const std::string& bench_construct, const std::string& npu_stack = "{}",
                  const std::string& bench_stack = "{}") {
    WriteDumpDir(npu_dir_.path(), DumpJson(npu_data), npu_construct, npu_stack);
    WriteDumpDir(bench_dir_.path(), DumpJson(bench_data), bench_construct, bench_stack);
    auto npu = graph::BuildSide(npu_dir_.path(), &pool_, graph::BuildOptions{});
    ASSERT_TRUE(npu.ok()) << npu.error().ToString();
    auto bench = graph::BuildSide(bench_dir_.path(), &pool_, graph::BuildOptions{});
    ASSERT_TRUE(bench.ok()) << bench.error().ToString();
    npu_ = std::move(*npu);
    bench_ = std::move(*bench);
  }

  // The Bench node matched with NPU node `name`, or "" when unmatched. The
  // Bench node must point back.
  std::string MatchOf(const std::string& name) {
    int32_t n = npu_->graph->Find(std::string_view(name));
    EXPECT_NE(n, graph::kNoNode) << name;
    if (n == graph::kNoNode) return "<missing>";
    int32_t b = npu_->graph->matched[n];
    if (b == graph::kNoNode) return "";
    EXPECT_EQ(bench_->graph->matched[b], n) << "matches are symmetric: " << name;
    return std::string(bench_->graph->Name(static_cast<uint32_t>(b)));
  }

  TempDir npu_dir_, bench_dir_;
  StringPool pool_;  // shared: equal names have equal ids on both sides
  std::unique_ptr<graph::Side> npu_, bench_;
};

}  // namespace graph_ascend::testing
