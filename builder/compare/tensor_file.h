// A dumped tensor file (.npy or torch.save .pt) opened for reading in chunks:
// the header is parsed once, the elements stay in the memory map and are
// decoded on request, so a view of a tensor larger than memory costs only the
// caller's chunk buffer. ReadNpy / ReadPt (tensor_compare.h) are this reader
// decoding every element; there is no second parser.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/mapped_file.h"
#include "base/status.h"

namespace graph_ascend::compare {

class TensorFile {
 public:
  // Opens `path`: .pt when its name ends in ".pt", .npy otherwise. With a
  // non-empty `root` (an absolute real path) the file's real path must lie
  // inside it, checked on the opened descriptor (base/confine.h).
  static Result<TensorFile> Open(const std::string& path, const std::string& root = "");
  // The same over bytes in memory that outlive the result (fuzzing, tests).
  static Result<TensorFile> FromNpyBytes(std::string_view bytes, const std::string& path);
  static Result<TensorFile> FromPtBytes(std::string_view bytes, const std::string& path);

  TensorFile() = default;  // an empty tensor of no file
  TensorFile(TensorFile&&) = default;
  TensorFile& operator=(TensorFile&&) = default;

  const std::string& path() const { return path_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  const std::string& dtype() const { return dtype_; }  // "f4", "V2" (bfloat16), "i8", "b1"...
  int64_t count() const { return count_; }

  // Decodes elements [first, first + n) in C (row-major) order into `out`.
  // The caller keeps first + n <= count().
  void Read(int64_t first, int64_t n, double* out) const;

  // Drops the resident pages of the map: all of them, or (`below` >= 0, a
  // contiguous tensor) those wholly before element `below`, which a pass in C
  // order has read, so that a pass keeps about a chunk of the file resident.
  void Release(int64_t below = -1) const;

 private:
  // Checks the element kind and width and the view against the storage.
  Status SetLayout(char kind, int width, bool swap);

  MappedFile file_;       // empty for the FromBytes forms
  std::string path_;
  std::string_view raw_;  // the storage
  std::vector<int64_t> shape_, stride_;  // stride in elements, one per dimension
  int64_t offset_ = 0;    // in elements
  int64_t count_ = 0;
  std::string dtype_;
  char kind_ = 'f';
  int width_ = 4;
  bool swap_ = false;     // big-endian .npy
  bool contiguous_ = true;
  mutable size_t released_ = 0;  // bytes of the map dropped by Release(below)
};

}  // namespace graph_ascend::compare
