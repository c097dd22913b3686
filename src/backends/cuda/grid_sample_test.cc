// gpu tests of the CUDA GridSample tactic against the reference: every 2-D mode with every padding and
// align_corners value (grid points outside [-1, 1] included), 3-D nearest and trilinear, half/bf16, empty grids.
#include "backends/cuda/cuda_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

ir::Attributes gridAttrs(InterpolationMode mode, int64_t align, SampleMode sample) {
  return attrs(
      {{"mode", static_cast<int64_t>(mode)}, {"align_corners", align}, {"sample_mode", static_cast<int64_t>(sample)}});
}

std::vector<SampleMode> const kPads = {SampleMode::kFILL, SampleMode::kCLAMP, SampleMode::kREFLECT};

TEST(CudaGridSample, Image2dEveryMode) {
  KILN_REQUIRE_GPU();
  HostTensor x = randomTensor(DataType::kFLOAT, {2, 3, 7, 9}, 1, -5, 5);
  HostTensor grid = randomTensor(DataType::kFLOAT, {2, 5, 6, 2}, 2, -1.4, 1.4);
  for (auto mode : {InterpolationMode::kNEAREST, InterpolationMode::kLINEAR, InterpolationMode::kCUBIC})
    for (int64_t align : {0, 1})
      for (SampleMode pad : kPads) {
        SCOPED_TRACE(::testing::Message()
                     << "mode " << static_cast<int>(mode) << " align " << align << " pad " << static_cast<int>(pad));
        expectMatchesReference({ir::OpType::kGridSample, gridAttrs(mode, align, pad), {var(x), var(grid)}});
      }
}

TEST(CudaGridSample, Volume3d) {
  KILN_REQUIRE_GPU();
  HostTensor x = randomTensor(DataType::kFLOAT, {2, 2, 4, 5, 6}, 1, -5, 5);
  HostTensor grid = randomTensor(DataType::kFLOAT, {2, 3, 4, 5, 3}, 2, -1.3, 1.3);
  for (auto mode : {InterpolationMode::kNEAREST, InterpolationMode::kLINEAR})
    for (int64_t align : {0, 1})
      for (SampleMode pad : kPads) {
        SCOPED_TRACE(::testing::Message()
                     << "mode " << static_cast<int>(mode) << " align " << align << " pad " << static_cast<int>(pad));
        expectMatchesReference({ir::OpType::kGridSample, gridAttrs(mode, align, pad), {var(x), var(grid)}});
      }
}

TEST(CudaGridSample, HalfBf16AndEmpty) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kHALF, DataType::kBF16})
    for (auto mode : {InterpolationMode::kLINEAR, InterpolationMode::kCUBIC}) {
      SCOPED_TRACE(::testing::Message() << dataTypeName(t) << " mode " << static_cast<int>(mode));
      expectMatchesReference(
          {ir::OpType::kGridSample,
           gridAttrs(mode, 0, SampleMode::kREFLECT),
           {var(randomTensor(t, {1, 4, 33, 17}, 1, -5, 5)), var(randomTensor(t, {1, 19, 23, 2}, 2, -1.2, 1.2))}});
    }
  expectMatchesReference(
      {ir::OpType::kGridSample,
       gridAttrs(InterpolationMode::kLINEAR, 0, SampleMode::kFILL),
       {var(randomTensor(DataType::kFLOAT, {1, 2, 3, 3}, 1)), var(randomTensor(DataType::kFLOAT, {1, 0, 4, 2}, 2))}});
}

}  // namespace
}  // namespace kiln
