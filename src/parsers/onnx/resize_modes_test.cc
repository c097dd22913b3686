// Tests of ONNX Resize's opset 18/19 features: axes, keep_aspect_ratio_policy, half_pixel_symmetric,
// tf_crop_and_resize with a constant roi, and antialias. Expected numbers are worked out by hand in
// the comments from the ONNX formulas (not by the code under test).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "onnx_test_util.h"

namespace {

using namespace kiln::onnx::test;  // NOLINT: test helpers
using kiln::Dims;

// x = [0 1 2 3] on axis 1, roi [0.5, 1.5] for that axis, 3 outputs: x_orig = 0.5*3 + o*(1.5-0.5)*3/2
// = 1.5, 3.0, 4.5; 4.5 > 3 is extrapolated (10). Linear on 0..3 returns the coordinate itself.
TEST(OnnxResizeModes, TfCropAndResizeConstantRoiWithAxes) {
  ModelBuilder m(18);
  m.input("x", {1, 4}).output("y");
  m.initF("roi", {2}, {0.5F, 1.5F}).initI("sizes", {1}, {3});
  auto& n = m.node("Resize", {"x", "roi", "", "sizes"}, {"y"});
  attr(n, "mode", std::string("linear"));
  attr(n, "coordinate_transformation_mode", std::string("tf_crop_and_resize"));
  attr(n, "extrapolation_value", 10.0F);
  attr(n, "axes", std::vector<int64_t>{1});
  auto outs = run(m.bytes(), {{"x", {Dims{2, {1, 4}}, {0, 1, 2, 3}}}});
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(outs["y"].dims.d[1], 3);
  expectNear(outs["y"].v, {1.5, 3.0, 10.0});
}

// scale 0.6 on 4 -> out floor(2.4) = 2; adjustment 2/2.4, offset 2*(1 - 2/2.4) = 1/3;
// x_orig = 1/3 + (o + 0.5)/0.6 - 0.5 = 0.666667, 2.333333 (linear on 0..3 returns the coordinate).
TEST(OnnxResizeModes, HalfPixelSymmetric) {
  ModelBuilder m(19);
  m.input("x", {1, 4}).output("y");
  m.initF("scales", {2}, {1.0F, 0.6F});
  auto& n = m.node("Resize", {"x", "", "scales"}, {"y"});
  attr(n, "mode", std::string("linear"));
  attr(n, "coordinate_transformation_mode", std::string("half_pixel_symmetric"));
  auto outs = run(m.bytes(), {{"x", {Dims{2, {1, 4}}, {0, 1, 2, 3}}}});
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(outs["y"].dims.d[1], 2);
  expectNear(outs["y"].v, {2.0 / 3.0, 7.0 / 3.0});
}

// x [1,1,2,4] = 0..7, sizes [3,3] on axes [2,3], not_smaller: scale max(3/2, 3/4) = 1.5 -> out [3, 6].
// Nearest half_pixel, round_prefer_floor: x_orig = (o+0.5)/1.5 - 0.5; rows -> 0,0,1; columns -> 0,0,1,2,2,3.
TEST(OnnxResizeModes, KeepAspectRatioNotSmaller) {
  ModelBuilder m(18);
  m.input("x", {1, 1, 2, 4}).output("y");
  m.initI("sizes", {2}, {3, 3});
  auto& n = m.node("Resize", {"x", "", "", "sizes"}, {"y"});
  attr(n, "mode", std::string("nearest"));
  attr(n, "axes", std::vector<int64_t>{2, 3});
  attr(n, "keep_aspect_ratio_policy", std::string("not_smaller"));
  auto outs = run(m.bytes(), {{"x", {Dims{4, {1, 1, 2, 4}}, iota(8)}}});
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(outs["y"].dims.d[2], 3);
  EXPECT_EQ(outs["y"].dims.d[3], 6);
  expectNear(outs["y"].v, {0, 0, 1, 2, 2, 3, 0, 0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7});
}

// axes [1] with scales [0.5] on x [2,4]: axis 0 keeps scale 1. Nearest asymmetric floor: columns 0, 2.
TEST(OnnxResizeModes, AxesWithScales) {
  ModelBuilder m(18);
  m.input("x", {2, 4}).output("y");
  m.initF("scales", {1}, {0.5F});
  auto& n = m.node("Resize", {"x", "", "scales"}, {"y"});
  attr(n, "mode", std::string("nearest"));
  attr(n, "coordinate_transformation_mode", std::string("asymmetric"));
  attr(n, "nearest_mode", std::string("floor"));
  attr(n, "axes", std::vector<int64_t>{1});
  auto outs = run(m.bytes(), {{"x", {Dims{2, {2, 4}}, iota(8)}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {0, 2, 4, 6});
}

// Antialias, linear, scale 0.5 on x = [0 1 2 3]: kernel 1 - |t * 0.5| over taps -1..2 around the left neighbour
// (edge values outside), normalized by 2. o = 0: x_orig 0.5, taps 0,0,1,2 weights .25,.75,.75,.25 -> 1.25 / 2;
// o = 1: x_orig 2.5, taps 1,2,3,3 -> (0.25 + 1.5 + 2.25 + 0.75) / 2.
TEST(OnnxResizeModes, AntialiasLinear) {
  ModelBuilder m(18);
  m.input("x", {1, 4}).output("y");
  m.initF("scales", {2}, {1.0F, 0.5F});
  auto& n = m.node("Resize", {"x", "", "scales"}, {"y"});
  attr(n, "mode", std::string("linear"));
  attr(n, "antialias", int64_t{1});
  auto outs = run(m.bytes(), {{"x", {Dims{2, {1, 4}}, {0, 1, 2, 3}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {0.625, 2.375});
}

}  // namespace
