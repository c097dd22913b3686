// gpu tests of the CUDA Concatenation tactic against the reference: every axis (negative too), 1..4 inputs of
// different extents, empty inputs, every byte width.
#include "backends/cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers
using Ints = std::vector<int64_t>;

TEST(CudaConcatenation, EveryAxisOneToFourInputs) {
  KILN_REQUIRE_GPU();
  Ints base = {3, 4, 5, 2};
  Ints extents = {2, 1, 5, 3};
  for (int32_t axis = 0; axis < 4; ++axis) {
    for (size_t count = 1; count <= 4; ++count) {
      std::vector<In> ins;
      for (size_t i = 0; i < count; ++i) {
        Ints s = base;
        s[static_cast<size_t>(axis)] = extents[i];
        ins.push_back(var(randomTensor(DataType::kFLOAT, s, static_cast<uint32_t>(10 * axis + i), -5, 5)));
      }
      SCOPED_TRACE(::testing::Message() << "axis " << axis << " inputs " << count);
      expectMatchesReference({ir::OpType::kConcatenation, attrs({{"axis", int64_t{axis}}}), ins}, 0);
      expectMatchesReference({ir::OpType::kConcatenation, attrs({{"axis", int64_t{axis - 4}}}), ins}, 0);
    }
  }
}

TEST(CudaConcatenation, EveryByteWidthAndConstants) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kUINT8,
                     DataType::kINT32, DataType::kINT64, DataType::kBOOL}) {
    SCOPED_TRACE(dataTypeName(t));
    expectMatchesReference({ir::OpType::kConcatenation,
                            attrs({{"axis", int64_t{1}}}),
                            {var(randomTensor(t, {3, 7, 5}, 1, -20, 20)), cst(randomTensor(t, {3, 2, 5}, 2, -20, 20)),
                             var(randomTensor(t, {3, 9, 5}, 3, -20, 20))}},
                           0);
  }
}

TEST(CudaConcatenation, EmptyInputsAndLarge) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(
      {ir::OpType::kConcatenation,
       attrs({{"axis", int64_t{0}}}),
       {var(randomTensor(DataType::kFLOAT, {0, 3}, 1)), var(randomTensor(DataType::kFLOAT, {4, 3}, 2)),
        var(randomTensor(DataType::kFLOAT, {0, 3}, 3))}},
      0);
  expectMatchesReference(
      {ir::OpType::kConcatenation,
       attrs({{"axis", int64_t{1}}}),
       {var(randomTensor(DataType::kFLOAT, {0, 3}, 1)), var(randomTensor(DataType::kFLOAT, {0, 5}, 2))}},
      0);
  expectMatchesReference(
      {ir::OpType::kConcatenation,
       attrs({{"axis", int64_t{2}}}),
       {var(randomTensor(DataType::kHALF, {2, 333, 1001}, 1)), var(randomTensor(DataType::kHALF, {2, 333, 17}, 2))}},
      0);
  expectMatchesReference(
      {ir::OpType::kConcatenation, attrs({{"axis", int64_t{0}}}), {var(randomTensor(DataType::kINT32, {5}, 1, -9, 9))}},
      0);
}

}  // namespace
}  // namespace kiln
