#include "compare/tensor_compare.h"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "base/mapped_file.h"
#include "base/py_format.h"
#include "compare/tensor_file.h"

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

// Every element of `file`, decoded.
Tensor ReadAll(const TensorFile& file) {
  Tensor t;
  t.shape = file.shape();
  t.dtype = file.dtype();
  t.values.resize(static_cast<size_t>(file.count()));
  file.Read(0, file.count(), t.values.data());
  return t;
}

}  // namespace

Result<Tensor> ReadNpy(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  auto t = TensorFile::FromNpyBytes(file->text(), path);
  if (!t.ok()) return t.error();
  return ReadAll(*t);
}

Result<Tensor> ReadPt(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  return ParsePt(file->text(), path);
}

Result<Tensor> ParsePt(std::string_view bytes, const std::string& path) {
  auto t = TensorFile::FromPtBytes(bytes, path);
  if (!t.ok()) return t.error();
  return ReadAll(*t);
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
