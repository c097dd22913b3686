// gpu tests of the CUDA SoftMax and RaggedSoftMax tactics against the reference backend: every float dtype, axis
// first / middle / last / default, short rows (warp per row), long rows (block per row), non-innermost axes,
// rows of -inf and NaN, ragged bounds 0..S; the register-resident vectorized kernels (lane teams of 1 to 32 per
// row, block per row) over row lengths around their limits, persistent warps over more rows than are resident
// (their loop and prefetch), and the launcher on misaligned pointers and under both row-kernel variants.
#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/softmax_kernels.h"

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

// Rows in whole 16-byte vectors: teams of 1, 2, 4, 8, 16 and 32 lanes per row and 1 to 8 vectors a lane (up to
// 2,048 elements at 2 bytes, 1,024 at 4), a block per row beyond (up to 32,768 at 2 bytes, 16,384 at 4; longer rows go
// element by element), with row counts that leave teams of a warp idle.
TEST(CudaSoftMax, VectorizedRowLengths) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 40;
  for (DataType t : kFloats)
    for (int64_t len : {8, 16, 32, 64, 128, 136, 256, 512, 768, 1024, 1032, 2048, 8192, 16384, 32768, 32776})
      for (int64_t rows : {1, 3, 129}) {
        SCOPED_TRACE(strCat(dataTypeName(t), " len ", len, " rows ", rows));
        expectMatchesReference(
            {ir::OpType::kSoftMax, attrs({{"axis", int64_t{1}}}), {var(randomTensor(t, {rows, len}, ++seed, -8, 8))}});
      }
  // BERT's attention probabilities: [b * heads * s, s].
  for (DataType t : kFloats)
    expectMatchesReference(
        {ir::OpType::kSoftMax, attrs({{"axis", int64_t{3}}}), {var(randomTensor(t, {2, 12, 128, 128}, 60, -8, 8))}});
}

// More rows than the persistent grid has warps, so that every warp loops and prefetches: teams of 1 (32 rows a
// warp), 8 (BERT's 128) and 32 lanes, 1, 2, 4 and 8 vectors a lane, a partly filled last slot (136, 776), with a
// masked row, a NaN row and a +inf row in the middle of the batch.
TEST(CudaSoftMax, PersistentRowsPrefetch) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 90;
  for (DataType t : kFloats)
    for (int64_t len : {8, 24, 128, 136, 776, 1024, 2048}) {
      SCOPED_TRACE(strCat(dataTypeName(t), " len ", len));
      int64_t const rows = len <= 136 ? 40009 : 6007;
      std::vector<double> v = randomValues(static_cast<size_t>(rows * len), ++seed, -8, 8);
      for (int64_t i = 0; i < len; ++i) v[static_cast<size_t>(5000 * len + i)] = -INFINITY;
      v[static_cast<size_t>(5001 * len + len / 2)] = NAN;
      v[static_cast<size_t>(5002 * len + 1)] = INFINITY;
      expectMatchesReference({ir::OpType::kSoftMax,
                              attrs({{"axis", int64_t{1}}}),
                              {var(HostTensor::fromVector(t, makeDims({rows, len}), v))}});
    }
}

// -inf rows, NaN, +inf on the vectorized kernels (rows of 8 and of 2,048 elements): the same NaN rows as the
// reference, a masked (-inf) element 0.
TEST(CudaSoftMax, VectorizedInfinitiesAndNaN) {
  KILN_REQUIRE_GPU();
  for (int64_t len : {8, 2048})
    for (DataType t : kFloats) {
      SCOPED_TRACE(strCat(dataTypeName(t), " len ", len));
      std::vector<double> v = randomValues(static_cast<size_t>(5 * len), 70, -4, 4);
      for (int64_t i = 0; i < len; ++i) v[static_cast<size_t>(i)] = -INFINITY;  // row 0: all masked
      v[static_cast<size_t>(len + 3)] = NAN;                                    // row 1: a NaN
      v[static_cast<size_t>(2 * len + 1)] = INFINITY;                           // row 2: +inf
      v[static_cast<size_t>(3 * len + 2)] = -INFINITY;                          // row 3: one masked element
      expectMatchesReference({ir::OpType::kSoftMax,
                              attrs({{"axis", int64_t{1}}}),
                              {var(HostTensor::fromVector(t, makeDims({5, len}), v))}});
    }
}

// The launcher on pointers off the 16-byte grid (it must fall back to the element-by-element kernels) against the
// generic kernels on aligned copies.
TEST(CudaSoftMax, LauncherMisalignedPointers) {
  KILN_REQUIRE_GPU();
  backends::DeviceBackend* dev = device();
  void* stream = *dev->createStream();
  auto cs = static_cast<cudaStream_t>(stream);
  for (DataType t : kFloats)
    for (int64_t len : {128, 4096})
      for (int shiftX : {0, 1})
        for (int shiftY : {0, 1}) {
          SCOPED_TRACE(strCat(dataTypeName(t), " len ", len, " shifts ", shiftX, shiftY));
          int64_t const rows = 37, n = rows * len;
          size_t const e = dataTypeSize(t);
          HostTensor hx = randomTensor(t, {n}, 80, -8, 8);
          auto x = backends::DeviceBuffer::allocate(dev, hx.bytes() + 64, "test x");
          auto xa = backends::DeviceBuffer::allocate(dev, hx.bytes(), "test x");
          auto y = backends::DeviceBuffer::allocate(dev, hx.bytes() + 64, "test y");
          auto ya = backends::DeviceBuffer::allocate(dev, hx.bytes(), "test y");
          ASSERT_TRUE(x.isOk() && xa.isOk() && y.isOk() && ya.isOk());
          char* xp = static_cast<char*>(x->data()) + shiftX * e;
          char* yp = static_cast<char*>(y->data()) + shiftY * e;
          ASSERT_TRUE(dev->copy(xp, hx.data(), hx.bytes(), backends::CopyKind::kHostToDevice, stream).isOk());
          ASSERT_TRUE(dev->copy(xa->data(), hx.data(), hx.bytes(), backends::CopyKind::kHostToDevice, stream).isOk());
          auto dt = static_cast<int32_t>(t);
          // The aligned case under the alternative (evict-first) variant: the same results as the default.
          cuda::RowVariant variant =
              shiftX == 0 && shiftY == 0 ? cuda::RowVariant::kAlternative : cuda::RowVariant::kDefault;
          ASSERT_TRUE(cuda::launchSoftmax(dt, xp, yp, rows, len, 1, nullptr, cs, false, variant));
          ASSERT_TRUE(cuda::launchSoftmax(dt, xa->data(), ya->data(), rows, len, 1, nullptr, cs, true));
          ASSERT_TRUE(cuda::launchStatus("softmax").isOk());
          HostTensor got = *HostTensor::allocate(t, makeDims({n}), "got");
          HostTensor want = *HostTensor::allocate(t, makeDims({n}), "want");
          ASSERT_TRUE(dev->copy(got.mutableData(), yp, got.bytes(), backends::CopyKind::kDeviceToHost, stream).isOk());
          ASSERT_TRUE(dev->copy(want.mutableData(), ya->data(), want.bytes(), backends::CopyKind::kDeviceToHost, stream)
                          .isOk());
          ASSERT_TRUE(dev->synchronize(stream).isOk());
          EXPECT_LE(normRelativeError(got, want), defaultTolerance(t));
        }
  dev->destroyStream(stream);
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
