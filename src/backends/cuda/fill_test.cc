// gpu tests of the CUDA Fill tactic against the reference: linspace in every type with scalar and per-axis steps
// (attributes and constant tensors, exact int64), the seeded uniform and normal fills, empty and rank-0 outputs.
#include "backends/cuda/cuda_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers
using Ints = std::vector<int64_t>;

ir::Attributes fillAttrs(FillOperation op, Ints dims, DataType to, double alpha, double beta, int64_t seed = 0) {
  return attrs({{"op", static_cast<int64_t>(op)},
                {"dims", dims},
                {"to", static_cast<int64_t>(to)},
                {"alpha", alpha},
                {"beta", beta},
                {"seed", seed}});
}

HostTensor scalarOf(DataType t, double v) { return HostTensor::fromVector(t, makeDims({}), std::vector<double>{v}); }

TEST(CudaFill, LinspaceEveryType) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kUINT8,
                     DataType::kINT32, DataType::kINT64}) {
    SCOPED_TRACE(dataTypeName(t));
    expectMatchesReference({ir::OpType::kFill, fillAttrs(FillOperation::kLINSPACE, {3, 5, 7}, t, 1, 2), {}});
    expectMatchesReference({ir::OpType::kFill, fillAttrs(FillOperation::kLINSPACE, {4, 9}, t, -3.25, 0.7), {}});
  }
  expectMatchesReference(
      {ir::OpType::kFill, fillAttrs(FillOperation::kLINSPACE, {1000, 37}, DataType::kFLOAT, -1, 0.01), {}});
}

TEST(CudaFill, LinspaceTensorsAndExactInt64) {
  KILN_REQUIRE_GPU();
  HostTensor steps = HostTensor::fromVector(DataType::kFLOAT, makeDims({3}), std::vector<double>{100, 10, 1.5});
  expectMatchesReference({ir::OpType::kFill,
                          fillAttrs(FillOperation::kLINSPACE, {2, 3, 2}, DataType::kFLOAT, 0, 1),
                          {none(), cst(scalarOf(DataType::kFLOAT, 0.5)), cst(steps)}});
  HostTensor isteps = HostTensor::fromVector(DataType::kINT64, makeDims({2}), std::vector<int64_t>{1000, 3});
  expectMatchesReference({ir::OpType::kFill,
                          fillAttrs(FillOperation::kLINSPACE, {4, 5}, DataType::kINT32, 0, 1),
                          {none(), cst(scalarOf(DataType::kINT64, -7)), cst(isteps)}});
  expectMatchesReference({ir::OpType::kFill,
                          fillAttrs(FillOperation::kLINSPACE, {4, 5}, DataType::kFLOAT, 0, 1),
                          {none(), cst(scalarOf(DataType::kINT32, 2)), cst(scalarOf(DataType::kFLOAT, 0.25))}});
  int64_t start = (int64_t{1} << 60) + 1;
  ir::Attributes a = attrs({{"op", int64_t{0}},
                            {"dims", Ints{3, 4}},
                            {"to", static_cast<int64_t>(DataType::kINT64)},
                            {"alpha_int", start},
                            {"beta_int", int64_t{3}},
                            {"alpha_beta_int64", int64_t{1}}});
  expectMatchesReference({ir::OpType::kFill, a, {}}, 0);
  // Wrapping int8 linspace.
  expectMatchesReference({ir::OpType::kFill, fillAttrs(FillOperation::kLINSPACE, {300}, DataType::kINT8, 0, 1), {}}, 0);
}

TEST(CudaFill, SeededRandom) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16})
    for (int64_t seed : {0, 7}) {
      SCOPED_TRACE(::testing::Message() << dataTypeName(t) << " seed " << seed);
      expectMatchesReference(
          {ir::OpType::kFill, fillAttrs(FillOperation::kRANDOM_UNIFORM, {37, 101}, t, -2, 3, seed), {}});
      expectMatchesReference(
          {ir::OpType::kFill, fillAttrs(FillOperation::kRANDOM_NORMAL, {37, 101}, t, 3, 2, seed), {}});
    }
}

TEST(CudaFill, EmptyAndRankZero) {
  KILN_REQUIRE_GPU();
  expectMatchesReference({ir::OpType::kFill, fillAttrs(FillOperation::kLINSPACE, {0, 4}, DataType::kFLOAT, 0, 1), {}});
  expectMatchesReference({ir::OpType::kFill, fillAttrs(FillOperation::kLINSPACE, {}, DataType::kFLOAT, 4, 1), {}});
}

}  // namespace
}  // namespace kiln
