// Tests of Pooling: shape inference and its errors, and the reference kernel (max, average with and without
// padding in the count, blend; 1-D/2-D/3-D; every padding mode) against a naive version written here.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

#include "backends/backend.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"
#include "backends/reference/spatial_test_util.h"

namespace kiln {
namespace {

using ir::OpType;
using namespace spatialtest;  // NOLINT: test helpers

struct PoolSpec {
  int64_t planes = 1;  // N * C
  std::array<int64_t, 3> in{1, 1, 1}, window{1, 1, 1}, stride{1, 1, 1}, pb{0, 0, 0}, pe{0, 0, 0}, out{1, 1, 1};
};

// Naive pooling over 3 spatial dims; `type` 0 max, 1 average, 2 blend.
std::vector<double> naivePool(PoolSpec const& s, std::vector<double> const& x, int type, bool exclude, double blend) {
  std::vector<double> y;
  for (int64_t p = 0; p < s.planes; ++p)
    for (int64_t o0 = 0; o0 < s.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < s.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < s.out[2]; ++o2) {
          double mx = -1e300, sum = 0;
          int64_t valid = 0, inPad = 0;
          for (int64_t k0 = 0; k0 < s.window[0]; ++k0)
            for (int64_t k1 = 0; k1 < s.window[1]; ++k1)
              for (int64_t k2 = 0; k2 < s.window[2]; ++k2) {
                std::array<int64_t, 3> i{o0 * s.stride[0] - s.pb[0] + k0, o1 * s.stride[1] - s.pb[1] + k1,
                                         o2 * s.stride[2] - s.pb[2] + k2};
                bool inside = true, padded = true;
                for (int d = 0; d < 3; ++d) {
                  if (i[d] < 0 || i[d] >= s.in[d])
                    inside = false;
                  if (i[d] < -s.pb[d] || i[d] >= s.in[d] + s.pe[d])
                    padded = false;
                }
                if (padded)
                  ++inPad;
                if (!inside)
                  continue;
                double v = x[((p * s.in[0] + i[0]) * s.in[1] + i[1]) * s.in[2] + i[2]];
                mx = std::max(mx, v);
                sum += v;
                ++valid;
              }
          double avg = sum / static_cast<double>(exclude ? valid : inPad);
          y.push_back(type == 0 ? mx : (type == 1 ? avg : (1 - blend) * mx + blend * avg));
        }
  return y;
}

void checkPool(DataType dt, PoolSpec const& s, int32_t ns, int type, bool exclude, double blend = 0.25,
               PaddingMode mode = PaddingMode::kEXPLICIT_ROUND_DOWN, std::array<int64_t, 3> attrPb = {-1, -1, -1}) {
  int32_t off = 3 - ns;
  std::vector<int64_t> xs{1, s.planes}, window, strides, pb, pe, want{1, s.planes};
  int64_t xn = s.planes;
  for (int32_t i = off; i < 3; ++i) {
    xs.push_back(s.in[i]);
    xn *= s.in[i];
    window.push_back(s.window[i]);
    strides.push_back(s.stride[i]);
    pb.push_back(attrPb[0] >= 0 ? attrPb[i] : s.pb[i]);
    pe.push_back(attrPb[0] >= 0 ? attrPb[i] : s.pe[i]);
    want.push_back(s.out[i]);
  }
  auto xv = randomValues(xn, 5);
  ir::Graph g;
  ir::Node* n = g.addNode(OpType::kPooling, "pool", {constant(g, "x", dt, xs, xv)});
  n->attrs.setInt("type", type);
  n->attrs.setInts("window", window);
  n->attrs.setInts("strides", strides);
  n->attrs.setInts("pads_begin", pb);
  n->attrs.setInts("pads_end", pe);
  n->attrs.setInt("padding_mode", static_cast<int64_t>(mode));
  n->attrs.setFloat("blend_factor", blend);
  n->attrs.setInt("exclude_padding", exclude ? 1 : 0);
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_EQ(dimsToString(out->shape()), dimsToString(makeDims(want)));
  expectClose(*out, naivePool(s, xv, type, exclude, blend), dt);
}

class PoolTypes : public ::testing::TestWithParam<DataType> {};

TEST_P(PoolTypes, MaxAvgBlendWithPadding) {
  PoolSpec s;
  s.planes = 6;
  s.in = {1, 5, 7}, s.window = {1, 3, 3}, s.stride = {1, 2, 2}, s.pb = {0, 1, 1}, s.pe = {0, 1, 0};
  s.out = {1, 3, 3};  // H: floor((5 + 2 - 3) / 2) + 1; W: floor((7 + 1 - 3) / 2) + 1
  for (int type = 0; type < 3; ++type) {
    checkPool(GetParam(), s, 2, type, true, 0.25);
    checkPool(GetParam(), s, 2, type, false, 0.75);
  }
}

TEST_P(PoolTypes, StrideLargerThanWindow) {
  PoolSpec s;
  s.planes = 2;
  s.in = {1, 7, 6}, s.window = {1, 2, 1}, s.stride = {1, 3, 4}, s.out = {1, 2, 2};
  checkPool(GetParam(), s, 2, 0, true);
  checkPool(GetParam(), s, 2, 1, true);
}

TEST_P(PoolTypes, SameUpperLower) {
  PoolSpec s;
  s.planes = 3;
  // H: in 5, window 2, stride 2 -> out 3, total pad 1; W: in 6, window 3, stride 1 -> out 6, total 2.
  s.in = {1, 5, 6}, s.window = {1, 2, 3}, s.stride = {1, 2, 1}, s.out = {1, 3, 6};
  s.pb = {0, 0, 1}, s.pe = {0, 1, 1};
  checkPool(GetParam(), s, 2, 1, false, 0.5, PaddingMode::kSAME_UPPER, {0, 0, 0});
  checkPool(GetParam(), s, 2, 0, true, 0.5, PaddingMode::kSAME_UPPER, {0, 0, 0});
  s.pb = {0, 1, 1}, s.pe = {0, 0, 1};
  checkPool(GetParam(), s, 2, 1, false, 0.5, PaddingMode::kSAME_LOWER, {0, 0, 0});
  checkPool(GetParam(), s, 2, 2, true, 0.5, PaddingMode::kSAME_LOWER, {0, 0, 0});
}

TEST_P(PoolTypes, RoundUp) {
  PoolSpec s;
  s.planes = 2;
  s.in = {1, 1, 6}, s.window = {1, 1, 3}, s.stride = {1, 1, 2}, s.pb = {0, 0, 1}, s.pe = {0, 0, 1};
  s.out = {1, 1, 4};  // ceil((6 + 2 - 3) / 2) + 1; the last window is partly past the end padding
  PaddingMode up = PaddingMode::kEXPLICIT_ROUND_UP;
  checkPool(GetParam(), s, 2, 1, false, 0.5, up);
  checkPool(GetParam(), s, 2, 1, true, 0.5, up);
  checkPool(GetParam(), s, 2, 0, true, 0.5, up);
}

TEST_P(PoolTypes, OneDAndThreeD) {
  PoolSpec s;
  s.planes = 4;
  s.in = {1, 1, 9}, s.window = {1, 1, 4}, s.stride = {1, 1, 2}, s.pb = {0, 0, 1}, s.out = {1, 1, 4};
  checkPool(GetParam(), s, 1, 1, true);
  PoolSpec t;
  t.planes = 2;
  t.in = {4, 3, 5}, t.window = {2, 2, 3}, t.stride = {2, 1, 2}, t.pb = {0, 1, 1}, t.pe = {1, 0, 1};
  t.out = {2, 3, 3};  // D: floor((4 + 1 - 2) / 2) + 1
  checkPool(GetParam(), t, 3, 0, true);
  checkPool(GetParam(), t, 3, 1, false);
}

INSTANTIATE_TEST_SUITE_P(AllFloat, PoolTypes, ::testing::Values(DataType::kFLOAT, DataType::kHALF, DataType::kBF16),
                         [](auto const& pi) { return std::string(dataTypeShortName(pi.param)); });

Result<HostTensor> poolOnes(int type, bool exclude, std::vector<double> const& xv) {
  ir::Graph g;
  ir::Node* n = g.addNode(OpType::kPooling, "pool", {constant(g, "x", DataType::kFLOAT, {1, 1, 3, 3}, xv)});
  n->attrs.setInt("type", type);
  n->attrs.setInts("window", {3, 3});
  n->attrs.setInts("pads_begin", {1, 1});
  n->attrs.setInts("pads_end", {1, 1});
  n->attrs.setInt("exclude_padding", exclude ? 1 : 0);
  return run(g, n);
}

TEST(Pooling, HandComputedPaddingInTheCount) {
  std::vector<double> ones(9, 1.0);
  auto ex = poolOnes(1, true, ones);
  ASSERT_TRUE(ex.isOk());
  expectClose(*ex, std::vector<double>(9, 1.0), DataType::kFLOAT);
  auto inc = poolOnes(1, false, ones);
  ASSERT_TRUE(inc.isOk());
  expectClose(*inc, {4 / 9.0, 6 / 9.0, 4 / 9.0, 6 / 9.0, 1.0, 6 / 9.0, 4 / 9.0, 6 / 9.0, 4 / 9.0}, DataType::kFLOAT);
}

TEST(Pooling, PaddingNeverWinsMax) {
  std::vector<double> neg{-9, -8, -7, -6, -5, -4, -3, -2, -1};
  auto out = poolOnes(0, true, neg);
  ASSERT_TRUE(out.isOk());
  expectClose(*out, {-5, -4, -4, -2, -1, -1, -2, -1, -1}, DataType::kFLOAT);
}

TEST(Pooling, DefaultsAreMaxStrideOneExcludePadding) {
  ir::Graph g;
  ir::Node* n =
      g.addNode(OpType::kPooling, "pool", {constant(g, "x", DataType::kFLOAT, {1, 1, 2, 3}, {1, 5, 2, 4, 3, 6})});
  n->attrs.setInts("window", {2, 2});
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_EQ(dimsToString(out->shape()), "[1,1,1,2]");
  expectClose(*out, {5, 6}, DataType::kFLOAT);
}

TEST(Pooling, UnknownDims) {
  ir::Graph g;
  auto x = g.addInput("x", DataType::kBF16, makeDims({-1, 3, 8, -1}));
  ASSERT_TRUE(x.isOk());
  ir::Node* n = g.addNode(OpType::kPooling, "pool", {*x});
  n->attrs.setInts("window", {2, 2});
  n->attrs.setInts("strides", {2, 2});
  ASSERT_TRUE(ir::inferGraphInPlace(g, nullptr).isOk());
  EXPECT_EQ(dimsToString(n->output(0)->shape), "[-1,3,4,-1]");
  EXPECT_EQ(n->output(0)->dtype, DataType::kBF16);
}

Status inferPool(std::vector<int64_t> const& xs, std::function<void(ir::Node*)> const& setAttrs) {
  ir::Graph g;
  auto x = g.addInput("x", DataType::kFLOAT, makeDims(xs));
  if (!x)
    return x.status();
  ir::Node* n = g.addNode(OpType::kPooling, "pool", {*x});
  n->attrs.setInts("window", {2, 2});
  setAttrs(n);
  return ir::inferGraphInPlace(g, nullptr);
}

TEST(Pooling, InferErrors) {
  auto none = [](ir::Node*) {};
  EXPECT_TRUE(inferPool({1, 3, 4, 4}, none).isOk());
  EXPECT_FALSE(inferPool({3, 4}, none).isOk());           // rank too small
  EXPECT_FALSE(inferPool({1, 3, 4, 4, 4}, none).isOk());  // window has 2 entries for 3 spatial dims
  EXPECT_FALSE(inferPool({1, 3, 1, 1}, none).isOk());     // window larger than the input
  EXPECT_FALSE(inferPool({1, 3, 4, 4}, [](ir::Node* n) { n->attrs.setInts("window", {0, 2}); }).isOk());
  EXPECT_FALSE(inferPool({1, 3, 4, 4}, [](ir::Node* n) { n->attrs.setInts("strides", {1, -1}); }).isOk());
  EXPECT_FALSE(inferPool({1, 3, 4, 4}, [](ir::Node* n) { n->attrs.setInts("pads_begin", {2, 0}); }).isOk());
  EXPECT_FALSE(inferPool({1, 3, 4, 4}, [](ir::Node* n) { n->attrs.setInt("type", 3); }).isOk());
  EXPECT_FALSE(inferPool({1, 3, 4, 4}, [](ir::Node* n) { n->attrs.setFloat("blend_factor", 1.5); }).isOk());
  EXPECT_FALSE(inferPool({1, 3, 4, 4}, [](ir::Node* n) { n->attrs.erase("window"); }).isOk());
}

}  // namespace
}  // namespace kiln
