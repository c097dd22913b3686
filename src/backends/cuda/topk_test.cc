// gpu tests of the CUDA TopK and Cumulative tactics against the reference backend: every dtype they claim, max and
// min, axes first / middle / last, k = 1 / some / all, ties (stable order), NaN, long and many short lines; sums
// inclusive / exclusive / reversed along every axis.
#include "backends/cuda/cuda_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

NodeSpec topk(HostTensor x, TopKOperation op, int64_t k, int64_t axis, DataType indices = DataType::kINT32) {
  return {ir::OpType::kTopK,
          attrs({{"op", static_cast<int64_t>(op)},
                 {"k", k},
                 {"axis", axis},
                 {"indices_type", static_cast<int64_t>(indices)}}),
          {var(std::move(x))},
          2};
}

TEST(CudaTopK, EveryDtypeOpAxisAndK) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT32, DataType::kINT64})
    for (TopKOperation op : {TopKOperation::kMAX, TopKOperation::kMIN})
      for (int64_t axis : {0, 1, 2})
        for (int64_t k : {int64_t{1}, int64_t{3}, int64_t{-1}}) {
          std::vector<int64_t> shape = {6, 7, 9};
          int64_t kk = k < 0 ? shape[static_cast<size_t>(axis)] : k;
          SCOPED_TRACE(strCat(dataTypeName(t), " op ", static_cast<int>(op), " axis ", axis, " k ", kk));
          // A narrow integer range makes ties, which must keep the lower index first.
          expectMatchesReference(topk(randomTensor(t, shape, 1, -5, 5), op, kk, axis), 0);
        }
  expectMatchesReference(topk(randomTensor(DataType::kFLOAT, {5, 40}, 2), TopKOperation::kMAX, 7, 1, DataType::kINT64),
                         0);
}

TEST(CudaTopK, LongAndManyShortLinesAndNaN) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(topk(randomTensor(DataType::kFLOAT, {3, 30000}, 3), TopKOperation::kMAX, 100, 1), 0);
  expectMatchesReference(topk(randomTensor(DataType::kHALF, {2, 5000}, 4), TopKOperation::kMIN, 5000, 1), 0);
  expectMatchesReference(topk(randomTensor(DataType::kFLOAT, {20000, 5}, 5), TopKOperation::kMAX, 2, 1), 0);
  expectMatchesReference(topk(randomTensor(DataType::kFLOAT, {70000, 3}, 5), TopKOperation::kMIN, 1, 1), 0);
  HostTensor x = HostTensor::fromVector(DataType::kFLOAT, makeDims({2, 5}),
                                        std::vector<double>{1, NAN, 3, NAN, -INFINITY, 2, 2, INFINITY, -1, 2});
  for (TopKOperation op : {TopKOperation::kMAX, TopKOperation::kMIN})
    for (int64_t k : {1, 3, 5}) expectMatchesReference(topk(x, op, k, 1), 0);
}

TEST(CudaTopK, ConstantKInput) {
  KILN_REQUIRE_GPU();
  HostTensor k = HostTensor::fromVector(DataType::kINT32, makeDims({}), std::vector<double>{4});
  NodeSpec s = topk(randomTensor(DataType::kFLOAT, {3, 11}, 6), TopKOperation::kMAX, 1, 1);
  s.inputs.push_back(cst(k));
  expectMatchesReference(s, 0);
}

NodeSpec cumsum(HostTensor x, int64_t axis, bool exclusive, bool reverse) {
  HostTensor a = HostTensor::fromVector(DataType::kINT64, makeDims({}), std::vector<double>{static_cast<double>(axis)});
  return {ir::OpType::kCumulative,
          attrs({{"op", int64_t{0}}, {"exclusive", int64_t{exclusive ? 1 : 0}}, {"reverse", int64_t{reverse ? 1 : 0}}}),
          {var(std::move(x)), cst(a)}};
}

TEST(CudaCumulative, EveryDtypeAxisAndMode) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT32, DataType::kINT64})
    for (int64_t axis : {0, 1, 2, -1})
      for (bool exclusive : {false, true})
        for (bool reverse : {false, true}) {
          SCOPED_TRACE(strCat(dataTypeName(t), " axis ", axis, " exclusive ", exclusive, " reverse ", reverse));
          expectMatchesReference(cumsum(randomTensor(t, {4, 5, 7}, 1, -100, 100), axis, exclusive, reverse));
        }
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT32}) {
    expectMatchesReference(cumsum(randomTensor(t, {2, 30000}, 2, 0, 1), 1, false, false));
    expectMatchesReference(cumsum(randomTensor(t, {30000, 3}, 3, -1, 1), 1, true, true));
    expectMatchesReference(cumsum(randomTensor(t, {1000, 33}, 4, -1, 1), 0, false, true));
  }
  expectMatchesReference(cumsum(randomTensor(DataType::kFLOAT, {0, 3}, 5), 1, false, false));
}

TEST(CudaLRN, WindowsAndDtypes) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16})
    for (int64_t w : {1, 3, 5, 15}) {
      SCOPED_TRACE(strCat(dataTypeName(t), " window ", w));
      expectMatchesReference({ir::OpType::kLRN,
                              attrs({{"window", w}, {"alpha", 1e-2}, {"beta", 0.75}, {"k", 2.0}}),
                              {var(randomTensor(t, {2, 13, 7, 9}, 1, -3, 3))}});
    }
  expectMatchesReference({ir::OpType::kLRN,
                          attrs({{"window", int64_t{3}}, {"alpha", 0.5}, {"beta", 1.5}, {"k", 1.0}}),
                          {var(randomTensor(DataType::kFLOAT, {3, 4, 5}, 2, -3, 3))}});
}

}  // namespace
}  // namespace kiln
