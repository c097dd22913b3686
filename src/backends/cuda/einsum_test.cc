// gpu tests of the CUDA Einsum tactic against the reference: matmul-like, batched, transposes, traces and
// diagonals, outer products, three inputs, implicit outputs, ellipsis broadcasting, long sums (block-per-output
// path), empty sums and outputs, every dtype it claims.
#include "backends/cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

// Random inputs in [-1, 1) for floats (in [0, 1) with `positive`: long float sums without cancellation keep the
// fp32 accumulation error relative to the result small), in [-5, 6) for integers (uint8: [0, 6)).
void expectEinsum(std::string const& eq, DataType t, std::vector<std::vector<int64_t>> const& shapes, uint32_t seed = 1,
                  bool positive = false) {
  SCOPED_TRACE("equation '" + eq + "' " + dataTypeName(t));
  std::vector<In> ins;
  bool isInt = !isFloatType(t);
  for (size_t i = 0; i < shapes.size(); ++i)
    ins.push_back(var(randomTensor(t, shapes[i], seed + static_cast<uint32_t>(i),
                                   isInt ? (t == DataType::kUINT8 ? 0 : -5) : (positive ? 0 : -1), isInt ? 6 : 1)));
  expectMatchesReference({ir::OpType::kEinsum, attrs({{"equation", eq}}), ins});
}

std::vector<DataType> const kAllTypes = {DataType::kFLOAT, DataType::kHALF,  DataType::kBF16, DataType::kINT8,
                                         DataType::kUINT8, DataType::kINT32, DataType::kINT64};

TEST(CudaEinsum, MatmulLikeEveryType) {
  KILN_REQUIRE_GPU();
  for (DataType t : kAllTypes) {
    expectEinsum("ij,jk->ik", t, {{7, 13}, {13, 5}});
    expectEinsum("ij,jk", t, {{3, 4}, {4, 9}});
    expectEinsum("ij,kj->ik", t, {{6, 11}, {10, 11}});
  }
}

TEST(CudaEinsum, BatchedAndTransposed) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kINT32}) {
    expectEinsum("bij,bjk->bik", t, {{3, 5, 7}, {3, 7, 4}});
    expectEinsum("bhqd,bhkd->bhqk", t, {{2, 3, 5, 8}, {2, 3, 6, 8}});
    expectEinsum("ij->ji", t, {{37, 19}});
    expectEinsum("abcd->dbca", t, {{2, 3, 4, 5}});
    expectEinsum("ba", t, {{4, 6}});     // implicit: a transpose
    expectEinsum("aB", t, {{4, 6}});     // uppercase first
    expectEinsum("ij->", t, {{9, 10}});  // full sum
    expectEinsum("ij->j", t, {{9, 10}});
  }
}

TEST(CudaEinsum, TraceDiagonalRepeatedLabels) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kBF16, DataType::kINT64, DataType::kINT8}) {
    expectEinsum("ii->", t, {{17, 17}});
    expectEinsum("ii", t, {{5, 5}});
    expectEinsum("ii->i", t, {{9, 9}});
    expectEinsum("bii->bi", t, {{3, 6, 6}});
    expectEinsum("iji->j", t, {{4, 5, 4}});
    expectEinsum("iij,jk->ik", t, {{3, 3, 4}, {4, 2}});
  }
}

TEST(CudaEinsum, OuterProductsAndThreeInputs) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kUINT8, DataType::kINT32}) {
    expectEinsum("i,j->ij", t, {{33}, {7}});
    expectEinsum("i,j", t, {{5}, {3}});
    expectEinsum("ab,cd->abcd", t, {{2, 3}, {4, 5}});
    expectEinsum("ij,jk,kl->il", t, {{4, 5}, {5, 6}, {6, 3}});
    expectEinsum("i,i,i->", t, {{50}, {50}, {50}});
    expectEinsum("ij,ij->ij", t, {{7, 9}, {7, 9}});  // elementwise product
    expectEinsum("ij,ij", t, {{7, 9}, {7, 9}});      // dot product to a scalar
  }
}

TEST(CudaEinsum, EllipsisBroadcasting) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kINT32}) {
    expectEinsum("...ij,...jk->...ik", t, {{2, 3, 4, 5}, {3, 5, 6}});
    expectEinsum("...ij,...jk->...ik", t, {{2, 1, 4, 5}, {3, 5, 6}});  // extent-1 broadcast
    expectEinsum("...ij,...jk", t, {{1, 4, 5}, {2, 5, 6}});
    expectEinsum("...ii->...i", t, {{2, 3, 4, 4}});
    expectEinsum("i...->...", t, {{5, 2, 3}});
    expectEinsum("...,...->...", t, {{4, 1, 3}, {2, 3}});
    expectEinsum("ij...->ij", t, {{3, 4, 2, 2}});  // ellipsis summed
    expectEinsum("...->...", t, {{}});             // rank 0
  }
}

TEST(CudaEinsum, LongSumsUseEveryThread) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kINT32, DataType::kINT64}) {
    expectEinsum("i,i->", t, {{100003}, {100003}}, 1, true);
    expectEinsum("ij,jk->ik", t, {{3, 4099}, {4099, 2}}, 2, true);
    expectEinsum("ii->", t, {{1500, 1500}}, 3, true);
    expectEinsum("abc->b", t, {{37, 5, 41}}, 4, true);
    expectEinsum("ij,ij->", t, {{300, 200}, {300, 200}}, 5, true);
  }
}

TEST(CudaEinsum, LargeOutputsSpanManyBlocks) {
  KILN_REQUIRE_GPU();
  expectEinsum("ij,jk->ik", DataType::kFLOAT, {{300, 70}, {70, 333}});
  expectEinsum("bij->bji", DataType::kHALF, {{5, 301, 203}});
  expectEinsum("i,j->ij", DataType::kINT64, {{1001}, {517}});
}

TEST(CudaEinsum, IntegerWraparoundMatchesReference) {
  KILN_REQUIRE_GPU();
  // int8 sums that overflow: the reference computes in int64 and wraps on store.
  std::vector<int64_t> s = {64, 64};
  HostTensor a = randomTensor(DataType::kINT8, s, 3, -128, 128);
  HostTensor b = randomTensor(DataType::kINT8, s, 4, -128, 128);
  expectMatchesReference({ir::OpType::kEinsum, attrs({{"equation", std::string("ij,jk->ik")}}), {var(a), var(b)}});
  HostTensor c = randomTensor(DataType::kINT64, {40}, 5, -4e18, 4e18);
  expectMatchesReference({ir::OpType::kEinsum, attrs({{"equation", std::string("i,i->")}}), {var(c), var(c)}});
}

TEST(CudaEinsum, EmptyTensors) {
  KILN_REQUIRE_GPU();
  expectEinsum("ij,jk->ik", DataType::kFLOAT, {{3, 0}, {0, 4}});  // empty sum: zeros
  expectEinsum("ij,jk->ik", DataType::kINT32, {{3, 0}, {0, 4}});
  expectEinsum("ij,jk->ik", DataType::kFLOAT, {{0, 5}, {5, 4}});  // empty output
  expectEinsum("ij->", DataType::kHALF, {{0, 7}});
}

TEST(CudaEinsum, ConstantInputsAndSizeOneDims) {
  KILN_REQUIRE_GPU();
  HostTensor w = randomTensor(DataType::kFLOAT, {1, 6, 1}, 9);
  HostTensor x = randomTensor(DataType::kFLOAT, {4, 1, 6, 1}, 10);
  expectMatchesReference({ir::OpType::kEinsum, attrs({{"equation", std::string("nabc,abc->nb")}}), {var(x), cst(w)}});
}

}  // namespace
}  // namespace kiln
