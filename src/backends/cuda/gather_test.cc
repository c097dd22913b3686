// gpu tests of the CUDA Gather tactic against the reference: kDEFAULT on every axis (negative indices, int32 and
// int64 indices, scalar indices, one element-wise dim), kELEMENT, kND with batch dims, empty tensors, every byte
// width.
#include "backends/cuda/cuda_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers
using Ints = std::vector<int64_t>;

ir::Attributes gatherAttrs(GatherMode mode, int64_t axis, int64_t ne = 0) {
  return attrs({{"mode", static_cast<int64_t>(mode)}, {"axis", axis}, {"num_elementwise_dims", ne}});
}

TEST(CudaGather, DefaultEveryAxisNegativeIndices) {
  KILN_REQUIRE_GPU();
  Ints shape = {4, 5, 6, 3};
  HostTensor data = randomTensor(DataType::kFLOAT, shape, 1, -5, 5);
  for (int64_t axis = -4; axis < 4; ++axis) {
    int64_t n = shape[static_cast<size_t>(axis < 0 ? axis + 4 : axis)];
    for (DataType it : {DataType::kINT32, DataType::kINT64}) {
      SCOPED_TRACE(::testing::Message() << "axis " << axis << " " << dataTypeName(it));
      expectMatchesReference({ir::OpType::kGather,
                              gatherAttrs(GatherMode::kDEFAULT, axis),
                              {var(data), var(randomTensor(it, {2, 7}, 3, -n, n))}},
                             0);
      expectMatchesReference({ir::OpType::kGather,
                              gatherAttrs(GatherMode::kDEFAULT, axis),
                              {var(data), cst(randomTensor(it, {}, 4, -n, n))}},
                             0);
    }
  }
}

TEST(CudaGather, DefaultEveryByteWidthAndElementwiseDim) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kUINT8,
                     DataType::kINT32, DataType::kINT64, DataType::kBOOL}) {
    SCOPED_TRACE(dataTypeName(t));
    expectMatchesReference(
        {ir::OpType::kGather,
         gatherAttrs(GatherMode::kDEFAULT, 1),
         {var(randomTensor(t, {3, 9, 5}, 2, -20, 20)), var(randomTensor(DataType::kINT64, {4}, 5, -9, 9))}},
        0);
  }
  // num_elementwise_dims 1: indices [N, ...] pick per batch entry.
  expectMatchesReference(
      {ir::OpType::kGather,
       gatherAttrs(GatherMode::kDEFAULT, 1, 1),
       {var(randomTensor(DataType::kFLOAT, {3, 7, 4}, 2)), var(randomTensor(DataType::kINT32, {3, 5}, 6, -7, 7))}},
      0);
  expectMatchesReference(
      {ir::OpType::kGather,
       gatherAttrs(GatherMode::kDEFAULT, 2, 1),
       {var(randomTensor(DataType::kHALF, {3, 2, 7, 4}, 2)), var(randomTensor(DataType::kINT64, {3, 2, 2}, 6, -7, 7))}},
      0);
}

TEST(CudaGather, DefaultEmptyAndLarge) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(
      {ir::OpType::kGather,
       gatherAttrs(GatherMode::kDEFAULT, 0),
       {var(randomTensor(DataType::kFLOAT, {5, 3}, 2)), var(randomTensor(DataType::kINT32, {0}, 6, 0, 5))}},
      0);
  expectMatchesReference(
      {ir::OpType::kGather,
       gatherAttrs(GatherMode::kDEFAULT, 1),
       {var(randomTensor(DataType::kFLOAT, {0, 3}, 2)), var(randomTensor(DataType::kINT32, {2}, 6, 0, 3))}},
      0);
  expectMatchesReference({ir::OpType::kGather,
                          gatherAttrs(GatherMode::kDEFAULT, 0),
                          {var(randomTensor(DataType::kFLOAT, {1000, 129}, 2)),
                           var(randomTensor(DataType::kINT64, {777}, 6, -1000, 1000))}},
                         0);
}

TEST(CudaGather, ElementMode) {
  KILN_REQUIRE_GPU();
  HostTensor data = randomTensor(DataType::kFLOAT, {4, 5, 6}, 1, -5, 5);
  Ints dims = {4, 5, 6};
  for (int64_t axis = -3; axis < 3; ++axis) {
    int64_t n = dims[static_cast<size_t>(axis < 0 ? axis + 3 : axis)];
    for (DataType it : {DataType::kINT32, DataType::kINT64}) {
      SCOPED_TRACE(::testing::Message() << "axis " << axis);
      expectMatchesReference({ir::OpType::kGather,
                              gatherAttrs(GatherMode::kELEMENT, axis),
                              {var(data), var(randomTensor(it, {3, 4, 2}, 7, -n, n))}},
                             0);
    }
  }
  expectMatchesReference(
      {ir::OpType::kGather,
       gatherAttrs(GatherMode::kELEMENT, 1),
       {var(randomTensor(DataType::kINT8, {3, 4}, 1, -50, 50)), var(randomTensor(DataType::kINT32, {3, 9}, 7, -4, 4))}},
      0);
  expectMatchesReference({ir::OpType::kGather,
                          gatherAttrs(GatherMode::kELEMENT, 0),
                          {var(data), var(randomTensor(DataType::kINT32, {0, 5, 6}, 7, 0, 4))}},
                         0);
}

TEST(CudaGather, NdModeWithBatchDims) {
  KILN_REQUIRE_GPU();
  HostTensor data = randomTensor(DataType::kFLOAT, {3, 4, 5, 6}, 1, -5, 5);
  // Tuples of 1..4 (no batch dims), negative coordinates; each entry drawn in [-3, 3) fits every axis.
  for (int64_t k = 1; k <= 4; ++k) {
    SCOPED_TRACE(::testing::Message() << "tuple " << k);
    expectMatchesReference({ir::OpType::kGather,
                            gatherAttrs(GatherMode::kND, 0, 0),
                            {var(data), var(randomTensor(DataType::kINT64, {2, 3, k}, 8, -3, 3))}},
                           0);
  }
  // One and two batch dims.
  expectMatchesReference({ir::OpType::kGather,
                          gatherAttrs(GatherMode::kND, 0, 1),
                          {var(data), var(randomTensor(DataType::kINT32, {3, 7, 2}, 8, -4, 4))}},
                         0);
  expectMatchesReference({ir::OpType::kGather,
                          gatherAttrs(GatherMode::kND, 0, 2),
                          {var(data), var(randomTensor(DataType::kINT32, {3, 4, 2}, 8, -5, 5))}},
                         0);
  expectMatchesReference(
      {ir::OpType::kGather,
       gatherAttrs(GatherMode::kND, 0, 0),
       {var(randomTensor(DataType::kHALF, {6, 7}, 1)), var(randomTensor(DataType::kINT64, {5, 1}, 8, -6, 6))}},
      0);
  expectMatchesReference({ir::OpType::kGather,
                          gatherAttrs(GatherMode::kND, 0, 0),
                          {var(data), var(randomTensor(DataType::kINT64, {0, 2}, 8, 0, 3))}},
                         0);
}

}  // namespace
}  // namespace kiln
