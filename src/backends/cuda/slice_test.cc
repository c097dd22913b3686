// gpu tests of the CUDA Slice tactic against the reference: negative and large strides, axes, every sample mode
// (with and without a fill value), constant parameter tensors, empty outputs, every byte width.
#include "backends/cuda/cuda_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers
using Ints = std::vector<int64_t>;

ir::Attributes sliceAttrs(Ints start, Ints size, Ints stride, SampleMode mode = SampleMode::kSTRICT_BOUNDS) {
  return attrs({{"start", start}, {"size", size}, {"stride", stride}, {"mode", static_cast<int64_t>(mode)}});
}

HostTensor ints(Ints v) {
  return HostTensor::fromVector(DataType::kINT64, makeDims({static_cast<int64_t>(v.size())}), v);
}

TEST(CudaSlice, NegativeAndLargeStridesEveryType) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kFP8, DataType::kINT8,
                     DataType::kUINT8, DataType::kINT32, DataType::kINT64, DataType::kBOOL}) {
    SCOPED_TRACE(dataTypeName(t));
    HostTensor x = randomTensor(t, {7, 9, 11}, 4, -20, 20);
    expectMatchesReference({ir::OpType::kSlice, sliceAttrs({6, 0, 10}, {3, 3, 4}, {-2, 4, -3}), {var(x)}}, 0);
    expectMatchesReference({ir::OpType::kSlice, sliceAttrs({1, 2, 3}, {5, 6, 7}, {1, 1, 1}), {var(x)}}, 0);
  }
  HostTensor big = randomTensor(DataType::kFLOAT, {3, 1000}, 4);
  expectMatchesReference({ir::OpType::kSlice, sliceAttrs({0, 999}, {3, 2}, {1, -998}), {var(big)}}, 0);
  expectMatchesReference({ir::OpType::kSlice, sliceAttrs({2, 0}, {3, 1000}, {-1, 1}), {var(big)}}, 0);
}

TEST(CudaSlice, AxesAttribute) {
  KILN_REQUIRE_GPU();
  HostTensor x = randomTensor(DataType::kFLOAT, {4, 6, 8}, 2);
  for (int64_t axis : {1, -2}) {
    ir::Attributes a = sliceAttrs({5}, {3}, {-2});
    a.setInts("axes", {axis});
    expectMatchesReference({ir::OpType::kSlice, a, {var(x)}}, 0);
  }
  ir::Attributes a = sliceAttrs({7, 1}, {4, 2}, {-2, 2});
  a.setInts("axes", {2, 0});
  expectMatchesReference({ir::OpType::kSlice, a, {var(x)}}, 0);
}

TEST(CudaSlice, EverySampleMode) {
  KILN_REQUIRE_GPU();
  HostTensor v = randomTensor(DataType::kINT64, {4}, 3, -50, 50);
  HostTensor m = randomTensor(DataType::kFLOAT, {5, 6}, 3);
  HostTensor one = randomTensor(DataType::kHALF, {1, 5}, 3);
  for (SampleMode mode : {SampleMode::kWRAP, SampleMode::kCLAMP, SampleMode::kFILL, SampleMode::kREFLECT}) {
    SCOPED_TRACE(static_cast<int>(mode));
    expectMatchesReference({ir::OpType::kSlice, sliceAttrs({-3}, {10}, {1}, mode), {var(v)}}, 0);
    expectMatchesReference({ir::OpType::kSlice, sliceAttrs({-4, 7}, {9, 5}, {1, -3}, mode), {var(m)}}, 0);
    expectMatchesReference({ir::OpType::kSlice, sliceAttrs({-11, 25}, {13, 4}, {3, -7}, mode), {var(m)}}, 0);
    expectMatchesReference({ir::OpType::kSlice, sliceAttrs({-2, 0}, {4, 5}, {1, 1}, mode), {var(one)}}, 0);
    // In bounds in every mode: the strided path.
    expectMatchesReference({ir::OpType::kSlice, sliceAttrs({1, 1}, {3, 4}, {1, 1}, mode), {var(m)}}, 0);
  }
}

TEST(CudaSlice, ParameterTensorsAndFillValue) {
  KILN_REQUIRE_GPU();
  HostTensor x = randomTensor(DataType::kFLOAT, {5, 6}, 8);
  HostTensor fill = HostTensor::fromVector(DataType::kFLOAT, makeDims({}), std::vector<double>{2.5});
  ir::Attributes fillMode = attrs({{"mode", static_cast<int64_t>(SampleMode::kFILL)}});
  // Constant start/size/stride and a fill value, constant and not.
  expectMatchesReference(
      {ir::OpType::kSlice, fillMode, {var(x), cst(ints({-2, 4})), cst(ints({8, 3})), cst(ints({1, 1})), cst(fill)}}, 0);
  expectMatchesReference(
      {ir::OpType::kSlice, fillMode, {var(x), cst(ints({-2, 4})), cst(ints({8, 3})), cst(ints({1, 1})), var(fill)}}, 0);
  expectMatchesReference({ir::OpType::kSlice,
                          fillMode,
                          {var(x), cst(ints({7})), cst(ints({4})), cst(ints({-2})), var(fill), cst(ints({0}))}},
                         0);
  expectMatchesReference({ir::OpType::kSlice,
                          sliceAttrs({0, 0}, {2, 2}, {1, 1}),
                          {var(x), cst(ints({1, 2})), cst(ints({3, 2})), none(), none(), none()}},
                         0);
}

TEST(CudaSlice, RankEightEveryMode) {
  KILN_REQUIRE_GPU();
  HostTensor x = randomTensor(DataType::kINT64, {2, 3, 1, 2, 3, 2, 1, 4}, 9, -99, 99);
  for (SampleMode mode :
       {SampleMode::kSTRICT_BOUNDS, SampleMode::kWRAP, SampleMode::kCLAMP, SampleMode::kFILL, SampleMode::kREFLECT}) {
    SCOPED_TRACE(static_cast<int>(mode));
    bool strict = mode == SampleMode::kSTRICT_BOUNDS;
    expectMatchesReference(
        {ir::OpType::kSlice,
         sliceAttrs({1, 2, 0, 0, strict ? 2 : 4, 1, 0, strict ? 3 : -2}, {2, 3, 1, 2, 2, 2, 1, strict ? 2 : 7},
                    {-1, -1, 1, 1, -2, -1, 1, strict ? -2 : 1}, mode),
         {var(x)}},
        0);
  }
}

TEST(CudaSlice, EmptyOutput) {
  KILN_REQUIRE_GPU();
  HostTensor x = randomTensor(DataType::kFLOAT, {5, 6}, 8);
  expectMatchesReference({ir::OpType::kSlice, sliceAttrs({0, 0}, {0, 6}, {1, 1}), {var(x)}}, 0);
  expectMatchesReference({ir::OpType::kSlice, sliceAttrs({0, 0}, {3, 0}, {1, 1}, SampleMode::kWRAP), {var(x)}}, 0);
}

}  // namespace
}  // namespace kiln
