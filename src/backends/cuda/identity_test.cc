// gpu tests of the CUDA Identity tactic against the reference backend, and of the harness itself.
#include "backends/cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

TEST(CudaIdentity, EveryStorageTypeCopiesExactly) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kUINT8,
                     DataType::kINT32, DataType::kINT64, DataType::kBOOL})
    expectMatchesReference({ir::OpType::kIdentity, {}, {var(randomTensor(t, {3, 5, 7}, 1, -50, 50))}}, 0);
}

TEST(CudaIdentity, EmptyTensor) {
  KILN_REQUIRE_GPU();
  expectMatchesReference({ir::OpType::kIdentity, {}, {var(randomTensor(DataType::kFLOAT, {0, 4}, 1))}}, 0);
}

TEST(CudaHarness, NormRelativeErrorCatchesWrongValuesAndNaN) {
  // The harness must be able to fail: a wrong element, a NaN where the reference has a number.
  HostTensor ref = HostTensor::fromVector(DataType::kFLOAT, makeDims({3}), std::vector<double>{1, 2, 3});
  HostTensor bad = HostTensor::fromVector(DataType::kFLOAT, makeDims({3}), std::vector<double>{1, 2, 4});
  HostTensor nan = HostTensor::fromVector(DataType::kFLOAT, makeDims({3}), std::vector<double>{1, NAN, 3});
  EXPECT_EQ(normRelativeError(ref, ref), 0);
  EXPECT_GT(normRelativeError(bad, ref), 0.2);
  EXPECT_TRUE(std::isinf(normRelativeError(nan, ref)));
}

}  // namespace
}  // namespace kiln
