// Tests of Cumulative (kSUM): every axis (negative too), exclusive/reverse, every numeric type against a naive
// double/int loop, exact int64 and wrapping uint64 sums, size-1 and empty axes, an axis known only at run time, and
// bad input.
#include <cstring>

#include "backends/reference/select_test_util.h"

namespace kiln {
namespace {

using namespace selecttest;
using ir::OpType;

ir::Attributes cumAttrs(bool exclusive, bool reverse) {
  return attrs({{"op", int64_t{0}}, {"exclusive", int64_t{exclusive}}, {"reverse", int64_t{reverse}}});
}

TEST(CumulativeReference, EveryAxisModeAndTypeAgainstNaive) {
  Ints shape{2, 3, 4};
  std::vector<double> v;
  for (int i = 0; i < 24; ++i) v.push_back((i * 5) % 7);
  for (DataType t : numericTypes()) {
    for (int64_t axis : {0, 1, 2, -1, -3}) {
      for (int mode = 0; mode < 4; ++mode) {
        bool ex = mode & 1, rev = mode & 2;
        SCOPED_TRACE(strCat(dataTypeName(t), " axis ", axis, " ex ", ex, " rev ", rev));
        RunResult r = runNode(OpType::kCumulative, cumAttrs(ex, rev),
                              {var(tensor(t, shape, v)), cst(scalar(DataType::kINT32, static_cast<double>(axis)))});
        ASSERT_TRUE(r.status.isOk()) << r.status.toString();
        int64_t a = axis < 0 ? axis + 3 : axis;
        std::vector<double> got = doubles(r.out[0]);
        for (int64_t i0 = 0; i0 < 2; ++i0)
          for (int64_t i1 = 0; i1 < 3; ++i1)
            for (int64_t i2 = 0; i2 < 4; ++i2) {
              int64_t idx[3] = {i0, i1, i2};
              double want = 0;
              for (int64_t j = 0; j < shape[a]; ++j) {
                bool take = rev ? (ex ? j > idx[a] : j >= idx[a]) : (ex ? j < idx[a] : j <= idx[a]);
                if (!take) continue;
                int64_t src[3] = {i0, i1, i2};
                src[a] = j;
                want += v[(src[0] * 3 + src[1]) * 4 + src[2]];
              }
              double w = tensor(t, {1}, std::vector<double>{want}).doubleAt(0);  // round/wrap to the type
              EXPECT_EQ(got[(i0 * 3 + i1) * 4 + i2], w);
            }
      }
    }
  }
}

TEST(CumulativeReference, ExactWideIntegers) {
  int64_t big = (int64_t{1} << 53) + 1;  // not representable in double
  HostTensor x = tensor(DataType::kINT64, {3}, std::vector<double>{0, 0, 0});
  int64_t vals[3] = {big, 2, -1};
  std::memcpy(x.mutableData(), vals, sizeof vals);
  RunResult r = runNode(OpType::kCumulative, cumAttrs(false, false), {var(x), cst(scalar(DataType::kINT64, 0))});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(r.out[0].as<int64_t>()[0], big);
  EXPECT_EQ(r.out[0].as<int64_t>()[1], big + 2);
  EXPECT_EQ(r.out[0].as<int64_t>()[2], big + 1);
  HostTensor u = tensor(DataType::kUINT64, {2}, std::vector<double>{0, 0});
  uint64_t uv[2] = {~uint64_t{0}, 3};
  std::memcpy(u.mutableData(), uv, sizeof uv);
  r = runNode(OpType::kCumulative, cumAttrs(false, false), {var(u), cst(scalar(DataType::kINT64, 0))});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(r.out[0].as<uint64_t>()[1], uint64_t{2});  // wraps
}

TEST(CumulativeReference, EdgeShapes) {
  RunResult r = runNode(OpType::kCumulative, cumAttrs(true, false),
                        {var(tensor(DataType::kFLOAT, {1, 1}, std::vector<double>{7})), cst(scalar(DataType::kINT32, 1))});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(doubles(r.out[0]), (std::vector<double>{0}));
  r = runNode(OpType::kCumulative, cumAttrs(false, true),
              {var(tensor(DataType::kFLOAT, {0, 3}, std::vector<double>{})), cst(scalar(DataType::kINT32, 0))});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(r.out[0].count(), 0);
}

TEST(CumulativeReference, BadInput) {
  HostTensor x = tensor(DataType::kFLOAT, {2, 2}, std::vector<double>{1, 2, 3, 4});
  EXPECT_FALSE(runNode(OpType::kCumulative, cumAttrs(false, false), {var(x), cst(scalar(DataType::kINT32, 2))}).status.isOk());
  // An axis known only at run time is checked by the kernel.
  EXPECT_FALSE(runNode(OpType::kCumulative, cumAttrs(false, false), {var(x), var(scalar(DataType::kINT32, 2))})
                   .status.isOk());
  EXPECT_FALSE(runNode(OpType::kCumulative, cumAttrs(false, false),
                       {var(x), cst(tensor(DataType::kINT32, {1}, std::vector<double>{0}))}).status.isOk());  // not 0-D
  EXPECT_FALSE(runNode(OpType::kCumulative, cumAttrs(false, false),
                       {var(tensor(DataType::kBOOL, {2}, std::vector<double>{1, 0})), cst(scalar(DataType::kINT32, 0))})
                   .status.isOk());
  EXPECT_FALSE(runNode(OpType::kCumulative, attrs({{"op", int64_t{7}}}), {var(x), cst(scalar(DataType::kINT32, 0))})
                   .status.isOk());
}

TEST(CumulativeReference, RunTimeAxis) {
  // The axis is a graph input: the output shape is the input's; the kernel reads the axis when it runs.
  HostTensor x = tensor(DataType::kFLOAT, {2, 2}, std::vector<double>{1, 2, 3, 4});
  RunResult rows = runNode(OpType::kCumulative, cumAttrs(false, false), {var(x), var(scalar(DataType::kINT64, 0))});
  ASSERT_TRUE(rows.status.isOk()) << rows.status.toString();
  EXPECT_EQ(doubles(rows.out.at(0)), (std::vector<double>{1, 2, 4, 6}));
  RunResult cols = runNode(OpType::kCumulative, cumAttrs(false, false), {var(x), var(scalar(DataType::kINT32, -1))});
  ASSERT_TRUE(cols.status.isOk()) << cols.status.toString();
  EXPECT_EQ(doubles(cols.out.at(0)), (std::vector<double>{1, 3, 3, 7}));
}

}  // namespace
}  // namespace kiln
