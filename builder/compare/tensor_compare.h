// Tensor (real data) comparison (reference §6.7): .npy files of both runs,
// compared element by element.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "vis.pb.h"

namespace graph_ascend::compare {

struct Tensor {
  std::vector<double> values;  // C order
  std::vector<int64_t> shape;
  std::string dtype;           // numpy descr without byte order, e.g. "f4", "b1"
};

// Whole tensors, decoded by compare/tensor_file.h's reader (which views
// read in chunks): reads a .npy file (format 1.0–3.0; float16/32/64, bfloat16 stored as
// 2-byte void, signed and unsigned integers, bool; either byte order;
// C or Fortran order).
Result<Tensor> ReadNpy(const std::string& path);

// Reads a tensor written by torch.save (PyTorch tensor dumps, §3.5).
Result<Tensor> ReadPt(const std::string& path);
// The same on the bytes of a .pt held in memory (`path` names it in errors).
// The view (offset, size, stride) must lie inside its storage and hold no
// more elements than it; anything else is an Error, never an allocation.
Result<Tensor> ParsePt(std::string_view bytes, const std::string& path);

// One element of raw little-endian tensor data: kind 'f' (float), 'V'
// (bfloat16), 'i' (signed), 'u' / 'b' (unsigned, bool); width in bytes.
double DecodeElement(const char* p, char kind, int width);

// Where the tensors of each side are.
class TensorSource {
 public:
  virtual ~TensorSource() = default;
  virtual Result<Tensor> Load(vis::Side side, const std::string& data_name) const = 0;
};

// Tensors from "<dump dir>/dump_tensor_data/<data_name>" (§3.5): .npy or .pt.
// A missing file compares as "unsupported" (partial dumps have them); a .pt
// that is there but cannot be read is damage, kept for damage().
class DumpTensorSource : public TensorSource {
 public:
  DumpTensorSource(std::string npu_dump_dir, std::string bench_dump_dir)
      : npu_(std::move(npu_dump_dir)), bench_(std::move(bench_dump_dir)) {}
  Result<Tensor> Load(vis::Side side, const std::string& data_name) const override;

  // The first tensor file that exists but could not be read, or Ok.
  Status damage() const;

 private:
  std::string npu_, bench_;
  mutable std::mutex mu_;
  mutable std::optional<Error> damage_;
};

// The six metrics of one tensor pair, in the order of the reference's
// columns: Cosine, EucDist, MaxAbsErr, MaxRelativeErr, One Thousandth Err
// Ratio, Five Thousandths Err Ratio. Each is a number or a marker string
// ("unsupported", "shape unmatched", "N/A", "Nan").
struct TensorMetrics {
  vis::Metric metric[6];
};

extern const char* const kTensorMetricNames[6];

TensorMetrics CompareTensors(const Tensor& npu, const Tensor& bench);
TensorMetrics UnsupportedTensorMetrics(const std::string& marker);

}  // namespace graph_ascend::compare
