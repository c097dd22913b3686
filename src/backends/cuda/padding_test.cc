// gpu tests of the CUDA Padding tactic against the reference: padding, cropping (negative pads), both mixed,
// fewer pads than the rank, empty results, every byte width.
#include "backends/cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers
using Ints = std::vector<int64_t>;

ir::Attributes pads(Ints b, Ints e) { return attrs({{"pads_begin", b}, {"pads_end", e}}); }

TEST(CudaPadding, PadCropAndMixed) {
  KILN_REQUIRE_GPU();
  HostTensor x = randomTensor(DataType::kFLOAT, {2, 3, 7, 9}, 1, -5, 5);
  expectMatchesReference({ir::OpType::kPadding, pads({1, 2}, {3, 0}), {var(x)}}, 0);
  expectMatchesReference({ir::OpType::kPadding, pads({-1, -2}, {-3, 0}), {var(x)}}, 0);
  expectMatchesReference({ir::OpType::kPadding, pads({2, -4}, {-1, 5}), {var(x)}}, 0);
  expectMatchesReference({ir::OpType::kPadding, pads({1, 0, 2, 1}, {0, 1, 1, 2}), {var(x)}}, 0);
  expectMatchesReference({ir::OpType::kPadding, pads({}, {}), {var(x)}}, 0);
}

TEST(CudaPadding, EveryByteWidth) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kUINT8,
                     DataType::kINT32, DataType::kINT64, DataType::kBOOL}) {
    SCOPED_TRACE(dataTypeName(t));
    expectMatchesReference({ir::OpType::kPadding, pads({3, 1}, {2, 4}), {var(randomTensor(t, {3, 5, 7}, 2, -20, 20))}},
                           0);
  }
}

TEST(CudaPadding, EmptyAndLarge) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(
      {ir::OpType::kPadding, pads({1, 1}, {1, 1}), {var(randomTensor(DataType::kFLOAT, {0, 3, 4}, 1))}}, 0);
  expectMatchesReference({ir::OpType::kPadding, pads({-2}, {-2}), {var(randomTensor(DataType::kFLOAT, {3, 4}, 1))}}, 0);
  expectMatchesReference({ir::OpType::kPadding, pads({0, 0}, {0, 0}), {var(randomTensor(DataType::kFLOAT, {0, 0}, 1))}},
                         0);
  expectMatchesReference(
      {ir::OpType::kPadding, pads({5, 17}, {3, 1}), {var(randomTensor(DataType::kHALF, {4, 511, 513}, 1))}}, 0);
}

}  // namespace
}  // namespace kiln
