// gpu tests of the CUDA Normalization tactic against the reference backend: layer norm (BERT [128, 768] over the
// last axis, several axes, broadcast scale/bias), instance norm, group norm ([2, 32, 7, 7], per-group and
// per-channel scale/bias), every float dtype, mixed scale/bias types, odd and long groups.
#include "backends/cuda/cuda_test_util.h"

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
      for (std::vector<int64_t> rows : {std::vector<int64_t>{1}, std::vector<int64_t>{3, 13}, std::vector<int64_t>{3, 343}}) {
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

TEST(CudaNormalization, EmptyBatch) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(norm(randomTensor(DataType::kFLOAT, {0, 8}, 1), randomTensor(DataType::kFLOAT, {8}, 2),
                              randomTensor(DataType::kFLOAT, {8}, 3), {1}));
}

}  // namespace
}  // namespace kiln
