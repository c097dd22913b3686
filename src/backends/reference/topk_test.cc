// Tests of TopK: kMAX/kMIN on every axis against a naive selection (repeated arg-max/min picking the lowest
// index among ties), every numeric type, k from input 1, k = 0 and k = axis extent, empty tensors, bad input.
#include <cstring>

#include "backends/reference/select_test_util.h"

namespace kiln {
namespace {

using namespace selecttest;
using ir::OpType;

ir::Attributes topkAttrs(TopKOperation op, int64_t k, int64_t axis, DataType it = DataType::kINT32) {
  return attrs({{"op", static_cast<int64_t>(op)}, {"k", k}, {"axis", axis}, {"indices_type", static_cast<int64_t>(it)}});
}

// Naive: k times, pick the best unused element (strictly better only, so the lowest index wins ties).
void naiveTopK(std::vector<double> const& line, int64_t k, bool largest, std::vector<double>& v, Ints& idx) {
  std::vector<bool> used(line.size(), false);
  for (int64_t j = 0; j < k; ++j) {
    int64_t best = -1;
    for (size_t i = 0; i < line.size(); ++i) {
      if (used[i]) continue;
      if (best < 0 || (largest ? line[i] > line[best] : line[i] < line[best])) best = static_cast<int64_t>(i);
    }
    used[best] = true;
    v.push_back(line[best]);
    idx.push_back(best);
  }
}

TEST(TopKReference, EveryAxisEveryTypeAgainstNaive) {
  Ints shape{3, 4, 5};
  std::vector<double> data;
  for (int i = 0; i < 60; ++i) data.push_back((i * 37) % 11);  // many ties
  for (DataType t : numericTypes()) {
    for (int64_t axis = 0; axis < 3; ++axis) {
      for (TopKOperation op : {TopKOperation::kMAX, TopKOperation::kMIN}) {
        for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{2}, shape[axis]}) {
          SCOPED_TRACE(strCat(dataTypeName(t), " axis ", axis, " op ", static_cast<int>(op), " k ", k));
          RunResult r = runNode(OpType::kTopK, topkAttrs(op, k, axis, DataType::kINT64), {var(tensor(t, shape, data))}, 2);
          ASSERT_TRUE(r.status.isOk()) << r.status.toString();
          Ints want = shape;
          want[axis] = k;
          ASSERT_EQ(dimsToVector(r.out[0].shape()), want);
          EXPECT_EQ(r.out[0].dtype(), t);
          EXPECT_EQ(r.out[1].dtype(), DataType::kINT64);
          int64_t n = shape[axis], outer = 1, inner = 1;
          for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
          for (int64_t d = axis + 1; d < 3; ++d) inner *= shape[d];
          std::vector<double> got = doubles(r.out[0]);
          Ints gotIdx = ints(r.out[1]);
          for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) {
              std::vector<double> line;
              for (int64_t j = 0; j < n; ++j) line.push_back(data[(o * n + j) * inner + i]);
              std::vector<double> wv;
              Ints wi;
              naiveTopK(line, k, op == TopKOperation::kMAX, wv, wi);
              for (int64_t j = 0; j < k; ++j) {
                EXPECT_EQ(got[(o * k + j) * inner + i], wv[j]);
                EXPECT_EQ(gotIdx[(o * k + j) * inner + i], wi[j]);
              }
            }
        }
      }
    }
  }
}

TEST(TopKReference, HandComputedTiesAndNegatives) {
  RunResult r = runNode(OpType::kTopK, topkAttrs(TopKOperation::kMAX, 3, 0),
                        {var(tensor(DataType::kFLOAT, {6}, std::vector<double>{-1, 5, 2, 5, -7, 2}))}, 2);
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(doubles(r.out[0]), (std::vector<double>{5, 5, 2}));
  EXPECT_EQ(ints(r.out[1]), (Ints{1, 3, 2}));
  EXPECT_EQ(r.out[1].dtype(), DataType::kINT32);
  r = runNode(OpType::kTopK, topkAttrs(TopKOperation::kMIN, 4, 0),
              {var(tensor(DataType::kINT64, {6}, std::vector<double>{-1, 5, 2, 5, -7, 2}))}, 2);
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(doubles(r.out[0]), (std::vector<double>{-7, -1, 2, 2}));
  EXPECT_EQ(ints(r.out[1]), (Ints{4, 0, 2, 5}));
}

TEST(TopKReference, LargeValuesOfWideIntegersAreExact) {
  uint64_t big = (uint64_t{1} << 63) + 5;  // above int64's range: must sort as unsigned
  std::vector<uint64_t> v{3, big, big - 2};
  HostTensor x = tensor(DataType::kUINT64, {3}, std::vector<double>{0, 0, 0});
  std::memcpy(x.mutableData(), v.data(), 24);
  RunResult r = runNode(OpType::kTopK, topkAttrs(TopKOperation::kMAX, 2, 0), {var(x)}, 2);
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(r.out[0].as<uint64_t>()[0], big);
  EXPECT_EQ(r.out[0].as<uint64_t>()[1], big - 2);
  EXPECT_EQ(ints(r.out[1]), (Ints{1, 2}));
}

TEST(TopKReference, KFromInputAndLargeK) {
  // k beyond TensorRT's 3840 limit.
  std::vector<double> v;
  for (int i = 0; i < 5000; ++i) v.push_back((i * 7919) % 5000);
  RunResult r = runNode(OpType::kTopK, topkAttrs(TopKOperation::kMIN, 1, 1),
                        {var(tensor(DataType::kFLOAT, {1, 5000}, v)), cst(scalar(DataType::kINT64, 4500))}, 2);
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(dimsToVector(r.inferred[0].shape), (Ints{1, 4500}));
  std::vector<double> got = doubles(r.out[0]);
  for (int i = 0; i < 4500; ++i) ASSERT_EQ(got[i], i);
  // k from a runtime input: inferred extent unknown, the kernel still works.
  r = runNode(OpType::kTopK, topkAttrs(TopKOperation::kMAX, 1, 0),
              {var(tensor(DataType::kFLOAT, {4}, std::vector<double>{1, 4, 2, 3})), var(scalar(DataType::kINT32, 2))},
              2);
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(r.inferred[0].shape.d[0], -1);
  EXPECT_EQ(doubles(r.out[0]), (std::vector<double>{4, 3}));
  EXPECT_EQ(ints(r.out[1]), (Ints{1, 3}));
}

TEST(TopKReference, EmptyAndSizeOneAxes) {
  RunResult r = runNode(OpType::kTopK, topkAttrs(TopKOperation::kMAX, 1, 1),
                        {var(tensor(DataType::kFLOAT, {0, 3}, std::vector<double>{}))}, 2);
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(dimsToVector(r.out[0].shape()), (Ints{0, 1}));
  r = runNode(OpType::kTopK, topkAttrs(TopKOperation::kMAX, 1, 0),
              {var(tensor(DataType::kHALF, {1, 2}, std::vector<double>{1.5, -2}))}, 2);
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(doubles(r.out[0]), (std::vector<double>{1.5, -2}));
  EXPECT_EQ(ints(r.out[1]), (Ints{0, 0}));
}

TEST(TopKReference, BadInput) {
  HostTensor x = tensor(DataType::kFLOAT, {2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6});
  EXPECT_FALSE(runNode(OpType::kTopK, topkAttrs(TopKOperation::kMAX, 4, 1), {var(x)}, 2).status.isOk());  // k > n
  EXPECT_FALSE(runNode(OpType::kTopK, topkAttrs(TopKOperation::kMAX, 1, 2), {var(x)}, 2).status.isOk());  // axis
  EXPECT_FALSE(runNode(OpType::kTopK, topkAttrs(TopKOperation::kMAX, 1, 0, DataType::kFLOAT), {var(x)}, 2).status.isOk());
  EXPECT_FALSE(runNode(OpType::kTopK, topkAttrs(TopKOperation::kMAX, 1, 0),
                       {var(tensor(DataType::kBOOL, {2}, std::vector<double>{1, 0}))}, 2).status.isOk());
  // A runtime k larger than the axis fails in the kernel.
  EXPECT_FALSE(runNode(OpType::kTopK, topkAttrs(TopKOperation::kMAX, 1, 1), {var(x), var(scalar(DataType::kINT32, 9))}, 2)
                   .status.isOk());
}

}  // namespace
}  // namespace kiln
