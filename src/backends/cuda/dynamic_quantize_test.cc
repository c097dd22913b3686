// gpu tests of the CUDA DynamicQuantize tactic against the reference: every input / output / scale type, block
// shapes of every rank (including -1 and the axis + block_size form), double-quantization scales, NaN and zero
// blocks, empty inputs, inputs spanning many blocks; bit-exact outputs.
#include "backends/cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

ir::Attributes dqAttrs(DataType to, DataType st, std::vector<int64_t> const& block) {
  ir::Attributes a = attrs({{"to", static_cast<int64_t>(to)}, {"scale_type", static_cast<int64_t>(st)}});
  a.setInts("block_shape", block);
  return a;
}

void expectDq(HostTensor const& x, ir::Attributes const& a, std::optional<HostTensor> const& dq = std::nullopt,
              double tol = -1) {
  SCOPED_TRACE(std::string(dataTypeName(x.dtype())) + " " + dimsToString(x.shape()));
  std::vector<In> ins{var(x)};
  if (dq) ins.push_back(var(*dq));
  expectMatchesReference({ir::OpType::kDynamicQuantize, a, ins, 2}, tol);
}

TEST(CudaDynamicQuantize, EveryTypeCombination) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 1;
  for (DataType xt : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16})
    for (DataType to : {DataType::kFP8, DataType::kINT8})
      for (DataType st : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kFP8})
        expectDq(randomTensor(xt, {6, 64}, seed++, -3, 3), dqAttrs(to, st, {1, 16}));
}

TEST(CudaDynamicQuantize, BlockShapes) {
  KILN_REQUIRE_GPU();
  for (DataType to : {DataType::kFP8, DataType::kINT8}) {
    expectDq(randomTensor(DataType::kFLOAT, {5, 96}, 2, -10, 10), dqAttrs(to, DataType::kFLOAT, {1, 32}));
    expectDq(randomTensor(DataType::kFLOAT, {5, 96}, 3, -10, 10), dqAttrs(to, DataType::kFLOAT, {1, -1}));  // rows
    expectDq(randomTensor(DataType::kHALF, {8, 24}, 4, -2, 2), dqAttrs(to, DataType::kFP8, {4, 8}));  // 2-D blocks
    expectDq(randomTensor(DataType::kBF16, {4, 6, 8}, 5, -2, 2), dqAttrs(to, DataType::kHALF, {2, 3, 4}));
    expectDq(randomTensor(DataType::kFLOAT, {2, 3, 4, 10}, 6, -1, 1), dqAttrs(to, DataType::kFLOAT, {1, 3, 1, 5}));
    expectDq(randomTensor(DataType::kFLOAT, {12}, 7, -1, 1), dqAttrs(to, DataType::kFLOAT, {12}));      // one block
    expectDq(randomTensor(DataType::kFLOAT, {3, 7}, 8, -1, 1), dqAttrs(to, DataType::kFLOAT, {1, 1}));  // per element
    expectDq(randomTensor(DataType::kFLOAT, {4, 1000}, 9, -50, 50), dqAttrs(to, DataType::kFLOAT, {1, 1000}));
    // axis + block_size instead of block_shape.
    ir::Attributes a = attrs({{"to", static_cast<int64_t>(to)},
                              {"scale_type", static_cast<int64_t>(DataType::kFLOAT)},
                              {"axis", int64_t{-1}},
                              {"block_size", int64_t{4}}});
    expectDq(randomTensor(DataType::kHALF, {3, 5, 8}, 10, -3, 3), a);
    a.setInt("axis", 0);
    a.setInt("block_size", 2);
    expectDq(randomTensor(DataType::kFLOAT, {6, 5}, 11, -3, 3), a);
  }
}

TEST(CudaDynamicQuantize, DoubleQuantizationScale) {
  KILN_REQUIRE_GPU();
  for (DataType to : {DataType::kFP8, DataType::kINT8})
    for (DataType st : {DataType::kFLOAT, DataType::kFP8, DataType::kBF16}) {
      HostTensor x = randomTensor(DataType::kFLOAT, {8, 64}, 12, -100, 100);
      expectDq(x, dqAttrs(to, st, {1, 16}),
               HostTensor::fromVector(DataType::kFLOAT, makeDims({}), std::vector<double>{0.37}));
      expectDq(x, dqAttrs(to, st, {1, 16}),
               HostTensor::fromVector(DataType::kHALF, makeDims({}), std::vector<double>{0.01}));
      expectDq(x, dqAttrs(to, st, {1, 16}),
               HostTensor::fromVector(DataType::kBF16, makeDims({}), std::vector<double>{3}));
      expectDq(x, dqAttrs(to, st, {1, 16}),
               HostTensor::fromVector(DataType::kFLOAT, makeDims({}), std::vector<double>{0}));
    }
}

TEST(CudaDynamicQuantize, ZeroBlocksNaNAndRounding) {
  KILN_REQUIRE_GPU();
  // A zero block (scale 0, y 0), a block with a NaN (ignored by the maximum; NaN -> 0 in int8, NaN in fp8),
  // values landing on rounding ties.
  std::vector<double> v = {0, 0, 0, 0, 1, NAN, -2, 0.5, 254, -3, 5, -127, 448, 1, -2, 0.5};
  for (DataType to : {DataType::kFP8, DataType::kINT8})
    for (DataType st : {DataType::kFLOAT, DataType::kFP8})
      expectDq(HostTensor::fromVector(DataType::kFLOAT, makeDims({4, 4}), v), dqAttrs(to, st, {1, 4}));
}

TEST(CudaDynamicQuantize, BitExactLargeInputs) {
  KILN_REQUIRE_GPU();
  // Many blocks (more than one warp per block of the grid), outputs compared exactly.
  for (DataType to : {DataType::kFP8, DataType::kINT8}) {
    expectDq(randomTensor(DataType::kFLOAT, {512, 1024}, 13, -20, 20), dqAttrs(to, DataType::kFLOAT, {1, 32}),
             std::nullopt, 0);
    expectDq(randomTensor(DataType::kHALF, {3, 4096, 16}, 14, -5, 5), dqAttrs(to, DataType::kFLOAT, {1, 128, 16}),
             std::nullopt, 0);
    expectDq(randomTensor(DataType::kBF16, {77, 300}, 15, -1, 1), dqAttrs(to, DataType::kFLOAT, {7, 20}),
             HostTensor::fromVector(DataType::kFLOAT, makeDims({}), std::vector<double>{0.123}), 0);
  }
}

TEST(CudaDynamicQuantize, EmptyInput) {
  KILN_REQUIRE_GPU();
  expectDq(randomTensor(DataType::kFLOAT, {0, 32}, 16), dqAttrs(DataType::kFP8, DataType::kFP8, {1, 16}));
}

}  // namespace
}  // namespace kiln
