// gpu tests of the CUDA SoftMax and RaggedSoftMax tactics against the reference backend: every float dtype, axis
// first / middle / last / default, short rows (warp per row), long rows (block per row), non-innermost axes,
// rows of -inf and NaN, ragged bounds 0..S.
#include "backends/cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

constexpr DataType kFloats[] = {DataType::kFLOAT, DataType::kHALF, DataType::kBF16};

TEST(CudaSoftMax, EveryAxisAndDtype) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats)
    for (int64_t axis : {0, 1, 2, 3, -1}) {
      SCOPED_TRACE(strCat(dataTypeName(t), " axis ", axis));
      expectMatchesReference(
          {ir::OpType::kSoftMax, attrs({{"axis", axis}}), {var(randomTensor(t, {3, 5, 7, 33}, 1, -4, 4))}});
    }
  for (DataType t : kFloats)  // no axis attribute: rank - 3
    expectMatchesReference({ir::OpType::kSoftMax, {}, {var(randomTensor(t, {2, 3, 4, 5}, 2, -4, 4))}});
}

TEST(CudaSoftMax, LongRowsAndManyShortRows) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    expectMatchesReference(
        {ir::OpType::kSoftMax, attrs({{"axis", int64_t{1}}}), {var(randomTensor(t, {3, 30000}, 3, -8, 8))}});
    expectMatchesReference(
        {ir::OpType::kSoftMax, attrs({{"axis", int64_t{1}}}), {var(randomTensor(t, {5, 1025}, 4, -8, 8))}});
    expectMatchesReference(
        {ir::OpType::kSoftMax, attrs({{"axis", int64_t{1}}}), {var(randomTensor(t, {20003, 7}, 5, -8, 8))}});
    expectMatchesReference(
        {ir::OpType::kSoftMax, attrs({{"axis", int64_t{1}}}), {var(randomTensor(t, {257, 1024}, 6, -8, 8))}});
    expectMatchesReference(
        {ir::OpType::kSoftMax, attrs({{"axis", int64_t{0}}}), {var(randomTensor(t, {3000, 9}, 7, -8, 8))}});
    expectMatchesReference({ir::OpType::kSoftMax, attrs({{"axis", int64_t{0}}}), {var(randomTensor(t, {1}, 8))}});
    expectMatchesReference(
        {ir::OpType::kSoftMax, attrs({{"axis", int64_t{2}}}), {var(randomTensor(t, {2, 12, 128, 128}, 9, -8, 8))}});
  }
}

TEST(CudaSoftMax, InfinitiesNaNAndEmpty) {
  KILN_REQUIRE_GPU();
  HostTensor x = HostTensor::fromVector(
      DataType::kFLOAT, makeDims({4, 3}),
      std::vector<double>{-INFINITY, -INFINITY, -INFINITY, 1, NAN, 2, INFINITY, 0, 1, -INFINITY, 0, 1});
  expectMatchesReference({ir::OpType::kSoftMax, attrs({{"axis", int64_t{1}}}), {var(x)}});
  expectMatchesReference({ir::OpType::kSoftMax, attrs({{"axis", int64_t{0}}}), {var(x)}});
  expectMatchesReference(
      {ir::OpType::kSoftMax, attrs({{"axis", int64_t{1}}}), {var(randomTensor(DataType::kFLOAT, {0, 5}, 1))}});
}

TEST(CudaRaggedSoftMax, BoundsFromZeroToRowLength) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats)
    for (int64_t s : {1, 7, 64, 1500}) {
      int64_t z = 9;
      std::vector<double> b;
      for (int64_t i = 0; i < z; ++i)
        b.push_back(static_cast<double>((i * (s + 1)) / (z - 1) > s ? s : (i * (s + 1)) / (z - 1)));
      HostTensor bounds = HostTensor::fromVector(DataType::kINT32, makeDims({1, z, 1}), b);
      expectMatchesReference(
          {ir::OpType::kRaggedSoftMax, {}, {var(randomTensor(t, {1, z, s}, 10, -4, 4)), var(bounds)}});
    }
}

}  // namespace
}  // namespace kiln
