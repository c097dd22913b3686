// gpu: a V3 plugin's own tactics timed on the device by a kGPU build: tactic 1 copies its input 400 times through
// the workspace, tactic 2 once; at level 3 the fast one is timed, chosen, logged and recorded in the timing cache, a
// second build with that cache takes it without running the plugin, and both tactics compute the right outputs.
// Skips where no CUDA device is present.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

bool gpuPresent() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

std::atomic<int> gEnqueues{0};
std::atomic<int> gLastTactic{0};
std::atomic<int> gShapeChanges{0};

constexpr int kSlowCopies = 400;

// y [N, 4] = x [N, 4] (float32), by tactic 1 (slow: the input goes through the workspace kSlowCopies times) or
// tactic 2 (one copy).
class CopyTactics final : public kiln::IPluginV3,
                          public kiln::IPluginV3OneCore,
                          public kiln::IPluginV3OneBuild,
                          public kiln::IPluginV3OneRuntime {
 public:
  kiln::IPluginCapability* getCapabilityInterface(kiln::PluginCapabilityType type) noexcept override {
    switch (type) {
      case kiln::PluginCapabilityType::kCORE:
        return static_cast<kiln::IPluginV3OneCore*>(this);
      case kiln::PluginCapabilityType::kBUILD:
        return static_cast<kiln::IPluginV3OneBuild*>(this);
      case kiln::PluginCapabilityType::kRUNTIME:
        return static_cast<kiln::IPluginV3OneRuntime*>(this);
    }
    return nullptr;
  }
  kiln::IPluginV3* clone() noexcept override {
    auto* c = new CopyTactics();
    c->tactic_ = tactic_;
    return c;
  }
  char const* getPluginName() const noexcept override { return "KilnTestCopyTactics"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  char const* getPluginNamespace() const noexcept override { return ""; }
  int32_t configurePlugin(kiln::DynamicPluginTensorDesc const*, int32_t, kiln::DynamicPluginTensorDesc const*,
                          int32_t) noexcept override {
    return 0;
  }
  int32_t getOutputDataTypes(kiln::DataType* out, int32_t, kiln::DataType const* in, int32_t) const noexcept override {
    out[0] = in[0];
    return 0;
  }
  int32_t getOutputShapes(kiln::DimsExprs const* inputs, int32_t nbInputs, kiln::DimsExprs const*, int32_t,
                          kiln::DimsExprs* outputs, int32_t nbOutputs, kiln::IExprBuilder&) noexcept override {
    if (nbInputs != 1 || nbOutputs != 1) return 1;
    outputs[0] = inputs[0];
    return 0;
  }
  bool supportsFormatCombination(int32_t pos, kiln::DynamicPluginTensorDesc const* inOut, int32_t,
                                 int32_t) noexcept override {
    return inOut[pos].desc.type == kiln::DataType::kFLOAT && inOut[pos].desc.format == kiln::TensorFormat::kLINEAR;
  }
  int32_t getNbOutputs() const noexcept override { return 1; }
  // From the bounds' max: desc.dims has -1 where the profile varies (the builder sizes the run-time workspace so).
  size_t getWorkspaceSize(kiln::DynamicPluginTensorDesc const* inputs, int32_t, kiln::DynamicPluginTensorDesc const*,
                          int32_t) const noexcept override {
    return bytes(inputs[0].max);
  }
  int32_t getNbTactics() noexcept override { return 2; }
  int32_t getValidTactics(int32_t* tactics, int32_t n) noexcept override {
    if (n != 2) return 1;
    tactics[0] = 1;  // the slow one first: level 0 takes it
    tactics[1] = 2;
    return 0;
  }
  char const* getTimingCacheID() noexcept override { return "copy-tactics-1"; }
  int32_t setTactic(int32_t tactic) noexcept override {
    if (tactic != 1 && tactic != 2) return 1;
    tactic_ = tactic;
    return 0;
  }
  int32_t onShapeChange(kiln::PluginTensorDesc const*, int32_t, kiln::PluginTensorDesc const*,
                        int32_t) noexcept override {
    ++gShapeChanges;
    return 0;
  }
  int32_t enqueue(kiln::PluginTensorDesc const* in, kiln::PluginTensorDesc const*, void const* const* inputs,
                  void* const* outputs, void* workspace, cudaStream_t stream) noexcept override {
    ++gEnqueues;
    gLastTactic = tactic_;
    size_t n = bytes(in[0].dims);
    if (tactic_ == 2)
      return cudaMemcpyAsync(outputs[0], inputs[0], n, cudaMemcpyDeviceToDevice, stream) == cudaSuccess ? 0 : 1;
    if (tactic_ != 1 || (n && !workspace)) return 2;
    for (int i = 0; i < kSlowCopies; ++i)
      if (cudaMemcpyAsync(workspace, inputs[0], n, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) return 1;
    return cudaMemcpyAsync(outputs[0], workspace, n, cudaMemcpyDeviceToDevice, stream) == cudaSuccess ? 0 : 1;
  }
  kiln::IPluginV3* attachToContext(kiln::IPluginResourceContext*) noexcept override { return clone(); }
  kiln::PluginFieldCollection const* getFieldsToSerialize() noexcept override {
    fc_.nbFields = 0;
    fc_.fields = nullptr;
    return &fc_;
  }

 private:
  static size_t bytes(kiln::Dims const& d) {
    size_t n = 4;
    for (int32_t i = 0; i < d.nbDims; ++i) n *= static_cast<size_t>(d.d[i] > 0 ? d.d[i] : 0);
    return n;
  }
  int32_t tactic_ = 0;
  kiln::PluginFieldCollection fc_{};
};

class CopyTacticsCreator final : public kiln::IPluginCreatorV3One {
 public:
  kiln::IPluginV3* createPlugin(char const*, kiln::PluginFieldCollection const*,
                                kiln::TensorRTPhase) noexcept override {
    return new CopyTactics();
  }
  kiln::PluginFieldCollection const* getFieldNames() noexcept override { return &fc_; }
  char const* getPluginName() const noexcept override { return "KilnTestCopyTactics"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  char const* getPluginNamespace() const noexcept override { return ""; }

 private:
  kiln::PluginFieldCollection fc_{};
};

REGISTER_KILN_PLUGIN(CopyTacticsCreator);

class Logger : public kiln::ILogger {
 public:
  void log(Severity s, char const* msg) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    if (s <= Severity::kERROR) std::fprintf(stderr, "[kiln error] %s\n", msg);
    text_ += std::string(msg) + "\n";
  }
  std::string take() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string t;
    t.swap(text_);
    return t;
  }

 private:
  std::mutex mu_;
  std::string text_;
};

kiln::Dims dims2(int64_t a, int64_t b) {
  kiln::Dims d{};
  d.nbDims = 2;
  d.d[0] = a;
  d.d[1] = b;
  return d;
}

// x [N, 4] (N in [1, 1024], opt 512) -> the plugin -> y, for the GPU at `level`.
std::unique_ptr<kiln::IHostMemory> build(Logger& logger, int32_t level, kiln::ITimingCache* cache) {
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  kiln::ITensor* x = net->addInput("x", kiln::DataType::kFLOAT, dims2(-1, 4));
  CopyTactics plugin;
  kiln::ITensor* ins[] = {x};
  kiln::IPluginV3Layer* l = net->addPluginV3(ins, 1, nullptr, 0, plugin);
  if (!l) return nullptr;
  l->setName("copy");
  l->getOutput(0)->setName("y");
  net->markOutput(*l->getOutput(0));
  kiln::IOptimizationProfile* p = builder->createOptimizationProfile();
  p->setDimensions("x", kiln::OptProfileSelector::kMIN, dims2(1, 4));
  p->setDimensions("x", kiln::OptProfileSelector::kOPT, dims2(512, 4));
  p->setDimensions("x", kiln::OptProfileSelector::kMAX, dims2(1024, 4));
  config->addOptimizationProfile(p);
  config->setDefaultDeviceType(kiln::DeviceType::kGPU);
  config->setBuilderOptimizationLevel(level);
  if (cache) {
    EXPECT_TRUE(config->setTimingCache(*cache, false));
  }
  return std::unique_ptr<kiln::IHostMemory>(builder->buildSerializedNetwork(*net, *config));
}

// Loads `plan`, runs it at N rows and checks y == x; returns the tactic the context's copy ran.
int runAndCheck(Logger& logger, kiln::IHostMemory const& plan, int64_t n) {
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan.data(), plan.size()));
  EXPECT_NE(engine, nullptr);
  if (!engine) return -1;
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  EXPECT_NE(ctx, nullptr);
  if (!ctx) return -1;
  size_t count = static_cast<size_t>(n * 4);
  std::vector<float> x(count), y(count, -1.0f);
  for (size_t i = 0; i < count; ++i) x[i] = static_cast<float>(i % 97) * 0.5f - 7.0f;
  void *dx = nullptr, *dy = nullptr;
  EXPECT_EQ(cudaMalloc(&dx, count * 4), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dy, count * 4), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dx, x.data(), count * 4, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(dy, 0, count * 4), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaStream_t s = nullptr;
  EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  EXPECT_TRUE(ctx->setInputShape("x", dims2(n, 4)));
  EXPECT_TRUE(ctx->setTensorAddress("x", dx));
  EXPECT_TRUE(ctx->setTensorAddress("y", dy));
  EXPECT_TRUE(ctx->enqueueV3(s));
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(y.data(), dy, count * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(std::memcmp(x.data(), y.data(), count * 4), 0) << "y is x";
  cudaStreamDestroy(s);
  cudaFree(dx);
  cudaFree(dy);
  return gLastTactic.load();
}

TEST(PluginTacticsGpu, FastTacticTimedOnTheDeviceChosenAndCached) {
  if (!gpuPresent()) GTEST_SKIP() << "no CUDA device";
  Logger logger;
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  std::unique_ptr<kiln::ITimingCache> cache(config->createTimingCache(nullptr, 0));
  ASSERT_NE(cache, nullptr);

  int before = gEnqueues.load();
  std::unique_ptr<kiln::IHostMemory> plan = build(logger, 3, cache.get());
  ASSERT_NE(plan, nullptr);
  std::string log = logger.take();
  EXPECT_GE(gEnqueues.load() - before, 4) << "both tactics ran on the device (warm-up and timed runs)";
  EXPECT_NE(log.find("plugin tactic 1 "), std::string::npos) << log;
  EXPECT_NE(log.find("on the GPU"), std::string::npos) << log;
  EXPECT_NE(log.find("plugin tactic 2 chosen"), std::string::npos) << log;
  EXPECT_EQ(runAndCheck(logger, *plan, 300), 2);

  // The timing cache holds the choice: the second build does not run the plugin.
  before = gEnqueues.load();
  std::unique_ptr<kiln::IHostMemory> again = build(logger, 3, cache.get());
  ASSERT_NE(again, nullptr);
  log = logger.take();
  EXPECT_EQ(gEnqueues.load() - before, 0) << "the cached choice was timed again";
  EXPECT_NE(log.find("plugin tactic 2 from the timing cache"), std::string::npos) << log;
  EXPECT_EQ(runAndCheck(logger, *again, 1024), 2);
}

TEST(PluginTacticsGpu, LevelZeroTakesTheFirstTacticWhichIsAlsoRight) {
  if (!gpuPresent()) GTEST_SKIP() << "no CUDA device";
  Logger logger;
  int before = gEnqueues.load();
  std::unique_ptr<kiln::IHostMemory> plan = build(logger, 0, nullptr);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(gEnqueues.load() - before, 0) << "level 0 times nothing";
  EXPECT_EQ(runAndCheck(logger, *plan, 17), 1);
  EXPECT_EQ(runAndCheck(logger, *plan, 1), 1);
}

}  // namespace
