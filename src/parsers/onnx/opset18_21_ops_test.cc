// Tests of the importers for op definitions of ONNX opsets 18-21: CenterCropPad, Col2Im, AffineGrid, LpPool,
// Bitwise*, Cast to/from FLOAT8E4M3FN and INT4/UINT4, IsInf on float16, ReduceMax/Min on bool, volumetric
// GridSample and DeformConv. Expected values were computed with numpy (naive loops written from the ONNX
// specification) and written in here.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "onnx_test_util.h"

namespace {

using namespace kiln::onnx::test;  // NOLINT: test helpers
using kiln::Dims;
using TP = ::onnx::TensorProto;

Dims dims(std::vector<int64_t> const& v) {
  Dims d{static_cast<int32_t>(v.size()), {}};
  for (size_t i = 0; i < v.size(); ++i) d.d[i] = v[i];
  return d;
}

std::vector<float> floats(std::vector<double> const& v) { return {v.begin(), v.end()}; }

void expectDims(Dims const& got, std::vector<int64_t> const& want) {
  ASSERT_EQ(got.nbDims, static_cast<int32_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got.d[i], want[i]) << "axis " << i;
}

TEST(OnnxOpset18To21, CenterCropPadCropsAndPadsWithTheExtraAtTheEnd) {
  ModelBuilder m(18);
  m.input("x", {3, 4}).initI("s", {2}, {2, 7}).output("y");
  m.input("x3", {2, 3, 4}).initI("s3", {2}, {5, 1}).output("y3");
  m.node("CenterCropPad", {"x", "s"}, {"y"});
  attr(m.node("CenterCropPad", {"x3", "s3"}, {"y3"}), "axes", std::vector<int64_t>{-1, 1});
  auto outs = run(m.bytes(), {{"x", {dims({3, 4}), iota(12, 1)}}, {"x3", {dims({2, 3, 4}), iota(24, 1)}}});
  ASSERT_FALSE(outs.empty());
  expectDims(outs["y"].dims, {2, 7});
  expectNear(outs["y"].v, {0, 1, 2, 3, 4, 0, 0, 0, 5, 6, 7, 8, 0, 0});
  expectDims(outs["y3"].dims, {2, 1, 5});
  expectNear(outs["y3"].v, {5, 6, 7, 8, 0, 17, 18, 19, 20, 0});
}

TEST(OnnxOpset18To21, Col2ImSumsOverlappingBlocks) {
  ModelBuilder m(18);
  m.input("a", {1, 4, 4}).initI("ia", {2}, {3, 3}).initI("ba", {2}, {2, 2}).output("ya");
  m.node("Col2Im", {"a", "ia", "ba"}, {"ya"});
  // Two channels, strides, dilations and asymmetric pads.
  m.input("b", {1, 8, 4}).initI("ib", {2}, {5, 4}).initI("bb", {2}, {2, 2}).output("yb");
  auto& n = m.node("Col2Im", {"b", "ib", "bb"}, {"yb"});
  attr(n, "dilations", std::vector<int64_t>{2, 1});
  attr(n, "strides", std::vector<int64_t>{2, 2});
  attr(n, "pads", std::vector<int64_t>{1, 0, 0, 1});
  auto outs =
      run(m.bytes(), {{"a", {dims({1, 4, 4}), iota(16, -3, 0.5F)}}, {"b", {dims({1, 8, 4}), iota(32, -2, 0.25F)}}});
  ASSERT_FALSE(outs.empty());
  expectDims(outs["ya"].dims, {1, 1, 3, 3});
  expectNear(outs["ya"].v, {-3, -3.5, -0.5, -1, 3, 4, 2, 6.5, 4.5});
  expectDims(outs["yb"].dims, {1, 2, 5, 4});
  expectNear(outs["yb"].v, {0, 0, 0, 0, -1.5, 0.5, -1, 1, 0, 0, 0, 0, 0.5, 1.5, 0.75, 1.75, 0, 0, 0, 0,
                            0, 0, 0, 0, 6.5,  8.5, 7,  9, 0, 0, 0, 0, 4.5, 5.5, 4.75, 5.75, 0, 0, 0, 0});
}

TEST(OnnxOpset18To21, AffineGrid2dAnd3d) {
  for (int64_t align : {0, 1}) {
    ModelBuilder m(20);
    m.input("t", {1, 2, 3}).initI("size", {4}, {1, 1, 2, 3}).output("g");
    attr(m.node("AffineGrid", {"t", "size"}, {"g"}), "align_corners", align);
    auto outs = run(m.bytes(), {{"t", {dims({1, 2, 3}), {1.0F, 0.5F, 0.1F, -0.25F, 2.0F, -0.3F}}}});
    ASSERT_FALSE(outs.empty());
    expectDims(outs["g"].dims, {1, 2, 3, 2});
    expectNear(
        outs["g"].v,
        align ? std::vector<double>{-1.4, -2.05, -0.4, -2.3, 0.6000000000000001, -2.55, -0.4, 1.95, 0.6, 1.7, 1.6, 1.45}
              : std::vector<double>{-0.8166666666666668, -1.1333333333333333, -0.15, -1.3, 0.5166666666666667,
                                    -1.4666666666666668, -0.31666666666666676, 0.8666666666666667, 0.35, 0.7,
                                    1.0166666666666666, 0.5333333333333333});
  }
  ModelBuilder m(20);
  m.input("t", {1, 3, 4}).initI("size", {5}, {1, 1, 2, 1, 2}).output("g");
  attr(m.node("AffineGrid", {"t", "size"}, {"g"}), "align_corners", int64_t{1});
  auto outs =
      run(m.bytes(),
          {{"t", {dims({1, 3, 4}), {1.0F, 0.5F, 0.1F, 0.2F, -0.25F, 2.0F, -0.3F, 0.0F, 0.3F, 0.1F, -1.0F, 0.5F}}}});
  ASSERT_FALSE(outs.empty());
  expectDims(outs["g"].dims, {1, 2, 1, 2, 3});
  expectNear(outs["g"].v, {-0.9000000000000001, 0.55, 1.2, 1.1, 0.04999999999999999, 1.8, -0.7, -0.04999999999999999,
                           -0.8, 1.3, -0.55, -0.19999999999999996});
}

TEST(OnnxOpset18To21, LpPoolCeilModePadsDilationsAndAutoPad) {
  std::vector<float> const x = {-1.4F, -1.03F, -0.66F, -0.29F, 0.08F,  0.45F,  0.82F,  1.19F,  1.56F,  -1.17F,
                                -0.8F, -0.43F, -0.06F, 0.31F,  0.68F,  1.05F,  1.42F,  -1.31F, -0.94F, -0.57F,
                                -0.2F, 0.17F,  0.54F,  0.91F,  1.28F,  1.65F,  -1.08F, -0.71F, -0.34F, 0.03F,
                                0.4F,  0.77F,  1.14F,  1.51F,  -1.22F, -0.85F, -0.48F, -0.11F, 0.26F,  0.63F,
                                1.0F,  1.37F,  -1.36F, -0.99F, -0.62F, -0.25F, 0.12F,  0.49F,  0.86F,  1.23F};
  ModelBuilder m(18);
  m.input("x", {1, 2, 5, 5}).output("ceil").output("p3").output("same");
  auto& c = m.node("LpPool", {"x"}, {"ceil"});
  attr(c, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(c, "strides", std::vector<int64_t>{2, 2});
  attr(c, "ceil_mode", int64_t{1});
  auto& p = m.node("LpPool", {"x"}, {"p3"});
  attr(p, "p", int64_t{3});
  attr(p, "kernel_shape", std::vector<int64_t>{3, 2});
  attr(p, "strides", std::vector<int64_t>{1, 2});
  attr(p, "pads", std::vector<int64_t>{1, 0, 1, 1});
  attr(p, "dilations", std::vector<int64_t>{1, 2});
  auto& s = m.node("LpPool", {"x"}, {"same"});
  attr(s, "p", int64_t{1});
  attr(s, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(s, "strides", std::vector<int64_t>{2, 2});
  attr(s, "auto_pad", std::string("SAME_UPPER"));
  auto outs = run(m.bytes(), {{"x", {dims({1, 2, 5, 5}), x}}});
  ASSERT_FALSE(outs.empty());
  expectDims(outs["ceil"].dims, {1, 2, 3, 3});
  expectNear(outs["ceil"].v,
             {1.9737780654994361, 2.0903109786429743, 1.172731810471599, 1.9859002500652718, 1.642985041598795,
              0.8872992739620397, 0.2624880983969755, 1.0581588117601661, 1.2799999713897705, 2.154483694395067,
              2.049243741126309, 1.2203688253018952, 1.956987491860082, 1.705696354191574, 0.8839117602479518,
              0.27730849131656576, 0.9897979763319411, 1.2300000190734863});
  expectDims(outs["p3"].dims, {1, 2, 5, 2});
  expectNear(outs["p3"].v,
             {1.68777622970651,   1.5290315401438082, 1.745703326231007,  1.5726373391716704, 1.7857115494363789,
              1.820617245777857,  1.5983571143989501, 1.7102663181409776, 1.5285180185979081, 1.6736299275846063,
              1.8562079949443822, 1.5404308177257735, 1.9139359250261159, 1.5749628658517605, 1.783853126725097,
              1.847164309288388,  1.6216061571175537, 1.7081132562207906, 1.5395031407534865, 1.6788971619597743});
  expectDims(outs["same"].dims, {1, 2, 3, 3});
  expectNear(outs["same"].v, {3.6999999284744263, 3.7000000178813934, 1.2499999552965164, 3.6999999284744263,
                              2.6199999414384365, 1.25, 0.3700000047683716, 1.4500000476837158, 1.2799999713897705,
                              3.9000000059604645, 3.6999999582767487, 1.2500000279396772, 3.7000000178813934,
                              2.7200000137090683, 1.25, 0.369999997317791, 1.350000023841858, 1.2300000190734863});
}

TEST(OnnxOpset18To21, BitwiseOpsOnIntegers) {
  ModelBuilder m(18);
  m.input("a", {2, 3}, TP::INT64).input("b", {3}, TP::INT64).input("u", {4});
  m.output("and", {}, TP::INT64).output("or", {}, TP::INT64).output("xor", {}, TP::INT64);
  m.output("not", {}, TP::UINT8);
  m.node("BitwiseAnd", {"a", "b"}, {"and"});
  m.node("BitwiseOr", {"a", "b"}, {"or"});
  m.node("BitwiseXor", {"a", "b"}, {"xor"});
  attr(m.node("Cast", {"u"}, {"u8"}), "to", int64_t{TP::UINT8});
  m.node("BitwiseNot", {"u8"}, {"not"});
  auto outs = run(m.bytes(), {{"u", {dims({4}), {0, 15, 200, 255}}}},
                  {{"a", {dims({2, 3}), {12, -2, 7, 0, -128, 100}}}, {"b", {dims({3}), {10, 5, -1}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["and"].v, {8, 4, 7, 0, 0, 100});
  expectNear(outs["or"].v, {14, -1, -1, 10, -123, -1});
  expectNear(outs["xor"].v, {6, -5, -8, 10, -123, -101});
  expectNear(outs["not"].v, {255, 240, 55, 0});
  // Floats are refused by name.
  ModelBuilder f(18);
  f.input("a", {2}).input("b", {2}).output("y");
  f.node("BitwiseAnd", {"a", "b"}, {"y"});
  ParseResult r = parseOnly(f.bytes());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.desc.find("integer"), std::string::npos) << r.desc;
}

TEST(OnnxOpset18To21, CastToFloat8SaturatesOrGivesNaN) {
  std::vector<float> const x{0.1F, -1.3F, 500.0F, -1000.0F, 3.3F, 0.015625F, 240.0F, 17.0F};
  for (int64_t sat : {1, 0}) {
    ModelBuilder m(19);
    m.input("x", {8}).output("y");
    auto& c = m.node("Cast", {"x"}, {"q"});
    attr(c, "to", int64_t{17});  // FLOAT8E4M3FN
    attr(c, "saturate", sat);
    attr(m.node("Cast", {"q"}, {"y"}), "to", int64_t{TP::FLOAT});
    auto outs = run(m.bytes(), {{"x", {dims({8}), x}}});
    ASSERT_FALSE(outs.empty());
    // E4M3FN: 0.1 -> 0.1015625 (13/128), -1.3 -> -1.25, 3.3 -> 3.25, 17 -> 16; past 464 -> +-448 or NaN.
    std::vector<double> const want{0.1015625, -1.25, 448, -448, 3.25, 0.015625, 240, 16};
    ASSERT_EQ(outs["y"].v.size(), 8U);
    for (size_t i = 0; i < 8; ++i) {
      if (sat == 0 && (i == 2 || i == 3)) {
        EXPECT_TRUE(std::isnan(outs["y"].v[i])) << i;
      } else {
        EXPECT_EQ(outs["y"].v[i], want[i]) << i;
      }
    }
  }
  ModelBuilder e(19);
  e.input("x", {2}).output("y");
  attr(e.node("Cast", {"x"}, {"y"}), "to", int64_t{19});
  ParseResult r = parseOnly(e.bytes());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.desc.find("FLOAT8E5M2"), std::string::npos) << r.desc;
}

TEST(OnnxOpset18To21, CastToInt4AndUint4Wraps) {
  ModelBuilder m(21);
  m.input("x", {8}).output("s").output("u");
  attr(m.node("Cast", {"x"}, {"q"}), "to", int64_t{22});  // INT4
  attr(m.node("Cast", {"q"}, {"s"}), "to", int64_t{TP::FLOAT});
  attr(m.node("Cast", {"x"}, {"p"}), "to", int64_t{21});  // UINT4
  attr(m.node("Cast", {"p"}, {"u"}), "to", int64_t{TP::FLOAT});
  auto outs = run(m.bytes(), {{"x", {dims({8}), {-9.0F, -8.0F, -3.7F, 0.0F, 2.9F, 7.0F, 8.0F, 100.0F}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["s"].v, {7, -8, -3, 0, 2, 7, -8, 4});
  expectNear(outs["u"].v, {7, 8, 13, 0, 2, 7, 8, 4});
}

TEST(OnnxOpset18To21, IsInfOnFloat16AndReduceMaxMinOnBool) {
  double const inf = std::numeric_limits<double>::infinity();
  ModelBuilder m(20);
  m.input("x", {4}).input("b", {2, 3}).initI("ax", {1}, {1});
  m.output("pos", {}, TP::BOOL).output("any", {}, TP::BOOL).output("all", {}, TP::BOOL);
  attr(m.node("Cast", {"x"}, {"h"}), "to", int64_t{TP::FLOAT16});
  attr(m.node("IsInf", {"h"}, {"pos"}), "detect_negative", int64_t{0});
  attr(m.node("Cast", {"b"}, {"bb"}), "to", int64_t{TP::BOOL});
  attr(m.node("ReduceMax", {"bb", "ax"}, {"any"}), "keepdims", int64_t{0});
  attr(m.node("ReduceMin", {"bb", "ax"}, {"all"}), "keepdims", int64_t{0});
  auto outs = run(m.bytes(),
                  {{"x", {dims({4}), floats({inf, -inf, 1.0, 70000.0})}}, {"b", {dims({2, 3}), {0, 1, 0, 1, 1, 1}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["pos"].v, {1, 0, 0, 1});  // 70000 overflows float16 to +inf
  expectNear(outs["any"].v, {1, 1});
  expectNear(outs["all"].v, {0, 1});
}

TEST(OnnxOpset18To21, GridSampleVolumetric) {
  // x[z][y][x] = 4z + 2y + x; align_corners: the corners and the center (mean 3.5); (0, -1, 1) -> 4.5.
  ModelBuilder m(20);
  m.input("x", {1, 1, 2, 2, 2}).input("g", {1, 1, 1, 3, 3}).output("y");
  attr(m.node("GridSample", {"x", "g"}, {"y"}), "align_corners", int64_t{1});
  auto outs = run(m.bytes(), {{"x", {dims({1, 1, 2, 2, 2}), iota(8)}},
                              {"g", {dims({1, 1, 1, 3, 3}), {-1, -1, -1, 0, 0, 0, 0, -1, 1}}}});
  ASSERT_FALSE(outs.empty());
  expectDims(outs["y"].dims, {1, 1, 1, 1, 3});
  expectNear(outs["y"].v, {0, 3.5, 4.5});
}

TEST(OnnxOpset18To21, DeformConvOffsetsMaskBiasGroups) {
  // 2 groups, 2 offset groups, strides (1, 2), pads (1, 0, 0, 1), dilations (2, 1), mask and bias.
  ModelBuilder m(19);
  m.input("x", {1, 4, 4, 5}).input("off", {1, 16, 3, 3}).input("mask", {1, 8, 3, 3}).output("y");
  m.initF("w", {2, 2, 2, 2},
          {-0.62F, 0.86F, 0.1F, -0.64F, 0.77F, 0.28F, 0.14F, -0.25F, -0.18F, -0.52F, -0.92F, 0.75F, -0.06F, 0.1F,
           -0.36F, 0.5F});
  m.initF("b", {2}, {0.5F, -0.25F});
  auto& n = m.node("DeformConv", {"x", "w", "off", "b", "mask"}, {"y"});
  attr(n, "group", int64_t{2});
  attr(n, "offset_group", int64_t{2});
  attr(n, "strides", std::vector<int64_t>{1, 2});
  attr(n, "pads", std::vector<int64_t>{1, 0, 0, 1});
  attr(n, "dilations", std::vector<int64_t>{2, 1});
  std::vector<float> const dc_x = {
      0.5F,  1.59F,  1.1F,   -1.1F,  -0.8F,  1.49F,  -1.98F, 1.28F,  1.19F,  -0.13F, -0.79F, -0.89F, -0.98F, -0.22F,
      0.02F, 0.21F,  1.98F,  1.17F,  0.49F,  1.96F,  -1.14F, -1.36F, 0.45F,  -1.82F, -1.86F, 0.06F,  -0.14F, 1.67F,
      0.52F, 0.06F,  -0.01F, -1.01F, -1.95F, -1.23F, 0.77F,  -1.2F,  -0.52F, -1.99F, 1.32F,  -1.38F, -0.93F, 1.52F,
      0.04F, 1.39F,  0.56F,  0.97F,  -1.63F, 0.16F,  0.03F,  1.49F,  -0.55F, 0.39F,  -1.76F, -0.45F, -0.71F, -1.4F,
      1.27F, -0.48F, 1.91F,  0.36F,  0.42F,  0.55F,  0.71F,  -1.4F,  -0.24F, -1.04F, -0.39F, -1.61F, 1.87F,  -1.14F,
      0.69F, -0.8F,  1.5F,   0.65F,  -1.47F, 1.38F,  1.78F,  1.62F,  0.28F,  -1.42F};
  std::vector<float> const dc_off = {
      -1.42F, -0.38F, -1.41F, -1.13F, 1.4F,   0.47F,  -0.22F, 0.07F,  1.12F,  -0.47F, 0.27F,  0.55F,  -0.43F, 0.06F,
      0.8F,   1.23F,  -1.05F, 1.3F,   -1.48F, 0.76F,  0.93F,  -1.09F, -0.24F, 0.95F,  -1.46F, 0.39F,  0.88F,  0.04F,
      0.68F,  -0.82F, -0.9F,  -0.41F, -0.96F, -0.46F, 1.34F,  0.22F,  -0.48F, -0.69F, 1.36F,  -0.17F, 1.44F,  0.05F,
      0.06F,  1.19F,  0.73F,  0.24F,  -0.22F, 1.13F,  -0.27F, 1.27F,  -1.29F, -0.21F, 0.06F,  1.35F,  -0.75F, 0.92F,
      0.53F,  0.65F,  0.39F,  1.41F,  -0.5F,  -0.31F, -0.89F, -1.35F, -0.86F, 1.25F,  1.02F,  -1.16F, 0.31F,  -0.06F,
      0.28F,  0.48F,  -0.58F, 1.38F,  -0.1F,  0.38F,  0.41F,  -0.95F, -1.31F, -0.27F, 0.79F,  0.95F,  0.69F,  -1.16F,
      1.24F,  0.91F,  1.13F,  0.07F,  1.25F,  -1.36F, -1.41F, -1.44F, -0.74F, -0.75F, -0.94F, 0.2F,   -1.38F, 0.27F,
      -1.0F,  0.53F,  -1.44F, -0.57F, 1.32F,  0.12F,  0.93F,  0.47F,  0.33F,  -0.93F, 0.22F,  -1.38F, 0.9F,   1.38F,
      1.06F,  -1.35F, -0.48F, -0.55F, -1.16F, 0.38F,  0.89F,  -0.56F, 1.09F,  0.89F,  -1.11F, 0.8F,   1.15F,  -0.91F,
      0.22F,  0.42F,  0.33F,  -1.21F, 0.48F,  0.4F,   0.97F,  0.91F,  -0.52F, 0.67F,  1.1F,   1.18F,  -1.02F, -1.42F,
      0.45F,  -0.86F, 0.19F,  1.33F};
  std::vector<float> const dc_mask = {
      0.38F, 0.25F, 0.46F, 0.66F, 0.1F,  0.38F, 0.13F, 0.66F, 0.83F, 0.38F, 0.37F, 0.54F, 0.22F, 0.25F, 0.33F,
      0.46F, 0.08F, 0.75F, 0.58F, 0.3F,  0.08F, 0.76F, 0.13F, 0.13F, 0.13F, 0.08F, 0.91F, 0.27F, 0.31F, 0.83F,
      0.62F, 0.19F, 0.43F, 0.88F, 0.38F, 0.71F, 0.1F,  0.73F, 0.78F, 0.83F, 0.67F, 0.37F, 0.06F, 0.52F, 0.76F,
      0.19F, 0.27F, 0.54F, 0.75F, 0.9F,  0.13F, 0.18F, 0.8F,  0.64F, 0.72F, 1.0F,  0.94F, 0.84F, 0.78F, 0.4F,
      0.64F, 0.18F, 0.76F, 0.76F, 0.72F, 0.44F, 0.38F, 0.42F, 0.03F, 0.84F, 0.54F, 0.39F};
  std::vector<float> const dc1_x = {0.19F, 0.89F, -0.47F, 1.32F, 1.68F, -0.45F, -1.45F, 1.04F, 1.97F};
  std::vector<float> const dc1_off = {-0.68F, -0.73F, 0.88F,  -0.69F, -0.58F, 0.13F,  -0.1F,  0.45F,
                                      -0.56F, 0.75F,  -0.51F, 0.48F,  -0.78F, -0.05F, -0.84F, -0.34F,
                                      -0.34F, 0.4F,   -0.08F, -0.8F,  0.89F,  0.7F,   0.75F,  -0.46F,
                                      -0.19F, -0.49F, -0.68F, -0.84F, 0.01F,  -0.68F, -0.58F, 0.65F};
  auto outs = run(m.bytes(), {{"x", {dims({1, 4, 4, 5}), dc_x}},
                              {"off", {dims({1, 16, 3, 3}), dc_off}},
                              {"mask", {dims({1, 8, 3, 3}), dc_mask}}});
  ASSERT_FALSE(outs.empty());
  expectDims(outs["y"].dims, {1, 2, 3, 3});
  expectNear(outs["y"].v,
             {0.4479360147860647, 0.4480053487016452, 0.0022112940361478373, 0.6123843577805035, 0.5184541030081254,
              0.3895391470453209, 0.5702037737847778, 0.9619515922229147, 0.5, -0.6784852222734795, -0.9122361578548084,
              0.1988010890385598, -1.1815039771661286, -1.4796141252724815, -0.5008415255419055, -0.7181714801214714,
              -0.403280297461303, -0.2961158740843236});
  // No mask, no bias, one group.
  ModelBuilder s(19);
  s.input("x", {1, 1, 3, 3}).input("off", {1, 8, 2, 2}).output("y");
  s.initF("w", {1, 1, 2, 2}, {-0.7F, 0.43F, 0.65F, 0.84F});
  s.node("DeformConv", {"x", "w", "off"}, {"y"});
  auto o1 = run(s.bytes(), {{"x", {dims({1, 1, 3, 3}), dc1_x}}, {"off", {dims({1, 8, 2, 2}), dc1_off}}});
  ASSERT_FALSE(o1.empty());
  expectNear(o1["y"].v, {2.1990669894453085, 0.8394916666686789, 2.1246223808463234, 0.8671387343132803});
}

}  // namespace
