#include "ckpt/torch_file.h"

namespace graph_ascend::ckpt {

Result<TorchFile> TorchFile::Open(const std::string& path) {
  auto zip = zip::ZipArchive::Open(path);
  if (!zip.ok()) return zip.error();
  TorchFile f;
  f.zip_ = std::move(*zip);
  std::string_view pkl;
  for (const auto& [name, bytes] : f.zip_.members()) {
    size_t slash = name.find('/');
    if (slash != std::string::npos && name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      f.prefix_ = name.substr(0, slash + 1);
      pkl = bytes;
    }
  }
  if (f.prefix_.empty()) return Error{path, "", "not a torch.save file (no <archive>/data.pkl member)"};
  auto order = f.zip_.members().find(f.prefix_ + "byteorder");
  if (order != f.zip_.members().end() && order->second != "little") {
    return Error{path, f.prefix_ + "byteorder", "big-endian checkpoints are not supported"};
  }
  auto root = Unpickle(pkl, path);
  if (!root.ok()) return root.error();
  f.root_ = std::move(*root);
  return f;
}

Result<std::string_view> TorchFile::TensorBytes(const TensorMeta& t, ElementType* type) const {
  std::string member = prefix_ + "data/" + t.storage_key;
  if (!StorageElementType(t.storage_type, type)) {
    return Error{path(), member, "unsupported storage type " + t.storage_type};
  }
  auto bytes = zip_.Member(member);
  if (!bytes.ok()) return Error{path(), member, "missing tensor storage (zip member)"};
  uint64_t need = static_cast<uint64_t>(t.storage_numel) * static_cast<uint64_t>(type->width);
  if (t.storage_numel < 0 || bytes->size() < need) {
    return Error{path(), member,
                 "truncated storage: " + std::to_string(need) + " bytes expected, " + std::to_string(bytes->size()) +
                     " present"};
  }
  // The furthest element the view touches must lie inside the storage.
  int64_t last = t.offset;
  for (size_t k = 0; k < t.shape.size(); ++k) {
    if (t.shape[k] < 0 || t.stride[k] < 0) return Error{path(), member, "negative tensor size or stride"};
    if (t.shape[k] == 0) return *bytes;
    int64_t reach;
    if (__builtin_mul_overflow(t.shape[k] - 1, t.stride[k], &reach) || __builtin_add_overflow(last, reach, &last)) {
      return Error{path(), member, "tensor view outside its storage"};
    }
  }
  if (t.offset < 0 || last >= t.storage_numel) {
    return Error{path(), member, "tensor view outside its storage (element " + std::to_string(last) + " of " +
                                     std::to_string(t.storage_numel) + ")"};
  }
  return *bytes;
}

void TorchFile::Release(const TensorMeta& t) const {
  auto bytes = zip_.Member(prefix_ + "data/" + t.storage_key);
  if (bytes.ok()) zip_.Release(*bytes);
}

}  // namespace graph_ascend::ckpt
