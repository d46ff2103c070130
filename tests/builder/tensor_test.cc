// Tensor files and the real-data metrics (reference §3.5, §6.7): .npy
// files of every dtype msprobe dumps, torch .pt files, and the six metrics
// of a tensor pair.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "base/string_pool.h"
#include "compare/tensor_compare.h"
#include "dump/dump_data.h"
#include "test_files.h"

namespace graph_ascend::compare {
namespace {

using graph_ascend::testing::Ok;
using graph_ascend::testing::ReadFile;
using graph_ascend::testing::SourceDir;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::WriteFile;

const double kInf = std::numeric_limits<double>::infinity();

// Fixtures written by numpy, ml_dtypes and torch (testdata/tensors/make_tensors.py).
std::string Fixture(const std::string& name) { return SourceDir() + "/tests/builder/testdata/tensors/" + name; }

Tensor Npy(const std::string& name) { return Ok(ReadNpy(Fixture(name + ".npy"))); }
Tensor Pt(const std::string& name) { return Ok(ReadPt(Fixture(name + ".pt"))); }

TEST(ReadNpyTest, Float16) {
  Tensor t = Npy("f16");
  EXPECT_EQ(t.dtype, "f2");
  EXPECT_EQ(t.shape, std::vector<int64_t>{7});
  ASSERT_EQ(t.values.size(), 7u);
  EXPECT_EQ(t.values[0], 1.0);
  EXPECT_EQ(t.values[1], -2.5);
  EXPECT_EQ(t.values[2], 65504.0);
  EXPECT_EQ(t.values[3], std::ldexp(1.0, -14)) << "smallest normal";
  EXPECT_EQ(t.values[4], std::ldexp(1.0, -24)) << "smallest subnormal";
  EXPECT_EQ(t.values[5], kInf);
  EXPECT_TRUE(std::isnan(t.values[6]));
}

TEST(ReadNpyTest, Float32TwoDimensions) {
  Tensor t = Npy("f32");
  EXPECT_EQ(t.dtype, "f4");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.values,
            (std::vector<double>{0.5, -1.25, 3.0, static_cast<double>(1e-3f), -7.0, static_cast<double>(1e30f)}));
}

TEST(ReadNpyTest, Float64) {
  Tensor t = Npy("f64");
  EXPECT_EQ(t.dtype, "f8");
  EXPECT_EQ(t.values, (std::vector<double>{0.1, -1e-300, 1e300}));
}

TEST(ReadNpyTest, BFloat16AsTwoByteVoid) {
  Tensor t = Npy("bf16");
  EXPECT_EQ(t.dtype, "V2");
  EXPECT_EQ(t.values, (std::vector<double>{1.0, -2.0, 3.140625, -0.0078125}));
}

TEST(ReadNpyTest, Integers) {
  EXPECT_EQ(Npy("i8").values, (std::vector<double>{-128, 0, 127}));
  EXPECT_EQ(Npy("i16").values, (std::vector<double>{-32768, 1, 32767}));
  EXPECT_EQ(Npy("i32").values, (std::vector<double>{-2147483648.0, 2, 2147483647.0}));
  EXPECT_EQ(Npy("i64").values, (std::vector<double>{-9007199254740992.0, 3, 9007199254740992.0}));
  EXPECT_EQ(Npy("u8").values, (std::vector<double>{0, 200, 255}));
  EXPECT_EQ(Npy("u64").values, (std::vector<double>{0, 1099511627776.0}));
  EXPECT_EQ(Npy("i64").dtype, "i8");
  EXPECT_EQ(Npy("u8").dtype, "u1");
}

TEST(ReadNpyTest, Bool) {
  Tensor t = Npy("bool");
  EXPECT_EQ(t.dtype, "b1");
  EXPECT_EQ(t.values, (std::vector<double>{1, 0, 1, 1}));
}

TEST(ReadNpyTest, BigEndian) {
  EXPECT_EQ(Npy("f64_big_endian").values, (std::vector<double>{1.5, -2.25}));
  EXPECT_EQ(Npy("i32_big_endian").values, (std::vector<double>{-3, 65536}));
}

TEST(ReadNpyTest, FortranOrderIsReturnedInCOrder) {
  Tensor t = Npy("f32_fortran");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.values, (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

TEST(ReadNpyTest, FormatVersion2Header) { EXPECT_EQ(Npy("f32_v2").values, (std::vector<double>{4, 5})); }

TEST(ReadNpyTest, ScalarAndEmpty) {
  Tensor s = Npy("f32_scalar");
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.values, std::vector<double>{2.5});
  Tensor e = Npy("f32_empty");
  EXPECT_EQ(e.shape, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(e.values.empty());
}

TEST(ReadNpyTest, Errors) {
  auto complex = ReadNpy(Fixture("c64.npy"));
  ASSERT_FALSE(complex.ok());
  EXPECT_NE(complex.error().message.find("unsupported dtype"), std::string::npos) << complex.error().ToString();

  TempDir dir;
  WriteFile(dir / "text.npy", "this is not numpy data");
  auto magic = ReadNpy(dir / "text.npy");
  ASSERT_FALSE(magic.ok());
  EXPECT_EQ(magic.error().file, dir / "text.npy");
  EXPECT_NE(magic.error().message.find("not a .npy file"), std::string::npos);

  std::string f32 = ReadFile(Fixture("f32.npy"));
  WriteFile(dir / "short.npy", f32.substr(0, f32.size() - 5));
  auto truncated = ReadNpy(dir / "short.npy");
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.error().message.find("truncated"), std::string::npos);

  auto missing = ReadNpy(dir / "absent.npy");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot open"), std::string::npos);
}

TEST(ReadPtTest, EveryStorageType) {
  Tensor f32 = Pt("pt_f32");
  EXPECT_EQ(f32.dtype, "f4");
  EXPECT_EQ(f32.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f32.values,
            (std::vector<double>{0.5, -1.25, 3.0, static_cast<double>(1e-3f), -7.0, static_cast<double>(1e30f)}));
  EXPECT_EQ(Pt("pt_f16").values, (std::vector<double>{1.0, -2.5, 65504.0}));
  EXPECT_EQ(Pt("pt_f16").dtype, "f2");
  EXPECT_EQ(Pt("pt_bf16").values, (std::vector<double>{1.0, -2.0, 3.140625}));
  EXPECT_EQ(Pt("pt_f64").values, (std::vector<double>{0.1, -1e-300}));
  EXPECT_EQ(Pt("pt_i64").values, (std::vector<double>{-1099511627776.0, 7}));
  EXPECT_EQ(Pt("pt_i32").values, (std::vector<double>{-5, 6}));
  EXPECT_EQ(Pt("pt_u8").values, (std::vector<double>{0, 255}));
  EXPECT_EQ(Pt("pt_bool").values, (std::vector<double>{1, 0}));
}

// torch.save's zip64 records (sizes and offsets in extra fields, the directory found through the zip64 end
// record): pt_f32.pt's members rewritten so (make_tensors.py); the old reader took the 0xffff entry count.
TEST(ReadPtTest, Zip64ArchivesReadAsTheirPlainTwin) {
  Tensor zip64 = Pt("pt_zip64"), plain = Pt("pt_f32");
  EXPECT_EQ(zip64.dtype, plain.dtype);
  EXPECT_EQ(zip64.shape, plain.shape);
  EXPECT_EQ(zip64.values, plain.values);
}

TEST(ReadPtTest, ViewsFollowOffsetAndStrides) {
  Tensor t = Pt("pt_transposed");  // arange(6).reshape(2, 3).t()
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(t.values, (std::vector<double>{0, 3, 1, 4, 2, 5}));
  Tensor v = Pt("pt_offset_view");  // arange(10)[4:7]
  EXPECT_EQ(v.shape, std::vector<int64_t>{3});
  EXPECT_EQ(v.values, (std::vector<double>{4, 5, 6}));
  Tensor s = Pt("pt_scalar");
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.values, std::vector<double>{1.5});
}

TEST(ReadPtTest, Errors) {
  auto npy = ReadPt(Fixture("f32.npy"));
  ASSERT_FALSE(npy.ok());
  EXPECT_NE(npy.error().message.find("not a torch .pt file"), std::string::npos) << npy.error().ToString();
  TempDir dir;
  std::string pt = ReadFile(Fixture("pt_f32.pt"));
  WriteFile(dir / "cut.pt", pt.substr(0, pt.size() / 2));
  auto cut = ReadPt(dir / "cut.pt");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().file, dir / "cut.pt");
  // Files shorter than a zip directory record (an empty file is not even mapped).
  for (const char* text : {"", "PK", "PK\x05\x06"}) {
    WriteFile(dir / "short.pt", text);
    auto r = ReadPt(dir / "short.pt");
    ASSERT_FALSE(r.ok()) << "accepted a " << strlen(text) << "-byte file";
    EXPECT_NE(r.error().message.find("not a torch .pt file"), std::string::npos) << r.error().ToString();
  }
  WriteFile(dir / "empty.npy", "");
  EXPECT_FALSE(ReadNpy(dir / "empty.npy").ok());
}

// Damaged files must give an error, not an unbounded allocation.
TEST(TensorFileTest, AbsurdSizesAreErrors) {
  auto huge = ReadPt(Fixture("pt_bad_huge_view.pt"));
  ASSERT_FALSE(huge.ok());
  // The unpickler refuses the size before any storage is read, at its byte ("data.pkl byte 156").
  EXPECT_EQ(huge.error().where.rfind("data.pkl", 0), 0u) << huge.error().ToString();
  auto negative = ReadPt(Fixture("pt_bad_negative_size.pt"));
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.error().message.find("bad tensor size"), std::string::npos) << negative.error().ToString();
  auto deflated = ReadPt(Fixture("pt_bad_deflated.pt"));
  ASSERT_FALSE(deflated.ok());
  EXPECT_NE(deflated.error().message.find("compressed"), std::string::npos) << deflated.error().ToString();
  auto wrapping = ReadNpy(Fixture("npy_bad_wrapping_shape.npy"));
  ASSERT_FALSE(wrapping.ok());
  EXPECT_NE(wrapping.error().message.find("truncated"), std::string::npos) << wrapping.error().ToString();
}

// Every .pt file msprobe wrote for the gpt_tensor sample reproduces the
// shape and statistics dump.json records for it.
TEST(ReadPtTest, RealDumpFilesMatchTheirDumpStatistics) {
  const std::string dir = SourceDir() + "/samples/gpt_tensor/npu/step0/rank0";
  StringPool pool;
  auto dump = dump::ReadDumpJson(dir + "/dump.json", &pool, dump::DumpOptions{});
  ASSERT_TRUE(dump.ok()) << dump.error().ToString();
  size_t checked = 0, integer_files = 0;
  for (const dump::DumpItem& item : dump->items) {
    std::string data_name, shape, dtype;
    double stat[4] = {NAN, NAN, NAN, NAN};
    for (uint32_t f = item.first_field; f < item.first_field + item.field_count; ++f) {
      std::string_view name = pool.Get(dump->fields[f].name);
      const dump::Value& v = dump->fields[f].value;
      if (name == "data_name" && v.kind == dump::ValueKind::kString) data_name = pool.Get(v.string);
      if (name == "shape" && v.kind == dump::ValueKind::kJson) shape = pool.Get(v.string);
      if (name == "dtype" && v.kind == dump::ValueKind::kString) dtype = pool.Get(v.string);
      static const char* const kStats[4] = {"Max", "Min", "Mean", "Norm"};
      for (int k = 0; k < 4; ++k) {
        if (name != kStats[k]) continue;
        if (v.kind == dump::ValueKind::kNumber) stat[k] = v.number;
        if (v.kind == dump::ValueKind::kInteger) stat[k] = static_cast<double>(v.integer);
      }
    }
    if (data_name.empty() || data_name == "-1") continue;
    auto t = ReadPt(dir + "/dump_tensor_data/" + data_name);
    ASSERT_TRUE(t.ok()) << t.error().ToString();
    std::string got_shape = "[";
    for (size_t i = 0; i < t->shape.size(); ++i) got_shape += (i ? ", " : "") + std::to_string(t->shape[i]);
    got_shape += "]";
    EXPECT_EQ(got_shape, shape) << data_name;
    if (dtype == "torch.int64") {
      EXPECT_EQ(t->dtype, "i8") << data_name;
      ++integer_files;
    } else {
      EXPECT_EQ(t->dtype, "f4") << data_name << " " << dtype;
    }
    if (t->values.empty()) continue;
    double mx = -kInf, mn = kInf, sum = 0, sq = 0;
    for (double x : t->values) {
      mx = std::max(mx, x);
      mn = std::min(mn, x);
      sum += x;
      sq += x * x;
    }
    EXPECT_EQ(mx, stat[0]) << data_name;
    EXPECT_EQ(mn, stat[1]) << data_name;
    // msprobe leaves Mean and Norm of integer tensors null.
    double mean = sum / static_cast<double>(t->values.size());
    if (!std::isnan(stat[2])) {
      EXPECT_NEAR(mean, stat[2], 1e-5 * std::max(1.0, std::fabs(stat[2]))) << data_name;
    }
    if (!std::isnan(stat[3])) {
      EXPECT_NEAR(std::sqrt(sq), stat[3], 1e-5 * std::max(1.0, stat[3])) << data_name;
    }
    EXPECT_EQ(std::isnan(stat[2]), dtype == "torch.int64") << data_name;
    ++checked;
  }
  EXPECT_GT(checked, 500u) << "the sample has 536 tensor files a side";
  EXPECT_GT(integer_files, 0u) << "token ids are int64 tensors";
}

TEST(DecodeElementTest, RawLittleEndianValues) {
  const char half_one[2] = {0x00, 0x3C};
  EXPECT_EQ(DecodeElement(half_one, 'f', 2), 1.0);
  const char bf16_one[2] = {static_cast<char>(0x80), 0x3F};
  EXPECT_EQ(DecodeElement(bf16_one, 'V', 2), 1.0);
  const char ones[2] = {static_cast<char>(0xFF), static_cast<char>(0xFF)};
  EXPECT_EQ(DecodeElement(ones, 'i', 2), -1.0);
  EXPECT_EQ(DecodeElement(ones, 'u', 2), 65535.0);
  const char half_neg_zero[2] = {0x00, static_cast<char>(0x80)};
  EXPECT_TRUE(std::signbit(DecodeElement(half_neg_zero, 'f', 2)));
}

// §6.7 metrics.

Tensor T(std::vector<double> values, std::vector<int64_t> shape = {}) {
  Tensor t;
  if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
  t.shape = std::move(shape);
  t.values = std::move(values);
  t.dtype = "f4";
  return t;
}
Tensor Scalar(double v) {
  Tensor t;
  t.values = {v};
  t.dtype = "f4";
  return t;
}

struct Row {
  std::string text[6];
  double value[6];
  bool has_value[6];
};
Row Metrics(const Tensor& a, const Tensor& b) {
  TensorMetrics m = CompareTensors(a, b);
  Row r;
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(m.metric[i].name(), kTensorMetricNames[i]);
    r.text[i] = m.metric[i].text();
    r.value[i] = m.metric[i].value();
    r.has_value[i] = m.metric[i].has_value();
  }
  return r;
}
enum { kCosine, kEucDist, kMaxAbsErr, kMaxRelativeErr, kThousandth, kFiveThousandths };

TEST(CompareTensorsTest, MetricNamesInTheReferenceColumnOrder) {
  EXPECT_STREQ(kTensorMetricNames[0], "Cosine");
  EXPECT_STREQ(kTensorMetricNames[1], "EucDist");
  EXPECT_STREQ(kTensorMetricNames[2], "MaxAbsErr");
  EXPECT_STREQ(kTensorMetricNames[3], "MaxRelativeErr");
  EXPECT_STREQ(kTensorMetricNames[4], "One Thousandth Err Ratio");
  EXPECT_STREQ(kTensorMetricNames[5], "Five Thousandths Err Ratio");
}

TEST(CompareTensorsTest, OneElementDiffers) {
  Row r = Metrics(T({1, 2, 3, 4}), T({1, 2, 3, 5}));
  EXPECT_EQ(r.value[kCosine], 0.993999088548) << "rounded to 12 decimals";
  EXPECT_EQ(r.value[kEucDist], 1.0);
  EXPECT_EQ(r.text[kEucDist], "1.0");
  EXPECT_EQ(r.value[kMaxAbsErr], 1.0);
  EXPECT_EQ(r.value[kMaxRelativeErr], 0.2);
  EXPECT_EQ(r.value[kThousandth], 0.75);
  EXPECT_EQ(r.text[kThousandth], "0.75");
  EXPECT_EQ(r.value[kFiveThousandths], 0.75);
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(r.has_value[i]) << i;
}

TEST(CompareTensorsTest, SmallRelativeErrorsCountInTheRatios) {
  // Relative errors 0.0005 (under 1/1000), 0.003 (under 5/1000), 0.01 (neither), 0.
  Row r = Metrics(T({1.0005, 1.003, 1.01, 2}), T({1, 1, 1, 2}));
  EXPECT_EQ(r.value[kThousandth], 0.5);
  EXPECT_EQ(r.value[kFiveThousandths], 0.75);
  EXPECT_NEAR(r.value[kMaxRelativeErr], 0.01, 1e-12);
}

TEST(CompareTensorsTest, NearlyIdenticalCosineIsRoundedToSixDecimals) {
  Row r = Metrics(T({1, 2, 3}), T({1, 2, 3.0001}));
  EXPECT_EQ(r.value[kCosine], 1.0);
  EXPECT_EQ(r.text[kCosine], "1.0");
}

TEST(CompareTensorsTest, ZeroBenchElementsGetEpsilon) {
  // At b == 0 both sides get +eps: 1e-17 vs 0 is a relative error of 1e-17 / eps (~0.045).
  Row r = Metrics(T({1e-17, 1}), T({0, 1}));
  EXPECT_NEAR(r.value[kMaxRelativeErr], 1e-17 / 2.220446049250313e-16, 1e-12);
  EXPECT_EQ(r.value[kThousandth], 0.5);
  Row same = Metrics(T({0, 1}), T({0, 1}));
  EXPECT_EQ(same.value[kMaxRelativeErr], 0.0);
  EXPECT_EQ(same.value[kThousandth], 1.0);
}

TEST(CompareTensorsTest, ShapesMustAgree) {
  Row r = Metrics(T({1, 2, 3, 4}, {2, 2}), T({1, 2, 3, 4}, {4}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r.text[i], "shape unmatched") << i;
  Row n = Metrics(T({1, 2, 3}), T({1, 2}));
  EXPECT_EQ(n.text[kCosine], "shape unmatched");
}

TEST(CompareTensorsTest, NanAndInfAtTheSamePlacesAreSetToZero) {
  Row r = Metrics(T({NAN, 1, kInf, 2}), T({NAN, 1, kInf, 4}));
  EXPECT_EQ(r.value[kMaxAbsErr], 2.0);
  EXPECT_EQ(r.value[kMaxRelativeErr], 0.5);
  EXPECT_EQ(r.value[kThousandth], 0.75) << "the zeroed places agree";
}

TEST(CompareTensorsTest, NanOrInfAtDifferentPlacesIsNA) {
  Row r = Metrics(T({NAN, 1}), T({1, 1}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r.text[i], "N/A") << i;
  Row inf = Metrics(T({kInf, 1}), T({-1, 1}));
  EXPECT_EQ(inf.text[kMaxAbsErr], "N/A");
}

TEST(CompareTensorsTest, ZeroDimensionalTensors) {
  Row r = Metrics(Scalar(2), Scalar(1));
  EXPECT_EQ(r.text[kCosine], "unsupported");
  EXPECT_EQ(r.text[kEucDist], "unsupported");
  EXPECT_EQ(r.text[kThousandth], "unsupported");
  EXPECT_EQ(r.text[kFiveThousandths], "unsupported");
  EXPECT_EQ(r.value[kMaxAbsErr], 1.0);
  EXPECT_EQ(r.value[kMaxRelativeErr], 1.0);
}

TEST(CompareTensorsTest, OneElementHasNoCosine) {
  Row r = Metrics(T({2}), T({1}));
  EXPECT_EQ(r.text[kCosine], "unsupported");
  EXPECT_EQ(r.value[kThousandth], 0.0);
  EXPECT_TRUE(r.has_value[kEucDist]);
}

TEST(CompareTensorsTest, ZeroNorms) {
  EXPECT_EQ(Metrics(T({0, 0}), T({0, 0})).value[kCosine], 1.0);
  EXPECT_EQ(Metrics(T({0, 0}), T({1, 0})).text[kCosine], "Nan");
}

TEST(CompareTensorsTest, EmptyIsUnsupported) {
  Row r = Metrics(T({}, {0}), T({}, {0}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r.text[i], "unsupported") << i;
  TensorMetrics m = UnsupportedTensorMetrics("unsupported");
  EXPECT_EQ(m.metric[3].name(), "MaxRelativeErr");
  EXPECT_FALSE(m.metric[3].has_value());
}

TEST(CompareTensorsTest, DifferentDtypesAreStillCompared) {
  Tensor a = T({1, 2});
  Tensor b = T({1, 2});
  b.dtype = "V2";
  EXPECT_EQ(Metrics(a, b).value[kCosine], 1.0);
}

TEST(DumpTensorSourceTest, ReadsNpyAndPtFromDumpTensorData) {
  TempDir npu, bench;
  std::filesystem::create_directories(npu / "dump_tensor_data");
  std::filesystem::create_directories(bench / "dump_tensor_data");
  std::filesystem::copy_file(Fixture("f32.npy"), npu / "dump_tensor_data/Torch.add.0.forward.input.0.npy");
  std::filesystem::copy_file(Fixture("pt_f32.pt"), bench / "dump_tensor_data/Torch.add.0.forward.input.0.pt");
  DumpTensorSource source(npu.path(), bench.path());
  Tensor a = Ok(source.Load(vis::SIDE_NPU, "Torch.add.0.forward.input.0.npy"));
  Tensor b = Ok(source.Load(vis::SIDE_BENCH, "Torch.add.0.forward.input.0.pt"));
  EXPECT_EQ(a.values, b.values);
  EXPECT_FALSE(source.Load(vis::SIDE_BENCH, "Torch.add.0.forward.input.0.npy").ok()) << "each side reads its own dir";
  auto escape = source.Load(vis::SIDE_NPU, "../dump_tensor_data/x.npy");
  ASSERT_FALSE(escape.ok());
  EXPECT_NE(escape.error().message.find("plain file name"), std::string::npos);
}

}  // namespace
}  // namespace graph_ascend::compare
