// gpu tests of the CUDA OneHot tactic against the reference: every axis, int32/int64/float indices (negative and
// out-of-range ones), every byte width of values, empty indices.
#include "backends/cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

HostTensor depthOf(int64_t d) {
  return HostTensor::fromVector(DataType::kINT64, makeDims({}), std::vector<int64_t>{d});
}

TEST(CudaOneHot, EveryAxisAndIndexType) {
  KILN_REQUIRE_GPU();
  for (DataType it : {DataType::kINT32, DataType::kINT64, DataType::kFLOAT}) {
    // depth 5: indices in [-7, 7) include negative ones and ones out of range on both sides.
    HostTensor idx = randomTensor(it, {3, 4, 2}, 5, -7, 7);
    for (int64_t axis : {0, 1, 2, 3, -1, -2, -4}) {
      SCOPED_TRACE(::testing::Message() << dataTypeName(it) << " axis " << axis);
      expectMatchesReference({ir::OpType::kOneHot,
                              attrs({{"axis", axis}}),
                              {var(idx), var(randomTensor(DataType::kFLOAT, {2}, 3, -5, 5)), cst(depthOf(5))}},
                             0);
    }
  }
}

TEST(CudaOneHot, EveryValueTypeAndEmpty) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kUINT8,
                     DataType::kINT32, DataType::kINT64, DataType::kBOOL}) {
    SCOPED_TRACE(dataTypeName(t));
    HostTensor values = HostTensor::fromVector(t, makeDims({2}), std::vector<double>{0, 1});
    expectMatchesReference({ir::OpType::kOneHot,
                            attrs({{"axis", int64_t{-1}}}),
                            {var(randomTensor(DataType::kINT64, {37, 3}, 5, -9, 9)), var(values), cst(depthOf(9))}},
                           0);
  }
  expectMatchesReference({ir::OpType::kOneHot,
                          attrs({{"axis", int64_t{1}}}),
                          {var(randomTensor(DataType::kINT32, {0, 3}, 5, 0, 4)),
                           var(randomTensor(DataType::kFLOAT, {2}, 3)), cst(depthOf(4))}},
                         0);
  expectMatchesReference({ir::OpType::kOneHot,
                          attrs({{"axis", int64_t{0}}}),
                          {var(randomTensor(DataType::kINT32, {}, 5, 0, 4)),
                           var(randomTensor(DataType::kFLOAT, {2}, 3)), cst(depthOf(4))}},
                         0);
}

}  // namespace
}  // namespace kiln
