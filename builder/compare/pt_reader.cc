// Reading a tensor saved with torch.save (the .pt files of PyTorch tensor
// dumps): a zip (builder/torch_save's reader: stored members, zip64) holding
// data.pkl, a pickle that rebuilds one tensor (torch._utils._rebuild_tensor_v2
// of a storage, offset, size, stride; run by torch_save's restricted
// unpickler), and the raw storage bytes in data/<key>.
#include <cstring>
#include <memory>

#include "base/mapped_file.h"
#include "compare/tensor_compare.h"
#include "torch_save/pickle.h"
#include "torch_save/zip_archive.h"

namespace graph_ascend::compare {
namespace {

// A view (offset, size, stride) that reads only inside a storage of
// `elements` and has no more elements than the storage: overlapping views
// (expand, stride 0) are refused, as torch.save of a dumped clone never makes them.
Status CheckView(const std::string& path, int64_t offset, const std::vector<int64_t>& size,
                 const std::vector<int64_t>& stride, int64_t elements) {
  auto bad = [&](const std::string& why) { return Error{path, "data.pkl", "bad tensor view: " + why}; };
  if (offset < 0) return bad("negative storage offset " + std::to_string(offset));
  int64_t count = 1, last = offset;
  for (size_t k = 0; k < size.size(); ++k) {
    if (size[k] < 0) return Error{path, "data.pkl", "bad tensor size " + std::to_string(size[k])};
    if (stride[k] < 0) return bad("negative stride " + std::to_string(stride[k]));
    if (__builtin_mul_overflow(count, size[k], &count)) return bad("element count overflows");
  }
  if (count == 0) return Status::Ok();
  for (size_t k = 0; k < size.size(); ++k) {
    int64_t reach;
    if (__builtin_mul_overflow(size[k] - 1, stride[k], &reach) || __builtin_add_overflow(last, reach, &last)) {
      return bad("extent overflows");
    }
  }
  if (offset >= elements || last >= elements) {
    return bad("reaches element " + std::to_string(last) + " of a storage of " + std::to_string(elements));
  }
  if (count > elements) {
    return bad("a view of " + std::to_string(count) + " elements over a storage of " + std::to_string(elements) +
               " (overlapping views are not supported)");
  }
  return Status::Ok();
}

}  // namespace

Result<Tensor> ReadPt(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  return ParsePt(file->text(), path);
}

Result<Tensor> ParsePt(std::string_view bytes, const std::string& path) {
  auto zip = zip::ZipArchive::FromBytes(bytes, path);
  if (!zip.ok()) {
    if (zip.error().message.rfind("not a zip archive", 0) == 0) {
      return Error{path, "", "not a torch .pt file (no zip directory)"};
    }
    return zip.error();
  }
  std::string pkl_name;
  for (const std::string& name : zip->Names()) {
    if (name.size() >= 8 && name.compare(name.size() - 8, 8, "data.pkl") == 0) pkl_name = name;
  }
  if (pkl_name.empty()) return Error{path, "", "not a torch .pt file (no data.pkl)"};
  const std::string prefix = pkl_name.substr(0, pkl_name.size() - 8);
  auto pkl = zip->Member(pkl_name);
  if (!pkl.ok()) return pkl.error();
  auto root = torch_save::Unpickle(*pkl, path);
  if (!root.ok()) return root.error();
  if ((*root)->kind != torch_save::PickleValue::Kind::kTensor) {
    return Error{path, "data.pkl", "unsupported tensor pickle: not a single tensor"};
  }
  const torch_save::TensorMeta& meta = (*root)->tensor;
  const int64_t offset = meta.offset;
  const std::vector<int64_t>& size = meta.shape;
  const std::vector<int64_t>& stride = meta.stride;
  auto data = zip->Member(prefix + "data/" + meta.storage_key);
  if (!data.ok()) {
    if (data.error().message == "missing zip member") {
      return Error{path, "data/" + meta.storage_key, "missing tensor storage"};
    }
    return data.error();
  }
  torch_save::ElementType type;
  if (!torch_save::StorageElementType(meta.storage_type, &type)) {
    return Error{path, "data.pkl", "unsupported storage type " + meta.storage_type};
  }
  if (size.size() != stride.size()) return Error{path, "data.pkl", "size and stride differ in length"};
  std::string_view raw = *data;
  int64_t elements = static_cast<int64_t>(raw.size()) / type.width;
  Tensor t;
  t.shape = size;
  t.dtype = std::string(1, type.kind) + std::to_string(type.width);
  // The geometry is checked against the storage before anything is
  // allocated: a crafted pickle (a stride-0 view of 2^34 elements over a few
  // floats, a negative stride, an offset past the end) must not cost memory.
  GA_RETURN_IF_ERROR(CheckView(path, offset, size, stride, elements));
  size_t count = 1;
  for (int64_t s : size) count *= static_cast<size_t>(s);
  t.values.resize(count);
  std::vector<int64_t> idx(size.size(), 0);
  for (size_t n = 0; n < count; ++n) {
    int64_t at = offset;
    for (size_t k = 0; k < size.size(); ++k) at += idx[k] * stride[k];
    t.values[n] = DecodeElement(raw.data() + at * type.width, type.kind, type.width);
    for (size_t k = size.size(); k-- > 0;) {
      if (++idx[k] < size[k]) break;
      idx[k] = 0;
    }
  }
  return t;
}

}  // namespace graph_ascend::compare
