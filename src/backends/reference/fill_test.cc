// Tests of Fill: kLINSPACE with static and tensor alpha/beta (scalar and per-axis steps) against a naive
// formula for every type, exact int64; random fills: determinism per seed, range, sample moments, the
// documented generator recomputed independently; shapes from the attribute or input 0; bad input.
#include <cmath>
#include <cstring>

#include "backends/reference/select_test_util.h"

namespace kiln {
namespace {

using namespace selecttest;
using ir::OpType;

ir::Attributes fillAttrs(FillOperation op, Ints dims, DataType to, double alpha, double beta, uint64_t seed = 0) {
  return attrs({{"op", static_cast<int64_t>(op)}, {"dims", dims}, {"to", static_cast<int64_t>(to)}, {"alpha", alpha},
                {"beta", beta}, {"seed", static_cast<int64_t>(seed)}});
}

TEST(FillReference, LinspaceStaticEveryType) {
  for (DataType t : numericTypes()) {
    SCOPED_TRACE(dataTypeName(t));
    RunResult r = runNode(OpType::kFill, fillAttrs(FillOperation::kLINSPACE, {2, 3}, t, 1, 2), {});
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    EXPECT_EQ(r.out[0].dtype(), t);
    // Scalar beta is the step of every axis: 1 + 2*i + 2*j.
    EXPECT_EQ(doubles(r.out[0]), (std::vector<double>{1, 3, 5, 3, 5, 7}));
  }
  RunResult r = runNode(OpType::kFill, fillAttrs(FillOperation::kLINSPACE, {5}, DataType::kFLOAT, -1, 0.5), {});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(doubles(r.out[0]), (std::vector<double>{-1, -0.5, 0, 0.5, 1}));
}

TEST(FillReference, LinspaceTensorsPerAxisSteps) {
  ir::Attributes a = fillAttrs(FillOperation::kLINSPACE, {}, DataType::kFLOAT, 0, 1);
  RunResult r = runNode(OpType::kFill, a,
                        {cst(tensor(DataType::kINT64, {3}, std::vector<double>{2, 3, 2})), var(scalar(DataType::kFLOAT, 0.5)),
                         var(tensor(DataType::kFLOAT, {3}, std::vector<double>{100, 10, 1}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  ASSERT_EQ(dimsToVector(r.out[0].shape()), (Ints{2, 3, 2}));
  std::vector<double> got = doubles(r.out[0]);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) EXPECT_EQ(got[(i * 3 + j) * 2 + k], 0.5 + 100 * i + 10 * j + k);
}

TEST(FillReference, LinspaceExactInt64) {
  int64_t start = (int64_t{1} << 60) + 1;
  ir::Attributes a = attrs({{"op", int64_t{0}}, {"dims", Ints{3}}, {"to", static_cast<int64_t>(DataType::kINT64)},
                            {"alpha_int", start}, {"beta_int", int64_t{3}}, {"alpha_beta_int64", int64_t{1}}});
  RunResult r = runNode(OpType::kFill, a, {});
  ASSERT_TRUE(r.status.isOk());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r.out[0].as<int64_t>()[i], start + 3 * i);
  // Integer tensors for alpha/beta are exact too.
  r = runNode(OpType::kFill, fillAttrs(FillOperation::kLINSPACE, {2}, DataType::kINT64, 0, 0),
              {none(), var(tensor(DataType::kINT64, {}, std::vector<double>{0})), var(scalar(DataType::kINT64, 7))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(ints(r.out[0]), (Ints{0, 7}));
}

// The documented generator, written again from its description.
uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
double unit(uint64_t seed, uint64_t c) { return std::ldexp(static_cast<double>(mix(mix(seed) + c) >> 11), -53); }

TEST(FillReference, RandomUniformDeterministicAndInRange) {
  RunResult r1 = runNode(OpType::kFill, fillAttrs(FillOperation::kRANDOM_UNIFORM, {1000}, DataType::kFLOAT64, -2, 3, 7), {});
  RunResult r2 = runNode(OpType::kFill, fillAttrs(FillOperation::kRANDOM_UNIFORM, {1000}, DataType::kFLOAT64, -2, 3, 7), {});
  RunResult r3 = runNode(OpType::kFill, fillAttrs(FillOperation::kRANDOM_UNIFORM, {1000}, DataType::kFLOAT64, -2, 3, 8), {});
  ASSERT_TRUE(r1.status.isOk() && r2.status.isOk() && r3.status.isOk());
  std::vector<double> a = doubles(r1.out[0]);
  EXPECT_EQ(a, doubles(r2.out[0]));
  EXPECT_NE(a, doubles(r3.out[0]));
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_GE(a[i], -2);
    EXPECT_LE(a[i], 3);
    EXPECT_EQ(a[i], -2 + 5 * unit(7, i));
    sum += a[i];
  }
  EXPECT_NEAR(sum / 1000, 0.5, 0.15);
  RunResult h = runNode(OpType::kFill, fillAttrs(FillOperation::kRANDOM_UNIFORM, {4}, DataType::kHALF, 0, 1, 7), {});
  ASSERT_TRUE(h.status.isOk());
  EXPECT_EQ(h.out[0].doubleAt(2), tensor(DataType::kHALF, {1}, std::vector<double>{unit(7, 2)}).doubleAt(0));
}

TEST(FillReference, RandomNormalMoments) {
  RunResult r = runNode(OpType::kFill, fillAttrs(FillOperation::kRANDOM_NORMAL, {20000}, DataType::kFLOAT64, 3, 2, 1), {});
  ASSERT_TRUE(r.status.isOk());
  std::vector<double> v = doubles(r.out[0]);
  double m = 0, s2 = 0;
  for (double x : v) m += x;
  m /= static_cast<double>(v.size());
  for (double x : v) s2 += (x - m) * (x - m);
  s2 /= static_cast<double>(v.size());
  EXPECT_NEAR(m, 3, 0.05);
  EXPECT_NEAR(std::sqrt(s2), 2, 0.05);
  double want0 = 3 + 2 * std::sqrt(-2 * std::log(1 - unit(1, 0))) * std::cos(2 * M_PI * unit(1, 1));
  EXPECT_NEAR(v[0], want0, 1e-12);
}

TEST(FillReference, ShapesAndBadInput) {
  RunResult r = runNode(OpType::kFill, fillAttrs(FillOperation::kLINSPACE, {0, 4}, DataType::kFLOAT, 0, 1), {});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(r.out[0].count(), 0);
  r = runNode(OpType::kFill, fillAttrs(FillOperation::kLINSPACE, {}, DataType::kFLOAT, 4, 1), {});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(r.out[0].shape().nbDims, 0);
  EXPECT_EQ(doubles(r.out[0]), (std::vector<double>{4}));
  // A shape input known only at run time: rank known, extents not.
  r = runNode(OpType::kFill, fillAttrs(FillOperation::kLINSPACE, {}, DataType::kFLOAT, 0, 1),
              {var(tensor(DataType::kINT32, {2}, std::vector<double>{2, 2}))}, 1, false);
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(dimsToVector(r.inferred[0].shape), (Ints{-1, -1}));
  EXPECT_FALSE(runNode(OpType::kFill, fillAttrs(FillOperation::kRANDOM_UNIFORM, {2}, DataType::kINT32, 0, 1), {})
                   .status.isOk());  // random ints: not supported yet
  EXPECT_FALSE(runNode(OpType::kFill, fillAttrs(FillOperation::kLINSPACE, {2}, DataType::kBOOL, 0, 1), {}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kFill, attrs({{"op", int64_t{9}}, {"dims", Ints{2}}}), {}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kFill, attrs({{"op", int64_t{0}}}), {}).status.isOk());  // no shape at all
  EXPECT_FALSE(runNode(OpType::kFill, fillAttrs(FillOperation::kLINSPACE, {2, 2}, DataType::kFLOAT, 0, 1),
                       {none(), none(), var(tensor(DataType::kFLOAT, {3}, std::vector<double>{1, 1, 1}))})
                   .status.isOk());  // 3 steps for rank 2
  EXPECT_FALSE(runNode(OpType::kFill, fillAttrs(FillOperation::kLINSPACE, {}, DataType::kFLOAT, 0, 1),
                       {cst(tensor(DataType::kINT32, {2}, std::vector<double>{2, -1}))}).status.isOk());
}

}  // namespace
}  // namespace kiln
