// Tests of SoftMax: shape inference and its errors, TensorRT's default axis, and the reference kernel against a
// naive softmax, including large and infinite inputs, in float32/float16/bfloat16.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "backends/backend.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"
#include "backends/reference/spatial_test_util.h"

namespace kiln {
namespace {

using ir::OpType;
using namespace spatialtest;  // NOLINT: test helpers

std::vector<double> naiveSoftMax(std::vector<int64_t> const& shape, std::vector<double> const& x, int32_t axis) {
  int64_t outer = 1, inner = 1, len = shape[static_cast<size_t>(axis)];
  for (int32_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d)
    inner *= shape[d];
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double mx = -INFINITY, sum = 0;
      for (int64_t l = 0; l < len; ++l)
        mx = std::max(mx, x[(o * len + l) * inner + i]);
      for (int64_t l = 0; l < len; ++l)
        sum += std::exp(x[(o * len + l) * inner + i] - mx);
      for (int64_t l = 0; l < len; ++l)
        y[(o * len + l) * inner + i] = std::exp(x[(o * len + l) * inner + i] - mx) / sum;
    }
  return y;
}

Result<HostTensor> runSoftMax(DataType dt, std::vector<int64_t> const& xs, std::vector<double> const& xv,
                              int64_t const* axis) {
  ir::Graph g;
  ir::Node* n = g.addNode(OpType::kSoftMax, "sm", {constant(g, "x", dt, xs, xv)});
  if (axis)
    n->attrs.setInt("axis", *axis);
  return run(g, n);
}

class SoftMaxTypes : public ::testing::TestWithParam<DataType> {};

TEST_P(SoftMaxTypes, EveryAxis) {
  DataType dt = GetParam();
  std::vector<int64_t> xs{2, 3, 5};
  auto xv = randomValues(30, 1);
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    auto out = runSoftMax(dt, xs, xv, &axis);
    ASSERT_TRUE(out.isOk()) << out.status().toString();
    EXPECT_EQ(dimsToString(out->shape()), "[2,3,5]");
    expectClose(*out, naiveSoftMax(xs, xv, static_cast<int32_t>(axis < 0 ? axis + 3 : axis)), dt);
  }
}

TEST_P(SoftMaxTypes, SizeOneAxisGivesOnes) {
  int64_t axis = 1;
  auto out = runSoftMax(GetParam(), {3, 1, 2}, randomValues(6, 2), &axis);
  ASSERT_TRUE(out.isOk());
  expectClose(*out, std::vector<double>(6, 1.0), GetParam());
}

INSTANTIATE_TEST_SUITE_P(AllFloat, SoftMaxTypes, ::testing::Values(DataType::kFLOAT, DataType::kHALF, DataType::kBF16),
                         [](auto const& pi) { return std::string(dataTypeShortName(pi.param)); });

TEST(SoftMax, DefaultAxisIsTensorRTs) {
  // Rank 4: axis 1 (rank - 3); rank 2: axis 0.
  std::vector<int64_t> xs{2, 3, 2, 2};
  auto xv = randomValues(24, 3);
  auto out = runSoftMax(DataType::kFLOAT, xs, xv, nullptr);
  ASSERT_TRUE(out.isOk());
  expectClose(*out, naiveSoftMax(xs, xv, 1), DataType::kFLOAT);
  auto xv2 = randomValues(6, 4);
  auto out2 = runSoftMax(DataType::kFLOAT, {3, 2}, xv2, nullptr);
  ASSERT_TRUE(out2.isOk());
  expectClose(*out2, naiveSoftMax({3, 2}, xv2, 0), DataType::kFLOAT);
}

TEST(SoftMax, LargeAndInfiniteInputsAreStable) {
  int64_t axis = 0;
  auto out = runSoftMax(DataType::kFLOAT, {3}, {1000, 1001, 1002}, &axis);
  ASSERT_TRUE(out.isOk());
  double e1 = std::exp(-1.0), e2 = std::exp(-2.0), s = 1 + e1 + e2;
  expectClose(*out, {e2 / s, e1 / s, 1 / s}, DataType::kFLOAT);
  auto inf = runSoftMax(DataType::kHALF, {2}, {-INFINITY, 0.0}, &axis);
  ASSERT_TRUE(inf.isOk());
  expectClose(*inf, {0.0, 1.0}, DataType::kHALF);
  auto nan = runSoftMax(DataType::kFLOAT, {2}, {NAN, 0.0}, &axis);
  ASSERT_TRUE(nan.isOk());
  EXPECT_TRUE(std::isnan(nan->doubleAt(0)) && std::isnan(nan->doubleAt(1)));
}

TEST(SoftMax, InferErrors) {
  int64_t bad = 3, neg = -4;
  EXPECT_FALSE(runSoftMax(DataType::kFLOAT, {2, 3, 4}, randomValues(24, 1), &bad).isOk());
  EXPECT_FALSE(runSoftMax(DataType::kFLOAT, {2, 3, 4}, randomValues(24, 1), &neg).isOk());
  EXPECT_FALSE(runSoftMax(DataType::kFLOAT, {}, {1.0}, nullptr).isOk());
  EXPECT_FALSE(runSoftMax(DataType::kINT32, {2}, {1, 2}, nullptr).isOk());  // no integer kernel
  ir::Graph g;
  auto x = g.addInput("x", DataType::kHALF, makeDims({-1, 7}));
  ASSERT_TRUE(x.isOk());
  ir::Node* n = g.addNode(OpType::kSoftMax, "sm", {*x});
  n->attrs.setInt("axis", 1);
  ASSERT_TRUE(ir::inferGraphInPlace(g, nullptr).isOk());
  EXPECT_EQ(dimsToString(n->output(0)->shape), "[-1,7]");
  EXPECT_EQ(n->output(0)->dtype, DataType::kHALF);
}

}  // namespace
}  // namespace kiln
