// Layer parameters given as network inputs and known only at run time (reduce axes, squeeze/unsqueeze axes,
// cumulative axis, resize scales): one engine, several enqueues with different values, each checked against
// hand-computed results; an absurd value fails the enqueue with a message instead of allocating.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln {
namespace {

struct Logger : ILogger {
  void log(Severity severity, AsciiChar const* msg) noexcept override {
    if (severity <= Severity::kERROR) last = msg;
  }
  std::string last;
};

struct Allocator : IOutputAllocator {
  void* reallocateOutputAsync(char const*, void*, uint64_t size, uint64_t, cudaStream_t) override {
    if (size > buffer.size()) buffer.resize(size);
    return buffer.data();
  }
  void notifyShape(char const*, Dims const& dims) noexcept override { shape = dims; }
  std::vector<float> values(int64_t n) const {
    auto const* p = reinterpret_cast<float const*>(buffer.data());
    return std::vector<float>(p, p + n);
  }
  std::vector<uint8_t> buffer;
  Dims shape{};
};

std::vector<int64_t> dimsOf(Dims const& d) { return std::vector<int64_t>(d.d, d.d + std::max(d.nbDims, 0)); }

// Builds the network `define` makes (output "y") and returns an execution context with an allocator on "y".
class RuntimeParams : public ::testing::Test {
 protected:
  template <typename Define>
  void build(Define define) {
    builder_.reset(createInferBuilder(logger_));
    std::unique_ptr<INetworkDefinition> net(builder_->createNetworkV2(0));
    ITensor* y = define(*net);
    ASSERT_NE(y, nullptr) << logger_.last;
    y->setName("y");
    net->markOutput(*y);
    std::unique_ptr<IBuilderConfig> config(builder_->createBuilderConfig());
    config->setDefaultDeviceType(DeviceType::kCPU);
    std::unique_ptr<IHostMemory> plan(builder_->buildSerializedNetwork(*net, *config));
    ASSERT_NE(plan, nullptr) << logger_.last;
    runtime_.reset(createInferRuntime(logger_));
    engine_.reset(runtime_->deserializeCudaEngine(plan->data(), plan->size()));
    ASSERT_NE(engine_, nullptr) << logger_.last;
    ctx_.reset(engine_->createExecutionContext());
    ASSERT_NE(ctx_, nullptr);
    ASSERT_TRUE(ctx_->setOutputAllocator("y", &alloc_));
  }
  Logger logger_;
  Allocator alloc_;
  std::unique_ptr<IBuilder> builder_;
  std::unique_ptr<IRuntime> runtime_;
  std::unique_ptr<ICudaEngine> engine_;
  std::unique_ptr<IExecutionContext> ctx_;
};

// x [2, 3] = {1, 2, 3, 4, 5, 6}.
std::vector<float> const kX = {1, 2, 3, 4, 5, 6};

TEST_F(RuntimeParams, ReduceAxesChangeBetweenRuns) {
  build([](INetworkDefinition& net) -> ITensor* {
    ITensor* x = net.addInput("x", DataType::kFLOAT, Dims2{2, 3});
    ITensor* axes = net.addInput("axes", DataType::kINT64, Dims{1, {1}});
    IReduceLayer* r = net.addReduce(*x, ReduceOperation::kSUM, 1U, false);
    if (!r) return nullptr;
    r->setInput(1, *axes);
    return r->getOutput(0);
  });
  ASSERT_TRUE(ctx_->setTensorAddress("x", const_cast<float*>(kX.data())));
  struct Case {
    int64_t axis;
    std::vector<int64_t> shape;
    std::vector<float> want;
  };
  for (Case const& c : {Case{0, {3}, {5, 7, 9}}, Case{1, {2}, {6, 15}}, Case{-2, {3}, {5, 7, 9}}}) {
    int64_t axis = c.axis;
    ASSERT_TRUE(ctx_->setTensorAddress("axes", &axis));
    ASSERT_TRUE(ctx_->enqueueV3(nullptr)) << logger_.last;
    EXPECT_EQ(dimsOf(alloc_.shape), c.shape) << c.axis;
    EXPECT_EQ(alloc_.values(static_cast<int64_t>(c.want.size())), c.want) << c.axis;
  }
  int64_t bad = 2;
  ASSERT_TRUE(ctx_->setTensorAddress("axes", &bad));
  EXPECT_FALSE(ctx_->enqueueV3(nullptr));
  EXPECT_NE(logger_.last.find("out of range"), std::string::npos) << logger_.last;
  // A failed run leaves nothing pinned: the next values run normally.
  int64_t again = 1;
  ASSERT_TRUE(ctx_->setTensorAddress("axes", &again));
  ASSERT_TRUE(ctx_->enqueueV3(nullptr)) << logger_.last;
  EXPECT_EQ(dimsOf(alloc_.shape), (std::vector<int64_t>{2}));
  EXPECT_EQ(alloc_.values(2), (std::vector<float>{6, 15}));
}

TEST_F(RuntimeParams, SqueezeThenCumulativeWithRunTimeAxes) {
  build([](INetworkDefinition& net) -> ITensor* {
    ITensor* x = net.addInput("x", DataType::kFLOAT, Dims3{2, 1, 3});
    ITensor* axes = net.addInput("axes", DataType::kINT32, Dims{1, {1}});
    ITensor* axis = net.addInput("axis", DataType::kINT32, Dims{0, {}});
    ISqueezeLayer* s = net.addSqueeze(*x, *axes);
    if (!s) return nullptr;
    ICumulativeLayer* c = net.addCumulative(*s->getOutput(0), *axis, CumulativeOperation::kSUM, false, false);
    return c ? c->getOutput(0) : nullptr;
  });
  int32_t squeezeAxis = 1;
  ASSERT_TRUE(ctx_->setTensorAddress("x", const_cast<float*>(kX.data())));
  ASSERT_TRUE(ctx_->setTensorAddress("axes", &squeezeAxis));
  for (int32_t axis : {0, 1}) {
    ASSERT_TRUE(ctx_->setTensorAddress("axis", &axis));
    ASSERT_TRUE(ctx_->enqueueV3(nullptr)) << logger_.last;
    EXPECT_EQ(dimsOf(alloc_.shape), (std::vector<int64_t>{2, 3}));
    std::vector<float> want = axis == 0 ? std::vector<float>{1, 2, 3, 5, 7, 9} : std::vector<float>{1, 3, 6, 4, 9, 15};
    EXPECT_EQ(alloc_.values(6), want) << axis;
  }
  squeezeAxis = 0;  // extent 2: refused when the engine runs
  EXPECT_FALSE(ctx_->enqueueV3(nullptr));
  EXPECT_FALSE(logger_.last.empty());
}

TEST_F(RuntimeParams, UnsqueezeAxesChangeTheShape) {
  build([](INetworkDefinition& net) -> ITensor* {
    ITensor* x = net.addInput("x", DataType::kFLOAT, Dims2{2, 3});
    ITensor* axes = net.addInput("axes", DataType::kINT64, Dims{1, {1}});
    IUnsqueezeLayer* u = net.addUnsqueeze(*x, *axes);
    return u ? u->getOutput(0) : nullptr;
  });
  ASSERT_TRUE(ctx_->setTensorAddress("x", const_cast<float*>(kX.data())));
  for (int64_t axis : {0, 1, 2, -1}) {
    ASSERT_TRUE(ctx_->setTensorAddress("axes", &axis));
    ASSERT_TRUE(ctx_->enqueueV3(nullptr)) << logger_.last;
    std::vector<int64_t> want = {2, 3};
    want.insert(want.begin() + (axis < 0 ? 3 + axis : axis), 1);
    EXPECT_EQ(dimsOf(alloc_.shape), want) << axis;
    EXPECT_EQ(alloc_.values(6), kX);
  }
}

TEST_F(RuntimeParams, ResizeScalesChangeBetweenRuns) {
  build([](INetworkDefinition& net) -> ITensor* {
    ITensor* x = net.addInput("x", DataType::kFLOAT, Dims2{1, 2});
    ITensor* scales = net.addInput("scales", DataType::kFLOAT, Dims{1, {2}});
    IResizeLayer* r = net.addResize(*x);
    if (!r) return nullptr;
    r->setInput(1, *scales);
    r->setResizeMode(InterpolationMode::kNEAREST);
    r->setCoordinateTransformation(ResizeCoordinateTransformation::kASYMMETRIC);
    r->setNearestRounding(ResizeRoundMode::kFLOOR);
    return r->getOutput(0);
  });
  std::vector<float> x = {10, 20};
  ASSERT_TRUE(ctx_->setTensorAddress("x", x.data()));
  std::vector<float> twice = {1, 2};
  ASSERT_TRUE(ctx_->setTensorAddress("scales", twice.data()));
  ASSERT_TRUE(ctx_->enqueueV3(nullptr)) << logger_.last;
  EXPECT_EQ(dimsOf(alloc_.shape), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(alloc_.values(4), (std::vector<float>{10, 10, 20, 20}));
  std::vector<float> thrice = {2, 3};
  ASSERT_TRUE(ctx_->setTensorAddress("scales", thrice.data()));
  ASSERT_TRUE(ctx_->enqueueV3(nullptr)) << logger_.last;
  EXPECT_EQ(dimsOf(alloc_.shape), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(alloc_.values(12), (std::vector<float>{10, 10, 10, 20, 20, 20, 10, 10, 10, 20, 20, 20}));
  // 2^20 x 2^20 elements: refused with a message when the engine runs, nothing that size is allocated.
  std::vector<float> huge = {1048576.0F, 524288.0F};
  ASSERT_TRUE(ctx_->setTensorAddress("scales", huge.data()));
  EXPECT_FALSE(ctx_->enqueueV3(nullptr));
  EXPECT_NE(logger_.last.find("sized while running"), std::string::npos) << logger_.last;
  ASSERT_TRUE(ctx_->setTensorAddress("scales", twice.data()));
  ASSERT_TRUE(ctx_->enqueueV3(nullptr)) << logger_.last;
  EXPECT_EQ(alloc_.values(4), (std::vector<float>{10, 10, 20, 20}));
}

}  // namespace
}  // namespace kiln
