// V3 plugins at run time, public API only, on the CPU target: created for TensorRTPhase::kRUNTIME without a build
// capability, their shapes come from the expressions the build stored in the plan (every DimensionOperation, with
// dynamic shapes); a plugin with a size tensor (IExprBuilder::declareSizeTensor) gives a data-dependent output, as a
// network output through an IOutputAllocator and feeding another layer; a size past its upper bound is refused; its
// tactics are timed above level 0 with upper-bound outputs and the fast one is chosen.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "e2e/test_plugins_v3.h"

namespace {

using kiln::DataType;
using kiln::Dims;

using RuntimeShapesV3Creator = kiln_test::RuntimeShapesV3Creator;
using SelectPositiveV3Creator = kiln_test::SelectPositiveV3Creator;
REGISTER_KILN_PLUGIN(RuntimeShapesV3Creator);
REGISTER_KILN_PLUGIN(SelectPositiveV3Creator);

class Logger : public kiln::ILogger {
 public:
  void log(Severity s, char const* msg) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    if (s <= Severity::kERROR) errors_ += std::string(msg) + "\n";
    all_ += std::string(msg) + "\n";
  }
  std::string errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }
  std::string all() {
    std::lock_guard<std::mutex> lock(mu_);
    return all_;
  }

 private:
  std::mutex mu_;
  std::string errors_, all_;
};

Dims dims(std::vector<int64_t> const& v) {
  Dims d{};
  d.nbDims = static_cast<int32_t>(v.size());
  for (size_t i = 0; i < v.size(); ++i) d.d[i] = v[i];
  return d;
}

// Host memory for outputs of data-dependent shape (the CPU target's addresses are host addresses).
class HostOutputAllocator final : public kiln::IOutputAllocator {
 public:
  void* reallocateOutputAsync(char const*, void* current, uint64_t size, uint64_t, cudaStream_t) override {
    ++calls;
    if (size > buf.size()) buf.resize(static_cast<size_t>(size));
    (void)current;
    return buf.empty() ? nullptr : buf.data();
  }
  void notifyShape(char const*, Dims const& d) noexcept override { shape = d; }
  std::vector<uint8_t> buf;
  Dims shape{};
  int calls = 0;
};

kiln::IPluginV3* makePlugin(char const* name, int32_t mode) {
  auto* c = static_cast<kiln::IPluginCreatorV3One*>(kiln::getPluginRegistry()->getCreator(name, "1", "kiln.test"));
  if (!c) return nullptr;
  kiln::PluginField f("mode", &mode, kiln::PluginFieldType::kINT32, 1);
  kiln::PluginFieldCollection fc{1, &f};
  return c->createPlugin("p", &fc, kiln::TensorRTPhase::kBUILD);
}

// Builds `net` for the CPU with one profile for input "x" and loads the plan.
std::unique_ptr<kiln::ICudaEngine> buildAndLoad(kiln::IBuilder& builder, kiln::INetworkDefinition& net, Dims mn,
                                                Dims opt, Dims mx, Logger& logger, kiln::IRuntime& runtime,
                                                int32_t level = -1) {
  std::unique_ptr<kiln::IBuilderConfig> config(builder.createBuilderConfig());
  if (level >= 0) config->setBuilderOptimizationLevel(level);
  kiln::IOptimizationProfile* p = builder.createOptimizationProfile();
  p->setDimensions("x", kiln::OptProfileSelector::kMIN, mn);
  p->setDimensions("x", kiln::OptProfileSelector::kOPT, opt);
  p->setDimensions("x", kiln::OptProfileSelector::kMAX, mx);
  config->addOptimizationProfile(p);
  config->setDefaultDeviceType(kiln::DeviceType::kCPU);
  std::unique_ptr<kiln::IHostMemory> plan(builder.buildSerializedNetwork(net, *config));
  if (!plan) return nullptr;
  kiln_test::runtimeBuildCalls() = 0;
  return std::unique_ptr<kiln::ICudaEngine>(runtime.deserializeCudaEngine(plan->data(), plan->size()));
}

TEST(PluginV3Runtime, NoBuildCapabilityAtRunTimeShapesFromTheStoredExpressions) {
  Logger logger;
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
  kiln::ITensor* x = net->addInput("x", DataType::kFLOAT, dims({-1, -1}));
  std::unique_ptr<kiln::IPluginV3> plugin(makePlugin("KilnTestRuntimeShapes", 0));
  ASSERT_NE(plugin, nullptr);
  kiln::ITensor* ins[] = {x};
  kiln::IPluginV3Layer* l = net->addPluginV3(ins, 1, nullptr, 0, *plugin);
  ASSERT_NE(l, nullptr) << logger.errors();
  l->getOutput(0)->setName("y");
  l->getOutput(1)->setName("z");
  net->markOutput(*l->getOutput(0));
  net->markOutput(*l->getOutput(1));
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  auto engine = buildAndLoad(*builder, *net, dims({1, 1}), dims({3, 3}), dims({6, 7}), logger, *runtime);
  ASSERT_NE(engine, nullptr) << logger.errors();
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  ASSERT_NE(ctx, nullptr) << logger.errors();
  for (auto [a, b] : std::vector<std::pair<int64_t, int64_t>>{{2, 3}, {4, 4}, {5, 2}, {1, 7}, {6, 7}}) {
    SCOPED_TRACE(std::to_string(a) + "x" + std::to_string(b));
    ASSERT_TRUE(ctx->setInputShape("x", dims({a, b})));
    Dims z = ctx->getTensorShape("z");
    int64_t z0 = std::max(a, b) - std::min(a, b) + 1;
    int64_t z1 = (a * b) / 2 + (a + 1) / 2 + (a == b) + (a < b);
    ASSERT_EQ(z.nbDims, 2);
    EXPECT_EQ(z.d[0], z0);
    EXPECT_EQ(z.d[1], z1);
    std::vector<float> xs(static_cast<size_t>(a * b)), ys(xs.size(), -1), zs(static_cast<size_t>(z0 * z1), -1);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i) - 3.5f;
    ASSERT_TRUE(ctx->setTensorAddress("x", xs.data()));
    ASSERT_TRUE(ctx->setTensorAddress("y", ys.data()));
    ASSERT_TRUE(ctx->setTensorAddress("z", zs.data()));
    ASSERT_TRUE(ctx->enqueueV3(nullptr)) << logger.errors();
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(ys[i], 2 * xs[i]) << i;
    for (size_t i = 0; i < zs.size(); ++i) EXPECT_EQ(zs[i], static_cast<float>(i)) << i;
  }
  EXPECT_EQ(kiln_test::runtimeBuildCalls().load(), 0);
}

// x [-1, 4] -> SelectPositive -> (pos [K], k); `reduce`: pos also feeds a sum over axis 0 (output "sum").
struct SelectNet {
  std::unique_ptr<kiln::INetworkDefinition> net;
  std::unique_ptr<kiln::IPluginV3> plugin;
};

SelectNet selectNet(kiln::IBuilder& builder, int32_t mode, Logger& logger) {
  SelectNet s;
  s.net.reset(builder.createNetworkV2(0));
  kiln::ITensor* x = s.net->addInput("x", DataType::kFLOAT, dims({-1, 4}));
  s.plugin.reset(makePlugin("KilnTestSelectPositive", mode));
  kiln::ITensor* ins[] = {x};
  kiln::IPluginV3Layer* l = s.net->addPluginV3(ins, 1, nullptr, 0, *s.plugin);
  if (!l) return s;
  l->setName("select");
  l->getOutput(0)->setName("pos");
  l->getOutput(1)->setName("k");
  s.net->markOutput(*l->getOutput(0));
  s.net->markOutput(*l->getOutput(1));
  // Downstream: the sum of the selected elements (a fixed 0-D shape out of a data-dependent one).
  kiln::IReduceLayer* r = s.net->addReduce(*l->getOutput(0), kiln::ReduceOperation::kSUM, 1u, false);
  r->getOutput(0)->setName("sum");
  s.net->markOutput(*r->getOutput(0));
  return s;
}

TEST(PluginV3Runtime, SizeTensorGivesADataDependentOutput) {
  for (int32_t mode : {0, 1}) {  // int32, int64 size tensor
    SCOPED_TRACE(mode);
    Logger logger;
    std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
    SelectNet s = selectNet(*builder, mode, logger);
    kiln::ITensor* pos = s.net->getOutput(0);
    ASSERT_EQ(pos->getDimensions().nbDims, 1);
    EXPECT_EQ(pos->getDimensions().d[0], -1);  // data-dependent
    std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
    auto engine = buildAndLoad(*builder, *s.net, dims({1, 4}), dims({2, 4}), dims({8, 4}), logger, *runtime);
    ASSERT_NE(engine, nullptr) << logger.errors();
    EXPECT_EQ(engine->getTensorShape("pos").d[0], -1);
    std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
    ASSERT_NE(ctx, nullptr) << logger.errors();
    HostOutputAllocator alloc;
    ASSERT_TRUE(ctx->setOutputAllocator("pos", &alloc));
    for (int64_t rows : {3, 8, 1, 2}) {
      SCOPED_TRACE(rows);
      std::vector<float> xs(static_cast<size_t>(rows * 4));
      std::vector<float> want;
      float sum = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        xs[i] = (i * 7 + static_cast<size_t>(rows)) % 5 < 2 ? static_cast<float>(i) + 0.5f : -static_cast<float>(i);
        if (xs[i] > 0) {
          want.push_back(xs[i]);
          sum += xs[i];
        }
      }
      if (rows == 1) std::fill(xs.begin(), xs.end(), -1.0f), want.clear(), sum = 0;  // an empty selection
      int64_t k64 = -1;
      int32_t k32 = -1;
      float got = -1;
      ASSERT_TRUE(ctx->setInputShape("x", dims({rows, 4})));
      ASSERT_TRUE(ctx->setTensorAddress("x", xs.data()));
      ASSERT_TRUE(ctx->setTensorAddress("k", mode ? static_cast<void*>(&k64) : static_cast<void*>(&k32)));
      ASSERT_TRUE(ctx->setTensorAddress("sum", &got));
      ASSERT_TRUE(ctx->enqueueV3(nullptr)) << logger.errors();
      EXPECT_EQ(mode ? k64 : k32, static_cast<int64_t>(want.size()));
      ASSERT_EQ(alloc.shape.nbDims, 1);
      ASSERT_EQ(alloc.shape.d[0], static_cast<int64_t>(want.size()));
      auto const* p = reinterpret_cast<float const*>(alloc.buf.data());
      for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(p[i], want[i]) << i;
      EXPECT_FLOAT_EQ(got, sum);
    }
    EXPECT_EQ(kiln_test::runtimeBuildCalls().load(), 0);
  }
}

TEST(PluginV3Runtime, SizePastTheUpperBoundIsRefusedNamingThePlugin) {
  Logger logger;
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  SelectNet s = selectNet(*builder, 2, logger);
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  auto engine = buildAndLoad(*builder, *s.net, dims({1, 4}), dims({2, 4}), dims({8, 4}), logger, *runtime);
  ASSERT_NE(engine, nullptr) << logger.errors();
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  HostOutputAllocator alloc;
  ASSERT_TRUE(ctx->setOutputAllocator("pos", &alloc));
  std::vector<float> xs(8, 1.0f);
  int32_t k = -1;
  float sum = 0;
  ASSERT_TRUE(ctx->setInputShape("x", dims({2, 4})));
  ASSERT_TRUE(ctx->setTensorAddress("x", xs.data()));
  ASSERT_TRUE(ctx->setTensorAddress("k", &k));
  ASSERT_TRUE(ctx->setTensorAddress("sum", &sum));
  EXPECT_FALSE(ctx->enqueueV3(nullptr));
  std::string e = logger.errors();
  EXPECT_NE(e.find("KilnTestSelectPositive"), std::string::npos) << e;
  EXPECT_NE(e.find("'select'"), std::string::npos) << e;
  EXPECT_NE(e.find("holds 17, outside [0, 8]"), std::string::npos) << e;
  EXPECT_EQ(alloc.calls, 0);  // nothing was allocated for the refused output
}

// Mode 4: two tactics, 1 slow, 2 fast. At level 3 the CPU build times both on context copies whose data-dependent
// output is the upper-bound allocation (the plugin refuses anything smaller), picks tactic 2 and logs it; the engine
// runs tactic 2 and computes the selection. At level 0 nothing is timed and tactic 1 runs.
TEST(PluginV3Runtime, SizeTensorPluginTacticsAreTimedAtTheUpperBound) {
  for (int32_t level : {3, 0}) {
    SCOPED_TRACE(level);
    Logger logger;
    std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
    SelectNet s = selectNet(*builder, 4, logger);
    std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
    auto engine = buildAndLoad(*builder, *s.net, dims({1, 4}), dims({2, 4}), dims({8, 4}), logger, *runtime, level);
    ASSERT_NE(engine, nullptr) << logger.errors();
    std::string log = logger.all();
    if (level > 0) {
      EXPECT_NE(log.find("plugin tactic 1 "), std::string::npos) << log;
      EXPECT_NE(log.find("plugin tactic 2 chosen"), std::string::npos) << log;
    } else {
      EXPECT_EQ(log.find("plugin tactic 2 chosen"), std::string::npos) << log;
    }
    std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
    ASSERT_NE(ctx, nullptr) << logger.errors();
    HostOutputAllocator alloc;
    ASSERT_TRUE(ctx->setOutputAllocator("pos", &alloc));
    std::vector<float> xs = {1.5f, -2, 0, 3, -1, 4.25f, -0.5f, 7, 2, -3, -4, 0.125f};
    std::vector<float> want;
    float sum = 0;
    for (float v : xs)
      if (v > 0) want.push_back(v), sum += v;
    int32_t k = -1;
    float got = -1;
    kiln_test::selectLastTactic() = 0;
    ASSERT_TRUE(ctx->setInputShape("x", dims({3, 4})));
    ASSERT_TRUE(ctx->setTensorAddress("x", xs.data()));
    ASSERT_TRUE(ctx->setTensorAddress("k", &k));
    ASSERT_TRUE(ctx->setTensorAddress("sum", &got));
    ASSERT_TRUE(ctx->enqueueV3(nullptr)) << logger.errors();
    EXPECT_EQ(kiln_test::selectLastTactic().load(), level > 0 ? 2 : 1);
    EXPECT_EQ(k, static_cast<int32_t>(want.size()));
    ASSERT_EQ(alloc.shape.nbDims, 1);
    ASSERT_EQ(alloc.shape.d[0], static_cast<int64_t>(want.size()));
    auto const* p = reinterpret_cast<float const*>(alloc.buf.data());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(p[i], want[i]) << i;
    EXPECT_FLOAT_EQ(got, sum);
    EXPECT_EQ(kiln_test::runtimeBuildCalls().load(), 0);
  }
}

}  // namespace
