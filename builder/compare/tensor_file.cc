// Both dumped tensor formats come down to one layout: raw little- (or big-)
// endian elements in a storage, and a view (offset, shape, stride) over it.
// .npy: the header dict names descr, fortran_order and shape; the data follows
// it (C order, or Fortran order as strides). .pt: a zip (builder/torch_save's
// reader: stored members, zip64) holding data.pkl, a pickle that rebuilds one
// tensor (torch._utils._rebuild_tensor_v2 of a storage, offset, size, stride;
// run by torch_save's restricted unpickler), and the storage in data/<key>.
#include "compare/tensor_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "base/py_format.h"
#include "compare/tensor_compare.h"
#include "torch_save/pickle.h"
#include "torch_save/zip_archive.h"

namespace graph_ascend::compare {
namespace {

// Pulls the value of 'key' out of the .npy header dict text.
std::string HeaderValue(const std::string& header, const std::string& key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return "";
  at = header.find(':', at);
  if (at == std::string::npos) return "";
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  if (at >= header.size()) return "";
  char open = header[at];
  size_t end;
  if (open == '\'') {
    end = header.find('\'', at + 1);
    return end == std::string::npos ? "" : header.substr(at + 1, end - at - 1);
  }
  if (open == '(') {
    end = header.find(')', at);
    return end == std::string::npos ? "" : header.substr(at, end - at + 1);
  }
  end = header.find_first_of(",}", at);
  return header.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

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

bool EndsWithPt(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".pt") == 0;
}

}  // namespace

Result<TensorFile> TensorFile::Open(const std::string& path, const std::string& root) {
  auto file = MappedFile::Open(path, root);
  if (!file.ok()) return file.error();
  std::string_view bytes = file->text();  // the map stays where it is when the MappedFile moves
  auto t = EndsWithPt(path) ? FromPtBytes(bytes, path) : FromNpyBytes(bytes, path);
  if (!t.ok()) return t.error();
  t->file_ = std::move(*file);
  return t;
}

Result<TensorFile> TensorFile::FromNpyBytes(std::string_view d, const std::string& path) {
  if (d.size() < 10 || d.substr(0, 6) != "\x93NUMPY") return Error{path, "byte 0", "not a .npy file (bad magic)"};
  int major = static_cast<unsigned char>(d[6]);
  size_t header_len, header_at;
  if (major == 1) {
    header_len = static_cast<unsigned char>(d[8]) | (static_cast<size_t>(static_cast<unsigned char>(d[9])) << 8);
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (d.size() < 12) return Error{path, "byte 8", "truncated .npy header"};
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(d[8 + i]);
    header_at = 12;
  } else {
    return Error{path, "byte 6", "unsupported .npy version " + std::to_string(major)};
  }
  if (header_at + header_len > d.size()) return Error{path, "byte 8", "truncated .npy header"};
  std::string header(d.substr(header_at, header_len));
  std::string descr = HeaderValue(header, "descr");
  std::string fortran = HeaderValue(header, "fortran_order");
  std::string shape_text = HeaderValue(header, "shape");
  if (descr.size() < 2 || shape_text.empty()) return Error{path, "header", "cannot read descr/shape: " + header};
  TensorFile t;
  t.path_ = path;
  char order = descr[0];
  t.dtype_ = descr.substr(1);
  size_t count = 1;
  for (size_t i = 1; i < shape_text.size();) {
    while (i < shape_text.size() && !isdigit(static_cast<unsigned char>(shape_text[i]))) ++i;
    if (i >= shape_text.size()) break;
    int64_t dim = 0;
    while (i < shape_text.size() && isdigit(static_cast<unsigned char>(shape_text[i]))) {
      int digit = shape_text[i++] - '0';
      dim = dim > (INT64_MAX - 9) / 10 ? INT64_MAX : dim * 10 + digit;  // saturate: the size check below rejects it
    }
    t.shape_.push_back(dim);
    if (__builtin_mul_overflow(count, static_cast<size_t>(dim), &count)) count = SIZE_MAX;
  }
  char kind = t.dtype_[0];
  size_t width = static_cast<size_t>(std::atoi(t.dtype_.c_str() + 1));
  if (width == 0 || width > 8) return Error{path, "header", "unsupported dtype '" + QuoteBytes(descr) + "'"};
  size_t data_at = header_at + header_len;
  if (count > (d.size() - data_at) / width) {  // not data_at + count * width: that can wrap around
    return Error{path, "byte " + std::to_string(d.size()), "truncated .npy data"};
  }
  if (kind != 'f' && kind != 'V' && kind != 'i' && kind != 'u' && kind != 'b') {
    return Error{path, "header", "unsupported dtype '" + QuoteBytes(descr) + "'"};
  }
  if ((kind == 'f' && width != 2 && width != 4 && width != 8) || (kind == 'V' && width != 2)) {
    return Error{path, "header", "unsupported dtype '" + QuoteBytes(descr) + "'"};
  }
  t.raw_ = d.substr(data_at, count * width);
  t.stride_.assign(t.shape_.size(), 1);
  if (fortran == "True") {
    for (size_t k = 1; k < t.shape_.size(); ++k) t.stride_[k] = t.stride_[k - 1] * t.shape_[k - 1];
  } else {
    for (size_t k = t.shape_.size(); k-- > 1;) t.stride_[k - 1] = t.stride_[k] * t.shape_[k];
  }
  GA_RETURN_IF_ERROR(t.SetLayout(kind, static_cast<int>(width), order == '>' && width > 1));
  return t;
}

Result<TensorFile> TensorFile::FromPtBytes(std::string_view bytes, const std::string& path) {
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
  if (meta.shape.size() != meta.stride.size()) return Error{path, "data.pkl", "size and stride differ in length"};
  TensorFile t;
  t.path_ = path;
  t.raw_ = *data;  // a stored member: a view of `bytes`
  t.shape_ = meta.shape;
  t.stride_ = meta.stride;
  t.offset_ = meta.offset;
  t.dtype_ = std::string(1, type.kind) + std::to_string(type.width);
  // The geometry is checked against the storage before anything is
  // allocated: a crafted pickle (a stride-0 view of 2^34 elements over a few
  // floats, a negative stride, an offset past the end) must not cost memory.
  GA_RETURN_IF_ERROR(
      CheckView(path, t.offset_, t.shape_, t.stride_, static_cast<int64_t>(t.raw_.size()) / type.width));
  GA_RETURN_IF_ERROR(t.SetLayout(type.kind, type.width, false));
  return t;
}

Status TensorFile::SetLayout(char kind, int width, bool swap) {
  kind_ = kind;
  width_ = width;
  swap_ = swap;
  count_ = 1;
  for (int64_t s : shape_) count_ *= s;  // checked against the storage by the callers
  contiguous_ = true;
  int64_t expect = 1;
  for (size_t k = shape_.size(); k-- > 0;) {
    if (shape_[k] != 1 && stride_[k] != expect) contiguous_ = false;
    expect *= shape_[k];
  }
  return Status::Ok();
}

void TensorFile::Read(int64_t first, int64_t n, double* out) const {
  // Nothing to read, and a zero dimension would divide by zero below (fuzz: npy/pt, 0 x N views).
  if (n <= 0) return;
  const char* base = raw_.data();
  auto decode = [&](int64_t element) {
    const char* p = base + element * width_;
    if (!swap_) return DecodeElement(p, kind_, width_);
    char raw[8];
    for (int k = 0; k < width_; ++k) raw[k] = p[width_ - 1 - k];
    return DecodeElement(raw, kind_, width_);
  };
  if (contiguous_) {
    for (int64_t i = 0; i < n; ++i) out[i] = decode(offset_ + first + i);
    return;
  }
  // The multi-index of `first`, then stepped like an odometer.
  const size_t rank = shape_.size();
  std::vector<int64_t> idx(rank, 0);
  int64_t rest = first, at = offset_;
  for (size_t k = rank; k-- > 0;) {
    idx[k] = rest % shape_[k];
    rest /= shape_[k];
    at += idx[k] * stride_[k];
  }
  for (int64_t i = 0; i < n; ++i) {
    out[i] = decode(at);
    for (size_t k = rank; k-- > 0;) {
      at += stride_[k];
      if (++idx[k] < shape_[k]) break;
      at -= idx[k] * stride_[k];
      idx[k] = 0;
    }
  }
}

void TensorFile::Release(int64_t below) const {
  std::string_view map = file_.text();
  if (map.empty()) return;
  size_t end = map.size();
  if (below >= 0) {
    if (!contiguous_) return;  // a strided pass comes back to earlier pages
    end = static_cast<size_t>(raw_.data() - map.data()) + static_cast<size_t>(offset_ + below) * width_;
    end = std::min(end, map.size()) & ~(static_cast<size_t>(sysconf(_SC_PAGESIZE)) - 1);
    if (end <= released_) return;
  }
  // The map is private and read-only: dropping its pages only costs a re-read.
  size_t from = below >= 0 ? released_ : 0;
  if (end > from) madvise(const_cast<char*>(map.data() + from), end - from, MADV_DONTNEED);
  released_ = below >= 0 ? end : 0;  // after a full release the next pass starts again at 0
}

}  // namespace graph_ascend::compare
