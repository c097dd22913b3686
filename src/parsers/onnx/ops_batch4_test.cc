// Tests of the fourth batch of ONNX op importers (spatial and integer math, composed from public layers): dilated
// and integer MaxPool and its Indices, ConvTranspose with output_shape / output_padding, MaxUnpool, RoiAlign,
// MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv and Unique; expected values from naive numpy loops.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "onnx_test_util.h"

namespace {

using namespace kiln::onnx::test;  // NOLINT: test helpers
using kiln::Dims;
using TP = ::onnx::TensorProto;

/// Casts graph input `from` (fed as float) to `type` under the name `to`.
void castNode(ModelBuilder& m, std::string const& from, std::string const& to, int32_t type) {
  attr(m.node("Cast", {from}, {to}), "to", int64_t{type});
}

TEST(OnnxOpsBatch4, MaxPoolDilatedAndUint8) {
  // Naive loop over the -inf-padded input: kernel 2x2, dilation 2, stride 1, pads 1; uint8 3x3 kernel 2x2.
  ModelBuilder m;
  m.input("x", {1, 1, 5, 5}).input("u", {1, 1, 3, 3}).output("y").output("yu", {}, TP::UINT8);
  auto& p = m.node("MaxPool", {"x"}, {"y"});
  attr(p, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(p, "dilations", std::vector<int64_t>{2, 2});
  attr(p, "pads", std::vector<int64_t>{1, 1, 1, 1});
  castNode(m, "u", "u8", TP::UINT8);
  attr(m.node("MaxPool", {"u8"}, {"yu"}), "kernel_shape", std::vector<int64_t>{2, 2});
  std::vector<float> x{5, 2, 19, 16, 11, 22, 17, 24, 23, 14, 1, 10, 13, 8, 6, 18, 4, 9, 7, 20, 3, 0, 21, 15, 12};
  auto outs = run(m.bytes(),
                  {{"x", {dimsOf({1, 1, 5, 5}), x}}, {"u", {dimsOf({1, 1, 3, 3}), {3, 200, 7, 50, 9, 255, 0, 1, 2}}}});
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(outs["y"].dims.d[2], 5);
  expectNear(outs["y"].v,
             {17, 24, 23, 24, 23, 10, 19, 16, 19, 16, 17, 24, 23, 24, 23, 10, 21, 15, 21, 15, 4, 18, 7, 20, 7});
  expectNear(outs["yu"].v, {200, 255, 50, 255});
}

TEST(OnnxOpsBatch4, MaxPoolIndicesRowAndColumnMajor) {
  // Naive loop, first maximum of each 2x2 window (ties: 9 at (0,1) and (1,1) -> the first); flat index h*4+w
  // (storage_order 0) or w*4+h (1).
  ModelBuilder m;
  m.input("x", {1, 1, 4, 4}).output("y").output("i", {}, TP::INT64).output("y1").output("i1", {}, TP::INT64);
  auto& a = m.node("MaxPool", {"x"}, {"y", "i"});
  attr(a, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(a, "strides", std::vector<int64_t>{2, 2});
  auto& b = m.node("MaxPool", {"x"}, {"y1", "i1"});
  attr(b, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(b, "strides", std::vector<int64_t>{2, 2});
  attr(b, "storage_order", int64_t{1});
  auto outs = run(m.bytes(), {{"x", {dimsOf({1, 1, 4, 4}), {3, 9, 1, 2, 4, 9, 8, 0, 5, 6, 7, 7, 1, 2, 3, 0}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {9, 8, 6, 7});
  expectNear(outs["i"].v, {1, 6, 9, 10});
  expectNear(outs["i1"].v, {4, 9, 6, 10});
}

TEST(OnnxOpsBatch4, ConvTransposeOutputPaddingAndShape) {
  // numpy: full = sum_ij x[i,j] * W placed at (2i, 2j) (4x4); output_padding 1 -> 5x5 zero-extended, + bias 0.25;
  // output_shape [3, 3] -> total padding 1, begin 1: full[1:4, 1:4] + 0.25.
  ModelBuilder m;
  m.input("x", {1, 1, 2, 2}).initF("w", {1, 1, 2, 2}, {1, -1, 2, 0.5F}).initF("b", {1}, {0.25F});
  m.output("p").output("s");
  auto& a = m.node("ConvTranspose", {"x", "w", "b"}, {"p"});
  attr(a, "strides", std::vector<int64_t>{2, 2});
  attr(a, "output_padding", std::vector<int64_t>{1, 1});
  auto& b = m.node("ConvTranspose", {"x", "w", "b"}, {"s"});
  attr(b, "strides", std::vector<int64_t>{2, 2});
  attr(b, "output_shape", std::vector<int64_t>{3, 3});
  auto outs = run(m.bytes(), {{"x", {dimsOf({1, 1, 2, 2}), {1, 2, 3, 4}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["p"].v, {1.25,  -0.75, 2.25, -1.75, 0.25, 2.25, 0.75, 4.25, 1.25, 0.25, 3.25, -2.75, 4.25,
                           -3.75, 0.25,  6.25, 1.75,  8.25, 2.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25});
  expectNear(outs["s"].v, {0.75, 4.25, 1.25, -2.75, 4.25, -3.75, 1.75, 8.25, 2.25});
}

TEST(OnnxOpsBatch4, MaxUnpoolWithAndWithoutOutputShape) {
  // By hand: values scattered at flat indices 5, 7, 13, 15 of a 4x4 map; output_shape 5x5 zero-extends it.
  ModelBuilder m;
  m.input("x", {1, 1, 2, 2}).input("i", {1, 1, 2, 2}, TP::INT64).input("shape", {4}, TP::INT64);
  m.output("a").output("b");
  auto& a = m.node("MaxUnpool", {"x", "i"}, {"a"});
  attr(a, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(a, "strides", std::vector<int64_t>{2, 2});
  auto& b = m.node("MaxUnpool", {"x", "i", "shape"}, {"b"});
  attr(b, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(b, "strides", std::vector<int64_t>{2, 2});
  auto outs = run(m.bytes(), {{"x", {dimsOf({1, 1, 2, 2}), {1, 2, 3, 4}}}},
                  {{"i", {dimsOf({1, 1, 2, 2}), {5, 7, 13, 15}}}, {"shape", {dimsOf({4}), {1, 1, 5, 5}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["a"].v, {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4});
  EXPECT_EQ(outs["b"].dims.d[3], 5);
  expectNear(outs["b"].v, {0, 0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0, 0});
}

TEST(OnnxOpsBatch4, RoiAlignHalfPixelAndOutputHalfPixel) {
  // Naive numpy RoiAlign (ONNX's bilinear rules: points beyond one pixel outside count 0, else clamped),
  // X[4, 5] = round((arange(20) ** 1.5) / 7, 6); output 2x3 / 2x2, sampling_ratio 2.
  std::vector<float> x{0.0F,      0.142857F, 0.404061F, 0.742307F,  1.142857F,  1.597191F, 2.099563F,
                       2.645751F, 3.232488F, 3.857143F, 4.51754F,   5.211839F,  5.93846F,  6.696024F,
                       7.483315F, 8.29925F,  9.142857F, 10.013257F, 10.909647F, 11.831297F};
  ModelBuilder m;
  m.input("x", {1, 1, 4, 5}).input("rois", {3, 4}).input("r1", {1, 4}).input("b", {3}, TP::INT64);
  m.input("b1", {1}, TP::INT64).output("y").output("z");
  auto& a = m.node("RoiAlign", {"x", "rois", "b"}, {"y"});
  attr(a, "output_height", int64_t{2});
  attr(a, "output_width", int64_t{3});
  attr(a, "sampling_ratio", int64_t{2});
  auto& c = m.node("RoiAlign", {"x", "r1", "b1"}, {"z"});
  attr(c, "output_height", int64_t{2});
  attr(c, "output_width", int64_t{2});
  attr(c, "sampling_ratio", int64_t{2});
  attr(c, "coordinate_transformation_mode", std::string("output_half_pixel"));
  auto outs = run(m.bytes(),
                  {{"x", {dimsOf({1, 1, 4, 5}), x}},
                   {"rois", {dimsOf({3, 4}), {0.5F, 0.5F, 3.2F, 2.7F, -1.5F, 0, 2, 3.8F, 3.5F, -2.5F, 7, 1}}},
                   {"r1", {dimsOf({1, 4}), {1, 1, 1.5F, 2}}}},
                  {{"b", {dimsOf({3}), {0, 0, 0}}}, {"b1", {dimsOf({1}), {0}}}});
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(outs["y"].dims.nbDims, 4);
  expectNear(outs["y"].v,
             {1.0317206625, 1.36532612, 1.7557195125, 3.7776238975, 4.3547567075, 4.9604554875, 0.0, 0.7451411018229166,
              1.0308095940104165, 0.0, 5.910471335677084, 6.580079713802083, 0.0, 0.0, 0.0, 1.0578645703124998,
              0.61383921875, 0.0},
             1e-5);
  expectNear(outs["z"].v, {3.0254560625, 3.3211041875, 4.6041481875, 4.9449045625}, 1e-5);
}

TEST(OnnxOpsBatch4, MatMulIntegerPerRowAndPerColumnZeroPoints) {
  // numpy: (A - a_zp[:, None]) @ (B - b_zp[None, :]) in int32.
  ModelBuilder m;
  m.input("a", {4, 3}).input("b", {3, 2}).output("y", {}, TP::INT32);
  castNode(m, "a", "a8", TP::UINT8);
  castNode(m, "b", "b8", TP::UINT8);
  initTyped<uint8_t>(m, "azp", TP::UINT8, {4}, {12, 10, 8, 6});
  initTyped<uint8_t>(m, "bzp", TP::UINT8, {2}, {0, 2});
  m.node("MatMulInteger", {"a8", "b8", "azp", "bzp"}, {"y"});
  auto outs = run(m.bytes(), {{"a", {dimsOf({4, 3}), {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0}}},
                              {"b", {dimsOf({3, 2}), {1, 4, 2, 5, 3, 6}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {-38, -53, -32, -44, -26, -35, -20, -26});
}

TEST(OnnxOpsBatch4, QLinearMatMulToInt8Saturates) {
  // numpy: clip(rint(((a - 128) @ (b - 100)) * 0.05 * 0.02 / 0.1) - 3, -128, 127).
  ModelBuilder m;
  m.input("a", {2, 2}).input("b", {2, 2}).output("y", {}, TP::INT8);
  castNode(m, "a", "a8", TP::UINT8);
  castNode(m, "b", "b8", TP::UINT8);
  m.initF("as", {}, {0.05F}).initF("bs", {}, {0.02F}).initF("ys", {}, {0.1F});
  initTyped<uint8_t>(m, "azp", TP::UINT8, {}, {128});
  initTyped<uint8_t>(m, "bzp", TP::UINT8, {}, {100});
  initTyped<int8_t>(m, "yzp", TP::INT8, {}, {-3});
  m.node("QLinearMatMul", {"a8", "as", "azp", "b8", "bs", "bzp", "ys", "yzp"}, {"y"});
  auto outs =
      run(m.bytes(), {{"a", {dimsOf({2, 2}), {100, 150, 20, 255}}}, {"b", {dimsOf({2, 2}), {30, 200, 90, 10}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {14, -51, 60, -128});
}

TEST(OnnxOpsBatch4, ConvIntegerAndQLinearConvPerChannel) {
  // numpy loops: x 3x3 minus 5, two 2x2 kernels minus per-channel zero points [1, 2] -> int32; QLinearConv adds
  // bias [10, -20] and requantizes with scales 0.5 (x), [0.1, 0.2] (w), 0.25 (y), zero point 128.
  ModelBuilder m;
  m.input("x", {1, 1, 3, 3}).input("w", {2, 1, 2, 2}).output("c", {}, TP::INT32).output("q", {}, TP::UINT8);
  castNode(m, "x", "x8", TP::UINT8);
  castNode(m, "w", "w8", TP::UINT8);
  initTyped<uint8_t>(m, "xzp", TP::UINT8, {}, {5});
  initTyped<uint8_t>(m, "wzp", TP::UINT8, {2}, {1, 2});
  initTyped<uint8_t>(m, "yzp", TP::UINT8, {}, {128});
  initTyped<int32_t>(m, "bias", TP::INT32, {2}, {10, -20});
  m.initF("xs", {}, {0.5F}).initF("ws", {2}, {0.1F, 0.2F}).initF("ys", {}, {0.25F});
  m.node("ConvInteger", {"x8", "w8", "xzp", "wzp"}, {"c"});
  m.node("QLinearConv", {"x8", "xs", "xzp", "w8", "ws", "wzp", "ys", "yzp", "bias"}, {"q"});
  auto outs = run(m.bytes(), {{"x", {dimsOf({1, 1, 3, 3}), {7, 8, 9, 4, 5, 6, 1, 2, 3}}},
                              {"w", {dimsOf({2, 1, 2, 2}), {1, 2, 3, 4, 2, 2, 0, 5}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["c"].v, {1, 7, -17, -11, 2, 3, -1, 0});
  expectNear(outs["q"].v, {130, 131, 127, 128, 121, 121, 120, 120});
}

TEST(OnnxOpsBatch4, UniqueSortedUnsortedAndAlongAxes) {
  // numpy.unique(..., return_index/inverse/counts) for sorted; by hand in order of first occurrence.
  ModelBuilder m;
  m.input("x", {6}).input("r", {4, 3}).input("c", {2, 3});
  for (std::string s : {"s", "u", "a", "b"}) {
    m.output(s + "y", {-1})
        .output(s + "i", {-1}, TP::INT64)
        .output(s + "v", {-1}, TP::INT64)
        .output(s + "n", {-1}, TP::INT64);
  }
  m.node("Unique", {"x"}, {"sy", "si", "sv", "sn"});
  attr(m.node("Unique", {"x"}, {"uy", "ui", "uv", "un"}), "sorted", int64_t{0});
  attr(m.node("Unique", {"r"}, {"ay", "ai", "av", "an"}), "axis", int64_t{0});
  attr(m.node("Unique", {"c"}, {"by", "bi", "bv", "bn"}), "axis", int64_t{-1});
  auto outs = run(m.bytes(), {{"x", {dimsOf({6}), {2, 1, 1, 3, 4, 3}}},
                              {"r", {dimsOf({4, 3}), {1, 0, 0, 1, 0, 0, 2, 3, 4, 0, 5, 1}}},
                              {"c", {dimsOf({2, 3}), {1, 0, 1, 2, 3, 2}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["sy"].v, {1, 2, 3, 4});
  expectNear(outs["si"].v, {1, 0, 3, 4});
  expectNear(outs["sv"].v, {1, 0, 0, 2, 3, 2});
  expectNear(outs["sn"].v, {2, 1, 2, 1});
  expectNear(outs["uy"].v, {2, 1, 3, 4});
  expectNear(outs["ui"].v, {0, 1, 3, 4});
  expectNear(outs["uv"].v, {0, 1, 1, 2, 3, 2});
  expectNear(outs["un"].v, {1, 2, 2, 1});
  EXPECT_EQ(outs["ay"].dims.d[0], 3);
  expectNear(outs["ay"].v, {0, 5, 1, 1, 0, 0, 2, 3, 4});
  expectNear(outs["ai"].v, {3, 0, 2});
  expectNear(outs["av"].v, {1, 1, 2, 0});
  expectNear(outs["an"].v, {1, 2, 1});
  EXPECT_EQ(outs["by"].dims.d[1], 2);
  expectNear(outs["by"].v, {0, 1, 3, 2});
  expectNear(outs["bi"].v, {1, 0});
  expectNear(outs["bv"].v, {1, 0, 1});
  expectNear(outs["bn"].v, {1, 2});
}

}  // namespace
