// Data-dependent shapes through the public API: NonZero's output count is known only while running; the
// output reaches the user through an IOutputAllocator, and layers after it run with the observed shape.
#include <gtest/gtest.h>

#include <cstdlib>
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

// Grows a host buffer on request and records the shape it is told.
struct Allocator : IOutputAllocator {
  void* reallocateOutputAsync(char const* name, void* current, uint64_t size, uint64_t alignment,
                              cudaStream_t) override {
    ++calls;
    if (size > buffer.size()) buffer.resize(size);
    return buffer.data();
  }
  void notifyShape(char const* name, Dims const& dims) noexcept override { shape = dims; }
  std::vector<uint8_t> buffer;
  Dims shape{};
  int calls = 0;
};

class DataDependent : public ::testing::Test {
 protected:
  void SetUp() override {
    builder_.reset(createInferBuilder(logger_));
    net_.reset(builder_->createNetworkV2(0));
    ITensor* x = net_->addInput("x", DataType::kFLOAT, Dims2{2, 3});
    auto* nz = net_->addNonZero(*x, DataType::kINT64);
    ASSERT_NE(nz, nullptr) << logger_.last;
    nz->getOutput(0)->setName("indices");
    net_->markOutput(*nz->getOutput(0));
    // A layer after the data-dependent one: the number of nonzeros, through Shape -> Gather.
    auto* shape = net_->addShape(*nz->getOutput(0));
    int32_t const one = 1;
    auto* idx = net_->addConstant(Dims{0, {}}, Weights{DataType::kINT32, &one, 1});
    auto* count = net_->addGather(*shape->getOutput(0), *idx->getOutput(0), 0);
    count->getOutput(0)->setName("count");
    net_->markOutput(*count->getOutput(0));
    std::unique_ptr<IBuilderConfig> config(builder_->createBuilderConfig());
    config->setDefaultDeviceType(DeviceType::kCPU);
    std::unique_ptr<IHostMemory> plan(builder_->buildSerializedNetwork(*net_, *config));
    ASSERT_NE(plan, nullptr) << logger_.last;
    runtime_.reset(createInferRuntime(logger_));
    engine_.reset(runtime_->deserializeCudaEngine(plan->data(), plan->size()));
    ASSERT_NE(engine_, nullptr) << logger_.last;
    context_.reset(engine_->createExecutionContext());
    ASSERT_NE(context_, nullptr);
  }

  Logger logger_;
  std::unique_ptr<IBuilder> builder_;
  std::unique_ptr<INetworkDefinition> net_;
  std::unique_ptr<IRuntime> runtime_;
  std::unique_ptr<ICudaEngine> engine_;
  std::unique_ptr<IExecutionContext> context_;
};

TEST_F(DataDependent, OutputAllocatorReceivesTheObservedShape) {
  EXPECT_EQ(context_->getTensorShape("indices").d[1], -1);  // unknown before running
  Allocator alloc;
  int64_t count = -1;
  ASSERT_TRUE(context_->setOutputAllocator("indices", &alloc));
  EXPECT_EQ(context_->getOutputAllocator("indices"), &alloc);
  ASSERT_TRUE(context_->setTensorAddress("count", &count));
  for (auto const& [values, expected] : std::vector<std::pair<std::vector<float>, int64_t>>{
           {{0, 1, 0, 2, 0, 3}, 3}, {{0, 0, 0, 0, 0, 0}, 0}, {{1, 1, 1, 1, 1, 1}, 6}}) {
    ASSERT_TRUE(context_->setTensorAddress("x", const_cast<float*>(values.data())));
    ASSERT_TRUE(context_->enqueueV3(nullptr)) << logger_.last;
    ASSERT_EQ(alloc.shape.nbDims, 2);
    EXPECT_EQ(alloc.shape.d[0], 2);
    EXPECT_EQ(alloc.shape.d[1], expected);
    EXPECT_EQ(count, expected);
    EXPECT_EQ(context_->getTensorShape("indices").d[1], expected);
    if (expected == 3) {
      auto const* idx = reinterpret_cast<int64_t const*>(alloc.buffer.data());
      // Row-major nonzeros at (0,1), (1,0), (1,2): rows then columns.
      EXPECT_EQ(std::vector<int64_t>(idx, idx + 6), (std::vector<int64_t>{0, 1, 1, 1, 0, 2}));
    }
  }
  EXPECT_GE(alloc.calls, 3);
}

TEST_F(DataDependent, WithoutAnOutputAllocatorTheRunFailsClearly) {
  std::vector<float> x(6, 1.f);
  int64_t count = 0;
  ASSERT_TRUE(context_->setTensorAddress("x", x.data()));
  ASSERT_TRUE(context_->setTensorAddress("count", &count));
  EXPECT_FALSE(context_->enqueueV3(nullptr));
  EXPECT_NE(logger_.last.find("IOutputAllocator"), std::string::npos) << logger_.last;
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// A reshape to a shape given as a network input: its output dims exist only once the input's contents do.
TEST(DataDependentShapeInput, ReshapeToAShapeGivenAtRunTime) {
  Logger logger;
  std::unique_ptr<IBuilder> builder(createInferBuilder(logger));
  std::unique_ptr<INetworkDefinition> net(builder->createNetworkV2(0));
  ITensor* x = net->addInput("x", DataType::kFLOAT, Dims{1, {6}});
  ITensor* s = net->addInput("s", DataType::kINT64, Dims{1, {2}});
  auto* shuffle = net->addShuffle(*x);
  shuffle->setInput(1, *s);
  auto* relu = net->addActivation(*shuffle->getOutput(0), ActivationType::kRELU);
  relu->getOutput(0)->setName("y");
  net->markOutput(*relu->getOutput(0));
  std::unique_ptr<IBuilderConfig> config(builder->createBuilderConfig());
  config->setDefaultDeviceType(DeviceType::kCPU);
  std::unique_ptr<IHostMemory> plan(builder->buildSerializedNetwork(*net, *config));
  ASSERT_NE(plan, nullptr) << logger.last;
  std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
  std::unique_ptr<ICudaEngine> engine(runtime->deserializeCudaEngine(plan->data(), plan->size()));
  ASSERT_NE(engine, nullptr) << logger.last;
  std::unique_ptr<IExecutionContext> ctx(engine->createExecutionContext());
  Allocator alloc;
  std::vector<float> in = {-1, 2, -3, 4, -5, 6};
  ASSERT_TRUE(ctx->setOutputAllocator("y", &alloc));
  ASSERT_TRUE(ctx->setTensorAddress("x", in.data()));
  for (auto const& shape : std::vector<std::vector<int64_t>>{{2, 3}, {3, 2}, {6, 1}}) {
    ASSERT_TRUE(ctx->setTensorAddress("s", const_cast<int64_t*>(shape.data())));
    ASSERT_TRUE(ctx->enqueueV3(nullptr)) << logger.last;
    ASSERT_EQ(alloc.shape.nbDims, 2);
    EXPECT_EQ(alloc.shape.d[0], shape[0]);
    EXPECT_EQ(alloc.shape.d[1], shape[1]);
    auto const* y = reinterpret_cast<float const*>(alloc.buffer.data());
    EXPECT_EQ(std::vector<float>(y, y + 6), (std::vector<float>{0, 2, 0, 4, 0, 6}));
  }
  std::vector<int64_t> bad = {4, 4};
  ASSERT_TRUE(ctx->setTensorAddress("s", bad.data()));
  EXPECT_FALSE(ctx->enqueueV3(nullptr));  // 16 elements from 6: refused with a message, no crash
  EXPECT_FALSE(logger.last.empty());
}

}  // namespace
}  // namespace kiln
