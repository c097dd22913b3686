// Tests of Activation: every ActivationType with TensorRT's alpha/beta meanings against formulas written out
// here, over float32/float16/bfloat16, edge shapes and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

using Act = ActivationType;

// Independent scalar formulas (TensorRT's documentation of IActivationLayer), in long double.
double naive(Act t, double xd, double alpha, double beta) {
  long double x = xd, a = alpha, b = beta;
  long double r = 0;
  switch (t) {
    case Act::kRELU:
      r = x < 0 ? 0 : x;
      break;
    case Act::kSIGMOID:
      r = 1 / (1 + std::exp(-x));
      break;
    case Act::kTANH:
      r = std::tanh(x);
      break;
    case Act::kLEAKY_RELU:
      r = x < 0 ? a * x : x;
      break;
    case Act::kELU:
      r = x < 0 ? a * (std::exp(x) - 1) : x;
      break;
    case Act::kSELU:
      r = x <= 0 ? b * (a * std::exp(x) - a) : b * x;
      break;
    case Act::kSOFTSIGN:
      r = x / (1 + std::fabs(x));
      break;
    case Act::kSOFTPLUS:
      r = a * std::log(std::exp(b * x) + 1);
      break;
    case Act::kCLIP:
      r = x < a ? a : (x > b ? b : x);
      break;
    case Act::kHARD_SIGMOID: {
      long double y = a * x + b;
      r = y < 0 ? 0 : (y > 1 ? 1 : y);
      break;
    }
    case Act::kSCALED_TANH:
      r = a * std::tanh(b * x);
      break;
    case Act::kTHRESHOLDED_RELU:
      r = x > a ? x : 0;
      break;
    case Act::kGELU_ERF:
      r = x * (1 + std::erf(x / std::sqrt(2.0L))) / 2;
      break;
    case Act::kGELU_TANH: {
      long double pi = 3.141592653589793238462643383279L;
      r = x / 2 * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715L * x * x * x)));
      break;
    }
  }
  return static_cast<double>(r);
}

ir::Attributes actAttrs(Act t, double alpha, double beta) {
  return attrs({{"type", static_cast<int64_t>(t)}, {"alpha", alpha}, {"beta", beta}});
}

TEST(ActivationReference, EveryTypeEveryFloatType) {
  std::vector<double> xs{-6.5, -3.0, -1.25, -0.5, -0.0, 0.0, 0.3, 0.5, 1.0, 1.75, 2.5, 7.0, 21.0};
  struct Params {
    Act t;
    double alpha, beta;
  } params[] = {{Act::kRELU, 0, 0},
                {Act::kSIGMOID, 0, 0},
                {Act::kTANH, 0, 0},
                {Act::kLEAKY_RELU, 0.1, 0},
                {Act::kELU, 1.5, 0},
                {Act::kSELU, 1.6733, 1.0507},
                {Act::kSOFTSIGN, 0, 0},
                {Act::kSOFTPLUS, 2.0, 0.5},
                {Act::kCLIP, -1.0, 2.0},
                {Act::kHARD_SIGMOID, 0.2, 0.5},
                {Act::kSCALED_TANH, 1.7, 0.66},
                {Act::kTHRESHOLDED_RELU, 0.4, 0},
                {Act::kGELU_ERF, 0, 0},
                {Act::kGELU_TANH, 0, 0}};
  ASSERT_EQ(std::size(params), static_cast<size_t>(EnumMax<ActivationType>()));
  for (DataType dt : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
    double tol = dt == DataType::kFLOAT ? 1e-6 : (dt == DataType::kHALF ? 1e-3 : 8e-3);
    for (Params const& p : params) {
      SCOPED_TRACE(strCat(dataTypeName(dt), " type ", static_cast<int>(p.t)));
      HostTensor x = tensor(dt, {13}, xs);
      RunResult r = runNode(OpType::kActivation, actAttrs(p.t, p.alpha, p.beta), {var(x)});
      ASSERT_TRUE(r.status.isOk()) << r.status.toString();
      EXPECT_EQ(r.dtype, dt);
      for (int64_t i = 0; i < 13; ++i) {
        double want = naive(p.t, x.doubleAt(i), p.alpha, p.beta);
        double got = r.out.doubleAt(i);
        EXPECT_NEAR(got, want, tol * std::max(1.0, std::fabs(want))) << "x=" << x.doubleAt(i);
      }
    }
  }
}

TEST(ActivationReference, HandComputedValues) {
  // relu(-2)=0, leaky(-2; 0.5)=-1, clip(5; -1, 2)=2, hard_sigmoid(1; 0.2, 0.5)=0.7, thresholded(1; 1)=0.
  HostTensor x = tensor(DataType::kFLOAT, {1}, std::vector<double>{-2});
  EXPECT_EQ(runNode(OpType::kActivation, actAttrs(Act::kRELU, 0, 0), {var(x)}).out.doubleAt(0), 0.0);
  EXPECT_EQ(runNode(OpType::kActivation, actAttrs(Act::kLEAKY_RELU, 0.5, 0), {var(x)}).out.doubleAt(0), -1.0);
  HostTensor five = tensor(DataType::kFLOAT, {}, std::vector<double>{5});
  EXPECT_EQ(runNode(OpType::kActivation, actAttrs(Act::kCLIP, -1, 2), {var(five)}).out.doubleAt(0), 2.0);
  HostTensor one = tensor(DataType::kFLOAT, {}, std::vector<double>{1});
  EXPECT_NEAR(runNode(OpType::kActivation, actAttrs(Act::kHARD_SIGMOID, 0.2, 0.5), {var(one)}).out.doubleAt(0), 0.7,
              1e-7);
  EXPECT_EQ(runNode(OpType::kActivation, actAttrs(Act::kTHRESHOLDED_RELU, 1, 0), {var(one)}).out.doubleAt(0), 0.0);
  EXPECT_EQ(runNode(OpType::kActivation, actAttrs(Act::kSCALED_TANH, 2, 0), {var(one)}).out.doubleAt(0), 0.0);
}

TEST(ActivationReference, NanAndInfinity) {
  double inf = std::numeric_limits<double>::infinity();
  HostTensor x = tensor(DataType::kFLOAT, {3}, std::vector<double>{std::nan(""), inf, -inf});
  RunResult relu = runNode(OpType::kActivation, actAttrs(Act::kRELU, 0, 0), {var(x)});
  ASSERT_TRUE(relu.status.isOk());
  EXPECT_TRUE(std::isnan(relu.out.doubleAt(0)));
  EXPECT_EQ(relu.out.doubleAt(1), inf);
  EXPECT_EQ(relu.out.doubleAt(2), 0.0);
  RunResult sig = runNode(OpType::kActivation, actAttrs(Act::kSIGMOID, 0, 0), {var(x)});
  EXPECT_TRUE(std::isnan(sig.out.doubleAt(0)));
  EXPECT_EQ(sig.out.doubleAt(1), 1.0);
  EXPECT_EQ(sig.out.doubleAt(2), 0.0);
  RunResult sp = runNode(OpType::kActivation, actAttrs(Act::kSOFTPLUS, 1, 1),
                         {var(tensor(DataType::kFLOAT, {1}, std::vector<double>{200}))});
  EXPECT_NEAR(sp.out.doubleAt(0), 200.0, 1e-4);  // no overflow to inf
}

TEST(ActivationReference, EdgeShapes) {
  RunResult z = runNode(OpType::kActivation, actAttrs(Act::kTANH, 0, 0),
                        {var(tensor(DataType::kHALF, {3, 0, 2}, std::vector<double>{}))});
  ASSERT_TRUE(z.status.isOk()) << z.status.toString();
  EXPECT_EQ(dimsToVector(z.shape), (std::vector<int64_t>{3, 0, 2}));
  RunResult s = runNode(OpType::kActivation, actAttrs(Act::kRELU, 0, 0),
                        {var(tensor(DataType::kBF16, {}, std::vector<double>{-3}))});
  ASSERT_TRUE(s.status.isOk());
  EXPECT_EQ(s.shape.nbDims, 0);
  EXPECT_EQ(s.out.doubleAt(0), 0.0);
  // Odd sizes, rank 4.
  std::vector<double> v;
  for (int i = 0; i < 3 * 5 * 7; ++i)
    v.push_back(i * 0.1 - 5);
  RunResult o =
      runNode(OpType::kActivation, actAttrs(Act::kELU, 1, 0), {var(tensor(DataType::kFLOAT, {1, 3, 5, 7}, v))});
  ASSERT_TRUE(o.status.isOk());
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_NEAR(o.out.doubleAt(int64_t(i)),
                roundTo(DataType::kFLOAT, naive(Act::kELU, roundTo(DataType::kFLOAT, v[i]), 1, 0)), 1e-6);
}

TEST(ActivationReference, BadInputIsAnError) {
  HostTensor x = tensor(DataType::kFLOAT, {2}, std::vector<double>{1, 2});
  EXPECT_FALSE(runNode(OpType::kActivation, attrs({{"type", int64_t{99}}}), {var(x)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kActivation, attrs({{"type", int64_t{-1}}}), {var(x)}).status.isOk());
  RunResult i = runNode(OpType::kActivation, actAttrs(Act::kRELU, 0, 0),
                        {var(tensor(DataType::kINT32, {2}, std::vector<int64_t>{1, 2}))});
  EXPECT_FALSE(i.status.isOk());
  EXPECT_NE(i.status.message().find("node"), std::string::npos);
  EXPECT_FALSE(runNode(OpType::kActivation, actAttrs(Act::kRELU, 0, 0), {var(x), var(x)}).status.isOk());
}

}  // namespace
}  // namespace kiln
