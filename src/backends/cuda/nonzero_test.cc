// gpu tests of the CUDA NonZero tactic against the reference: every input dtype, int32/int64 indices, ranks 0..5,
// empty results, all non-zero, empty inputs, NaN and -0.0, inputs spanning many blocks.
#include "backends/cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

ir::Attributes nzAttrs(DataType it) { return attrs({{"indices_type", static_cast<int64_t>(it)}}); }

// A tensor with about `density` of its elements non-zero (values in [1, 5) with random signs for signed types).
HostTensor sparseTensor(DataType t, std::vector<int64_t> const& shape, uint32_t seed, double density) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  auto keep = randomValues(static_cast<size_t>(n), seed, 0, 1);
  auto val = randomValues(static_cast<size_t>(n), seed + 1000, 1, 5);
  bool isUnsigned = t == DataType::kUINT8 || t == DataType::kBOOL;
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) {
    double x = isFloatType(t) ? val[i] : std::floor(val[i]);
    if (t == DataType::kBOOL) x = 1;
    if (!isUnsigned && keep[i] < density / 2) x = -x;
    v[i] = keep[i] < density ? x : 0;
  }
  return HostTensor::fromVector(t, makeDims(shape), v);
}

void expectNonZero(HostTensor const& x, DataType it) {
  SCOPED_TRACE(std::string(dataTypeName(x.dtype())) + " " + dimsToString(x.shape()) + " -> " + dataTypeName(it));
  expectMatchesReference({ir::OpType::kNonZero, nzAttrs(it), {var(x)}});
}

std::vector<DataType> const kInputTypes = {DataType::kFLOAT, DataType::kHALF,  DataType::kBF16,
                                           DataType::kFP8,   DataType::kINT8,  DataType::kUINT8,
                                           DataType::kINT32, DataType::kINT64, DataType::kBOOL};

TEST(CudaNonZero, EveryTypeBothIndexTypes) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 1;
  for (DataType t : kInputTypes)
    for (DataType it : {DataType::kINT32, DataType::kINT64}) expectNonZero(sparseTensor(t, {7, 9, 5}, seed++, 0.4), it);
}

TEST(CudaNonZero, RanksZeroToFive) {
  KILN_REQUIRE_GPU();
  std::vector<std::vector<int64_t>> shapes = {{}, {13}, {6, 7}, {3, 4, 5}, {2, 3, 4, 5}, {2, 3, 1, 4, 3}};
  uint32_t seed = 50;
  for (auto const& s : shapes)
    for (DataType it : {DataType::kINT32, DataType::kINT64}) {
      expectNonZero(sparseTensor(DataType::kFLOAT, s, seed++, 0.5), it);
      expectNonZero(sparseTensor(DataType::kINT32, s, seed++, 0.5), it);
    }
  // Rank 0: a non-zero scalar gives [0, 1], a zero one [0, 0].
  expectNonZero(HostTensor::fromVector(DataType::kFLOAT, makeDims({}), std::vector<double>{3}), DataType::kINT64);
  expectNonZero(HostTensor::fromVector(DataType::kFLOAT, makeDims({}), std::vector<double>{0}), DataType::kINT64);
}

TEST(CudaNonZero, EmptyResultAllNonZeroEmptyInput) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kINT8, DataType::kBOOL}) {
    expectNonZero(sparseTensor(t, {4, 33}, 3, 0.0), DataType::kINT64);     // no hit
    expectNonZero(sparseTensor(t, {4, 33}, 4, 1.01), DataType::kINT64);    // every element
    expectNonZero(sparseTensor(t, {5000, 3}, 5, 1.01), DataType::kINT32);  // every element, many blocks
    expectNonZero(sparseTensor(t, {3, 0, 2}, 6, 0.5), DataType::kINT64);   // empty input
  }
  expectNonZero(sparseTensor(DataType::kHALF, {100000}, 7, 0.0), DataType::kINT64);  // no hit, many blocks
}

TEST(CudaNonZero, NaNIsNonZeroNegativeZeroIsZero) {
  KILN_REQUIRE_GPU();
  std::vector<double> v = {0, NAN, -0.0, 2, 0, -INFINITY, -0.0, 1e-30};
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16})
    expectNonZero(HostTensor::fromVector(t, makeDims({2, 4}), v), DataType::kINT64);
}

TEST(CudaNonZero, ManyBlocksOddSizes) {
  KILN_REQUIRE_GPU();
  // Sizes around and beyond the per-block chunk (4096), not multiples of it; several densities.
  uint32_t seed = 100;
  for (int64_t n : {4095, 4096, 4097, 12289, 1000003})
    for (double density : {0.01, 0.5, 0.97})
      expectNonZero(sparseTensor(DataType::kFLOAT, {n}, seed++, density), DataType::kINT64);
  expectNonZero(sparseTensor(DataType::kINT8, {17, 301, 203}, 7, 0.3), DataType::kINT32);
  expectNonZero(sparseTensor(DataType::kBOOL, {3, 5, 7, 11, 13}, 8, 0.6), DataType::kINT64);
  // More blocks than the scan has threads (1024 x 4096 elements is 4M): runs of several counts per thread.
  expectNonZero(sparseTensor(DataType::kUINT8, {9000001}, 9, 0.2), DataType::kINT64);
}

}  // namespace
}  // namespace kiln
