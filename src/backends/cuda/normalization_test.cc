// gpu tests of the CUDA Normalization tactic against the reference backend: layer norm (BERT [128, 768] over the
// last axis, several axes, broadcast scale/bias), instance norm, group norm ([2, 32, 7, 7], per-group and
// per-channel scale/bias), every float dtype, mixed scale/bias types, odd and long groups; each kernel path of
// launchNormalization (vectorized warp and cluster paths, element-by-element warp and block paths), the persistent
// warps' row loop and prefetch (more rows than resident warps), large spatial group/instance norm on clusters of 1
// to 8 blocks, the fused residual, and the launcher on misaligned pointers and under both row-kernel variants
// against its generic kernels.
#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/normalization_kernels.h"
#include "backends/normalization_view.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

NodeSpec norm(HostTensor x, HostTensor s, HostTensor b, std::vector<int64_t> axes, int64_t groups = 1, bool v2 = false,
              double eps = 1e-5) {
  return {ir::OpType::kNormalization,
          attrs({{"axes", axes}, {"epsilon", eps}, {"num_groups", groups}, {"v2", int64_t{v2 ? 1 : 0}}}),
          {var(std::move(x)), cst(std::move(s)), cst(std::move(b))}};
}

constexpr DataType kFloats[] = {DataType::kFLOAT, DataType::kHALF, DataType::kBF16};

TEST(CudaNormalization, BertLayerNorm) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats)
    expectMatchesReference(norm(randomTensor(t, {128, 768}, 1, -3, 3), randomTensor(t, {768}, 2, 0.5, 1.5),
                                randomTensor(t, {768}, 3), {1}, 1, false, 1e-12));
  expectMatchesReference(norm(randomTensor(DataType::kFLOAT, {2, 64, 768}, 4, -3, 3),
                              randomTensor(DataType::kFLOAT, {1, 1, 768}, 5), randomTensor(DataType::kFLOAT, {768}, 6),
                              {-1}));
}

// The warp-per-row kernel (1,024 or more contiguous rows of up to 1,024 with a per-row scale and bias): every
// row-length bucket and its edges, row counts that do not fill a block, and beside them 1,025 elements and a single
// row (the block-per-group kernel).
TEST(CudaNormalization, LayerNormRowLengths) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 10;
  for (DataType t : kFloats)
    for (int64_t len : {1, 2, 31, 32, 33, 127, 128, 129, 255, 256, 257, 500, 512, 513, 768, 1000, 1024, 1025})
      for (std::vector<int64_t> rows :
           {std::vector<int64_t>{1}, std::vector<int64_t>{3, 13}, std::vector<int64_t>{3, 343}}) {
        std::vector<int64_t> shape = rows;
        shape.push_back(len);
        ++seed;
        expectMatchesReference(norm(randomTensor(t, shape, seed, -3, 3), randomTensor(t, {len}, seed + 1, 0.5, 1.5),
                                    randomTensor(t, {len}, seed + 2), {static_cast<int64_t>(rows.size())}));
      }
  // scale and bias of other types than x, on the row path
  expectMatchesReference(norm(randomTensor(DataType::kHALF, {1030, 768}, 40, -3, 3),
                              randomTensor(DataType::kFLOAT, {768}, 41), randomTensor(DataType::kBF16, {768}, 42),
                              {1}));
}

// Few rows (under 4 per SM: one warp a block) with one scale and bias for every row: each lane holds its slots of
// them in registers (RowArgs::held), in their own types, for 1 to 4 vectors a lane and beyond (8: not held).
TEST(CudaNormalization, FewRowsHoldScaleAndBias) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 300;
  for (int64_t len : {64, 768, 1024, 2048}) {
    SCOPED_TRACE(strCat("len ", len));
    seed += 6;
    expectMatchesReference(norm(randomTensor(DataType::kHALF, {197, len}, seed, -3, 3),
                                randomTensor(DataType::kFLOAT, {len}, seed + 1, 0.5, 1.5),
                                randomTensor(DataType::kBF16, {len}, seed + 2), {1}));
    expectMatchesReference(norm(randomTensor(DataType::kFLOAT, {5, len}, seed + 3, -3, 3),
                                randomTensor(DataType::kHALF, {len}, seed + 4, 0.5, 1.5),
                                randomTensor(DataType::kFLOAT, {len}, seed + 5), {1}));
  }
}

TEST(CudaNormalization, LayerNormAxesAndBroadcasts) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    auto x = [&](uint32_t seed) { return randomTensor(t, {3, 5, 7, 9}, seed, -2, 2); };
    expectMatchesReference(norm(x(1), randomTensor(t, {7, 9}, 2), randomTensor(t, {7, 9}, 3), {2, 3}));
    expectMatchesReference(norm(x(1), randomTensor(t, {5, 1, 1}, 2), randomTensor(t, {1}, 3), {1, 2, 3}));
    expectMatchesReference(norm(x(1), randomTensor(t, {5, 7, 1}, 2), randomTensor(t, {9}, 3), {1}));
    expectMatchesReference(norm(x(1), randomTensor(t, {3, 1, 1, 1}, 2), randomTensor(t, {1, 1, 7, 1}, 3), {0, 2}));
    expectMatchesReference(norm(x(1), randomTensor(t, {1}, 2), randomTensor(t, {1}, 3), {0, 1, 2, 3}));
  }
  // scale and bias of other float types than x
  expectMatchesReference(norm(randomTensor(DataType::kHALF, {4, 33}, 7), randomTensor(DataType::kFLOAT, {33}, 8),
                              randomTensor(DataType::kBF16, {33}, 9), {1}));
}

TEST(CudaNormalization, InstanceNormLongAndShortGroups) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    expectMatchesReference(
        norm(randomTensor(t, {2, 3, 30000}, 1, -2, 2), randomTensor(t, {3, 1}, 2), randomTensor(t, {3, 1}, 3), {2}));
    expectMatchesReference(norm(randomTensor(t, {4, 16, 5, 7}, 1, -2, 2), randomTensor(t, {16, 1, 1}, 2),
                                randomTensor(t, {16, 1, 1}, 3), {2, 3}));
    expectMatchesReference(
        norm(randomTensor(t, {10007, 3}, 4, -2, 2), randomTensor(t, {3}, 5), randomTensor(t, {3}, 6), {1}));
  }
}

TEST(CudaNormalization, GroupNorm) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats)
    for (int64_t g : {2, 8, 32}) {
      SCOPED_TRACE(strCat(dataTypeName(t), " groups ", g));
      expectMatchesReference(norm(randomTensor(t, {2, 32, 7, 7}, 1, -2, 2), randomTensor(t, {1, g, 1, 1}, 2),
                                  randomTensor(t, {1, g, 1, 1}, 3), {2, 3}, g, false));
      expectMatchesReference(norm(randomTensor(t, {2, 32, 7, 7}, 1, -2, 2), randomTensor(t, {1, 32, 1, 1}, 2),
                                  randomTensor(t, {1, 32, 1, 1}, 3), {2, 3}, g, true));
    }
  // group norm reducing only some spatial dims, rank 5
  expectMatchesReference(norm(randomTensor(DataType::kFLOAT, {2, 6, 3, 4, 5}, 4),
                              randomTensor(DataType::kFLOAT, {1, 6, 1, 1, 1}, 5),
                              randomTensor(DataType::kFLOAT, {1, 6, 1, 1, 1}, 6), {3}, 3, true));
}

// Rows in whole 16-byte vectors (the vectorized warp kernel up to 2,048 elements at 2 bytes and 1,024 at 4, the
// cluster kernel beyond): vector counts around the per-lane slots, one row, rows that do not fill a block, and
// more than 1,024 rows.
TEST(CudaNormalization, VectorizedRowLengths) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 100;
  for (DataType t : kFloats)
    for (int64_t len : {8, 64, 136, 256, 512, 520, 768, 1024, 1032, 2048, 2056, 4096})
      for (std::vector<int64_t> rows :
           {std::vector<int64_t>{1}, std::vector<int64_t>{7}, std::vector<int64_t>{3, 343}}) {
        SCOPED_TRACE(strCat(dataTypeName(t), " len ", len, " rows ", volume(makeDims(rows))));
        std::vector<int64_t> shape = rows;
        shape.push_back(len);
        ++seed;
        expectMatchesReference(norm(randomTensor(t, shape, seed, -3, 3), randomTensor(t, {len}, seed + 1, 0.5, 1.5),
                                    randomTensor(t, {len}, seed + 2), {static_cast<int64_t>(rows.size())}));
      }
}

// Long groups on the register-resident cluster kernel: clusters of 1, 2, 4 and 8 blocks of 4 vectors a thread
// (group norm of 65,536 elements: 8 blocks of 256 threads at 2 bytes, of 512 at fp32; 24,576: 4 and 8; 4,096: 1),
// per-group and per-channel scale/bias.
TEST(CudaNormalization, ClusterPathGroupAndInstanceNorm) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    SCOPED_TRACE(dataTypeName(t));
    for (bool v2 : {false, true}) {
      int64_t sc = v2 ? 32 : 2;
      expectMatchesReference(norm(randomTensor(t, {1, 32, 64, 64}, 1, -2, 2), randomTensor(t, {1, sc, 1, 1}, 2),
                                  randomTensor(t, {1, sc, 1, 1}, 3), {2, 3}, 2, v2));
      int64_t sc8 = v2 ? 32 : 8;
      expectMatchesReference(norm(randomTensor(t, {2, 32, 32, 32}, 4, -2, 2), randomTensor(t, {1, sc8, 1, 1}, 5),
                                  randomTensor(t, {1, sc8, 1, 1}, 6), {2, 3}, 8, v2));
    }
    expectMatchesReference(
        norm(randomTensor(t, {2, 3, 24576}, 7, -2, 2), randomTensor(t, {3, 1}, 8), randomTensor(t, {3, 1}, 9), {2}));
    // A large mean against a small spread: the two-pass variance keeps it. In fp32 the mean itself rounds to
    // ulp(91) / 2 ~ 3.8e-6, which the division by the spread (~0.29) lifts to ~1.3e-5 in y: the tolerance is
    // twice that floor, not fp32's usual 1e-5 (measured on the H200: 1.2e-5).
    expectMatchesReference(
        norm(randomTensor(t, {2, 16384}, 10, 90, 91), randomTensor(t, {16384}, 11), randomTensor(t, {16384}, 12), {1}),
        t == DataType::kFLOAT ? 3e-5 : -1);
  }
}

// More rows than the persistent grid has warps (an H200 holds ~3,700 of them at most), so that each warp loops over
// rows and prefetches the next: layer norm rows of 1 to 8 vectors a lane, a vector count that is not a multiple of
// 32 (a partly filled last slot), with and without the residual, and instance norm (per-row scale/bias, not staged).
TEST(CudaNormalization, PersistentRowsPrefetch) {
  KILN_REQUIRE_GPU();
  auto withResidual = [](NodeSpec n, HostTensor r) {
    n.inputs.push_back(var(std::move(r)));
    return n;
  };
  uint32_t seed = 300;
  for (DataType t : kFloats)
    for (int64_t len : {32, 256, 768, 776, 1280, 2048}) {
      if (t == DataType::kFLOAT && len > 1024) continue;  // past the warp path at 4 bytes (covered above)
      SCOPED_TRACE(strCat(dataTypeName(t), " len ", len));
      int64_t const rows = 9001;
      seed += 4;
      NodeSpec n = norm(randomTensor(t, {rows, len}, seed, -3, 3), randomTensor(t, {len}, seed + 1, 0.5, 1.5),
                        randomTensor(t, {len}, seed + 2), {1});
      if (len == 768 || len == 776) n = withResidual(std::move(n), randomTensor(t, {rows, len}, seed + 3, -3, 3));
      expectMatchesReference(n);
    }
  for (DataType t : kFloats)
    expectMatchesReference(norm(randomTensor(t, {16, 512, 8, 8}, 320, -2, 2), randomTensor(t, {512, 1, 1}, 321),
                                randomTensor(t, {512, 1, 1}, 322), {2, 3}));
}

// Large spatial extents: group norm of 8,192 elements a group (one block), 131,072 (8 blocks of 512 threads at 2
// bytes; the generic kernel at fp32), instance norm of 9,216 (2 blocks), per group and per channel.
TEST(CudaNormalization, LargeSpatialGroupAndInstanceNorm) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    SCOPED_TRACE(dataTypeName(t));
    for (bool v2 : {false, true}) {
      expectMatchesReference(norm(randomTensor(t, {2, 64, 64, 64}, 1, -2, 2),
                                  randomTensor(t, {1, v2 ? 64 : 32, 1, 1}, 2),
                                  randomTensor(t, {1, v2 ? 64 : 32, 1, 1}, 3), {2, 3}, 32, v2));
      expectMatchesReference(norm(randomTensor(t, {1, 32, 128, 128}, 4, -2, 2),
                                  randomTensor(t, {1, v2 ? 32 : 4, 1, 1}, 5),
                                  randomTensor(t, {1, v2 ? 32 : 4, 1, 1}, 6), {2, 3}, 4, v2));
    }
    expectMatchesReference(norm(randomTensor(t, {2, 16, 96, 96}, 7, -2, 2), randomTensor(t, {16, 1, 1}, 8),
                                randomTensor(t, {16, 1, 1}, 9), {2, 3}));
  }
}

// The fused residual (x + residual normalized) on every kernel path.
TEST(CudaNormalization, FusedResidual) {
  KILN_REQUIRE_GPU();
  auto withResidual = [](NodeSpec n, HostTensor r) {
    n.inputs.push_back(var(std::move(r)));
    return n;
  };
  for (DataType t : kFloats) {
    SCOPED_TRACE(dataTypeName(t));
    for (std::vector<int64_t> shape : {std::vector<int64_t>{1030, 768}, std::vector<int64_t>{1030, 33},
                                       std::vector<int64_t>{3, 5000}, std::vector<int64_t>{1, 768}}) {
      int64_t len = shape.back();
      expectMatchesReference(withResidual(
          norm(randomTensor(t, shape, 1, -3, 3), randomTensor(t, {len}, 2, 0.5, 1.5), randomTensor(t, {len}, 3), {1}),
          randomTensor(t, shape, 4, -3, 3)));
    }
    // A residual broadcast over the leading dims (a position embedding): per row on the vectorized path, per
    // element where the broadcast reaches into the normalized dims.
    expectMatchesReference(withResidual(
        norm(randomTensor(t, {2, 515, 768}, 13, -3, 3), randomTensor(t, {768}, 14), randomTensor(t, {768}, 15), {2}),
        randomTensor(t, {1, 515, 768}, 16, -3, 3)));
    expectMatchesReference(withResidual(
        norm(randomTensor(t, {4, 6, 8}, 17), randomTensor(t, {6, 8}, 18), randomTensor(t, {6, 8}, 19), {1, 2}),
        randomTensor(t, {1, 1, 8}, 20)));
    expectMatchesReference(
        withResidual(norm(randomTensor(t, {4, 7, 9}, 5), randomTensor(t, {7, 1}, 6), randomTensor(t, {7, 1}, 7), {1}),
                     randomTensor(t, {4, 7, 9}, 8)));
    expectMatchesReference(withResidual(norm(randomTensor(t, {1, 32, 64, 64}, 9), randomTensor(t, {1, 2, 1, 1}, 10),
                                             randomTensor(t, {1, 2, 1, 1}, 11), {2, 3}, 2),
                                        randomTensor(t, {1, 32, 64, 64}, 12)));
  }
}

// The launcher itself: the path it picks for aligned and misaligned x / y / residual / scale, and each result
// against its generic block-per-group kernel on aligned copies.
TEST(CudaNormalization, LauncherPathsAndMisalignedPointers) {
  KILN_REQUIRE_GPU();
  backends::DeviceBackend* dev = device();
  void* stream = *dev->createStream();
  auto cs = static_cast<cudaStream_t>(stream);
  struct Case {
    DataType t;
    int64_t rows, len;
    int shiftX, shiftY, shiftR, shiftS;  // in elements
    bool residual;
    cuda::NormPath want;
    cuda::RowVariant variant = cuda::RowVariant::kDefault;
  };
  using P = cuda::NormPath;
  std::vector<Case> cases;
  for (DataType t : kFloats) {
    cases.push_back({t, 1100, 768, 0, 0, 0, 0, false, P::kWarpVec});
    cases.push_back({t, 1100, 768, 0, 0, 0, 0, true, P::kWarpVec});
    cases.push_back({t, 5000, 768, 0, 0, 0, 0, true, P::kWarpVec, cuda::RowVariant::kAlternative});
    cases.push_back({t, 5000, 64, 0, 0, 0, 0, false, P::kWarpVec, cuda::RowVariant::kAlternative});
    cases.push_back({t, 5, 8192, 0, 0, 0, 0, true, P::kClusterVec});
    cases.push_back({t, 5, 8192, 0, 0, 0, 0, true, P::kClusterVec, cuda::RowVariant::kAlternative});
    cases.push_back({t, 3000, 4096, 0, 0, 0, 0, false, P::kClusterVec});  // more rows than resident blocks
    cases.push_back({t, 3, 40000, 0, 0, 0, 0, false, P::kClusterVec, cuda::RowVariant::kAlternative});
    cases.push_back({t, 1100, 768, 1, 0, 0, 0, false, P::kWarpScalar});  // x off the vector grid
    cases.push_back({t, 1100, 768, 0, 1, 0, 0, false, P::kWarpScalar});  // y
    cases.push_back({t, 1100, 768, 0, 0, 1, 0, true, P::kWarpScalar});   // residual
    cases.push_back({t, 1100, 768, 0, 0, 0, 1, false, P::kWarpScalar});  // scale
    cases.push_back({t, 5, 768, 1, 1, 1, 0, true, P::kBlock});           // few rows, misaligned
    cases.push_back({t, 1100, 770, 0, 0, 0, 0, false, P::kWarpScalar});  // not whole vectors
    cases.push_back({t, 1, 1, 0, 0, 0, 0, false, P::kBlock});            // a row of one
  }
  for (Case const& c : cases) {
    SCOPED_TRACE(strCat(dataTypeName(c.t), " [", c.rows, ", ", c.len, "] shifts ", c.shiftX, c.shiftY, c.shiftR,
                        c.shiftS, c.residual ? " residual" : "",
                        c.variant == cuda::RowVariant::kAlternative ? " alternative" : ""));
    size_t const e = dataTypeSize(c.t);
    int64_t const n = c.rows * c.len;
    HostTensor hx = randomTensor(c.t, {n}, 1, -3, 3), hr = randomTensor(c.t, {n}, 2, -3, 3);
    HostTensor hs = randomTensor(c.t, {c.len}, 3, 0.5, 1.5), hb = randomTensor(c.t, {c.len}, 4);
    auto up = [&](HostTensor const& h, int shift) {
      auto b = backends::DeviceBuffer::allocate(dev, h.bytes() + 64, "test buffer");
      EXPECT_TRUE(b.isOk());
      EXPECT_TRUE(dev->copy(static_cast<char*>(b->data()) + shift * e, h.data(), h.bytes(),
                            backends::CopyKind::kHostToDevice, stream)
                      .isOk());
      return std::move(*b);
    };
    backends::DeviceBuffer x = up(hx, c.shiftX), r = up(hr, c.shiftR), s = up(hs, c.shiftS), b = up(hb, 0);
    backends::DeviceBuffer xa = up(hx, 0), ra = up(hr, 0), sa = up(hs, 0);
    auto y = backends::DeviceBuffer::allocate(dev, hx.bytes() + 64, "test output");
    auto ya = backends::DeviceBuffer::allocate(dev, hx.bytes() + 64, "test output");
    ASSERT_TRUE(y.isOk() && ya.isOk());
    auto view = backends::normalizationView("test", makeDims({c.rows, c.len}), makeDims({c.len}), makeDims({c.len}),
                                            {1}, 1, false);
    ASSERT_TRUE(view.isOk());
    int64_t const* strides[3] = {view->xStrides.data(), view->scaleStrides.data(), view->biasStrides.data()};
    bool mask[2] = {false, true};
    cuda::StridedSpace outer = cuda::makeSpace(2, view->shape.data(), mask, false, 3, strides);
    cuda::StridedSpace inner = cuda::makeSpace(2, view->shape.data(), mask, true, 3, strides);
    auto at = [&](backends::DeviceBuffer const& buf, int shift) { return static_cast<char*>(buf.data()) + shift * e; };
    auto dt = static_cast<int32_t>(c.t);
    cuda::NormPath got =
        cuda::launchNormalization(dt, at(x, c.shiftX), c.residual ? at(r, c.shiftR) : nullptr, n, at(*y, c.shiftY),
                                  at(s, c.shiftS), dt, b.data(), dt, outer, inner, 1e-5f, cs, false, c.variant);
    EXPECT_EQ(static_cast<int>(got), static_cast<int>(c.want));
    EXPECT_EQ(static_cast<int>(cuda::launchNormalization(dt, xa.data(), c.residual ? ra.data() : nullptr, n, ya->data(),
                                                         sa.data(), dt, b.data(), dt, outer, inner, 1e-5f, cs, true)),
              static_cast<int>(P::kBlock));
    ASSERT_TRUE(cuda::launchStatus("normalization").isOk());
    HostTensor hy = *HostTensor::allocate(c.t, makeDims({n}), "got");
    HostTensor hya = *HostTensor::allocate(c.t, makeDims({n}), "want");
    ASSERT_TRUE(
        dev->copy(hy.mutableData(), at(*y, c.shiftY), hy.bytes(), backends::CopyKind::kDeviceToHost, stream).isOk());
    ASSERT_TRUE(
        dev->copy(hya.mutableData(), ya->data(), hya.bytes(), backends::CopyKind::kDeviceToHost, stream).isOk());
    ASSERT_TRUE(dev->synchronize(stream).isOk());
    EXPECT_LE(normRelativeError(hy, hya), defaultTolerance(c.t));
  }
  dev->destroyStream(stream);
}

TEST(CudaNormalization, EmptyBatch) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(norm(randomTensor(DataType::kFLOAT, {0, 8}, 1), randomTensor(DataType::kFLOAT, {8}, 2),
                              randomTensor(DataType::kFLOAT, {8}, 3), {1}));
}

}  // namespace
}  // namespace kiln
