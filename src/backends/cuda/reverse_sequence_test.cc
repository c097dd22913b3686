// gpu tests of the CUDA ReverseSequence tactic against the reference: both axis orders, other axes around them,
// lengths 0..steps, int32/int64 lengths, every byte width.
#include "backends/cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

ir::Attributes rsAttrs(int64_t b, int64_t s) { return attrs({{"batch_axis", b}, {"sequence_axis", s}}); }

TEST(CudaReverseSequence, AxesAndLengths) {
  KILN_REQUIRE_GPU();
  // [steps 6, batch 4, 3]: lengths 0..6.
  HostTensor x = randomTensor(DataType::kFLOAT, {6, 4, 3}, 1, -5, 5);
  HostTensor lens = HostTensor::fromVector(DataType::kINT64, makeDims({4}), std::vector<int64_t>{0, 6, 3, 1});
  expectMatchesReference({ir::OpType::kReverseSequence, rsAttrs(1, 0), {var(x), var(lens)}}, 0);
  // [batch 4, steps 5, 2] with int32 lengths.
  HostTensor y = randomTensor(DataType::kINT32, {4, 5, 2}, 2, -50, 50);
  HostTensor l32 = HostTensor::fromVector(DataType::kINT32, makeDims({4}), std::vector<int64_t>{5, 2, 0, 4});
  expectMatchesReference({ir::OpType::kReverseSequence, rsAttrs(0, 1), {var(y), cst(l32)}}, 0);
  // Axes not adjacent, negative, with a leading axis.
  HostTensor z = randomTensor(DataType::kHALF, {2, 7, 3, 5}, 3);
  HostTensor l5 = HostTensor::fromVector(DataType::kINT64, makeDims({5}), std::vector<int64_t>{7, 1, 4, 0, 6});
  expectMatchesReference({ir::OpType::kReverseSequence, rsAttrs(-1, 1), {var(z), var(l5)}}, 0);
}

TEST(CudaReverseSequence, EveryByteWidth) {
  KILN_REQUIRE_GPU();
  HostTensor lens = HostTensor::fromVector(DataType::kINT32, makeDims({3}), std::vector<int64_t>{2, 9, 5});
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kUINT8,
                     DataType::kINT32, DataType::kINT64, DataType::kBOOL}) {
    SCOPED_TRACE(dataTypeName(t));
    expectMatchesReference(
        {ir::OpType::kReverseSequence, rsAttrs(0, 1), {var(randomTensor(t, {3, 9, 11}, 4, -20, 20)), var(lens)}}, 0);
  }
}

}  // namespace
}  // namespace kiln
