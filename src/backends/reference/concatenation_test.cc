// Tests of Concatenation: every axis (negative too) against a naive loop, any type, zero-size inputs, bad input.
#include <gtest/gtest.h>

#include <cstdint>

#include "backends/backend.h"
#include "backends/reference/kernel_test_util.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using ir::OpType;

using namespace reftest;  // NOLINT: test helpers


}  // namespace
namespace {

ir::Attributes axisAttr(int64_t axis) { return attrs({{"axis", axis}}); }

std::vector<double> iota(int64_t n, double start) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i)
    v.push_back(start + static_cast<double>(i));
  return v;
}

// Naive concatenation of row-major tensors along `axis`.
std::vector<double> naiveConcat(std::vector<HostTensor> const& xs, int axis) {
  Dims s0 = xs[0].shape();
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d)
    outer *= s0.d[d];
  for (int d = axis + 1; d < s0.nbDims; ++d)
    inner *= s0.d[d];
  std::vector<double> r;
  for (int64_t o = 0; o < outer; ++o)
    for (HostTensor const& x : xs)
      for (int64_t a = 0; a < x.shape().d[axis]; ++a)
        for (int64_t i = 0; i < inner; ++i)
          r.push_back(x.doubleAt((o * x.shape().d[axis] + a) * inner + i));
  return r;
}

TEST(ConcatenationReference, EveryAxisEveryType) {
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kUINT8,
                     DataType::kINT32, DataType::kINT64}) {
    for (int axis = 0; axis < 3; ++axis) {
      for (bool negative : {false, true}) {
        SCOPED_TRACE(strCat(dataTypeName(t), " axis ", axis, negative ? " (negative)" : ""));
        std::vector<HostTensor> xs;
        std::vector<In> ins;
        std::vector<int64_t> sizes{1, 3, 2};
        for (size_t k = 0; k < 3; ++k) {
          std::vector<int64_t> s{2, 3, 5};
          s[axis] = sizes[k];
          xs.push_back(tensor(t, s, iota(volume(makeDims(s)), double(k * 40))));
          ins.push_back(var(xs.back()));
        }
        RunResult r = runNode(OpType::kConcatenation, axisAttr(negative ? axis - 3 : axis), ins);
        ASSERT_TRUE(r.status.isOk()) << r.status.toString();
        std::vector<int64_t> want{2, 3, 5};
        want[axis] = 6;
        EXPECT_EQ(dimsToVector(r.shape), want);
        EXPECT_EQ(r.dtype, t);
        EXPECT_EQ(doubles(r.out), naiveConcat(xs, axis));
      }
    }
  }
}

TEST(ConcatenationReference, BoolSingleInputAndZeroSize) {
  HostTensor a = tensor(DataType::kBOOL, {2}, std::vector<int64_t>{1, 0});
  HostTensor e = tensor(DataType::kBOOL, {0}, std::vector<int64_t>{});
  HostTensor b = tensor(DataType::kBOOL, {1}, std::vector<int64_t>{1});
  RunResult r = runNode(OpType::kConcatenation, axisAttr(0), {var(a), var(e), var(b)});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(r.out.toInt64Vector(), (std::vector<int64_t>{1, 0, 1}));
  RunResult one = runNode(OpType::kConcatenation, axisAttr(-1), {var(a)});
  ASSERT_TRUE(one.status.isOk());
  EXPECT_EQ(one.out.toInt64Vector(), (std::vector<int64_t>{1, 0}));
  // Zero-size along another axis: the output is empty too.
  HostTensor z1 = tensor(DataType::kFLOAT, {0, 2}, std::vector<double>{});
  HostTensor z2 = tensor(DataType::kFLOAT, {0, 3}, std::vector<double>{});
  RunResult z = runNode(OpType::kConcatenation, axisAttr(1), {var(z1), var(z2)});
  ASSERT_TRUE(z.status.isOk());
  EXPECT_EQ(dimsToVector(z.shape), (std::vector<int64_t>{0, 5}));
}

TEST(ConcatenationReference, BadInputIsAnError) {
  HostTensor a = tensor(DataType::kFLOAT, {2, 3}, iota(6, 0));
  HostTensor b = tensor(DataType::kFLOAT, {3, 3}, iota(9, 0));
  RunResult r = runNode(OpType::kConcatenation, axisAttr(1), {var(a), var(b)});
  EXPECT_FALSE(r.status.isOk());
  EXPECT_NE(r.status.message().find("node"), std::string::npos);
  EXPECT_TRUE(runNode(OpType::kConcatenation, axisAttr(0), {var(a), var(b)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kConcatenation, axisAttr(2), {var(a), var(b)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kConcatenation, axisAttr(-3), {var(a), var(b)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kConcatenation, axisAttr(0), {var(a), var(tensor(DataType::kHALF, {1, 3}, iota(3, 0)))})
                   .status.isOk());
  EXPECT_FALSE(runNode(OpType::kConcatenation, axisAttr(0), {var(a), var(tensor(DataType::kFLOAT, {3}, iota(3, 0)))})
                   .status.isOk());
  HostTensor s = tensor(DataType::kFLOAT, {}, std::vector<double>{1});
  EXPECT_FALSE(runNode(OpType::kConcatenation, axisAttr(0), {var(s), var(s)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kConcatenation, axisAttr(0), {}).status.isOk());
  // The kernel checks the output shape itself.
  ir::Node n;
  n.op = OpType::kConcatenation;
  n.name = "direct";
  std::vector<HostTensor> outs{*HostTensor::allocate(DataType::kFLOAT, makeDims({4, 3}), "out")};
  EXPECT_FALSE(backends::evaluateOnHost(n, {&a, &b}, outs).isOk());
}

}  // namespace
}  // namespace kiln
