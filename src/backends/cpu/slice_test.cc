// slice_cpu_strided against the reference Slice: contiguous and strided slices (negative strides), some axes or
// all, parameters as attributes or as shape-tensor inputs, large slices split over threads; out-of-bounds
// coordinates are an error naming the axis; other sample modes stay on the reference.
#include <gtest/gtest.h>

#include "backends/cpu/cpu_test_util.h"

namespace kiln {
namespace {

using namespace cputest;  // NOLINT: test helpers
using V = std::vector<int64_t>;

constexpr char kTactic[] = "slice_cpu_strided";

ir::Attributes sliceAttrs(V start, V size, V stride, V axes = {}) {
  ir::Attributes a;
  a.set("start", start);
  a.set("size", size);
  a.set("stride", stride);
  if (!axes.empty())
    a.set("axes", axes);
  a.set("mode", int64_t{0});
  return a;
}

TEST(CpuSlice, StridesAxesAndInputs) {
  // ViT's q/k/v split of [197, 1, 2304]: one third along the last axis.
  EXPECT_EQ(compareWithReference(kTactic, OpType::kSlice, sliceAttrs({768}, {768}, {1}, {2}),
                                 {var(randomTensor({197, 1, 2304}, 1))}, 2),
            0.0);
  EXPECT_EQ(compareWithReference(kTactic, OpType::kSlice, sliceAttrs({1, 0, 2}, {2, 4, 3}, {1, 2, 2}),
                                 {var(randomTensor({3, 9, 8}, 2))}),
            0.0);
  // Negative strides (reversal) on the last and a middle axis.
  EXPECT_EQ(compareWithReference(kTactic, OpType::kSlice, sliceAttrs({6, 4}, {4, 5}, {-1, -1}, {1, 2}),
                                 {var(randomTensor({2, 7, 5}, 3))}),
            0.0);
  // A large slice split over threads.
  EXPECT_EQ(compareWithReference(kTactic, OpType::kSlice, sliceAttrs({0, 1}, {512, 600}, {1, 1}, {0, 1}),
                                 {var(randomTensor({512, 601}, 4))}, 2),
            0.0);
  // Parameters as constant shape-tensor inputs.
  HostTensor start = HostTensor::fromVector(DataType::kINT64, makeDims({2}), std::vector<double>{1, 2});
  HostTensor size = HostTensor::fromVector(DataType::kINT32, makeDims({2}), std::vector<double>{3, 2});
  HostTensor stride = HostTensor::fromVector(DataType::kINT64, makeDims({2}), std::vector<double>{1, 3});
  ir::Attributes a;
  a.set("mode", int64_t{0});
  EXPECT_EQ(compareWithReference(kTactic, OpType::kSlice, a,
                                 {var(randomTensor({5, 9}, 5)), cst(start), cst(size), cst(stride)}),
            0.0);
}

TEST(CpuSlice, OutOfBoundsAndOtherModes) {
  // Built for x [6]; run on x [4] (shapes come with every call): coordinates 0, 2, 4, and 4 is outside [0, 4).
  std::vector<In> ins{var(randomTensor({6}, 1))};  // n.ptrs point into it
  OneNode n = makeNode(OpType::kSlice, sliceAttrs({0}, {3}, {2}), ins);
  auto k = backends::TacticRegistry::instance().find(kTactic)->create(*n.node);
  ASSERT_TRUE(k.isOk());
  HostTensor y = *HostTensor::allocate(DataType::kFLOAT, makeDims({3}), "y");
  backends::CpuStream stream;
  backends::LaunchContext ctx;
  ctx.stream = &stream;
  ctx.inputs.push_back({const_cast<void*>(n.ptrs[0]->data()), DataType::kFLOAT, makeDims({4})});
  ctx.outputs.push_back({y.mutableData(), DataType::kFLOAT, y.shape()});
  Status s = (*k)->enqueue(ctx);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.toString().find("axis 0"), std::string::npos) << s.toString();
  ir::Attributes wrap = sliceAttrs({0}, {4}, {1});
  wrap.set("mode", static_cast<int64_t>(SampleMode::kWRAP));
  EXPECT_FALSE(tacticSupports(kTactic, makeNode(OpType::kSlice, wrap, {var(randomTensor({6}, 1))})));
}

}  // namespace
}  // namespace kiln
