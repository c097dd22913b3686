// Tests of the ONNX AveragePool importer with dilations (composed from slices): 2-D with pads and
// count_include_pad 0 and 1, 1-D with ceil_mode overhang, 3-D with auto_pad SAME_UPPER, and the plain
// IPoolingLayer path. Expected values from a naive numpy loop over the ONNX definition (pad with NaN for taps
// that do not count, 0 for counted padding, average the rest), written in here, not from the code under test.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "onnx_test_util.h"

namespace {

using namespace kiln::onnx::test;  // NOLINT: test helpers
using kiln::Dims;

std::vector<float> const kX5x5{-3,  -2.5, -2,  9, -1,  -0.5, 0,   -4, 1,   1.5, 2,   6, 3,
                               3.5, 4,    4.5, 5, 5.5, 6,    2.5, 7,  7.5, 8,   8.5, 9};

TEST(OnnxAveragePool, Dilated2dCountIncludePadZeroAndOne) {
  // kernel 2x2, dilation 2, stride 1, pads 1 on every side: 5x5 -> 5x5.
  ModelBuilder m(19);
  m.input("x", {1, 1, 5, 5}).output("ex").output("in");
  for (auto [name, include] : {std::pair<char const*, int64_t>{"ex", 0}, {"in", 1}}) {
    auto& p = m.node("AveragePool", {"x"}, {name});
    attr(p, "kernel_shape", std::vector<int64_t>{2, 2});
    attr(p, "dilations", std::vector<int64_t>{2, 2});
    attr(p, "pads", std::vector<int64_t>{1, 1, 1, 1});
    attr(p, "count_include_pad", include);
  }
  auto outs = run(m.bytes(), {{"x", {dimsOf({1, 1, 5, 5}), kX5x5}}});
  ASSERT_FALSE(outs.empty());
  ASSERT_EQ(outs["ex"].dims.nbDims, 4);
  EXPECT_EQ(outs["ex"].dims.d[2], 5);
  EXPECT_EQ(outs["ex"].dims.d[3], 5);
  expectNear(outs["ex"].v, {0,     -2.25, 0.5,  -1.25, 1,     1.75, 0, 4, 1, 6.25, 2.5, 1.375, 3,
                            1.375, 3.5,   6.75, 5,     6.375, 6,    6, 5, 5, 5.5,  4,   6});
  expectNear(outs["in"].v, {0,     -1.125, 0.25,  -0.625, 0.25,  0.875, 0, 4,    1,   3.125, 1.25, 1.375, 3,
                            1.375, 1.75,   3.375, 5,      6.375, 6,     3, 1.25, 2.5, 2.75,  2,    1.5});
}

TEST(OnnxAveragePool, Dilated1dCeilModeOverhangNeverCounts) {
  // kernel 3, dilation 2, stride 2, pads 1/1, ceil_mode: 8 -> 4 windows; the last one reads x[5], x[7] and one
  // tap past the end padding, which counts for neither setting.
  ModelBuilder m(19);
  m.input("x", {1, 1, 8}).output("ex").output("in");
  for (auto [name, include] : {std::pair<char const*, int64_t>{"ex", 0}, {"in", 1}}) {
    auto& p = m.node("AveragePool", {"x"}, {name});
    attr(p, "kernel_shape", std::vector<int64_t>{3});
    attr(p, "dilations", std::vector<int64_t>{2});
    attr(p, "strides", std::vector<int64_t>{2});
    attr(p, "pads", std::vector<int64_t>{1, 1});
    attr(p, "ceil_mode", int64_t{1});
    attr(p, "count_include_pad", include);
  }
  auto outs = run(m.bytes(), {{"x", {dimsOf({1, 1, 8}), {1, -2, 3, 4, -5, 6, 7, 8.5F}}}});
  ASSERT_FALSE(outs.empty());
  ASSERT_EQ(outs["ex"].dims.nbDims, 3);
  EXPECT_EQ(outs["ex"].dims.d[2], 4);
  expectNear(outs["ex"].v, {1, 2.66666667, 6.16666667, 7.25});
  expectNear(outs["in"].v, {0.666666667, 2.66666667, 6.16666667, 7.25});
}

TEST(OnnxAveragePool, Dilated3dSameUpper) {
  // kernel 2x2x2, dilations 2x1x2, auto_pad SAME_UPPER (pads begin 1,0,1 end 1,1,1): shape kept.
  ModelBuilder m(19);
  m.input("x", {1, 2, 3, 4, 3}).output("y");
  auto& p = m.node("AveragePool", {"x"}, {"y"});
  attr(p, "kernel_shape", std::vector<int64_t>{2, 2, 2});
  attr(p, "dilations", std::vector<int64_t>{2, 1, 2});
  attr(p, "auto_pad", std::string("SAME_UPPER"));
  std::vector<float> x(72);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(i % 7) - 2.5F;
  }
  auto outs = run(m.bytes(), {{"x", {dimsOf({1, 2, 3, 4, 3}), x}}});
  ASSERT_FALSE(outs.empty());
  ASSERT_EQ(outs["y"].dims.nbDims, 5);
  EXPECT_EQ(outs["y"].dims.d[2], 3);
  EXPECT_EQ(outs["y"].dims.d[3], 4);
  EXPECT_EQ(outs["y"].dims.d[4], 3);
  expectNear(outs["y"].v,
             {1.5,   -0.25, 1.5,   1,    1,    1,    0.5,  0.5,   0.5,  -1.5,  -1.5,  -1.5,  -0.25, 0.625, -0.25,
              -0.75, 1,     -0.75, 0.5,  0.5,  0.5,  2,    0.25,  2,    1.5,   -0.25, 1.5,   1,     1,     1,
              0.5,   0.5,   0.5,   -1.5, -1.5, -1.5, -1,   0.75,  -1,   2,     0.25,  2,     1.5,   -0.25, 1.5,
              -0.5,  -0.5,  -0.5,  0.75, 0.75, 0.75, 0.25, 0.25,  0.25, -0.25, 0.625, -0.25, -0.5,  1.25,  -0.5,
              -1,    0.75,  -1,    2,    0.25, 2,    1.5,  -0.25, 1.5,  -0.5,  -0.5,  -0.5});
}

TEST(OnnxAveragePool, UndilatedStillUsesPoolingSemantics) {
  // kernel 3x3, stride 2, pads 1, count_include_pad 0 on the 5x5 input: numpy means of the clipped windows.
  ModelBuilder m(19);
  m.input("x", {1, 1, 5, 5}).output("y");
  auto& p = m.node("AveragePool", {"x"}, {"y"});
  attr(p, "kernel_shape", std::vector<int64_t>{3, 3});
  attr(p, "strides", std::vector<int64_t>{2, 2});
  attr(p, "pads", std::vector<int64_t>{1, 1, 1, 1});
  attr(p, "dilations", std::vector<int64_t>{1, 1});
  auto outs = run(m.bytes(), {{"x", {dimsOf({1, 1, 5, 5}), kX5x5}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {-1.5, 0.25, 2.625, 2.83333333, 2.88888889, 3.08333333, 6, 6.75, 6.5});
}

TEST(OnnxAveragePool, DilatedWindowLargerThanPaddedInputIsRefused) {
  ModelBuilder m(19);
  m.input("x", {1, 1, 3, 3}).output("y");
  auto& p = m.node("AveragePool", {"x"}, {"y"});
  attr(p, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(p, "dilations", std::vector<int64_t>{4, 4});
  EXPECT_FALSE(parseOnly(m.bytes()).ok);
}

}  // namespace
