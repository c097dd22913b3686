// gpu tests of the CUDA Shape tactic against the reference: ranks 0..8, empty dims, any input type.
#include "backends/cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

TEST(CudaShape, EveryRank) {
  KILN_REQUIRE_GPU();
  std::vector<int64_t> dims = {3, 1, 4, 2, 5, 1, 2, 3};
  for (size_t rank = 0; rank <= dims.size(); ++rank) {
    SCOPED_TRACE(::testing::Message() << "rank " << rank);
    std::vector<int64_t> s(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(rank));
    expectMatchesReference({ir::OpType::kShape, {}, {var(randomTensor(DataType::kFLOAT, s, 1))}}, 0);
  }
  expectMatchesReference({ir::OpType::kShape, {}, {var(randomTensor(DataType::kINT8, {4, 0, 3}, 1))}}, 0);
  expectMatchesReference({ir::OpType::kShape, {}, {var(randomTensor(DataType::kHALF, {70000}, 1))}}, 0);
}

}  // namespace
}  // namespace kiln
