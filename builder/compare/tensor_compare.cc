#include "compare/tensor_compare.h"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "base/mapped_file.h"
#include "base/py_format.h"

namespace graph_ascend::compare {

const char* const kTensorMetricNames[6] = {"Cosine",         "EucDist", "MaxAbsErr", "MaxRelativeErr",
                                           "One Thousandth Err Ratio", "Five Thousandths Err Ratio"};

namespace {

constexpr double kEps = 2.220446049250313e-16;

double HalfToDouble(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  double v;
  if (exp == 0) {
    v = std::ldexp(frac, -24);
  } else if (exp == 31) {
    v = frac ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else {
    v = std::ldexp(frac + 1024, exp - 25);
  }
  return sign ? -v : v;
}

double BFloat16ToDouble(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

// Pulls the value of 'key' out of the header dict text.
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

vis::Metric Number(const char* name, double v) {
  vis::Metric m;
  m.set_name(name);
  m.set_text(PyRepr(v));
  m.set_value(v);
  m.set_has_value(std::isfinite(v));
  return m;
}

vis::Metric Marker(const char* name, const std::string& text) {
  vis::Metric m;
  m.set_name(name);
  m.set_text(text);
  return m;
}

// float(f"{x:.12f}")
double Round12(double x) {
  char buf[400];
  snprintf(buf, sizeof(buf), "%.12f", x);
  return strtod(buf, nullptr);
}

}  // namespace

Result<Tensor> ReadNpy(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  std::string_view d = file->text();
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
  Tensor t;
  char order = descr[0];
  t.dtype = descr.substr(1);
  size_t count = 1;
  for (size_t i = 1; i < shape_text.size();) {
    while (i < shape_text.size() && !isdigit(static_cast<unsigned char>(shape_text[i]))) ++i;
    if (i >= shape_text.size()) break;
    int64_t dim = 0;
    while (i < shape_text.size() && isdigit(static_cast<unsigned char>(shape_text[i]))) {
      int digit = shape_text[i++] - '0';
      dim = dim > (INT64_MAX - 9) / 10 ? INT64_MAX : dim * 10 + digit;  // saturate: the size check below rejects it
    }
    t.shape.push_back(dim);
    if (__builtin_mul_overflow(count, static_cast<size_t>(dim), &count)) count = SIZE_MAX;
  }
  char kind = t.dtype[0];
  size_t width = static_cast<size_t>(std::atoi(t.dtype.c_str() + 1));
  if (width == 0 || width > 8) return Error{path, "header", "unsupported dtype '" + QuoteBytes(descr) + "'"};
  size_t data_at = header_at + header_len;
  if (count > (d.size() - data_at) / width) {  // not data_at + count * width: that can wrap around
    return Error{path, "byte " + std::to_string(d.size()), "truncated .npy data"};
  }
  bool swap = order == '>' && width > 1;
  t.values.resize(count);
  const unsigned char* p = reinterpret_cast<const unsigned char*>(d.data() + data_at);
  if (kind != 'f' && kind != 'V' && kind != 'i' && kind != 'u' && kind != 'b') {
    return Error{path, "header", "unsupported dtype '" + QuoteBytes(descr) + "'"};
  }
  if ((kind == 'f' && width != 2 && width != 4 && width != 8) || (kind == 'V' && width != 2)) {
    return Error{path, "header", "unsupported dtype '" + QuoteBytes(descr) + "'"};
  }
  for (size_t i = 0; i < count; ++i, p += width) {
    unsigned char raw[8];
    for (size_t k = 0; k < width; ++k) raw[k] = swap ? p[width - 1 - k] : p[k];
    t.values[i] = DecodeElement(reinterpret_cast<const char*>(raw), kind, static_cast<int>(width));
  }
  if (fortran == "True" && t.shape.size() > 1) {
    // Reorder column-major data to row-major.
    std::vector<double> c(count);
    std::vector<int64_t> idx(t.shape.size(), 0);
    for (size_t f = 0; f < count; ++f) {
      size_t ci = 0;
      for (size_t k = 0; k < t.shape.size(); ++k) ci = ci * static_cast<size_t>(t.shape[k]) + static_cast<size_t>(idx[k]);
      c[ci] = t.values[f];
      for (size_t k = 0; k < idx.size(); ++k) {
        if (++idx[k] < t.shape[k]) break;
        idx[k] = 0;
      }
    }
    t.values = std::move(c);
  }
  return t;
}

double DecodeElement(const char* p, char kind, int width) {
  switch (kind) {
    case 'f': {
      if (width == 2) {
        uint16_t h;
        memcpy(&h, p, 2);
        return HalfToDouble(h);
      }
      if (width == 4) {
        float f;
        memcpy(&f, p, 4);
        return f;
      }
      double d;
      memcpy(&d, p, 8);
      return d;
    }
    case 'V': {
      uint16_t b;
      memcpy(&b, p, 2);
      return BFloat16ToDouble(b);  // bfloat16 (ml_dtypes writes it as a 2-byte void)
    }
    case 'i': {
      int64_t x = 0;
      memcpy(&x, p, static_cast<size_t>(width));
      int shift = 64 - 8 * width;
      return static_cast<double>(shift > 0 ? (x << shift) >> shift : x);  // sign-extend
    }
    default: {
      uint64_t x = 0;
      memcpy(&x, p, static_cast<size_t>(width));
      return static_cast<double>(x);
    }
  }
}

Result<Tensor> DumpTensorSource::Load(vis::Side side, const std::string& data_name) const {
  const std::string& dir = side == vis::SIDE_NPU ? npu_ : bench_;
  if (data_name.find('/') != std::string::npos || data_name.find("..") != std::string::npos) {
    return Error{dir, "data_name " + data_name, "a data_name must be a plain file name"};
  }
  std::string path = dir + "/dump_tensor_data/" + data_name;
  bool pt = data_name.size() > 3 && data_name.compare(data_name.size() - 3, 3, ".pt") == 0;
  Result<Tensor> t = pt ? ReadPt(path) : ReadNpy(path);
  // (.npy keeps comparing as "unsupported": complex MindSpore tensors are real dumps.)
  if (!t.ok() && pt && access(path.c_str(), F_OK) == 0) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!damage_) damage_ = t.error();
  }
  return t;
}

Status DumpTensorSource::damage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return damage_ ? Status(*damage_) : Status::Ok();
}

TensorMetrics UnsupportedTensorMetrics(const std::string& marker) {
  TensorMetrics m;
  for (int i = 0; i < 6; ++i) m.metric[i] = Marker(kTensorMetricNames[i], marker);
  return m;
}

TensorMetrics CompareTensors(const Tensor& npu, const Tensor& bench) {
  size_t n = npu.values.size();
  if (n == 0 || bench.values.empty()) return UnsupportedTensorMetrics("unsupported");
  bool scalar = npu.shape.empty();
  if (!scalar && npu.shape != bench.shape) return UnsupportedTensorMetrics("shape unmatched");
  if (n != bench.values.size()) return UnsupportedTensorMetrics("shape unmatched");
  std::vector<double> a = npu.values, b = bench.values;
  if (!scalar) {
    bool special = false;
    for (size_t i = 0; i < n; ++i) {
      if (!std::isfinite(a[i]) || !std::isfinite(b[i])) special = true;
    }
    if (special) {
      for (size_t i = 0; i < n; ++i) {
        if (std::isnan(a[i]) != std::isnan(b[i]) || std::isinf(a[i]) != std::isinf(b[i])) {
          return UnsupportedTensorMetrics("N/A");
        }
      }
      for (size_t i = 0; i < n; ++i) {
        if (!std::isfinite(a[i])) a[i] = b[i] = 0;
      }
    }
  }
  double max_abs = 0, max_rel = 0, sum_sq = 0, dot = 0, na = 0, nb = 0;
  size_t thousandth = 0, five = 0;
  bool nan_abs = false, nan_rel = false;
  for (size_t i = 0; i < n; ++i) {
    double x = a[i], y = b[i];
    double diff = x - y;
    double abs_diff = std::fabs(diff);
    if (std::isnan(abs_diff)) nan_abs = true;
    else if (abs_diff > max_abs) max_abs = abs_diff;
    sum_sq += diff * diff;
    dot += x * y;
    na += x * x;
    nb += y * y;
    double xr = x, yr = y;
    if (y == 0) {
      xr += kEps;
      yr += kEps;
    }
    double rel = std::fabs((xr - yr) / yr);
    if (std::isnan(rel)) nan_rel = true;
    else if (rel > max_rel) max_rel = rel;
    if (rel < 0.001) ++thousandth;
    if (rel < 0.005) ++five;
  }
  TensorMetrics m;
  if (scalar) {
    m.metric[0] = Marker(kTensorMetricNames[0], "unsupported");
    m.metric[1] = Marker(kTensorMetricNames[1], "unsupported");
    m.metric[4] = Marker(kTensorMetricNames[4], "unsupported");
    m.metric[5] = Marker(kTensorMetricNames[5], "unsupported");
  } else {
    double norm_a = std::sqrt(na), norm_b = std::sqrt(nb);
    if (n == 1) {
      m.metric[0] = Marker(kTensorMetricNames[0], "unsupported");
    } else if (norm_a <= kEps && norm_b <= kEps) {
      m.metric[0] = Number(kTensorMetricNames[0], 1.0);
    } else if (norm_a <= kEps || norm_b <= kEps) {
      m.metric[0] = Marker(kTensorMetricNames[0], "Nan");
    } else {
      double cos = dot / (norm_a * norm_b);
      if (std::isnan(cos)) {
        m.metric[0] = Marker(kTensorMetricNames[0], "Nan");
      } else {
        cos = Round12(cos);
        if (cos > 0.9999) cos = strtod(PyRound6(cos).c_str(), nullptr);
        m.metric[0] = Number(kTensorMetricNames[0], cos);
      }
    }
    m.metric[1] = Number(kTensorMetricNames[1], std::sqrt(sum_sq));
    m.metric[4] = Number(kTensorMetricNames[4], Round12(static_cast<double>(thousandth) / static_cast<double>(n)));
    m.metric[5] = Number(kTensorMetricNames[5], Round12(static_cast<double>(five) / static_cast<double>(n)));
  }
  m.metric[2] = nan_abs ? Marker(kTensorMetricNames[2], "Nan") : Number(kTensorMetricNames[2], Round12(max_abs));
  m.metric[3] = nan_rel ? Marker(kTensorMetricNames[3], "Nan") : Number(kTensorMetricNames[3], Round12(max_rel));
  return m;
}

}  // namespace graph_ascend::compare
