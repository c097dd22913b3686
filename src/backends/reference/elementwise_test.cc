// Tests of ElementWise: shape inference and the reference kernel against naive loops and hand-computed values,
// over float32/float16/bfloat16 and the integer types, broadcasting edge shapes and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
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

using Op = ElementWiseOperation;

ir::Attributes opAttr(Op op) { return attrs({{"op", static_cast<int64_t>(op)}}); }

// Naive broadcasting: the element of `t` (shape `s`) read at output coordinate `oc` of rank `rank`.
int64_t bcastIndex(std::vector<int64_t> const& s, std::vector<int64_t> const& oc) {
  int64_t idx = 0;
  size_t off = oc.size() - s.size();
  for (size_t i = 0; i < s.size(); ++i)
    idx = idx * s[i] + (s[i] == 1 ? 0 : oc[off + i]);
  return idx;
}

double naiveFloat(Op op, double a, double b) {
  switch (op) {
    case Op::kSUM:
      return a + b;
    case Op::kPROD:
      return a * b;
    case Op::kMAX:
      return std::max(a, b);
    case Op::kMIN:
      return std::min(a, b);
    case Op::kSUB:
      return a - b;
    case Op::kDIV:
      return a / b;
    case Op::kPOW:
      return std::pow(a, b);
    case Op::kFLOOR_DIV:
      return std::floor(a / b);
    case Op::kEQUAL:
      return a == b ? 1 : 0;
    case Op::kGREATER:
      return a > b ? 1 : 0;
    case Op::kLESS:
      return a < b ? 1 : 0;
    case Op::kAND:
    case Op::kOR:
    case Op::kXOR:
    case Op::kBITWISE_AND:
    case Op::kBITWISE_OR:
    case Op::kBITWISE_XOR:
      break;
  }
  return 0;
}

TEST(ElementWiseReference, FloatOpsBroadcastEveryFloatType) {
  std::vector<int64_t> sa{2, 3, 1}, sb{4}, so{2, 3, 4};
  std::vector<double> a, b;
  for (int i = 0; i < 6; ++i)
    a.push_back(0.75 * i - 1.9);
  for (int i = 0; i < 4; ++i)
    b.push_back(0.5 + 0.625 * i);
  Op ops[] = {Op::kSUM, Op::kPROD,      Op::kMAX,   Op::kMIN,     Op::kSUB, Op::kDIV,
              Op::kPOW, Op::kFLOOR_DIV, Op::kEQUAL, Op::kGREATER, Op::kLESS};
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
    for (Op op : ops) {
      SCOPED_TRACE(strCat(dataTypeName(t), " op ", static_cast<int>(op)));
      HostTensor ta = tensor(t, sa, a), tb = tensor(t, sb, b);
      RunResult r = runNode(OpType::kElementWise, opAttr(op), {var(ta), var(tb)});
      ASSERT_TRUE(r.status.isOk()) << r.status.toString();
      bool cmp = op == Op::kEQUAL || op == Op::kGREATER || op == Op::kLESS;
      EXPECT_EQ(r.dtype, cmp ? DataType::kBOOL : t);
      ASSERT_EQ(dimsToVector(r.shape), so);
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j)
          for (int64_t k = 0; k < 4; ++k) {
            double x = ta.doubleAt(bcastIndex(sa, {i, j, k})), y = tb.doubleAt(bcastIndex(sb, {i, j, k}));
            double want = naiveFloat(op, x, y);
            if (!cmp)
              want = roundTo(t, want);
            double got = r.out.doubleAt((i * 3 + j) * 4 + k);
            if (std::isnan(want))
              EXPECT_TRUE(std::isnan(got));
            else
              EXPECT_EQ(got, want) << i << "," << j << "," << k;
          }
    }
  }
}

TEST(ElementWiseReference, FloatNanPropagatesThroughMaxMin) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  for (Op op : {Op::kMAX, Op::kMIN}) {
    RunResult r = runNode(OpType::kElementWise, opAttr(op),
                          {var(tensor(DataType::kFLOAT, {2}, std::vector<double>{nan, 1})),
                           var(tensor(DataType::kFLOAT, {2}, std::vector<double>{1, nan}))});
    ASSERT_TRUE(r.status.isOk());
    EXPECT_TRUE(std::isnan(r.out.doubleAt(0)));
    EXPECT_TRUE(std::isnan(r.out.doubleAt(1)));
  }
  RunResult d = runNode(OpType::kElementWise, opAttr(Op::kDIV),
                        {var(tensor(DataType::kHALF, {3}, std::vector<double>{1, -1, 0})),
                         var(tensor(DataType::kHALF, {1}, std::vector<double>{0}))});
  ASSERT_TRUE(d.status.isOk());
  EXPECT_EQ(d.out.doubleAt(0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(d.out.doubleAt(1), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(d.out.doubleAt(2)));
}

struct IntCase {
  Op op;
  int64_t a, b, want;
};

TEST(ElementWiseReference, IntegerOpsAreExactForEveryIntType) {
  // Hand-computed: kDIV truncates toward zero, kFLOOR_DIV floors, kPOW is an integer power, x/0 is defined as 0.
  IntCase cases[] = {
      {Op::kSUM, 7, -3, 4},        {Op::kSUB, 7, 9, -2},        {Op::kPROD, -6, 7, -42},
      {Op::kMAX, -3, 2, 2},        {Op::kMIN, -3, 2, -3},       {Op::kDIV, 7, 2, 3},
      {Op::kDIV, -7, 2, -3},       {Op::kDIV, 7, -2, -3},       {Op::kDIV, -7, -2, 3},
      {Op::kDIV, 5, 0, 0},         {Op::kFLOOR_DIV, 7, 2, 3},   {Op::kFLOOR_DIV, -7, 2, -4},
      {Op::kFLOOR_DIV, 7, -2, -4}, {Op::kFLOOR_DIV, -7, -2, 3}, {Op::kFLOOR_DIV, -6, 2, -3},
      {Op::kFLOOR_DIV, 5, 0, 0},   {Op::kPOW, 2, 6, 64},        {Op::kPOW, -2, 3, -8},
      {Op::kPOW, 3, 0, 1},         {Op::kPOW, 2, -1, 0},        {Op::kPOW, 1, -5, 1},
      {Op::kPOW, -1, -3, -1},      {Op::kPOW, -1, -2, 1},       {Op::kPOW, 0, -1, 0},
      {Op::kPOW, 0, 0, 1},         {Op::kEQUAL, 3, 3, 1},       {Op::kEQUAL, 3, -3, 0},
      {Op::kGREATER, 3, -3, 1},    {Op::kGREATER, -3, 3, 0},    {Op::kLESS, -3, 3, 1},
      {Op::kLESS, 3, 3, 0},
  };
  for (DataType t : {DataType::kINT8, DataType::kUINT8, DataType::kINT32, DataType::kINT64}) {
    for (IntCase const& c : cases) {
      bool negative = c.a < 0 || c.b < 0 || c.want < 0;
      if (t == DataType::kUINT8 && negative)
        continue;
      SCOPED_TRACE(strCat(dataTypeName(t), " op ", static_cast<int>(c.op), " ", c.a, " ", c.b));
      RunResult r =
          runNode(OpType::kElementWise, opAttr(c.op),
                  {var(tensor(t, {}, std::vector<int64_t>{c.a})), var(tensor(t, {1}, std::vector<int64_t>{c.b}))});
      ASSERT_TRUE(r.status.isOk()) << r.status.toString();
      ASSERT_EQ(r.shape.nbDims, 1);
      EXPECT_EQ(r.out.intAt(0), c.want);
    }
  }
}

TEST(ElementWiseReference, IntegerEdgeCasesNeverTrap) {
  int64_t const mn = std::numeric_limits<int64_t>::min();
  RunResult r = runNode(OpType::kElementWise, opAttr(Op::kDIV),
                        {var(tensor(DataType::kINT64, {3}, std::vector<int64_t>{mn, mn, 0})),
                         var(tensor(DataType::kINT64, {3}, std::vector<int64_t>{-1, 0, 0}))});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(r.out.as<int64_t>()[0], mn);  // wraps, like two's complement negation
  EXPECT_EQ(r.out.as<int64_t>()[1], 0);
  EXPECT_EQ(r.out.as<int64_t>()[2], 0);
  RunResult f = runNode(OpType::kElementWise, opAttr(Op::kFLOOR_DIV),
                        {var(tensor(DataType::kINT32, {2}, std::vector<int64_t>{-2147483648LL, 9})),
                         var(tensor(DataType::kINT32, {2}, std::vector<int64_t>{-1, 0}))});
  ASSERT_TRUE(f.status.isOk());
  EXPECT_EQ(f.out.as<int32_t>()[0], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(f.out.as<int32_t>()[1], 0);
  // Exact int64 arithmetic beyond double precision.
  int64_t big = (int64_t{1} << 53) + 1;
  HostTensor a = tensor(DataType::kINT64, {1}, std::vector<int64_t>{0});
  static_cast<int64_t*>(a.mutableData())[0] = big;
  RunResult s2 = runNode(OpType::kElementWise, opAttr(Op::kSUM),
                         {var(a), var(tensor(DataType::kINT64, {1}, std::vector<int64_t>{1}))});
  ASSERT_TRUE(s2.status.isOk());
  EXPECT_EQ(s2.out.as<int64_t>()[0], big + 1);
  // uint8 wraps like its storage.
  RunResult u = runNode(OpType::kElementWise, opAttr(Op::kSUB),
                        {var(tensor(DataType::kUINT8, {1}, std::vector<int64_t>{3})),
                         var(tensor(DataType::kUINT8, {1}, std::vector<int64_t>{5}))});
  ASSERT_TRUE(u.status.isOk());
  EXPECT_EQ(u.out.as<uint8_t>()[0], 254);
}

// uint64 runs in uint64 (values past 2^63 order, divide and wrap as unsigned); expectations by hand.
TEST(ElementWiseReference, Uint64IsExactPastTwoToThe63) {
  uint64_t const top = ~uint64_t{0}, half = uint64_t{1} << 63;
  auto u64 = [](std::vector<uint64_t> const& v) {
    HostTensor t = tensor(DataType::kUINT64, {static_cast<int64_t>(v.size())}, std::vector<int64_t>(v.size(), 0));
    std::memcpy(t.mutableData(), v.data(), v.size() * sizeof(uint64_t));
    return var(t);
  };
  std::vector<uint64_t> a{top, half + 5, 7, 10}, b{1, half, 0, 3};
  struct Want {
    Op op;
    std::vector<uint64_t> y;
  } wants[] = {
      {Op::kMAX, {top, half + 5, 7, 10}}, {Op::kMIN, {1, half, 0, 3}},        {Op::kDIV, {top, 1, 0, 3}},
      {Op::kFLOOR_DIV, {top, 1, 0, 3}},   {Op::kSUM, {0, 5, 7, 13}},           {Op::kSUB, {top - 1, 5, 7, 7}},
      {Op::kPROD, {top, half, 0, 30}},
  };
  for (Want const& w : wants) {
    SCOPED_TRACE(static_cast<int>(w.op));
    RunResult r = runNode(OpType::kElementWise, opAttr(w.op), {u64(a), u64(b)});
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    for (size_t i = 0; i < w.y.size(); ++i)
      EXPECT_EQ(r.out.as<uint64_t>()[i], w.y[i]) << i;
  }
  RunResult g = runNode(OpType::kElementWise, opAttr(Op::kGREATER), {u64(a), u64(b)});
  ASSERT_TRUE(g.status.isOk()) << g.status.toString();
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(g.out.intAt(i), 1) << i;
  RunResult l = runNode(OpType::kElementWise, opAttr(Op::kLESS), {u64(b), u64(a)});
  ASSERT_TRUE(l.status.isOk());
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(l.out.intAt(i), 1) << i;
  RunResult p = runNode(OpType::kElementWise, opAttr(Op::kPOW), {u64({2, 2, 3, 0}), u64({63, 64, 3, 0})});
  ASSERT_TRUE(p.status.isOk());
  EXPECT_EQ(p.out.as<uint64_t>()[0], half);
  EXPECT_EQ(p.out.as<uint64_t>()[1], 0u);  // wraps
  EXPECT_EQ(p.out.as<uint64_t>()[2], 27u);
  EXPECT_EQ(p.out.as<uint64_t>()[3], 1u);
}

// Min/Max on the integer types ONNX lists beyond the common ones, with values outside narrower types' ranges.
TEST(ElementWiseReference, MinMaxOnInt16Uint16Uint32) {
  struct Case {
    DataType t;
    int64_t a, b;
  } cases[] = {{DataType::kINT16, -30000, 20000}, {DataType::kUINT16, 65535, 300}, {DataType::kUINT32, 4000000000, 70000}};
  for (Case const& c : cases) {
    SCOPED_TRACE(dataTypeName(c.t));
    auto a = var(tensor(c.t, {1}, std::vector<int64_t>{c.a}));
    auto b = var(tensor(c.t, {1}, std::vector<int64_t>{c.b}));
    RunResult mx = runNode(OpType::kElementWise, opAttr(Op::kMAX), {a, b});
    RunResult mn = runNode(OpType::kElementWise, opAttr(Op::kMIN), {a, b});
    ASSERT_TRUE(mx.status.isOk()) << mx.status.toString();
    ASSERT_TRUE(mn.status.isOk()) << mn.status.toString();
    EXPECT_EQ(mx.out.intAt(0), std::max(c.a, c.b));
    EXPECT_EQ(mn.out.intAt(0), std::min(c.a, c.b));
  }
}

TEST(ElementWiseReference, IntegerBroadcastAgainstNaiveLoop) {
  std::vector<int64_t> sa{3, 1}, sb{1, 5};
  std::vector<int64_t> a{-4, 0, 9}, b{1, -2, 3, 7, -5};
  RunResult r = runNode(OpType::kElementWise, opAttr(Op::kFLOOR_DIV),
                        {var(tensor(DataType::kINT32, sa, a)), var(tensor(DataType::kINT32, sb, b))});
  ASSERT_TRUE(r.status.isOk());
  ASSERT_EQ(dimsToVector(r.shape), (std::vector<int64_t>{3, 5}));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j)
      EXPECT_EQ(r.out.intAt(i * 5 + j), static_cast<int64_t>(std::floor(double(a[i]) / double(b[j]))));
}

TEST(ElementWiseReference, BoolLogicAndEquality) {
  HostTensor a = tensor(DataType::kBOOL, {4}, std::vector<int64_t>{0, 0, 1, 1});
  HostTensor b = tensor(DataType::kBOOL, {4}, std::vector<int64_t>{0, 1, 0, 1});
  struct {
    Op op;
    std::vector<int64_t> want;
  } cases[] = {{Op::kAND, {0, 0, 0, 1}}, {Op::kOR, {0, 1, 1, 1}}, {Op::kXOR, {0, 1, 1, 0}}, {Op::kEQUAL, {1, 0, 0, 1}}};
  for (auto const& c : cases) {
    RunResult r = runNode(OpType::kElementWise, opAttr(c.op), {var(a), var(b)});
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    EXPECT_EQ(r.dtype, DataType::kBOOL);
    EXPECT_EQ(r.out.toInt64Vector(), c.want);
  }
}

TEST(ElementWiseReference, BitwiseOnEveryIntegerType) {
  // Hand-computed on the two's-complement bits: 0b1100 & 0b1010 = 0b1000, | = 0b1110, ^ = 0b0110; with a
  // negative operand (-2 = ...1110): -2 & 5 = 4, -2 | 5 = -1, -2 ^ 5 = -5.
  struct {
    Op op;
    std::vector<int64_t> want;
  } cases[] = {{Op::kBITWISE_AND, {8, 4}}, {Op::kBITWISE_OR, {14, -1}}, {Op::kBITWISE_XOR, {6, -5}}};
  for (DataType t : {DataType::kINT8, DataType::kINT16, DataType::kINT32, DataType::kINT64}) {
    for (auto const& c : cases) {
      SCOPED_TRACE(strCat(dataTypeName(t), " op ", static_cast<int>(c.op)));
      RunResult r = runNode(OpType::kElementWise, opAttr(c.op),
                            {var(tensor(t, {2}, std::vector<int64_t>{12, -2})),
                             var(tensor(t, {2}, std::vector<int64_t>{10, 5}))});
      ASSERT_TRUE(r.status.isOk()) << r.status.toString();
      EXPECT_EQ(r.dtype, t);
      EXPECT_EQ(r.out.toInt64Vector(), c.want);
    }
  }
  // Unsigned types keep their full width: 0xF0 ^ 0x3C = 0xCC; uint64's top bit survives (broadcast too).
  RunResult u8 = runNode(OpType::kElementWise, opAttr(Op::kBITWISE_XOR),
                         {var(tensor(DataType::kUINT8, {1}, std::vector<int64_t>{0xF0})),
                          var(tensor(DataType::kUINT8, {2}, std::vector<int64_t>{0x3C, 0xFF}))});
  ASSERT_TRUE(u8.status.isOk()) << u8.status.toString();
  EXPECT_EQ(u8.out.toInt64Vector(), (std::vector<int64_t>{0xCC, 0x0F}));
  HostTensor big = tensor(DataType::kUINT64, {1}, std::vector<int64_t>{0});
  static_cast<uint64_t*>(big.mutableData())[0] = 0x8000000000000001ULL;
  RunResult u64 = runNode(OpType::kElementWise, opAttr(Op::kBITWISE_OR),
                          {var(big), var(tensor(DataType::kUINT64, {1}, std::vector<int64_t>{6}))});
  ASSERT_TRUE(u64.status.isOk()) << u64.status.toString();
  EXPECT_EQ(u64.out.as<uint64_t>()[0], 0x8000000000000007ULL);
  // Floats and bool are refused.
  HostTensor f = tensor(DataType::kFLOAT, {1}, std::vector<double>{1});
  HostTensor b = tensor(DataType::kBOOL, {1}, std::vector<int64_t>{1});
  EXPECT_FALSE(runNode(OpType::kElementWise, opAttr(Op::kBITWISE_AND), {var(f), var(f)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kElementWise, opAttr(Op::kBITWISE_OR), {var(b), var(b)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kElementWise, attrs({{"op", int64_t{103}}}), {var(f), var(f)}).status.isOk());
}

TEST(ElementWiseReference, EdgeShapes) {
  // Zero-size broadcast.
  RunResult z = runNode(OpType::kElementWise, opAttr(Op::kSUM),
                        {var(tensor(DataType::kFLOAT, {0, 3}, std::vector<double>{})),
                         var(tensor(DataType::kFLOAT, {1, 3}, std::vector<double>{1, 2, 3}))});
  ASSERT_TRUE(z.status.isOk()) << z.status.toString();
  EXPECT_EQ(dimsToVector(z.shape), (std::vector<int64_t>{0, 3}));
  // Rank 0 with rank 0, and rank 0 against rank 2 (right-aligned broadcasting across ranks).
  RunResult s = runNode(OpType::kElementWise, opAttr(Op::kSUB),
                        {var(tensor(DataType::kFLOAT, {}, std::vector<double>{5})),
                         var(tensor(DataType::kFLOAT, {}, std::vector<double>{1.5}))});
  ASSERT_TRUE(s.status.isOk());
  EXPECT_EQ(s.shape.nbDims, 0);
  EXPECT_EQ(s.out.doubleAt(0), 3.5);
  RunResult m = runNode(OpType::kElementWise, opAttr(Op::kPROD),
                        {var(tensor(DataType::kINT64, {2, 2}, std::vector<int64_t>{1, 2, 3, 4})),
                         var(tensor(DataType::kINT64, {}, std::vector<int64_t>{-3}))});
  ASSERT_TRUE(m.status.isOk());
  EXPECT_EQ(m.out.toInt64Vector(), (std::vector<int64_t>{-3, -6, -9, -12}));
  // Size-1 on both sides.
  RunResult o = runNode(OpType::kElementWise, opAttr(Op::kMAX),
                        {var(tensor(DataType::kBF16, {1, 2}, std::vector<double>{1, 5})),
                         var(tensor(DataType::kBF16, {3, 1}, std::vector<double>{0, 2, 9}))});
  ASSERT_TRUE(o.status.isOk());
  EXPECT_EQ(doubles(o.out), (std::vector<double>{1, 5, 2, 5, 9, 9}));
}

TEST(ElementWiseReference, BadInputIsAnError) {
  auto f = [](std::vector<int64_t> s) {
    return var(tensor(DataType::kFLOAT, s, std::vector<double>(size_t(volume(makeDims(s))), 1.0)));
  };
  // Shapes that do not broadcast.
  RunResult r1 = runNode(OpType::kElementWise, opAttr(Op::kSUM), {f({2, 3}), f({4})});
  EXPECT_FALSE(r1.status.isOk());
  EXPECT_NE(r1.status.message().find("node"), std::string::npos) << r1.status.message();
  // Mixed types.
  RunResult r2 = runNode(OpType::kElementWise, opAttr(Op::kSUM),
                         {f({2}), var(tensor(DataType::kHALF, {2}, std::vector<double>{1, 2}))});
  EXPECT_FALSE(r2.status.isOk());
  // Logic on floats, arithmetic and ordering on bool.
  EXPECT_FALSE(runNode(OpType::kElementWise, opAttr(Op::kAND), {f({2}), f({2})}).status.isOk());
  HostTensor bt = tensor(DataType::kBOOL, {2}, std::vector<int64_t>{1, 0});
  EXPECT_FALSE(runNode(OpType::kElementWise, opAttr(Op::kSUM), {var(bt), var(bt)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kElementWise, opAttr(Op::kLESS), {var(bt), var(bt)}).status.isOk());
  // Unknown operation, missing input.
  EXPECT_FALSE(runNode(OpType::kElementWise, attrs({{"op", int64_t{99}}}), {f({2}), f({2})}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kElementWise, opAttr(Op::kSUM), {f({2})}).status.isOk());
  // The kernel itself checks the output shape.
  ir::Node n;
  n.op = OpType::kElementWise;
  n.name = "direct";
  n.attrs = opAttr(Op::kSUM);
  HostTensor a = tensor(DataType::kFLOAT, {2}, std::vector<double>{1, 2});
  std::vector<HostTensor> outs{*HostTensor::allocate(DataType::kFLOAT, makeDims({3}), "out")};
  EXPECT_FALSE(backends::evaluateOnHost(n, {&a, &a}, outs).isOk());
}

}  // namespace
}  // namespace kiln
