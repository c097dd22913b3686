// Regression: a network output computed only from constants folds into a constant at build time and must
// still be written into the user's buffer on every run.
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

TEST(ConstantOutput, FoldedOutputsAreWritten) {
  Logger logger;
  std::unique_ptr<IBuilder> builder(createInferBuilder(logger));
  std::unique_ptr<INetworkDefinition> net(builder->createNetworkV2(0));
  ITensor* x = net->addInput("x", DataType::kFLOAT, Dims2{1, 4});
  std::vector<float> const c = {-1, 2, -3, 4};
  auto* k = net->addConstant(Dims2{1, 4}, Weights{DataType::kFLOAT, c.data(), 4});
  auto* relu = net->addActivation(*k->getOutput(0), ActivationType::kRELU);
  relu->getOutput(0)->setName("folded");
  net->markOutput(*relu->getOutput(0));
  auto* shape = net->addShape(*x);  // static: folds too
  shape->getOutput(0)->setName("shape");
  net->markOutput(*shape->getOutput(0));
  auto* sum = net->addElementWise(*x, *relu->getOutput(0), ElementWiseOperation::kSUM);
  sum->getOutput(0)->setName("sum");
  net->markOutput(*sum->getOutput(0));
  std::unique_ptr<IBuilderConfig> config(builder->createBuilderConfig());
  config->setDefaultDeviceType(DeviceType::kCPU);
  for (int level : {0, 3}) {
    config->setBuilderOptimizationLevel(level);
    std::unique_ptr<IHostMemory> plan(builder->buildSerializedNetwork(*net, *config));
    ASSERT_NE(plan, nullptr) << logger.last;
    std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
    std::unique_ptr<ICudaEngine> engine(runtime->deserializeCudaEngine(plan->data(), plan->size()));
    ASSERT_NE(engine, nullptr) << logger.last;
    std::unique_ptr<IExecutionContext> ctx(engine->createExecutionContext());
    std::vector<float> in = {10, 10, 10, 10}, folded(4, -7.f), s(4);
    std::vector<int64_t> shp(2, -7);
    ASSERT_TRUE(ctx->setTensorAddress("x", in.data()));
    ASSERT_TRUE(ctx->setTensorAddress("folded", folded.data()));
    ASSERT_TRUE(ctx->setTensorAddress("shape", shp.data()));
    ASSERT_TRUE(ctx->setTensorAddress("sum", s.data()));
    ASSERT_TRUE(ctx->enqueueV3(nullptr)) << logger.last;
    EXPECT_EQ(folded, (std::vector<float>{0, 2, 0, 4})) << "level " << level;
    EXPECT_EQ(shp, (std::vector<int64_t>{1, 4})) << "level " << level;
    EXPECT_EQ(s, (std::vector<float>{10, 12, 10, 14})) << "level " << level;
  }
}

}  // namespace
}  // namespace kiln
