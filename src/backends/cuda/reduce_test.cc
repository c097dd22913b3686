// gpu tests of the CUDA Reduce tactic against the reference backend: every operation and dtype, axes first /
// middle / last / several / all / none, keep_dims, odd sizes, long rows and many short rows, a constant axes input.
#include "backends/cuda/cuda_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

ir::Attributes reduceAttrs(ReduceOperation op, std::vector<int64_t> axes, bool keep) {
  return attrs({{"op", static_cast<int64_t>(op)}, {"axes", axes}, {"keep_dims", int64_t{keep ? 1 : 0}}});
}

constexpr ReduceOperation kOps[] = {ReduceOperation::kSUM, ReduceOperation::kPROD, ReduceOperation::kMAX,
                                    ReduceOperation::kMIN, ReduceOperation::kAVG};

// Values near 1 keep products finite; integers small keep them exact.
HostTensor input(DataType t, std::vector<int64_t> const& shape, ReduceOperation op, uint32_t seed) {
  if (op == ReduceOperation::kPROD)
    return isFloatType(t) ? randomTensor(t, shape, seed, 0.9, 1.1) : randomTensor(t, shape, seed, -2, 3);
  return isFloatType(t) ? randomTensor(t, shape, seed, -1, 1) : randomTensor(t, shape, seed, -1000, 1000);
}

TEST(CudaReduce, EveryOpDtypeAndAxes) {
  KILN_REQUIRE_GPU();
  std::vector<std::vector<int64_t>> axesList = {{0}, {1}, {3}, {-1}, {1, 2}, {0, 2}, {0, 3}, {0, 1, 2, 3}, {}};
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT32, DataType::kINT64})
    for (ReduceOperation op : kOps)
      for (auto const& axes : axesList)
        for (bool keep : {false, true}) {
          SCOPED_TRACE(strCat(dataTypeName(t), " op ", static_cast<int>(op), " axes ", axes.size(), " keep ", keep));
          expectMatchesReference(
              {ir::OpType::kReduce, reduceAttrs(op, axes, keep), {var(input(t, {3, 5, 7, 9}, op, 7))}});
        }
}

// Channels-last input (GlobalAveragePool after a channels-last convolution): both spatial axes reduced, with or
// without the batch / channel axes, keep_dims or not; the output has the same bytes in either layout.
TEST(CudaReduce, ChannelsLastOverBothSpatialAxes) {
  KILN_REQUIRE_GPU();
  std::vector<std::vector<int64_t>> axesList = {{2, 3}, {-1, -2}, {1, 2, 3}, {0, 2, 3}};
  for (DataType t : {DataType::kHALF, DataType::kBF16, DataType::kFLOAT})
    for (ReduceOperation op : {ReduceOperation::kAVG, ReduceOperation::kMAX, ReduceOperation::kSUM})
      for (auto const& axes : axesList)
        for (bool keep : {false, true}) {
          SCOPED_TRACE(strCat(dataTypeName(t), " op ", static_cast<int>(op), " axes ", axes.size(), " keep ", keep));
          expectMatchesReference(
              {ir::OpType::kReduce, reduceAttrs(op, axes, keep), {var(input(t, {3, 37, 7, 5}, op, 9))}, 1, true});
        }
  // ResNet-50's last pooling at batch 2: 2048 channels of 7 x 7.
  expectMatchesReference({ir::OpType::kReduce,
                          reduceAttrs(ReduceOperation::kAVG, {2, 3}, true),
                          {var(input(DataType::kHALF, {2, 2048, 7, 7}, ReduceOperation::kAVG, 10))},
                          1,
                          true});
}

TEST(CudaReduce, BoolMaxMin) {
  KILN_REQUIRE_GPU();
  for (ReduceOperation op : {ReduceOperation::kMAX, ReduceOperation::kMIN})
    for (std::vector<int64_t> axes : {std::vector<int64_t>{1}, std::vector<int64_t>{0, 2}})
      expectMatchesReference({ir::OpType::kReduce,
                              reduceAttrs(op, axes, false),
                              {var(randomTensor(DataType::kBOOL, {4, 33, 5}, 3, 0, 1.2))}});
}

TEST(CudaReduce, LongRowsAndManyShortRows) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT32})
    for (ReduceOperation op :
         {ReduceOperation::kSUM, ReduceOperation::kMAX, ReduceOperation::kMIN, ReduceOperation::kAVG}) {
      expectMatchesReference({ir::OpType::kReduce, reduceAttrs(op, {1}, false), {var(input(t, {3, 30000}, op, 1))}});
      expectMatchesReference({ir::OpType::kReduce, reduceAttrs(op, {0}, true), {var(input(t, {30001}, op, 2))}});
      expectMatchesReference({ir::OpType::kReduce, reduceAttrs(op, {1}, false), {var(input(t, {20011, 3}, op, 3))}});
      expectMatchesReference({ir::OpType::kReduce, reduceAttrs(op, {1}, false), {var(input(t, {5003, 47}, op, 4))}});
      expectMatchesReference({ir::OpType::kReduce, reduceAttrs(op, {0}, false), {var(input(t, {1000, 37}, op, 5))}});
      expectMatchesReference({ir::OpType::kReduce, reduceAttrs(op, {1}, true), {var(input(t, {7, 513, 129}, op, 6))}});
    }
}

TEST(CudaReduce, SizeOneDimsRankFiveAndEmpty) {
  KILN_REQUIRE_GPU();
  for (ReduceOperation op : kOps) {
    expectMatchesReference(
        {ir::OpType::kReduce, reduceAttrs(op, {1, 3}, true), {var(input(DataType::kFLOAT, {2, 1, 3, 1, 5}, op, 8))}});
    expectMatchesReference({ir::OpType::kReduce,
                            reduceAttrs(op, {0, 2, 4}, false),
                            {var(input(DataType::kFLOAT, {2, 3, 4, 5, 6}, op, 9))}});
    expectMatchesReference(
        {ir::OpType::kReduce, reduceAttrs(op, {1}, false), {var(input(DataType::kFLOAT, {0, 4}, op, 10))}});
    expectMatchesReference(
        {ir::OpType::kReduce, reduceAttrs(op, {0}, false), {var(input(DataType::kINT64, {0, 4}, op, 10))}});
  }
}

TEST(CudaReduce, NaNPropagatesThroughMaxMin) {
  KILN_REQUIRE_GPU();
  HostTensor x =
      HostTensor::fromVector(DataType::kFLOAT, makeDims({2, 4}), std::vector<double>{1, NAN, 3, -2, 5, 6, 7, 8});
  for (ReduceOperation op : kOps) expectMatchesReference({ir::OpType::kReduce, reduceAttrs(op, {1}, false), {var(x)}});
}

TEST(CudaReduce, ConstantAxesInput) {
  KILN_REQUIRE_GPU();
  HostTensor axes = HostTensor::fromVector(DataType::kINT64, makeDims({2}), std::vector<double>{0, 2});
  expectMatchesReference({ir::OpType::kReduce,
                          reduceAttrs(ReduceOperation::kSUM, {}, false),
                          {var(randomTensor(DataType::kFLOAT, {4, 6, 8}, 11)), cst(axes)}});
}

}  // namespace
}  // namespace kiln
