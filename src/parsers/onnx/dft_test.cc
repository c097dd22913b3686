// Tests of the ONNX DFT and STFT importers (constant cos/sin matrices): tiny transforms whose spectra are worked
// out by hand in the comments (not by the code under test), plus the refusal of a run-time frame_step.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "onnx_test_util.h"

namespace {

using namespace kiln::onnx::test;  // NOLINT: test helpers
using kiln::Dims;

// x = [1 2 3 4]: X0 = 10, X1 = 1 - 2i - 3 + 4i = -2 + 2i, X2 = 1 - 2 + 3 - 4 = -2, X3 = -2 - 2i.
TEST(OnnxDft, RealOnesided) {
  ModelBuilder m(17);
  m.input("x", {1, 4, 1}).output("y");
  auto& n = m.node("DFT", {"x"}, {"y"});
  attr(n, "onesided", int64_t{1});
  auto outs = run(m.bytes(), {{"x", {Dims{3, {1, 4, 1}}, {1, 2, 3, 4}}}});
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(outs["y"].dims.d[1], 3);
  EXPECT_EQ(outs["y"].dims.d[2], 2);
  expectNear(outs["y"].v, {10, 0, -2, 2, -2, 0});
}

// The inverse of the full spectrum above gives back [1 2 3 4] (imaginary parts 0); axis 0 here, with a batch
// axis after it: two identical columns.
TEST(OnnxDft, ComplexInverseOnAxisZero) {
  ModelBuilder m(17);
  m.input("x", {4, 2, 2}).output("y");
  auto& n = m.node("DFT", {"x"}, {"y"});
  attr(n, "inverse", int64_t{1});
  attr(n, "axis", int64_t{0});
  std::vector<float> spec{10, 0, 10, 0, -2, 2, -2, 2, -2, 0, -2, 0, -2, -2, -2, -2};
  auto outs = run(m.bytes(), {{"x", {Dims{3, {4, 2, 2}}, spec}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {1, 0, 1, 0, 2, 0, 2, 0, 3, 0, 3, 0, 4, 0, 4, 0});
}

// Opset 20: axis as an input; dft_length 2 keeps [1 2]: X0 = 3, X1 = -1.
TEST(OnnxDft, Opset20AxisInputAndDftLength) {
  ModelBuilder m(20);
  m.input("x", {1, 4, 1}).output("y");
  m.initI("len", {}, {2}).initI("axis", {}, {-2});
  m.node("DFT", {"x", "len", "axis"}, {"y"});
  auto outs = run(m.bytes(), {{"x", {Dims{3, {1, 4, 1}}, {1, 2, 3, 4}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {3, 0, -1, 0});
}

// Signal [1..6], frame_step 2, frame_length 4: frames [1 2 3 4] and [3 4 5 6]. Onesided spectra:
// [10, -2+2i, -2] and [18, 3-5 + (6-4)i = -2+2i, 3-4+5-6 = -2].
TEST(OnnxStft, ConstantStepAndLength) {
  ModelBuilder m(17);
  m.input("s", {1, 6, 1}).output("y");
  m.initI("step", {}, {2}).initI("len", {}, {4});
  m.node("STFT", {"s", "step", "", "len"}, {"y"});
  auto outs = run(m.bytes(), {{"s", {Dims{3, {1, 6, 1}}, {1, 2, 3, 4, 5, 6}}}});
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(outs["y"].dims.d[1], 2);
  EXPECT_EQ(outs["y"].dims.d[2], 3);
  expectNear(outs["y"].v, {10, 0, -2, 2, -2, 0, 18, 0, -2, 2, -2, 0});
}

// Window [0 1 1 0] (a run-time input): frames [0 2 3 0] -> [5, -3-2i, 1] and [0 4 5 0] -> [9, -5-4i, 1].
TEST(OnnxStft, RunTimeWindow) {
  ModelBuilder m(17);
  m.input("s", {1, 6, 1}).input("w", {4}).output("y");
  m.initI("step", {}, {2});
  m.node("STFT", {"s", "step", "w"}, {"y"});
  auto outs = run(m.bytes(), {{"s", {Dims{3, {1, 6, 1}}, {1, 2, 3, 4, 5, 6}}}, {"w", {Dims{1, {4}}, {0, 1, 1, 0}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {5, 0, -3, -2, 1, 0, 9, 0, -5, -4, 1, 0});
}

TEST(OnnxStft, RunTimeFrameStepIsRefused) {
  ModelBuilder m(17);
  m.input("s", {1, 6, 1}).input("step", {}, ::onnx::TensorProto::INT64).output("y");
  m.initI("len", {}, {4});
  m.node("STFT", {"s", "step", "", "len"}, {"y"});
  ParseResult r = parseOnly(m.bytes());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.desc.find("frame_step must be a constant"), std::string::npos) << r.desc;
}

}  // namespace
