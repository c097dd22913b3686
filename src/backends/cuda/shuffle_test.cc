// gpu tests of the CUDA Shuffle tactic against the reference: transposes of rank 2..6, transpose-reshape-transpose,
// every byte width, empty tensors and odd sizes.
#include <algorithm>
#include <numeric>
#include <random>

#include "backends/cuda/copy_kernels.h"
#include "backends/cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers
using Ints = std::vector<int64_t>;

ir::Attributes shuffleAttrs(Ints perm1, std::optional<Ints> reshape = std::nullopt, Ints perm2 = {}) {
  ir::Attributes a;
  if (!perm1.empty()) a.setInts("first_perm", perm1);
  if (reshape) a.setInts("reshape", *reshape);
  if (!perm2.empty()) a.setInts("second_perm", perm2);
  return a;
}

TEST(CudaShuffle, RandomPermutationsRank2To6) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(7);
  Ints dims = {3, 5, 2, 7, 4, 3};
  for (int32_t rank = 2; rank <= 6; ++rank) {
    Ints shape(dims.begin(), dims.begin() + rank);
    for (int trial = 0; trial < 4; ++trial) {
      Ints perm(static_cast<size_t>(rank));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      SCOPED_TRACE(::testing::Message() << "rank " << rank << " trial " << trial);
      expectMatchesReference(
          {ir::OpType::kShuffle, shuffleAttrs(perm), {var(randomTensor(DataType::kFLOAT, shape, 11 + trial, -5, 5))}},
          0);
    }
  }
}

TEST(CudaShuffle, RankSevenAndEight) {
  KILN_REQUIRE_GPU();
  HostTensor x7 = randomTensor(DataType::kHALF, {2, 3, 1, 2, 3, 2, 2}, 21, -5, 5);
  expectMatchesReference({ir::OpType::kShuffle, shuffleAttrs({6, 0, 5, 1, 4, 2, 3}), {var(x7)}}, 0);
  HostTensor x8 = randomTensor(DataType::kINT32, {2, 1, 3, 2, 2, 3, 1, 2}, 22, -99, 99);
  expectMatchesReference({ir::OpType::kShuffle, shuffleAttrs({7, 5, 3, 1, 0, 2, 4, 6}), {var(x8)}}, 0);
  expectMatchesReference(
      {ir::OpType::kShuffle, shuffleAttrs({7, 5, 3, 1, 0, 2, 4, 6}, Ints{12, 12}, {1, 0}), {var(x8)}}, 0);
}

TEST(CudaShuffle, EveryByteWidth) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kFP8, DataType::kINT8,
                     DataType::kUINT8, DataType::kINT32, DataType::kINT64, DataType::kBOOL}) {
    SCOPED_TRACE(dataTypeName(t));
    expectMatchesReference(
        {ir::OpType::kShuffle, shuffleAttrs({2, 0, 1}), {var(randomTensor(t, {5, 7, 9}, 3, -20, 20))}}, 0);
  }
}

TEST(CudaShuffle, TransposeReshapeTranspose) {
  KILN_REQUIRE_GPU();
  HostTensor x = randomTensor(DataType::kFLOAT, {2, 3, 4, 5}, 5, -5, 5);
  // first transpose only, reshape only, second transpose only, and all three.
  expectMatchesReference({ir::OpType::kShuffle, shuffleAttrs({1, 0, 3, 2}, Ints{6, 20}), {var(x)}}, 0);
  expectMatchesReference({ir::OpType::kShuffle, shuffleAttrs({}, Ints{6, 4, 5}, {2, 0, 1}), {var(x)}}, 0);
  expectMatchesReference({ir::OpType::kShuffle, shuffleAttrs({1, 0, 3, 2}, Ints{6, 20}, {1, 0}), {var(x)}}, 0);
  expectMatchesReference({ir::OpType::kShuffle, shuffleAttrs({3, 1, 0, 2}, Ints{10, 3, 4}, {1, 2, 0}), {var(x)}}, 0);
  expectMatchesReference({ir::OpType::kShuffle, shuffleAttrs({0, 1, 2, 3}, Ints{120}), {var(x)}}, 0);
  HostTensor h = randomTensor(DataType::kHALF, {3, 1, 7, 2}, 6, -5, 5);
  expectMatchesReference({ir::OpType::kShuffle, shuffleAttrs({2, 3, 1, 0}, Ints{7, 6}, {1, 0}), {var(h)}}, 0);
}

// Transposes that keep the last axis: rows move as 16-, 8-, 4- or 2-byte words (widenCopyPlan), or one element at
// a time when the row length allows no wider word.
TEST(CudaShuffle, RowsMovedAsWideWords) {
  KILN_REQUIRE_GPU();
  struct Case {
    DataType t;
    Ints shape;
  };
  for (Case const& c : {Case{DataType::kHALF, {2, 6, 3, 64}}, Case{DataType::kHALF, {2, 5, 3, 12}},
                        Case{DataType::kBF16, {3, 2, 4, 6}}, Case{DataType::kFLOAT, {4, 3, 2, 8}},
                        Case{DataType::kFLOAT, {4, 3, 2, 3}}, Case{DataType::kINT8, {3, 4, 5, 6}},
                        Case{DataType::kINT64, {2, 3, 2, 4}}, Case{DataType::kHALF, {3, 7, 2, 1}}}) {
    SCOPED_TRACE(::testing::Message() << dataTypeName(c.t) << " " << c.shape[3]);
    expectMatchesReference(
        {ir::OpType::kShuffle, shuffleAttrs({0, 2, 1, 3}), {var(randomTensor(c.t, c.shape, 31, -20, 20))}}, 0);
  }
}

// The plan rewrite itself (host only).
TEST(CudaCopyPlan, WidensContiguousRows) {
  alignas(16) static char buf[4096];
  cuda::CopyPlan p;
  p.rank = 3;
  Ints dims = {2, 3, 64}, in = {3 * 64, 64, 1}, out = {64, 2 * 64, 1};
  for (int d = 0; d < 3; ++d) {
    p.dims[d] = dims[static_cast<size_t>(d)];
    p.inStrides[d] = in[static_cast<size_t>(d)];
    p.outStrides[d] = out[static_cast<size_t>(d)];
  }
  cuda::CopyPlan q = p;
  EXPECT_EQ(cuda::widenCopyPlan(buf, buf + 1024, 2, q), 8);  // fp16 rows of 64: 16-byte words
  EXPECT_EQ(q.dims[2], 8);
  EXPECT_EQ(q.inStrides[0], 3 * 8);
  EXPECT_EQ(q.outStrides[1], 2 * 8);
  q = p;
  EXPECT_EQ(cuda::widenCopyPlan(buf + 2, buf + 1024, 2, q), 1);  // 2-byte aligned pointer: unchanged
  EXPECT_EQ(q.dims[2], 64);
  q = p;
  q.inOffset = 4;
  EXPECT_EQ(cuda::widenCopyPlan(buf, buf + 1024, 2, q), 4);  // offset 4 elements: 8-byte words
  EXPECT_EQ(q.inOffset, 1);
  q = p;
  q.dims[2] = 6;
  q.inStrides[1] = 6;
  q.inStrides[0] = 18;
  EXPECT_EQ(cuda::widenCopyPlan(buf, buf + 1024, 2, q), 2);
  q = p;
  q.inStrides[2] = 2;  // not contiguous
  EXPECT_EQ(cuda::widenCopyPlan(buf, buf + 1024, 2, q), 1);
  q = p;
  q.rank2 = 1;  // two-stage plans are left alone
  EXPECT_EQ(cuda::widenCopyPlan(buf, buf + 1024, 2, q), 1);
  q = p;
  EXPECT_EQ(cuda::widenCopyPlan(buf, buf + 1024, 8, q), 2);  // int64: 16-byte words of two
  EXPECT_EQ(cuda::widenCopyPlan(buf, buf + 1024, 16, q), 1);
}

TEST(CudaShuffle, LargeAndOddSizes) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(
      {ir::OpType::kShuffle, shuffleAttrs({0, 2, 1}), {var(randomTensor(DataType::kFLOAT, {3, 257, 1031}, 9))}}, 0);
  expectMatchesReference(
      {ir::OpType::kShuffle, shuffleAttrs({1, 0}), {var(randomTensor(DataType::kINT64, {1, 1023}, 9, -99, 99))}}, 0);
}

TEST(CudaShuffle, EmptyAndRankZero) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(
      {ir::OpType::kShuffle, shuffleAttrs({2, 0, 1}), {var(randomTensor(DataType::kFLOAT, {3, 0, 4}, 1))}}, 0);
  expectMatchesReference(
      {ir::OpType::kShuffle, shuffleAttrs({}, Ints{1, 1}), {var(randomTensor(DataType::kFLOAT, {}, 1))}}, 0);
}

TEST(CudaSqueeze, SqueezeAndUnsqueezeCopy) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kINT64, DataType::kBOOL}) {
    SCOPED_TRACE(dataTypeName(t));
    expectMatchesReference({ir::OpType::kSqueeze,
                            {},
                            {var(randomTensor(t, {3, 1, 5}, 2, -9, 9)),
                             cst(HostTensor::fromVector(DataType::kINT64, makeDims({1}), std::vector<int64_t>{1}))}},
                           0);
    expectMatchesReference({ir::OpType::kUnsqueeze,
                            {},
                            {var(randomTensor(t, {3, 5}, 2, -9, 9)),
                             cst(HostTensor::fromVector(DataType::kINT32, makeDims({2}), std::vector<int64_t>{0, 2}))}},
                           0);
  }
  expectMatchesReference({ir::OpType::kSqueeze,
                          {},
                          {var(randomTensor(DataType::kFLOAT, {0, 1}, 2)),
                           cst(HostTensor::fromVector(DataType::kINT64, makeDims({1}), std::vector<int64_t>{1}))}},
                         0);
}

}  // namespace
}  // namespace kiln
