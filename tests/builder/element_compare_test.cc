// The element-level comparison behind the page's tensor view (issue 32 point
// 5): on samples/gpt_tensor's real .pt dumps (expected numbers from torch:
// torch.load both files, (a - b).abs()), and on small .npy files for NaN/Inf,
// Fortran order, masks and pooling, read in chunks smaller than the tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "compare/element_compare.h"
#include "compare/tensor_compare.h"
#include "test_files.h"

namespace graph_ascend::compare {
namespace {

using graph_ascend::testing::Ok;
using graph_ascend::testing::SourceDir;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::WriteFile;

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

std::string Dumped(const std::string& side, const std::string& name) {
  return SourceDir() + "/samples/gpt_tensor/" + side + "/step0/rank0/dump_tensor_data/" + name;
}

// The gradient of the embedding table (64 tokens x hidden 16): only the rows
// of the 3 distinct input tokens (2, 11, 34) are non-zero, on both sides.
constexpr char kEmbeddingGrad[] = "Functional.embedding.0.backward.output.0.pt";

ElementComparison Compare(const std::string& npu_path, const std::string& bench_path, const ElementOptions& o) {
  TensorFile npu = Ok(TensorFile::Open(npu_path));
  TensorFile bench = Ok(TensorFile::Open(bench_path));
  return Ok(CompareElements(npu, bench, o));
}

ElementComparison EmbeddingGrad(ElementOptions o) {
  return Compare(Dumped("npu", kEmbeddingGrad), Dumped("bench", kEmbeddingGrad), o);
}

TEST(ElementCompareTest, WorstElementsOfARealDump) {
  ElementOptions o;
  o.top_k = 3;
  o.chunk = 100;  // 11 chunks of a 1024-element tensor
  ElementComparison c = EmbeddingGrad(o);
  EXPECT_EQ(c.npu_shape, (std::vector<int64_t>{64, 16}));
  EXPECT_EQ(c.npu_dtype, "f4");
  EXPECT_EQ(c.elements, 1024u);
  EXPECT_EQ(c.compared, 1024u);
  EXPECT_EQ(c.abs_hist.zero, 976u);
  EXPECT_DOUBLE_EQ(c.max_abs, 0.0381232388317585);
  EXPECT_NEAR(c.mean_abs, 0.00030720365248271264, 1e-15);
  ASSERT_EQ(c.worst.size(), 3u);
  EXPECT_EQ(c.worst[0].index, (std::vector<int64_t>{2, 12}));
  EXPECT_DOUBLE_EQ(c.worst[0].npu, -0.04110696539282799);
  EXPECT_DOUBLE_EQ(c.worst[0].bench, -0.07923020422458649);
  EXPECT_EQ(c.worst[1].index, (std::vector<int64_t>{2, 15}));
  EXPECT_EQ(c.worst[2].index, (std::vector<int64_t>{2, 10}));
  EXPECT_DOUBLE_EQ(c.worst[0].rel_err, RelativeError(c.worst[0].npu, c.worst[0].bench));
  // log10 bins of half a decade from 1e-12: torch's errors fall in bins 14..21.
  std::vector<uint64_t> expect(c.abs_hist.counts.size(), 0);
  expect[14] = 1, expect[15] = 1, expect[16] = 5, expect[17] = 5, expect[18] = 9, expect[19] = 14, expect[20] = 12,
  expect[21] = 1;
  EXPECT_EQ(c.abs_hist.counts, expect);
  EXPECT_EQ(c.npu.nan + c.npu.pos_inf + c.bench.nan + c.bench.neg_inf, 0u);
}

TEST(ElementCompareTest, AgreesWithTheMetricsOfTheWholeTensor) {
  // MaxAbsErr of the builder's compare, read whole, and the view's, read in chunks of 7.
  for (const char* name : {kEmbeddingGrad, "Module.lm_head.Linear.parameters_grad.0.weight.pt",
                           "Tensor.__add__.10.forward.output.0.pt"}) {
    ElementOptions o;
    o.chunk = 7;
    ElementComparison c = Compare(Dumped("npu", name), Dumped("bench", name), o);
    TensorMetrics m = CompareTensors(Ok(ReadPt(Dumped("npu", name))), Ok(ReadPt(Dumped("bench", name))));
    EXPECT_NEAR(c.max_abs, m.metric[2].value(), 1e-12) << name;
  }
}

TEST(ElementCompareTest, RowsEqualToAValueAreMasked) {
  ElementOptions o;
  o.mask = ElementOptions::Mask::kValue;
  o.mask_axis = 0;
  o.mask_value = 0;
  ElementComparison c = EmbeddingGrad(o);
  EXPECT_EQ(c.rows, 64u);
  EXPECT_EQ(c.masked_rows, 61u);  // every token but 2, 11 and 34
  EXPECT_EQ(c.masked, 61u * 16);
  EXPECT_EQ(c.compared, 48u);
  EXPECT_EQ(c.abs_hist.zero, 0u) << "the zero errors were all padding";
  EXPECT_DOUBLE_EQ(c.max_abs, 0.0381232388317585);
}

TEST(ElementCompareTest, RowsBeyondALengthAreMasked) {
  ElementOptions o;
  o.mask = ElementOptions::Mask::kLength;
  o.mask_axis = 0;
  o.mask_length = 12;
  o.top_k = 1000;
  ElementComparison c = EmbeddingGrad(o);
  EXPECT_EQ(c.masked_rows, 52u);
  EXPECT_EQ(c.compared, 12u * 16);
  for (const WorstElement& w : c.worst) EXPECT_LT(w.index[0], 12) << "token 34 is beyond the length";
  EXPECT_EQ(c.worst.size(), 12u * 16);
}

TEST(ElementCompareTest, SliceIsPooledToTheCellLimit) {
  ElementOptions o;
  o.row_axis = 0;
  o.col_axis = 1;
  o.max_cells = 8;
  ElementComparison c = EmbeddingGrad(o);
  EXPECT_EQ(c.slice.rows, 64);
  EXPECT_EQ(c.slice.cols, 16);
  EXPECT_EQ(c.slice.cell_rows, 8);
  EXPECT_EQ(c.slice.cell_cols, 8);
  ASSERT_EQ(c.slice.diff.size(), 64u);
  // (2, 12) falls in cell (0, 6); its signed difference npu - bench is the largest there.
  EXPECT_DOUBLE_EQ(c.slice.diff[0 * 8 + 6], -0.04110696539282799 - -0.07923020422458649);
  EXPECT_EQ(c.slice.diff[7 * 8 + 0], 0.0);
}

// A little-endian .npy (version 1.0) of doubles.
std::string Npy(const std::string& shape, const std::vector<double>& values, bool fortran = false) {
  std::string header = "{'descr': '<f8', 'fortran_order': " + std::string(fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
  return out;
}

TEST(ElementCompareTest, NanAndInfAreCountedApart) {
  TempDir dir;
  WriteFile(dir / "a.npy", Npy("(2, 3)", {1, kNan, kInf, 4, -kInf, 6}));
  WriteFile(dir / "b.npy", Npy("(2, 3)", {1, kNan, 3, 4, -kInf, kNan}));
  ElementOptions o;
  o.chunk = 2;
  o.row_axis = 0;
  o.col_axis = 1;
  ElementComparison c = Compare(dir / "a.npy", dir / "b.npy", o);
  EXPECT_EQ(c.compared, 2u);
  EXPECT_EQ(c.npu.nan, 1u);
  EXPECT_EQ(c.npu.pos_inf, 1u);
  EXPECT_EQ(c.npu.neg_inf, 1u);
  EXPECT_EQ(c.bench.nan, 2u);
  EXPECT_EQ(c.bench.neg_inf, 1u);
  EXPECT_EQ(c.special_mismatch, 2u) << "inf against 3, 6 against NaN";
  EXPECT_EQ(c.first_special_mismatch, 2);
  EXPECT_TRUE(std::isnan(c.slice.diff[1]));
  EXPECT_EQ(c.slice.diff[0], 0.0);
}

TEST(ElementCompareTest, FortranOrderIsIndexedInCOrder) {
  TempDir dir;
  // [[1, 2, 3], [4, 5, 6]] stored column by column; bench differs at (1, 2) only.
  WriteFile(dir / "a.npy", Npy("(2, 3)", {1, 4, 2, 5, 3, 6}, true));
  WriteFile(dir / "b.npy", Npy("(2, 3)", {1, 2, 3, 4, 5, 9}));
  ElementOptions o;
  o.top_k = 1;
  o.chunk = 4;
  ElementComparison c = Compare(dir / "a.npy", dir / "b.npy", o);
  ASSERT_EQ(c.worst.size(), 1u);
  EXPECT_EQ(c.worst[0].index, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(c.worst[0].npu, 6);
  EXPECT_EQ(c.worst[0].bench, 9);
  EXPECT_EQ(c.abs_hist.zero, 5u);
}

TEST(TensorFileTest, ChunksOfAStridedOrSwappedTensorAreTheWholeReadInPieces) {
  // pt_transposed: arange(6).reshape(2, 3).t() (strides (1, 3)); pt_offset_view: arange(10)[4:7];
  // f32_fortran and f64_big_endian: Fortran order and byte-swapped .npy (testdata/tensors/make_tensors.py).
  for (const char* name : {"pt_transposed.pt", "pt_offset_view.pt", "f32_fortran.npy", "f64_big_endian.npy"}) {
    std::string path = SourceDir() + "/tests/builder/testdata/tensors/" + name;
    TensorFile file = Ok(TensorFile::Open(path));
    bool pt = std::string(name).find(".pt") != std::string::npos;
    // Read whole, as tensor_test checks against the values torch and numpy wrote.
    std::vector<double> whole = Ok(pt ? ReadPt(path) : ReadNpy(path)).values;
    ASSERT_EQ(static_cast<int64_t>(whole.size()), file.count()) << name;
    for (int64_t first = 0; first < file.count(); ++first) {
      for (int64_t n = 1; first + n <= file.count(); ++n) {
        std::vector<double> piece(static_cast<size_t>(n));
        file.Read(first, n, piece.data());
        EXPECT_EQ(piece, std::vector<double>(whole.begin() + first, whole.begin() + first + n))
            << name << " from " << first;
      }
    }
  }
}

TEST(ElementCompareTest, AnEmptyTensorWithHugeDimensionsComparesNothing) {
  TempDir dir;
  WriteFile(dir / "e.npy", Npy("(0, 1099511627776, 1099511627776)", {}));
  ElementOptions o;
  o.mask = ElementOptions::Mask::kValue;
  o.mask_axis = 0;
  o.row_axis = 1;
  o.col_axis = 2;
  ElementComparison c = Compare(dir / "e.npy", dir / "e.npy", o);
  EXPECT_EQ(c.elements, 0u);
  EXPECT_EQ(c.rows, 0u);
  EXPECT_TRUE(c.slice.diff.empty());
}

TEST(ElementCompareTest, BadOptionsAreErrors) {
  TensorFile a = Ok(TensorFile::Open(Dumped("npu", kEmbeddingGrad)));
  TensorFile b = Ok(TensorFile::Open(Dumped("bench", kEmbeddingGrad)));
  ElementOptions o;
  o.row_axis = 2;
  EXPECT_NE(CompareElements(a, b, o).error().message.find("slice axis 2 out of range for a 2-D tensor"),
            std::string::npos);
  o = {};
  o.fixed = {0, 0};
  o.row_axis = 1;
  o.fixed[0] = 64;
  EXPECT_NE(CompareElements(a, b, o).error().message.find("fixed index 64 out of range on axis 0"), std::string::npos);
  o = {};
  o.top_k = 5000;
  EXPECT_FALSE(CompareElements(a, b, o).ok());
  TensorFile other = Ok(TensorFile::Open(Dumped("npu", "Tensor.__add__.10.forward.output.0.pt")));
  EXPECT_NE(CompareElements(a, other, {}).error().message.find("differ in size"), std::string::npos);
}

TEST(ElementCompareTest, ConfinedOpenRefusesAFileOutsideTheRoot) {
  TempDir root, outside;
  WriteFile(outside / "a.npy", Npy("(1)", {1}));
  std::string real_root = std::filesystem::canonical(root.path()).string();
  std::filesystem::create_symlink(outside / "a.npy", root / "link.npy");
  auto linked = TensorFile::Open(root / "link.npy", real_root);
  ASSERT_FALSE(linked.ok());
  EXPECT_NE(linked.error().message.find("leaves the log directory"), std::string::npos);
  EXPECT_TRUE(TensorFile::Open(outside / "a.npy").ok()) << "without a root nothing is checked";
}

}  // namespace
}  // namespace graph_ascend::compare
