// A file written by torch.save (zip format): its unpickled object tree and
// access to the bytes of the tensors in it, checked against the storages.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "torch_save/pickle.h"
#include "torch_save/zip_archive.h"

namespace graph_ascend::ckpt {

// The restricted unpickler's tree (builder/torch_save), in the words of this library.
using torch_save::PickleRef;
using torch_save::PickleValue;
using torch_save::TensorMeta;
using torch_save::Unpickle;
using torch_save::ElementType;
using torch_save::StorageElementType;

class TorchFile {
 public:
  static Result<TorchFile> Open(const std::string& path);

  const std::string& path() const { return zip_.path(); }
  const PickleValue& root() const { return *root_; }

  // The storage bytes a tensor views, after checking that the member exists,
  // holds the storage's elements and that the view stays inside it.
  Result<std::string_view> TensorBytes(const TensorMeta& t, ElementType* type) const;
  // Drops the resident pages of a tensor's storage (bounded memory on large checkpoints).
  void Release(const TensorMeta& t) const;
  // Drops the resident pages wholly inside `bytes` (a view from TensorBytes).
  void Release(std::string_view bytes) const { zip_.Release(bytes); }

 private:
  zip::ZipArchive zip_;
  std::string prefix_;  // "archive/" (the folder all members are in)
  PickleRef root_;
};

}  // namespace graph_ascend::ckpt
