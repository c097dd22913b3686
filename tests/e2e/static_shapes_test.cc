// Engines built for fixed shapes: shape arithmetic the profiles fix folds into constants (the layers computing
// it are gone, as exporters' Shape -> Gather -> Concat -> Reshape chains), and reshapes share their input's
// memory instead of copying it. Both must leave the results as they were.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln {
namespace {

int64_t const kAxis = 1;

struct Logger : ILogger {
  void log(Severity severity, AsciiChar const* msg) noexcept override {
    if (severity <= Severity::kERROR) last = msg;
  }
  std::string last;
};

struct Built {
  std::unique_ptr<IRuntime> runtime;
  std::unique_ptr<ICudaEngine> engine;
};

// x [-1, 6] -> reshape to [N, 2, 3] through Shape/Gather/Concat -> relu -> y; `assertRows` adds an assertion
// that N >= 1 computed from the same shape.
void defineReshapeNet(INetworkDefinition& net, bool assertRows) {
  ITensor* x = net.addInput("x", DataType::kFLOAT, Dims2{-1, 6});
  ITensor* shape = net.addShape(*x)->getOutput(0);
  static int32_t const kZero = 0;
  ITensor* zero = net.addConstant(Dims{1, {1}}, Weights{DataType::kINT32, &kZero, 1})->getOutput(0);
  ITensor* n = net.addGather(*shape, *zero, 0)->getOutput(0);  // [1] int64
  static int64_t const kTail[] = {2, 3};
  ITensor* tail = net.addConstant(Dims{1, {2}}, Weights{DataType::kINT64, kTail, 2})->getOutput(0);
  ITensor* parts[] = {n, tail};
  ITensor* target = net.addConcatenation(parts, 2)->getOutput(0);
  IShuffleLayer* reshape = net.addShuffle(*x);
  reshape->setInput(1, *target);
  ITensor* y = net.addActivation(*reshape->getOutput(0), ActivationType::kRELU)->getOutput(0);
  y->setName("y");
  net.markOutput(*y);
  if (assertRows) {
    static int64_t const kOne = 1;
    ITensor* one = net.addConstant(Dims{1, {1}}, Weights{DataType::kINT64, &kOne, 1})->getOutput(0);
    ITensor* ok = net.addElementWise(*n, *one, ElementWiseOperation::kLESS)->getOutput(0);
    ITensor* notLess = net.addUnary(*ok, UnaryOperation::kNOT)->getOutput(0);
    net.addAssertion(*notLess, "at least one row");
  }
}

Built build(Logger& logger, int level, Dims minD, Dims optD, Dims maxD, bool assertRows) {
  Built b;
  std::unique_ptr<IBuilder> builder(createInferBuilder(logger));
  std::unique_ptr<INetworkDefinition> net(builder->createNetworkV2(0));
  defineReshapeNet(*net, assertRows);
  std::unique_ptr<IBuilderConfig> config(builder->createBuilderConfig());
  config->setDefaultDeviceType(DeviceType::kCPU);
  config->setBuilderOptimizationLevel(level);
  IOptimizationProfile* p = builder->createOptimizationProfile();
  p->setDimensions("x", OptProfileSelector::kMIN, minD);
  p->setDimensions("x", OptProfileSelector::kOPT, optD);
  p->setDimensions("x", OptProfileSelector::kMAX, maxD);
  config->addOptimizationProfile(p);
  std::unique_ptr<IHostMemory> plan(builder->buildSerializedNetwork(*net, *config));
  if (!plan) return b;
  b.runtime.reset(createInferRuntime(logger));
  b.engine.reset(b.runtime->deserializeCudaEngine(plan->data(), plan->size()));
  return b;
}

std::vector<float> run(ICudaEngine& engine, Logger& logger, int64_t rows) {
  std::unique_ptr<IExecutionContext> ctx(engine.createExecutionContext());
  std::vector<float> in(static_cast<size_t>(rows * 6)), out(in.size(), -99.f);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 5) - 2.f;
  EXPECT_TRUE(ctx->setInputShape("x", Dims2{rows, 6})) << logger.last;
  EXPECT_TRUE(ctx->setTensorAddress("x", in.data()));
  EXPECT_TRUE(ctx->setTensorAddress("y", out.data()));
  EXPECT_TRUE(ctx->enqueueV3(nullptr)) << logger.last;
  EXPECT_EQ(ctx->getTensorShape("y").nbDims, 3);
  return out;
}

std::vector<float> expected(int64_t rows) {
  std::vector<float> r(static_cast<size_t>(rows * 6));
  for (size_t i = 0; i < r.size(); ++i) r[i] = std::max(0.f, static_cast<float>(i % 5) - 2.f);
  return r;
}

TEST(StaticShapes, ShapeArithmeticFixedByTheProfileFolds) {
  Logger logger;
  for (bool assertRows : {false, true}) {
    Built folded = build(logger, 3, Dims2{4, 6}, Dims2{4, 6}, Dims2{4, 6}, assertRows);
    Built plain = build(logger, 0, Dims2{4, 6}, Dims2{4, 6}, Dims2{4, 6}, assertRows);
    ASSERT_NE(folded.engine, nullptr) << logger.last;
    ASSERT_NE(plain.engine, nullptr) << logger.last;
    // Level 0 runs Shape, Gather, Concat (and the assertion's layers); level 3 only the reshape and the ReLU.
    EXPECT_EQ(folded.engine->getNbLayers(), 2) << "assert " << assertRows;
    EXPECT_GT(plain.engine->getNbLayers(), folded.engine->getNbLayers());
    EXPECT_EQ(run(*folded.engine, logger, 4), expected(4));
    EXPECT_EQ(run(*plain.engine, logger, 4), expected(4));
  }
}

TEST(StaticShapes, DynamicProfilesKeepTheShapeLayers) {
  Logger logger;
  Built b = build(logger, 3, Dims2{1, 6}, Dims2{4, 6}, Dims2{8, 6}, true);
  ASSERT_NE(b.engine, nullptr) << logger.last;
  EXPECT_GT(b.engine->getNbLayers(), 2);
  for (int64_t rows : {1, 3, 8}) EXPECT_EQ(run(*b.engine, logger, rows), expected(rows)) << rows;
}

TEST(StaticShapes, FailingAssertionOnFixedShapesFailsTheBuild) {
  Logger logger;
  std::unique_ptr<IBuilder> builder(createInferBuilder(logger));
  std::unique_ptr<INetworkDefinition> net(builder->createNetworkV2(0));
  ITensor* x = net->addInput("x", DataType::kFLOAT, Dims2{-1, 6});
  ITensor* n = net->addShape(*x)->getOutput(0);  // [2] int64: (rows, 6)
  static int64_t const kLimit[] = {2, 6};
  ITensor* limit = net->addConstant(Dims{1, {2}}, Weights{DataType::kINT64, kLimit, 2})->getOutput(0);
  ITensor* ok = net->addElementWise(*n, *limit, ElementWiseOperation::kEQUAL)->getOutput(0);
  net->addAssertion(*ok, "exactly two rows");
  ITensor* y = net->addActivation(*x, ActivationType::kRELU)->getOutput(0);
  y->setName("y");
  net->markOutput(*y);
  std::unique_ptr<IBuilderConfig> config(builder->createBuilderConfig());
  config->setDefaultDeviceType(DeviceType::kCPU);
  IOptimizationProfile* p = builder->createOptimizationProfile();
  for (auto s : {OptProfileSelector::kMIN, OptProfileSelector::kOPT, OptProfileSelector::kMAX})
    p->setDimensions("x", s, Dims2{3, 6});
  config->addOptimizationProfile(p);
  std::unique_ptr<IHostMemory> plan(builder->buildSerializedNetwork(*net, *config));
  EXPECT_EQ(plan, nullptr);
  EXPECT_NE(logger.last.find("exactly two rows"), std::string::npos) << logger.last;
}

// Regression: an assertion whose condition folds to a constant, in an engine with dynamic shapes (nothing else
// folds), is decided at build time; the plan was refused with "renumber the graph" (ViT and transformer exports).
TEST(StaticShapes, ConstantAssertionWithDynamicShapesBuilds) {
  Logger logger;
  std::unique_ptr<IBuilder> builder(createInferBuilder(logger));
  std::unique_ptr<INetworkDefinition> net(builder->createNetworkV2(0));
  ITensor* x = net->addInput("x", DataType::kFLOAT, Dims2{-1, 6});
  static int64_t const kA[] = {6}, kB[] = {6};
  ITensor* a = net->addConstant(Dims{1, {1}}, Weights{DataType::kINT64, kA, 1})->getOutput(0);
  ITensor* b = net->addConstant(Dims{1, {1}}, Weights{DataType::kINT64, kB, 1})->getOutput(0);
  net->addAssertion(*net->addElementWise(*a, *b, ElementWiseOperation::kEQUAL)->getOutput(0), "six is six");
  ITensor* y = net->addActivation(*x, ActivationType::kRELU)->getOutput(0);
  y->setName("y");
  net->markOutput(*y);
  std::unique_ptr<IBuilderConfig> config(builder->createBuilderConfig());
  config->setDefaultDeviceType(DeviceType::kCPU);
  config->setBuilderOptimizationLevel(3);
  IOptimizationProfile* p = builder->createOptimizationProfile();
  p->setDimensions("x", OptProfileSelector::kMIN, Dims2{1, 6});
  p->setDimensions("x", OptProfileSelector::kOPT, Dims2{2, 6});
  p->setDimensions("x", OptProfileSelector::kMAX, Dims2{4, 6});
  config->addOptimizationProfile(p);
  std::unique_ptr<IHostMemory> plan(builder->buildSerializedNetwork(*net, *config));
  ASSERT_NE(plan, nullptr) << logger.last;
  std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
  std::unique_ptr<ICudaEngine> engine(runtime->deserializeCudaEngine(plan->data(), plan->size()));
  ASSERT_NE(engine, nullptr) << logger.last;
  EXPECT_EQ(engine->getNbLayers(), 1);  // the ReLU; the assertion was decided
}

// relu -> reshape -> relu needs the memory of relu -> relu: the reshape's output is its input's buffer.
TEST(StaticShapes, ReshapesShareTheirInputsMemory) {
  Logger logger;
  auto define = [](INetworkDefinition& net, bool withReshape) {
    ITensor* x = net.addInput("x", DataType::kFLOAT, Dims2{2, 6});
    ITensor* a = net.addActivation(*x, ActivationType::kRELU)->getOutput(0);
    if (withReshape) {
      IShuffleLayer* r = net.addShuffle(*a);
      r->setReshapeDimensions(Dims2{3, 4});
      a = r->getOutput(0);
      a = net.addUnsqueeze(*a, *net.addConstant(Dims{1, {1}}, Weights{DataType::kINT64, &kAxis, 1})->getOutput(0))
              ->getOutput(0);  // [3, 1, 4]
    }
    ITensor* y = net.addActivation(*a, ActivationType::kSIGMOID)->getOutput(0);
    y->setName("y");
    net.markOutput(*y);
  };
  int64_t sizes[2] = {0, 0};
  for (int withReshape = 0; withReshape < 2; ++withReshape) {
    std::unique_ptr<IBuilder> builder(createInferBuilder(logger));
    std::unique_ptr<INetworkDefinition> net(builder->createNetworkV2(0));
    define(*net, withReshape != 0);
    std::unique_ptr<IBuilderConfig> config(builder->createBuilderConfig());
    config->setDefaultDeviceType(DeviceType::kCPU);
    std::unique_ptr<IHostMemory> plan(builder->buildSerializedNetwork(*net, *config));
    ASSERT_NE(plan, nullptr) << logger.last;
    std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
    std::unique_ptr<ICudaEngine> engine(runtime->deserializeCudaEngine(plan->data(), plan->size()));
    ASSERT_NE(engine, nullptr) << logger.last;
    sizes[withReshape] = engine->getDeviceMemorySizeV2();
    std::unique_ptr<IExecutionContext> ctx(engine->createExecutionContext());
    std::vector<float> in(12), out(12, -1.f);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) - 5.5f;
    ASSERT_TRUE(ctx->setTensorAddress("x", in.data()));
    ASSERT_TRUE(ctx->setTensorAddress("y", out.data()));
    ASSERT_TRUE(ctx->enqueueV3(nullptr)) << logger.last;
    for (size_t i = 0; i < in.size(); ++i)
      EXPECT_FLOAT_EQ(out[i], 1.f / (1.f + std::exp(-std::max(0.f, in[i])))) << i;
  }
  EXPECT_EQ(sizes[1], sizes[0]);
}

}  // namespace
}  // namespace kiln
