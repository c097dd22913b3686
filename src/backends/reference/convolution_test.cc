// Tests of Convolution: window geometry (every PaddingMode), shape inference and its errors, and the reference
// kernel against a naive direct convolution written here, in float32/float16/bfloat16.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/backend.h"
#include "backends/reference/activation_math.h"
#include "ir/infer/window_util.h"
#include "ir/shape_inference.h"
#include "backends/reference/spatial_test_util.h"

namespace kiln {
namespace {

using ir::OpType;
using namespace spatialtest;  // NOLINT: test helpers

// Naive convolution over 3 spatial dims (1-D and 2-D are given leading spatial dims of 1); explicit pads.
struct ConvSpec {
  int64_t n = 1, c = 1, k = 1, groups = 1;
  std::array<int64_t, 3> in{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, dil{1, 1, 1}, pb{0, 0, 0}, out{1, 1, 1};
};
std::vector<double> naiveConv(ConvSpec const& s, std::vector<double> const& x, std::vector<double> const& w,
                              std::vector<double> const* bias) {
  int64_t cg = s.c / s.groups, kg = s.k / s.groups;
  std::vector<double> y;
  for (int64_t b = 0; b < s.n; ++b)
    for (int64_t oc = 0; oc < s.k; ++oc)
      for (int64_t o0 = 0; o0 < s.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < s.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < s.out[2]; ++o2) {
            double acc = bias ? (*bias)[oc] : 0.0;
            int64_t g = oc / kg;
            for (int64_t ci = 0; ci < cg; ++ci)
              for (int64_t k0 = 0; k0 < s.kernel[0]; ++k0)
                for (int64_t k1 = 0; k1 < s.kernel[1]; ++k1)
                  for (int64_t k2 = 0; k2 < s.kernel[2]; ++k2) {
                    int64_t i0 = o0 * s.stride[0] - s.pb[0] + k0 * s.dil[0];
                    int64_t i1 = o1 * s.stride[1] - s.pb[1] + k1 * s.dil[1];
                    int64_t i2 = o2 * s.stride[2] - s.pb[2] + k2 * s.dil[2];
                    if (i0 < 0 || i0 >= s.in[0] || i1 < 0 || i1 >= s.in[1] || i2 < 0 || i2 >= s.in[2])
                      continue;
                    int64_t xc = b * s.c + g * cg + ci;
                    double xv = x[((xc * s.in[0] + i0) * s.in[1] + i1) * s.in[2] + i2];
                    double wv = w[(((oc * cg + ci) * s.kernel[0] + k0) * s.kernel[1] + k1) * s.kernel[2] + k2];
                    acc += xv * wv;
                  }
            y.push_back(acc);
          }
  return y;
}

TEST(WindowUtil, ExplicitRoundDownAndUp) {
  auto d = ir::computeWindowDim(7, 3, 2, 1, 1, 0, PaddingMode::kEXPLICIT_ROUND_DOWN);
  EXPECT_EQ(d.out, 3);  // floor((7 + 1 - 3) / 2) + 1
  d = ir::computeWindowDim(7, 3, 2, 1, 1, 0, PaddingMode::kEXPLICIT_ROUND_UP);
  EXPECT_EQ(d.out, 4);  // ceil(5 / 2) + 1
  EXPECT_EQ(d.padBegin, 1);
  EXPECT_EQ(d.padEnd, 0);
  d = ir::computeWindowDim(10, 3, 1, 2, 0, 0, PaddingMode::kEXPLICIT_ROUND_DOWN);
  EXPECT_EQ(d.out, 6);  // dilated kernel 5
  EXPECT_EQ(ir::computeWindowDim(-1, 3, 1, 1, 0, 0, PaddingMode::kSAME_UPPER).out, -1);
}

// Window values past 31 bits are refused by name (plan_fuzz: a dilation of 2^62 overflowed the dilated extent).
TEST(WindowUtil, RefusesWindowValuesPast31Bits) {
  ir::Graph g;
  ir::Value* x = *g.addInput("x", DataType::kFLOAT, makeDims({1, 1, 8, 8}));
  ir::Node* n = g.addNode(OpType::kConvolution, "conv", {x});
  n->attrs.setInts("kernel_shape", {3, 3});
  EXPECT_TRUE(ir::readWindowParams(*n, "kernel_shape", 2, true).isOk());
  for (char const* attr : {"strides", "dilations", "pads_begin", "pads_end"}) {
    n->attrs.setInts(attr, {1, int64_t{1} << 31});
    auto r = ir::readWindowParams(*n, "kernel_shape", 2, true);
    ASSERT_FALSE(r.isOk()) << attr;
    EXPECT_NE(r.status().message().find("'conv' (Convolution): a window value of spatial dim 1"), std::string::npos)
        << r.status().message();
    n->attrs.setInts(attr, {attr[0] == 'p' ? 0 : 1, attr[0] == 'p' ? 0 : 1});
  }
}

TEST(WindowUtil, SameUpperAndLower) {
  // in 6, kernel 4, stride 2: out 3, total pad (3-1)*2+4-6 = 2 -> 1/1.
  auto d = ir::computeWindowDim(6, 4, 2, 1, 9, 9, PaddingMode::kSAME_UPPER);
  EXPECT_EQ(d.out, 3);
  EXPECT_EQ(d.padBegin, 1);
  EXPECT_EQ(d.padEnd, 1);
  // in 5, kernel 2, stride 1: out 5, total 1 -> upper puts it at the end, lower at the start.
  d = ir::computeWindowDim(5, 2, 1, 1, 0, 0, PaddingMode::kSAME_UPPER);
  EXPECT_EQ(d.out, 5);
  EXPECT_EQ(d.padBegin, 0);
  EXPECT_EQ(d.padEnd, 1);
  d = ir::computeWindowDim(5, 2, 1, 1, 0, 0, PaddingMode::kSAME_LOWER);
  EXPECT_EQ(d.padBegin, 1);
  EXPECT_EQ(d.padEnd, 0);
  // Stride larger than the kernel: no negative padding.
  d = ir::computeWindowDim(5, 1, 3, 1, 0, 0, PaddingMode::kSAME_LOWER);
  EXPECT_EQ(d.out, 2);
  EXPECT_EQ(d.padBegin + d.padEnd, 0);
}

class ConvTypes : public ::testing::TestWithParam<DataType> {};

// Builds and runs a conv from a spec and returns max error against the naive version.
void checkConv(DataType dt, ConvSpec const& s, int32_t ns, std::vector<int64_t> const& padsEnd, bool withBias,
               PaddingMode mode = PaddingMode::kEXPLICIT_ROUND_DOWN) {
  int32_t off = 3 - ns;  // spatial dims live in the last ns entries of the 3-D spec
  std::vector<int64_t> xs{s.n, s.c}, ws{s.k, s.c / s.groups}, kernel, strides, dil, pb;
  for (int32_t i = off; i < 3; ++i) {
    xs.push_back(s.in[i]);
    ws.push_back(s.kernel[i]);
    kernel.push_back(s.kernel[i]);
    strides.push_back(s.stride[i]);
    dil.push_back(s.dil[i]);
    pb.push_back(s.pb[i]);
  }
  int64_t xn = 1, wn = 1;
  for (auto v : xs)
    xn *= v;
  for (auto v : ws)
    wn *= v;
  auto xv = randomValues(xn, 1), wv = randomValues(wn, 2), bv = randomValues(s.k, 3);
  ir::Graph g;
  ir::Value* x = constant(g, "x", dt, xs, xv);
  ir::Value* w = constant(g, "w", dt, ws, wv);
  ir::Value* b = withBias ? constant(g, "b", dt, {s.k}, bv) : nullptr;
  ir::Node* n = g.addNode(OpType::kConvolution, "conv", {x, w, b});
  n->attrs.setInt("num_output_maps", s.k);
  n->attrs.setInts("kernel_shape", kernel);
  n->attrs.setInts("strides", strides);
  n->attrs.setInts("dilations", dil);
  n->attrs.setInts("pads_begin", pb);
  n->attrs.setInts("pads_end", padsEnd);
  n->attrs.setInt("padding_mode", static_cast<int64_t>(mode));
  n->attrs.setInt("groups", s.groups);
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  std::vector<int64_t> want{s.n, s.k};
  for (int32_t i = off; i < 3; ++i)
    want.push_back(s.out[i]);
  EXPECT_EQ(dimsToString(out->shape()), dimsToString(makeDims(want)));
  expectClose(*out, naiveConv(s, xv, wv, withBias ? &bv : nullptr), dt);
}

TEST_P(ConvTypes, Basic2DWithBias) {
  ConvSpec s;
  s.n = 2, s.c = 3, s.k = 4;
  s.in = {1, 5, 6}, s.kernel = {1, 3, 3}, s.pb = {0, 1, 1}, s.out = {1, 5, 6};
  checkConv(GetParam(), s, 2, {1, 1}, true);
}

TEST_P(ConvTypes, StridedAsymmetricPads) {
  ConvSpec s;
  s.n = 1, s.c = 2, s.k = 3;
  s.in = {1, 7, 8}, s.kernel = {1, 2, 3}, s.stride = {1, 2, 3}, s.pb = {0, 0, 1}, s.out = {1, 4, 3};
  // H: floor((7 + 0 + 2 - 2) / 2) + 1 = 4; W: floor((8 + 1 + 0 - 3) / 3) + 1 = 3.
  checkConv(GetParam(), s, 2, {2, 0}, false);
}

TEST_P(ConvTypes, RoundUp) {
  ConvSpec s;
  s.c = 1, s.k = 1;
  s.in = {1, 1, 8}, s.kernel = {1, 1, 3}, s.stride = {1, 1, 2}, s.out = {1, 1, 4};  // ceil(5 / 2) + 1
  checkConv(GetParam(), s, 2, {0, 0}, false, PaddingMode::kEXPLICIT_ROUND_UP);
}

TEST_P(ConvTypes, OneByOneStrideLargerThanKernel) {
  ConvSpec s;
  s.n = 2, s.c = 3, s.k = 2;
  s.in = {1, 7, 5}, s.stride = {1, 3, 4}, s.out = {1, 3, 2};
  checkConv(GetParam(), s, 2, {0, 0}, true);
}

TEST_P(ConvTypes, Dilated) {
  ConvSpec s;
  s.c = 2, s.k = 2;
  s.in = {1, 9, 8}, s.kernel = {1, 3, 2}, s.dil = {1, 2, 3}, s.pb = {0, 2, 0}, s.out = {1, 9, 5};
  checkConv(GetParam(), s, 2, {2, 0}, true);
}

TEST_P(ConvTypes, DepthwiseGroupsEqualChannels) {
  ConvSpec s;
  s.n = 2, s.c = 4, s.k = 8, s.groups = 4;
  s.in = {1, 5, 5}, s.kernel = {1, 3, 3}, s.pb = {0, 1, 1}, s.out = {1, 5, 5};
  checkConv(GetParam(), s, 2, {1, 1}, true);
}

TEST_P(ConvTypes, TwoGroups) {
  ConvSpec s;
  s.c = 6, s.k = 4, s.groups = 2;
  s.in = {1, 4, 4}, s.kernel = {1, 2, 2}, s.out = {1, 3, 3};
  checkConv(GetParam(), s, 2, {0, 0}, false);
}

TEST_P(ConvTypes, SameUpperAndLower) {
  ConvSpec s;
  s.c = 2, s.k = 2;
  // in 6, kernel 2, stride 2: out 3, no padding; in 5, kernel 4, stride 1: out 5, total 3 -> upper 1/2.
  s.in = {1, 6, 5}, s.kernel = {1, 2, 4}, s.stride = {1, 2, 1}, s.pb = {0, 0, 1}, s.out = {1, 3, 5};
  checkConv(GetParam(), s, 2, {0, 0}, true, PaddingMode::kSAME_UPPER);
  s.pb = {0, 0, 2};  // lower: 2 before, 1 after
  checkConv(GetParam(), s, 2, {0, 0}, true, PaddingMode::kSAME_LOWER);
}

TEST_P(ConvTypes, OneD) {
  ConvSpec s;
  s.n = 2, s.c = 3, s.k = 2;
  s.in = {1, 1, 9}, s.kernel = {1, 1, 3}, s.stride = {1, 1, 2}, s.dil = {1, 1, 2}, s.pb = {0, 0, 1},
  s.out = {1, 1, 3};  // floor((9 + 1 + 0 - 5) / 2) + 1
  checkConv(GetParam(), s, 1, {0}, true);
}

TEST_P(ConvTypes, ThreeD) {
  ConvSpec s;
  s.c = 2, s.k = 3;
  s.in = {3, 4, 5}, s.kernel = {2, 3, 2}, s.stride = {1, 1, 2}, s.pb = {1, 1, 0}, s.out = {4, 4, 2};
  checkConv(GetParam(), s, 3, {1, 1, 0}, true);
}

INSTANTIATE_TEST_SUITE_P(AllFloat, ConvTypes, ::testing::Values(DataType::kFLOAT, DataType::kHALF, DataType::kBF16),
                         [](auto const& pi) { return std::string(dataTypeShortName(pi.param)); });

TEST(Convolution, HandComputed) {
  ir::Graph g;
  ir::Value* x = constant(g, "x", DataType::kFLOAT, {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  ir::Value* w = constant(g, "w", DataType::kFLOAT, {1, 1, 2, 2}, {1, 1, 1, 1});
  ir::Value* b = constant(g, "b", DataType::kFLOAT, {1}, {0.5});
  ir::Node* n = g.addNode(OpType::kConvolution, "conv", {x, w, b});
  n->attrs.setInts("kernel_shape", {2, 2});
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  expectClose(*out, {12.5, 16.5, 24.5, 28.5}, DataType::kFLOAT);
}

TEST(Convolution, ResidualThenActivation) {
  for (ActivationType act :
       {ActivationType::kRELU, ActivationType::kLEAKY_RELU, ActivationType::kCLIP, ActivationType::kGELU_ERF}) {
    ir::Graph g;
    auto xv = randomValues(2 * 3 * 4 * 4, 7), wv = randomValues(2 * 3 * 3 * 3, 8), rv = randomValues(2 * 2 * 4 * 4, 9);
    ir::Value* x = constant(g, "x", DataType::kFLOAT, {2, 3, 4, 4}, xv);
    ir::Value* w = constant(g, "w", DataType::kFLOAT, {2, 3, 3, 3}, wv);
    ir::Value* r = constant(g, "r", DataType::kFLOAT, {2, 2, 4, 4}, rv);
    ir::Node* n = g.addNode(OpType::kConvolution, "conv", {x, w, nullptr, r});
    n->attrs.setInts("kernel_shape", {3, 3});
    n->attrs.setInt("padding_mode", static_cast<int64_t>(PaddingMode::kSAME_UPPER));
    n->attrs.setInt("activation", static_cast<int64_t>(act));
    n->attrs.setFloat("act_alpha", 0.1);
    n->attrs.setFloat("act_beta", 0.5);
    auto out = run(g, n);
    ASSERT_TRUE(out.isOk()) << out.status().toString();
    ConvSpec s;
    s.n = 2, s.c = 3, s.k = 2;
    s.in = {1, 4, 4}, s.kernel = {1, 3, 3}, s.pb = {0, 1, 1}, s.out = {1, 4, 4};
    auto ref = naiveConv(s, xv, wv, nullptr);
    for (size_t i = 0; i < ref.size(); ++i) {
      double v = ref[i] + rv[i];
      switch (act) {
        case ActivationType::kRELU:
          v = std::max(v, 0.0);
          break;
        case ActivationType::kLEAKY_RELU:
          v = v >= 0 ? v : 0.1 * v;
          break;
        case ActivationType::kCLIP:
          v = std::min(std::max(v, 0.1), 0.5);
          break;
        default:
          v = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
          break;
      }
      ref[i] = v;
    }
    expectClose(*out, ref, DataType::kFLOAT);
  }
}

TEST(Convolution, ZeroBatch) {
  ir::Graph g;
  ir::Value* x = constant(g, "x", DataType::kFLOAT, {0, 2, 3, 3}, std::vector<double>{});
  ir::Value* w = constant(g, "w", DataType::kFLOAT, {4, 2, 1, 1}, randomValues(8, 1));
  ir::Node* n = g.addNode(OpType::kConvolution, "conv", {x, w});
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_EQ(dimsToString(out->shape()), "[0,4,3,3]");
}

TEST(Convolution, UnknownDimsStayUnknown) {
  ir::Graph g;
  auto x = g.addInput("x", DataType::kHALF, makeDims({-1, 3, -1, 10}));
  ASSERT_TRUE(x.isOk());
  ir::Value* w = constant(g, "w", DataType::kHALF, {8, 3, 3, 3}, randomValues(8 * 27, 1));
  ir::Node* n = g.addNode(OpType::kConvolution, "conv", {*x, w});
  n->attrs.setInts("strides", {2, 2});
  n->attrs.setInt("padding_mode", static_cast<int64_t>(PaddingMode::kSAME_LOWER));
  ASSERT_TRUE(ir::inferGraphInPlace(g, nullptr).isOk());
  EXPECT_EQ(dimsToString(n->output(0)->shape), "[-1,8,-1,5]");
  EXPECT_EQ(n->output(0)->dtype, DataType::kHALF);
}

// Infers a conv of x [1, c, 6, 6] and weights `ws` with extra attributes; returns the Status.
Status inferConv(std::vector<int64_t> const& xs, std::vector<int64_t> const& ws,
                 std::function<void(ir::Node*)> const& setAttrs, std::vector<int64_t> const* biasShape = nullptr) {
  ir::Graph g;
  auto x = g.addInput("x", DataType::kFLOAT, makeDims(xs));
  if (!x)
    return x.status();
  int64_t wn = 1;
  for (auto v : ws)
    wn *= v;
  ir::Value* w = constant(g, "w", DataType::kFLOAT, ws, randomValues(wn, 1));
  ir::Value* b = nullptr;
  if (biasShape) {
    int64_t bn = 1;
    for (auto v : *biasShape)
      bn *= v;
    b = constant(g, "b", DataType::kFLOAT, *biasShape, randomValues(bn, 2));
  }
  ir::Node* n = g.addNode(OpType::kConvolution, "conv", {*x, w, b});
  setAttrs(n);
  return ir::inferGraphInPlace(g, nullptr);
}

TEST(Convolution, InferErrors) {
  auto none = [](ir::Node*) {};
  EXPECT_TRUE(inferConv({1, 4, 6, 6}, {2, 4, 3, 3}, none).isOk());
  EXPECT_FALSE(inferConv({1, 5, 6, 6}, {2, 4, 3, 3}, none).isOk());  // channels mismatch
  EXPECT_FALSE(inferConv({1, 4}, {2, 4}, none).isOk());              // rank too small
  EXPECT_FALSE(inferConv({1, 4, 6, 6}, {2, 4, 3}, none).isOk());     // weight rank
  EXPECT_FALSE(inferConv({1, 4, 6, 6}, {3, 2, 3, 3}, [](ir::Node* n) { n->attrs.setInt("groups", 2); }).isOk());
  EXPECT_FALSE(inferConv({1, 4, 6, 6}, {2, 4, 3, 3}, [](ir::Node* n) {
                 n->attrs.setInts("kernel_shape", {3, 2});
               }).isOk());
  EXPECT_FALSE(inferConv({1, 4, 6, 6}, {2, 4, 3, 3}, [](ir::Node* n) { n->attrs.setInts("strides", {0, 1}); }).isOk());
  EXPECT_FALSE(inferConv({1, 4, 6, 6}, {2, 4, 3, 3}, [](ir::Node* n) { n->attrs.setInts("dilations", {1}); }).isOk());
  EXPECT_FALSE(
      inferConv({1, 4, 6, 6}, {2, 4, 3, 3}, [](ir::Node* n) { n->attrs.setInt("num_output_maps", 3); }).isOk());
  EXPECT_FALSE(inferConv({1, 4, 6, 6}, {2, 4, 3, 3}, [](ir::Node* n) { n->attrs.setInt("activation", 99); }).isOk());
  EXPECT_FALSE(inferConv({1, 4, 6, 6}, {2, 4, 3, 3}, [](ir::Node* n) { n->attrs.setInt("padding_mode", 7); }).isOk());
  EXPECT_FALSE(inferConv({1, 4, 2, 2}, {2, 4, 3, 3}, none).isOk());  // kernel larger than the input
  std::vector<int64_t> badBias{3};
  EXPECT_FALSE(inferConv({1, 4, 6, 6}, {2, 4, 3, 3}, none, &badBias).isOk());
  Status st = inferConv({1, 5, 6, 6}, {2, 4, 3, 3}, none);
  EXPECT_NE(st.message().find("conv"), std::string::npos) << st.message();
}

TEST(ActivationMath, EveryType) {
  double x = -0.7;
  EXPECT_DOUBLE_EQ(backends::reference::applyActivation(ActivationType::kRELU, x, 0, 0), 0.0);
  EXPECT_DOUBLE_EQ(backends::reference::applyActivation(ActivationType::kSIGMOID, x, 0, 0), 1 / (1 + std::exp(0.7)));
  EXPECT_DOUBLE_EQ(backends::reference::applyActivation(ActivationType::kTANH, x, 0, 0), std::tanh(x));
  EXPECT_DOUBLE_EQ(backends::reference::applyActivation(ActivationType::kLEAKY_RELU, x, 0.1, 0), -0.07);
  EXPECT_NEAR(backends::reference::applyActivation(ActivationType::kELU, x, 2, 0), 2 * (std::exp(x) - 1), 1e-15);
  EXPECT_NEAR(backends::reference::applyActivation(ActivationType::kSELU, x, 1.5, 2), 2 * (1.5 * std::exp(x) - 1.5),
              1e-15);
  EXPECT_DOUBLE_EQ(backends::reference::applyActivation(ActivationType::kSELU, 0.5, 1.5, 2), 1.0);
  EXPECT_DOUBLE_EQ(backends::reference::applyActivation(ActivationType::kSOFTSIGN, x, 0, 0), x / 1.7);
  EXPECT_NEAR(backends::reference::applyActivation(ActivationType::kSOFTPLUS, x, 2, 3),
              2 * std::log(std::exp(3 * x) + 1), 1e-15);
  EXPECT_DOUBLE_EQ(backends::reference::applyActivation(ActivationType::kCLIP, x, -0.5, 0.5), -0.5);
  EXPECT_DOUBLE_EQ(backends::reference::applyActivation(ActivationType::kHARD_SIGMOID, x, 0.2, 0.5), 0.36);
  EXPECT_DOUBLE_EQ(backends::reference::applyActivation(ActivationType::kSCALED_TANH, x, 2, 3), 2 * std::tanh(3 * x));
  EXPECT_DOUBLE_EQ(backends::reference::applyActivation(ActivationType::kTHRESHOLDED_RELU, 0.5, 0.6, 0), 0.0);
  EXPECT_DOUBLE_EQ(backends::reference::applyActivation(ActivationType::kTHRESHOLDED_RELU, 0.7, 0.6, 0), 0.7);
  EXPECT_NEAR(backends::reference::applyActivation(ActivationType::kGELU_ERF, 1.0, 0, 0), 0.8413447460685429, 1e-15);
  EXPECT_NEAR(backends::reference::applyActivation(ActivationType::kGELU_TANH, 1.0, 0, 0), 0.8411919906082768, 1e-12);
  EXPECT_NEAR(backends::reference::applyActivation(ActivationType::kSOFTPLUS, 1000.0, 1, 1), 1000.0, 1e-9);
  EXPECT_TRUE(std::isnan(backends::reference::applyActivation(ActivationType::kRELU, NAN, 0, 0)));
}

TEST(Convolution, ThreadCountDoesNotChangeBits) {
  ir::Graph g;
  ir::Value* x = constant(g, "x", DataType::kHALF, {2, 4, 6, 5}, randomValues(240, 21));
  ir::Value* w = constant(g, "w", DataType::kHALF, {6, 2, 3, 3}, randomValues(108, 22));
  ir::Node* n = g.addNode(OpType::kConvolution, "conv", {x, w});
  n->attrs.setInt("groups", 2);
  n->attrs.setInts("pads_begin", {1, 1});
  n->attrs.setInts("pads_end", {1, 1});
  auto single = run(g, n);
  ASSERT_TRUE(single.isOk()) << single.status().toString();
  backends::Tactic const* t = backends::TacticRegistry::instance().find("convolution_reference");
  ASSERT_NE(t, nullptr);
  auto kernel = t->create(*n);
  ASSERT_TRUE(kernel.isOk());
  auto out = HostTensor::allocate(DataType::kHALF, single->shape(), "test");
  ASSERT_TRUE(out.isOk());
  ThreadPool pool(4);
  backends::CpuStream stream;
  backends::LaunchContext ctx;
  ctx.stream = &stream;
  ctx.pool = &pool;
  for (ir::Value* v : n->inputs) {
    HostTensor const& c = *v->producer->constant;
    ctx.inputs.push_back({const_cast<void*>(c.data()), c.dtype(), c.shape()});
  }
  ctx.outputs.push_back({out->mutableData(), out->dtype(), out->shape()});
  ASSERT_TRUE((*kernel)->enqueue(ctx).isOk());
  EXPECT_TRUE(out->sameContents(*single));
}

}  // namespace
}  // namespace kiln
