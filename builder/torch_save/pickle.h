// A restricted unpickler for torch.save checkpoints. It builds a tree of
// plain values and never executes anything: the only callables it
// understands are torch's tensor rebuilders, OrderedDict, torch.Size and
// _codecs.encode (bytes in protocol 2); every other class or call becomes an
// opaque Object whose class name, arguments and BUILD state can be inspected
// (argparse.Namespace, Megatron enums, numpy arrays of the RNG state).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace graph_ascend::torch_save {

// A tensor as pickled by torch: a view (offset, shape, stride in elements)
// over the storage persisted as zip member data/<key>.
struct TensorMeta {
  std::string storage_key;
  std::string storage_type;  // "FloatStorage", "BFloat16Storage", ...
  int64_t storage_numel = 0;
  int64_t offset = 0;
  std::vector<int64_t> shape, stride;
};

struct PickleValue;
using PickleRef = std::shared_ptr<PickleValue>;

struct PickleValue {
  enum class Kind { kNone, kBool, kInt, kFloat, kString, kBytes, kList, kTuple, kDict, kSet, kGlobal, kObject,
                    kStorage, kTensor };
  Kind kind = Kind::kNone;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;                                     // string, bytes, global / object class "module.name"
  std::vector<PickleRef> items;                      // list, tuple, set; object arguments
  std::vector<std::pair<PickleRef, PickleRef>> dict;  // dict entries in insertion order
  PickleRef state;                                   // object: what BUILD gave it
  TensorMeta tensor;                                 // storage (key, type, numel) and tensor

  // Dict entry (or, for an object, entry of its state dict) with a string key.
  const PickleValue* Get(std::string_view key) const;
  bool is_int() const { return kind == Kind::kInt || kind == Kind::kBool; }
};

// Runs `pickle` (protocols 0-5 binary opcodes; no buffers, no extensions).
// `file` and the byte offset name the place of an error.
Result<PickleRef> Unpickle(std::string_view pickle, const std::string& file);

// Element type of a storage: DecodeElement's kind ('f', 'V' bfloat16, 'i', 'u', 'b') and width.
struct ElementType {
  char kind = 'f';
  int width = 4;
};

// The element type of "FloatStorage", "BFloat16Storage", ...; false if unknown.
bool StorageElementType(const std::string& storage_type, ElementType* out);

}  // namespace graph_ascend::torch_save
