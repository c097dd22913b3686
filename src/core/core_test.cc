// Tests of Status/Result, Dims math, the allocation hook and budget, HostTensor and the thread pool.
#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <numeric>

#include "core/dims.h"
#include "core/memory.h"
#include "core/status.h"
#include "core/tensor.h"
#include "core/thread_pool.h"

namespace kiln {
namespace {

Result<int> half(int x) {
  if (x % 2) return invalidArgument("odd: ", x);
  return x / 2;
}

Status useHalf(int x, int* out) {
  KILN_ASSIGN_OR_RETURN(*out, half(x));
  return Status::ok();
}

TEST(Status, PropagatesWithContext) {
  int v = 0;
  EXPECT_TRUE(useHalf(4, &v).isOk());
  EXPECT_EQ(v, 2);
  Status s = useHalf(3, &v);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.withContext("layer 'a'").message(), "layer 'a': odd: 3");
  EXPECT_EQ(s.toString(), "invalid argument: odd: 3");
}

TEST(Dims, VolumeOverflowAndUnknown) {
  EXPECT_EQ(*checkedVolume(makeDims({2, 3, 4})), 24);
  EXPECT_EQ(*checkedVolume(makeDims({})), 1);
  EXPECT_FALSE(checkedVolume(makeDims({-1, 3})).isOk());
  EXPECT_FALSE(checkedVolume(makeDims({int64_t(1) << 62, 4})).isOk());
  EXPECT_FALSE(checkedBytes(int64_t(1) << 62, 8).isOk());
  EXPECT_EQ(volume(makeDims({2, -1})), -1);
}

// Found by onnx_fuzz (ONNX Pad with pads of 2^62 + 1): volume() multiplied model-given dims unchecked (UBSan:
// signed overflow) in shape inference and in the network's host evaluation. It now saturates at INT64_MAX,
// still giving 0 when a dim is 0 after the overflow.
TEST(Dims, VolumeSaturatesInsteadOfOverflowing) {
  int64_t const big = (int64_t{1} << 62) + 590083;
  EXPECT_EQ(volume(makeDims({big, 4})), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(volume(makeDims({big, 4, 0})), 0);
  EXPECT_EQ(volume(makeDims({big, 4, -1})), -1);
  EXPECT_EQ(volume(makeDims({big, 1})), big);
}

TEST(Dims, Broadcast) {
  EXPECT_TRUE(dimsEqual(*broadcastShapes(makeDims({2, 1, 4}), makeDims({3, 1})), makeDims({2, 3, 4})));
  EXPECT_TRUE(dimsEqual(*broadcastShapes(makeDims({-1, 4}), makeDims({1, 4})), makeDims({-1, 4})));
  EXPECT_TRUE(dimsEqual(*broadcastShapes(makeDims({-1, 4}), makeDims({5, 4})), makeDims({5, 4})));
  EXPECT_FALSE(broadcastShapes(makeDims({2, 4}), makeDims({3, 4})).isOk());
  EXPECT_EQ(*normalizeAxis(-1, 4), 3);
  EXPECT_FALSE(normalizeAxis(4, 4).isOk());
  EXPECT_EQ(dimsToString(makeDims({1, -1})), "[1,-1]");
}

TEST(Memory, InjectedFailureHitsTheKthAllocation) {
  setHostAllocFailAt(3);
  EXPECT_TRUE(HostBuffer::allocate(16, "a").isOk());
  EXPECT_TRUE(HostBuffer::allocate(16, "b").isOk());
  auto third = HostBuffer::allocate(16, "c");
  EXPECT_FALSE(third.isOk());
  EXPECT_EQ(third.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(third.status().message().find("injected"), std::string::npos);
  EXPECT_TRUE(HostBuffer::allocate(16, "d").isOk());
  setHostAllocFailAt(0);
}

TEST(Memory, BudgetIsCheckedBeforeAllocating) {
  MemoryBudget budget(1000);
  auto a = HostBuffer::allocate(600, "a", &budget);
  ASSERT_TRUE(a.isOk());
  EXPECT_EQ(budget.used(), 600);
  auto b = HostBuffer::allocate(600, "weights of conv1", &budget);
  ASSERT_FALSE(b.isOk());
  EXPECT_NE(b.status().message().find("weights of conv1"), std::string::npos);
  { HostBuffer moved = std::move(a).value(); }
  EXPECT_EQ(budget.used(), 0);
  EXPECT_FALSE(HostBuffer::allocate(size_t(1) << 63, "huge").isOk());
}

TEST(HostTensor, AllocateCloneAndRead) {
  HostTensor t = HostTensor::fromVector(DataType::kINT64, makeDims({3}), std::vector<int64_t>{4, -5, 6});
  EXPECT_EQ(t.toInt64Vector(), (std::vector<int64_t>{4, -5, 6}));
  auto c = t.clone("clone");
  ASSERT_TRUE(c.isOk());
  EXPECT_TRUE(c->sameContents(t));
  float data[2] = {1.5f, 2.5f};
  HostTensor b = HostTensor::borrow(DataType::kFLOAT, makeDims({2}), data);
  EXPECT_FALSE(b.isOwned());
  EXPECT_EQ(b.mutableData(), nullptr);
  EXPECT_EQ(b.doubleAt(1), 2.5);
  EXPECT_FALSE(HostTensor::allocate(DataType::kFLOAT, makeDims({-1}), "bad").isOk());
}

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 7, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      pool.parallelFor(n, 3, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
      });
      for (auto& h : hits) EXPECT_EQ(h.load(), 1);
    }
  }
}

}  // namespace
}  // namespace kiln
