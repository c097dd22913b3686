// gpu tests of the CUDA Scatter tactic against the reference: kELEMENT on every axis and kND with tuples of every
// length, every reduction with duplicate indices (order matters for none), negative indices, every type.
#include "backends/cuda/cuda_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers
using Ints = std::vector<int64_t>;

ir::Attributes scatterAttrs(ScatterMode mode, int64_t axis, ScatterReduction r) {
  return attrs({{"mode", static_cast<int64_t>(mode)}, {"axis", axis}, {"reduction", static_cast<int64_t>(r)}});
}

std::vector<ScatterReduction> const kReductions = {ScatterReduction::kNONE, ScatterReduction::kADD,
                                                   ScatterReduction::kMUL, ScatterReduction::kMAX,
                                                   ScatterReduction::kMIN};

TEST(CudaScatter, ElementEveryAxisAndReduction) {
  KILN_REQUIRE_GPU();
  Ints ds = {4, 5, 6};
  HostTensor data = randomTensor(DataType::kFLOAT, ds, 1, -2, 2);
  for (int64_t axis = -3; axis < 3; ++axis) {
    int64_t n = ds[static_cast<size_t>(axis < 0 ? axis + 3 : axis)];
    Ints is = {3, 4, 5};
    is[static_cast<size_t>(axis < 0 ? axis + 3 : axis)] = 9;  // more updates than the axis: duplicates
    for (ScatterReduction r : kReductions)
      for (DataType it : {DataType::kINT32, DataType::kINT64}) {
        SCOPED_TRACE(::testing::Message() << "axis " << axis << " reduction " << static_cast<int>(r));
        expectMatchesReference(
            {ir::OpType::kScatter,
             scatterAttrs(ScatterMode::kELEMENT, axis, r),
             {var(data), var(randomTensor(it, is, 2, -n, n)), var(randomTensor(DataType::kFLOAT, is, 3, -2, 2))}});
      }
  }
}

TEST(CudaScatter, NdEveryTupleLengthAndReduction) {
  KILN_REQUIRE_GPU();
  HostTensor data = randomTensor(DataType::kFLOAT, {3, 4, 5}, 1, -2, 2);
  Ints ds = {3, 4, 5};
  for (int64_t k = 1; k <= 3; ++k)
    for (ScatterReduction r : kReductions) {
      SCOPED_TRACE(::testing::Message() << "tuple " << k << " reduction " << static_cast<int>(r));
      Ints updShape = {2, 7};
      for (int64_t i = k; i < 3; ++i) updShape.push_back(ds[static_cast<size_t>(i)]);
      // Entries in [-3, 3) fit every axis; 14 tuples over few targets give duplicates.
      expectMatchesReference({ir::OpType::kScatter,
                              scatterAttrs(ScatterMode::kND, 0, r),
                              {var(data), var(randomTensor(DataType::kINT64, {2, 7, k}, 4, -3, 3)),
                               var(randomTensor(DataType::kFLOAT, updShape, 5, -2, 2))}});
    }
}

TEST(CudaScatter, EveryTypeExact) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kUINT8,
                     DataType::kINT32, DataType::kINT64, DataType::kBOOL}) {
    for (ScatterReduction r : kReductions) {
      SCOPED_TRACE(::testing::Message() << dataTypeName(t) << " reduction " << static_cast<int>(r));
      double lo = t == DataType::kUINT8 || t == DataType::kBOOL ? 0 : -5;
      expectMatchesReference(
          {ir::OpType::kScatter,
           scatterAttrs(ScatterMode::kELEMENT, 1, r),
           {var(randomTensor(t, {5, 6}, 1, lo, 5)), var(randomTensor(DataType::kINT32, {5, 13}, 2, -6, 6)),
            var(randomTensor(t, {5, 13}, 3, lo, 5))}});
      expectMatchesReference(
          {ir::OpType::kScatter,
           scatterAttrs(ScatterMode::kND, 0, r),
           {var(randomTensor(t, {5, 6}, 1, lo, 5)), var(randomTensor(DataType::kINT32, {9, 1}, 2, -5, 5)),
            var(randomTensor(t, {9, 6}, 3, lo, 5))}});
    }
  }
}

TEST(CudaScatter, EmptyAndLarge) {
  KILN_REQUIRE_GPU();
  HostTensor data = randomTensor(DataType::kFLOAT, {300, 257}, 1);
  expectMatchesReference({ir::OpType::kScatter,
                          scatterAttrs(ScatterMode::kELEMENT, 0, ScatterReduction::kADD),
                          {var(data), var(randomTensor(DataType::kINT64, {50, 257}, 2, -300, 300)),
                           var(randomTensor(DataType::kFLOAT, {50, 257}, 3))}});
  expectMatchesReference({ir::OpType::kScatter,
                          scatterAttrs(ScatterMode::kND, 0, ScatterReduction::kNONE),
                          {var(data), var(randomTensor(DataType::kINT64, {40, 1}, 2, -300, 300)),
                           var(randomTensor(DataType::kFLOAT, {40, 257}, 3))}});
  expectMatchesReference({ir::OpType::kScatter,
                          scatterAttrs(ScatterMode::kELEMENT, 1, ScatterReduction::kNONE),
                          {var(data), var(randomTensor(DataType::kINT64, {0, 3}, 2, 0, 3)),
                           var(randomTensor(DataType::kFLOAT, {0, 3}, 3))}});
  expectMatchesReference(
      {ir::OpType::kScatter,
       scatterAttrs(ScatterMode::kND, 0, ScatterReduction::kNONE),
       {var(data), var(randomTensor(DataType::kINT64, {0, 2}, 2, 0, 3)), var(randomTensor(DataType::kFLOAT, {0}, 3))}});
}

}  // namespace
}  // namespace kiln
