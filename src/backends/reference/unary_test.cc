// Tests of Unary: every UnaryOperation against the C library (computed here) and hand-computed values, over
// float32/float16/bfloat16 and the signed integer types claimed, bool results, edge shapes and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
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

using Op = UnaryOperation;

ir::Attributes opAttr(Op op) { return attrs({{"op", static_cast<int64_t>(op)}}); }

struct MathCase {
  Op op;
  double (*f)(double);
  std::vector<double> xs;
};

TEST(UnaryReference, FloatMathEveryFloatType) {
  std::vector<double> any{-2.75, -1.0, -0.3, 0.0, 0.4, 1.0, 2.5, 3.2};
  std::vector<double> positive{0.125, 0.5, 1.0, 2.0, 3.5, 10.0};
  std::vector<double> unit{-0.9, -0.5, 0.0, 0.25, 0.75};
  std::vector<double> geOne{1.0, 1.5, 3.0, 8.0};
  MathCase cases[] = {
      {Op::kEXP, [](double x) { return std::exp(x); }, any},
      {Op::kLOG, [](double x) { return std::log(x); }, positive},
      {Op::kSQRT, [](double x) { return std::sqrt(x); }, positive},
      {Op::kRECIP, [](double x) { return 1.0 / x; }, positive},
      {Op::kABS, [](double x) { return x < 0 ? -x : x; }, any},
      {Op::kNEG, [](double x) { return -x; }, any},
      {Op::kSIN, [](double x) { return std::sin(x); }, any},
      {Op::kCOS, [](double x) { return std::cos(x); }, any},
      {Op::kTAN, [](double x) { return std::tan(x); }, unit},
      {Op::kSINH, [](double x) { return std::sinh(x); }, any},
      {Op::kCOSH, [](double x) { return std::cosh(x); }, any},
      {Op::kASIN, [](double x) { return std::asin(x); }, unit},
      {Op::kACOS, [](double x) { return std::acos(x); }, unit},
      {Op::kATAN, [](double x) { return std::atan(x); }, any},
      {Op::kASINH, [](double x) { return std::log(x + std::sqrt(x * x + 1)); }, any},
      {Op::kACOSH, [](double x) { return std::log(x + std::sqrt(x * x - 1)); }, geOne},
      {Op::kATANH, [](double x) { return 0.5 * std::log((1 + x) / (1 - x)); }, unit},
      {Op::kCEIL, [](double x) { return std::ceil(x); }, any},
      {Op::kFLOOR, [](double x) { return std::floor(x); }, any},
      {Op::kERF, [](double x) { return std::erf(x); }, any},
      {Op::kSIGN, [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }, any},
  };
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
    double tol = t == DataType::kFLOAT ? 1e-6 : (t == DataType::kHALF ? 1e-3 : 8e-3);
    for (MathCase const& c : cases) {
      SCOPED_TRACE(strCat(dataTypeName(t), " op ", static_cast<int>(c.op)));
      HostTensor x = tensor(t, {int64_t(c.xs.size())}, c.xs);
      RunResult r = runNode(OpType::kUnary, opAttr(c.op), {var(x)});
      ASSERT_TRUE(r.status.isOk()) << r.status.toString();
      EXPECT_EQ(r.dtype, t);
      for (int64_t i = 0; i < x.count(); ++i) {
        double want = c.f(x.doubleAt(i));
        EXPECT_NEAR(r.out.doubleAt(i), want, tol * std::max(1.0, std::fabs(want))) << "x=" << x.doubleAt(i);
      }
    }
  }
}

TEST(UnaryReference, RoundHalfToEven) {
  std::vector<double> xs{0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, 2.6, -2.6, 3.0, 1e6 + 0.5};
  std::vector<double> want{0, 2, 2, -0, -2, -2, 2, 3, -3, 3, 1e6};
  RunResult r = runNode(OpType::kUnary, opAttr(Op::kROUND), {var(tensor(DataType::kFLOAT, {11}, xs))});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(doubles(r.out), want);
  for (DataType t : {DataType::kHALF, DataType::kBF16}) {
    RunResult h = runNode(OpType::kUnary, opAttr(Op::kROUND),
                          {var(tensor(t, {5}, std::vector<double>{0.5, 1.5, 2.5, -3.5, 4.5}))});
    ASSERT_TRUE(h.status.isOk());
    EXPECT_EQ(doubles(h.out), (std::vector<double>{0, 2, 2, -4, 4}));
  }
}

TEST(UnaryReference, IsInfIsNanGiveBool) {
  double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
    HostTensor x = tensor(t, {2, 3}, std::vector<double>{1.0, inf, -inf, nan, 0.0, -7.0});
    RunResult a = runNode(OpType::kUnary, opAttr(Op::kISINF), {var(x)});
    ASSERT_TRUE(a.status.isOk()) << a.status.toString();
    EXPECT_EQ(a.dtype, DataType::kBOOL);
    EXPECT_EQ(a.out.toInt64Vector(), (std::vector<int64_t>{0, 1, 1, 0, 0, 0}));
    RunResult b = runNode(OpType::kUnary, opAttr(Op::kISNAN), {var(x)});
    ASSERT_TRUE(b.status.isOk());
    EXPECT_EQ(b.dtype, DataType::kBOOL);
    EXPECT_EQ(b.out.toInt64Vector(), (std::vector<int64_t>{0, 0, 0, 1, 0, 0}));
    RunResult s = runNode(OpType::kUnary, opAttr(Op::kSIGN), {var(x)});
    ASSERT_TRUE(s.status.isOk());
    std::vector<double> sv = doubles(s.out);
    EXPECT_EQ(sv[0], 1);
    EXPECT_EQ(sv[1], 1);
    EXPECT_EQ(sv[2], -1);
    EXPECT_TRUE(std::isnan(sv[3]));
    EXPECT_EQ(sv[4], 0);
    EXPECT_EQ(sv[5], -1);
  }
}

TEST(UnaryReference, NotOnBool) {
  RunResult r =
      runNode(OpType::kUnary, opAttr(Op::kNOT), {var(tensor(DataType::kBOOL, {3}, std::vector<int64_t>{1, 0, 1}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(r.dtype, DataType::kBOOL);
  EXPECT_EQ(r.out.toInt64Vector(), (std::vector<int64_t>{0, 1, 0}));
}

TEST(UnaryReference, SignedIntegerAbsNegSign) {
  std::vector<int64_t> xs{-100, -1, 0, 1, 77};
  for (DataType t : {DataType::kINT8, DataType::kINT32, DataType::kINT64}) {
    SCOPED_TRACE(dataTypeName(t));
    HostTensor x = tensor(t, {5}, xs);
    RunResult a = runNode(OpType::kUnary, opAttr(Op::kABS), {var(x)});
    ASSERT_TRUE(a.status.isOk()) << a.status.toString();
    EXPECT_EQ(a.dtype, t);
    EXPECT_EQ(a.out.toInt64Vector(), (std::vector<int64_t>{100, 1, 0, 1, 77}));
    RunResult n = runNode(OpType::kUnary, opAttr(Op::kNEG), {var(x)});
    ASSERT_TRUE(n.status.isOk());
    EXPECT_EQ(n.out.toInt64Vector(), (std::vector<int64_t>{100, 1, 0, -1, -77}));
    RunResult s = runNode(OpType::kUnary, opAttr(Op::kSIGN), {var(x)});
    ASSERT_TRUE(s.status.isOk());
    EXPECT_EQ(s.out.toInt64Vector(), (std::vector<int64_t>{-1, -1, 0, 1, 1}));
  }
  // The most negative value wraps (two's complement) instead of trapping.
  HostTensor m = tensor(DataType::kINT64, {1}, std::vector<int64_t>{std::numeric_limits<int64_t>::min()});
  RunResult a = runNode(OpType::kUnary, opAttr(Op::kABS), {var(m)});
  ASSERT_TRUE(a.status.isOk());
  EXPECT_EQ(a.out.as<int64_t>()[0], std::numeric_limits<int64_t>::min());
  HostTensor m8 = tensor(DataType::kINT8, {1}, std::vector<int64_t>{-128});
  RunResult n8 = runNode(OpType::kUnary, opAttr(Op::kNEG), {var(m8)});
  ASSERT_TRUE(n8.status.isOk());
  EXPECT_EQ(n8.out.as<int8_t>()[0], -128);
}

TEST(UnaryReference, BitwiseNotOnEveryIntegerType) {
  // ~x = -x - 1 for signed types; 255 - x for uint8, 65535 - x for uint16.
  for (DataType t : {DataType::kINT8, DataType::kINT16, DataType::kINT32, DataType::kINT64}) {
    SCOPED_TRACE(dataTypeName(t));
    RunResult r = runNode(OpType::kUnary, opAttr(Op::kBITWISE_NOT),
                          {var(tensor(t, {4}, std::vector<int64_t>{0, 5, -1, -128}))});
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    EXPECT_EQ(r.dtype, t);
    EXPECT_EQ(r.out.toInt64Vector(), (std::vector<int64_t>{-1, -6, 0, 127}));
  }
  RunResult u8 = runNode(OpType::kUnary, opAttr(Op::kBITWISE_NOT),
                         {var(tensor(DataType::kUINT8, {3}, std::vector<int64_t>{0, 0x0F, 200}))});
  ASSERT_TRUE(u8.status.isOk()) << u8.status.toString();
  EXPECT_EQ(u8.out.toInt64Vector(), (std::vector<int64_t>{255, 0xF0, 55}));
  RunResult u16 = runNode(OpType::kUnary, opAttr(Op::kBITWISE_NOT),
                          {var(tensor(DataType::kUINT16, {1}, std::vector<int64_t>{1}))});
  ASSERT_TRUE(u16.status.isOk()) << u16.status.toString();
  EXPECT_EQ(u16.out.toInt64Vector(), (std::vector<int64_t>{65534}));
  EXPECT_FALSE(runNode(OpType::kUnary, opAttr(Op::kBITWISE_NOT),
                       {var(tensor(DataType::kBOOL, {1}, std::vector<int64_t>{1}))})
                   .status.isOk());
  EXPECT_FALSE(runNode(OpType::kUnary, opAttr(Op::kBITWISE_NOT),
                       {var(tensor(DataType::kFLOAT, {1}, std::vector<double>{1}))})
                   .status.isOk());
}

TEST(UnaryReference, EdgeShapes) {
  RunResult z = runNode(OpType::kUnary, opAttr(Op::kEXP), {var(tensor(DataType::kFLOAT, {0}, std::vector<double>{}))});
  ASSERT_TRUE(z.status.isOk());
  EXPECT_EQ(dimsToVector(z.shape), (std::vector<int64_t>{0}));
  RunResult s = runNode(OpType::kUnary, opAttr(Op::kNEG), {var(tensor(DataType::kHALF, {}, std::vector<double>{2.5}))});
  ASSERT_TRUE(s.status.isOk());
  EXPECT_EQ(s.shape.nbDims, 0);
  EXPECT_EQ(s.out.doubleAt(0), -2.5);
  // Domain errors give NaN, not an error.
  RunResult l =
      runNode(OpType::kUnary, opAttr(Op::kLOG), {var(tensor(DataType::kFLOAT, {2}, std::vector<double>{-1, 0}))});
  ASSERT_TRUE(l.status.isOk());
  EXPECT_TRUE(std::isnan(l.out.doubleAt(0)));
  EXPECT_EQ(l.out.doubleAt(1), -std::numeric_limits<double>::infinity());
}

TEST(UnaryReference, BadInputIsAnError) {
  HostTensor i32 = tensor(DataType::kINT32, {2}, std::vector<int64_t>{1, 2});
  HostTensor f = tensor(DataType::kFLOAT, {2}, std::vector<double>{1, 2});
  HostTensor u8 = tensor(DataType::kUINT8, {2}, std::vector<int64_t>{1, 2});
  HostTensor b = tensor(DataType::kBOOL, {2}, std::vector<int64_t>{1, 0});
  RunResult e = runNode(OpType::kUnary, opAttr(Op::kEXP), {var(i32)});
  EXPECT_FALSE(e.status.isOk());
  EXPECT_NE(e.status.message().find("node"), std::string::npos);
  EXPECT_FALSE(runNode(OpType::kUnary, opAttr(Op::kNOT), {var(f)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kUnary, opAttr(Op::kISNAN), {var(i32)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kUnary, opAttr(Op::kABS), {var(u8)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kUnary, opAttr(Op::kNEG), {var(b)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kUnary, attrs({{"op", int64_t{25}}}), {var(f)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kUnary, opAttr(Op::kEXP), {var(f), var(f)}).status.isOk());
}

}  // namespace
}  // namespace kiln
