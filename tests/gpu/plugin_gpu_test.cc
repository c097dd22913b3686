// gpu: plugin layers on the GPU through the public API: a V2 plugin whose enqueue stacks its two inputs with
// stream-ordered device copies (through the builder's workspace), built for kGPU at levels 0 and 3, serialized,
// deserialized through the registry, run with device pointers on a user stream, captured into a CUDA graph, and
// run from several contexts on several threads and streams; a V3 plugin with a size tensor (its data-dependent
// output staged at its upper bound on the device, then moved to the user's output allocator) created at run time
// without a build capability, and with two tactics timed on the device at level 3 (upper-bound outputs). Skips
// where no CUDA device is present.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "e2e/test_plugins_v3.h"

namespace {

bool gpuPresent() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

std::atomic<int> gEnqueues{0};

// out = [a; b] along axis 0 (float32 or float16, a and b of one shape): a goes through the workspace.
class GpuStack final : public kiln::IPluginV2DynamicExt {
 public:
  char const* getPluginType() const noexcept override { return "KilnTestGpuStack"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  int32_t getNbOutputs() const noexcept override { return 1; }
  int32_t initialize() noexcept override { return 0; }
  void terminate() noexcept override {}
  size_t getSerializationSize() const noexcept override { return 0; }
  void serialize(void*) const noexcept override {}
  void destroy() noexcept override { delete this; }
  kiln::IPluginV2DynamicExt* clone() const noexcept override { return new GpuStack(); }
  void setPluginNamespace(char const* ns) noexcept override { ns_ = ns ? ns : ""; }
  char const* getPluginNamespace() const noexcept override { return ns_.c_str(); }
  kiln::DataType getOutputDataType(int32_t, kiln::DataType const* t, int32_t) const noexcept override { return t[0]; }
  kiln::DimsExprs getOutputDimensions(int32_t, kiln::DimsExprs const* in, int32_t, kiln::IExprBuilder& eb) noexcept override {
    kiln::DimsExprs o = in[0];
    o.d[0] = eb.operation(kiln::DimensionOperation::kSUM, *in[0].d[0], *in[1].d[0]);
    return o;
  }
  bool supportsFormatCombination(int32_t pos, kiln::PluginTensorDesc const* io, int32_t, int32_t) noexcept override {
    bool t = io[pos].type == kiln::DataType::kFLOAT || io[pos].type == kiln::DataType::kHALF;
    return t && io[pos].format == kiln::TensorFormat::kLINEAR && (pos == 0 || io[pos].type == io[0].type);
  }
  void configurePlugin(kiln::DynamicPluginTensorDesc const*, int32_t, kiln::DynamicPluginTensorDesc const*,
                       int32_t) noexcept override {}
  size_t getWorkspaceSize(kiln::PluginTensorDesc const* in, int32_t, kiln::PluginTensorDesc const*, int32_t) const noexcept override {
    return bytes(in[0]);
  }
  int32_t enqueue(kiln::PluginTensorDesc const* in, kiln::PluginTensorDesc const*, void const* const* inputs,
                  void* const* outputs, void* workspace, cudaStream_t stream) noexcept override {
    ++gEnqueues;
    size_t a = bytes(in[0]), b = bytes(in[1]);
    if (a && !workspace) return 2;
    auto* out = static_cast<char*>(outputs[0]);
    if (cudaMemcpyAsync(workspace, inputs[0], a, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) return 1;
    if (cudaMemcpyAsync(out, workspace, a, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) return 1;
    if (cudaMemcpyAsync(out + a, inputs[1], b, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) return 1;
    return 0;
  }

 private:
  static size_t bytes(kiln::PluginTensorDesc const& d) {
    size_t n = d.type == kiln::DataType::kHALF ? 2 : 4;
    for (int32_t i = 0; i < d.dims.nbDims; ++i) n *= static_cast<size_t>(d.dims.d[i]);
    return n;
  }
  std::string ns_;
};

class GpuStackCreator final : public kiln::IPluginCreator {
 public:
  char const* getPluginName() const noexcept override { return "KilnTestGpuStack"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  kiln::PluginFieldCollection const* getFieldNames() noexcept override { return &fc_; }
  kiln::IPluginV2* createPlugin(char const*, kiln::PluginFieldCollection const*) noexcept override { return new GpuStack(); }
  kiln::IPluginV2* deserializePlugin(char const*, void const*, size_t length) noexcept override {
    return length == 0 ? new GpuStack() : nullptr;
  }
  void setPluginNamespace(char const* ns) noexcept override { ns_ = ns ? ns : ""; }
  char const* getPluginNamespace() const noexcept override { return ns_.c_str(); }

 private:
  kiln::PluginFieldCollection fc_{};
  std::string ns_;
};

REGISTER_KILN_PLUGIN(GpuStackCreator);

class Logger : public kiln::ILogger {
 public:
  void log(Severity s, char const* msg) noexcept override {
    if (s <= Severity::kERROR) std::fprintf(stderr, "[kiln error] %s\n", msg);
  }
};

kiln::Dims dims2(int64_t a, int64_t b) {
  kiln::Dims d{};
  d.nbDims = 2;
  d.d[0] = a;
  d.d[1] = b;
  return d;
}

// a, b: [N, 3] (N in [1, 8]); x = a + a (a GPU kernel before the plugin); out = [x; b].
std::unique_ptr<kiln::IHostMemory> buildGpu(Logger& logger, int32_t level, bool fp16) {
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  kiln::ITensor* a = net->addInput("a", kiln::DataType::kFLOAT, dims2(-1, 3));
  kiln::ITensor* b = net->addInput("b", kiln::DataType::kFLOAT, dims2(-1, 3));
  kiln::ITensor* x = net->addElementWise(*a, *a, kiln::ElementWiseOperation::kSUM)->getOutput(0);
  GpuStack plugin;
  kiln::ITensor* ins[] = {x, b};
  kiln::IPluginV2Layer* l = net->addPluginV2(ins, 2, plugin);
  if (!l) return nullptr;
  l->getOutput(0)->setName("out");
  net->markOutput(*l->getOutput(0));
  kiln::IOptimizationProfile* p = builder->createOptimizationProfile();
  for (char const* n : {"a", "b"}) {
    p->setDimensions(n, kiln::OptProfileSelector::kMIN, dims2(1, 3));
    p->setDimensions(n, kiln::OptProfileSelector::kOPT, dims2(4, 3));
    p->setDimensions(n, kiln::OptProfileSelector::kMAX, dims2(8, 3));
  }
  config->addOptimizationProfile(p);
  config->setDefaultDeviceType(kiln::DeviceType::kGPU);
  config->setBuilderOptimizationLevel(level);
  if (fp16) config->setFlag(kiln::BuilderFlag::kFP16);
  return std::unique_ptr<kiln::IHostMemory>(builder->buildSerializedNetwork(*net, *config));
}

// Runs `ctx` at N rows on `stream` (optionally through a captured CUDA graph) and checks out = [2a; b].
void runOnGpu(kiln::IExecutionContext& ctx, int64_t n, cudaStream_t stream, bool graph, bool fp16, int seed) {
  size_t count = static_cast<size_t>(n * 3);
  std::vector<float> a(count), b(count), out(2 * count, -1.0f);
  for (size_t i = 0; i < count; ++i) {
    a[i] = static_cast<float>((seed + static_cast<int>(i)) % 7) * 0.25f;
    b[i] = static_cast<float>((seed * 3 + static_cast<int>(i)) % 5) - 2.0f;
  }
  void *da = nullptr, *db = nullptr, *dout = nullptr;
  ASSERT_EQ(cudaMalloc(&da, count * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&db, count * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dout, 2 * count * 4), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(da, a.data(), count * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(db, b.data(), count * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_TRUE(ctx.setInputShape("a", dims2(n, 3)));
  ASSERT_TRUE(ctx.setInputShape("b", dims2(n, 3)));
  ASSERT_TRUE(ctx.setTensorAddress("a", da));
  ASSERT_TRUE(ctx.setTensorAddress("b", db));
  ASSERT_TRUE(ctx.setTensorAddress("out", dout));
  ASSERT_TRUE(ctx.enqueueV3(stream));  // the first run also settles the shapes
  if (graph) {
    ASSERT_EQ(cudaMemset(dout, 0, 2 * count * 4), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the memset is on the legacy stream
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    bool ok = ctx.enqueueV3(stream);
    ASSERT_EQ(cudaStreamEndCapture(stream, &g), cudaSuccess);
    ASSERT_TRUE(ok);
    ASSERT_EQ(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(g);
  }
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(out.data(), dout, 2 * count * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  double tol = fp16 ? 1e-2 : 0.0;
  for (size_t i = 0; i < count; ++i) {
    EXPECT_NEAR(out[i], 2.0f * a[i], tol) << i;
    EXPECT_NEAR(out[count + i], b[i], tol) << count + i;
  }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dout);
}

class PluginGpu : public ::testing::TestWithParam<std::pair<int32_t, bool>> {};

TEST_P(PluginGpu, BuildSerializeDeserializeRunCapture) {
  if (!gpuPresent()) GTEST_SKIP() << "no CUDA device";
  auto [level, fp16] = GetParam();
  Logger logger;
  std::unique_ptr<kiln::IHostMemory> plan = buildGpu(logger, level, fp16);
  ASSERT_NE(plan, nullptr);
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan->data(), plan->size()));
  ASSERT_NE(engine, nullptr);
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  ASSERT_NE(ctx, nullptr);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  int before = gEnqueues.load();
  runOnGpu(*ctx, 5, stream, false, fp16, 1);
  runOnGpu(*ctx, 2, stream, false, fp16, 2);
  runOnGpu(*ctx, 8, stream, true, fp16, 3);
  EXPECT_GE(gEnqueues.load() - before, 4) << "the plugin's enqueue ran on the GPU";
  cudaStreamDestroy(stream);
}

INSTANTIATE_TEST_SUITE_P(Levels, PluginGpu,
                         ::testing::Values(std::make_pair(0, false), std::make_pair(3, false), std::make_pair(3, true)));

TEST(PluginGpu, ManyContextsOnManyStreams) {
  if (!gpuPresent()) GTEST_SKIP() << "no CUDA device";
  Logger logger;
  std::unique_ptr<kiln::IHostMemory> plan = buildGpu(logger, 0, false);
  ASSERT_NE(plan, nullptr);
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan->data(), plan->size()));
  ASSERT_NE(engine, nullptr);
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
      ASSERT_NE(ctx, nullptr);
      cudaStream_t s = nullptr;
      ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
      for (int i = 0; i < 10; ++i) runOnGpu(*ctx, 1 + (t + i) % 8, s, false, false, t * 10 + i);
      cudaStreamDestroy(s);
    });
  for (auto& th : threads) th.join();
}

// SelectPositive on the GPU: the input comes to the host (stream-ordered copy, then a wait), the selection is
// written back into the upper-bound output and the size tensor, and the plugin waits for its copies before returning
// (its host buffers are local).
class GpuSelectPositive final : public kiln_test::SelectPositiveT<GpuSelectPositive> {
 public:
  using SelectPositiveT::SelectPositiveT;
  char const* getPluginName() const noexcept override { return "KilnTestGpuSelectPositive"; }
  int32_t enqueue(kiln::PluginTensorDesc const* inDesc, kiln::PluginTensorDesc const* outDesc, void const* const* inputs,
                  void* const* outputs, void*, cudaStream_t stream) noexcept override {
    size_t n = static_cast<size_t>(kiln_test::countOf(inDesc[0].dims));
    std::vector<float> x(n), y(n);
    int64_t size = 0;
    size_t sizeBytes = (mode_ & 1) ? 8 : 4;
    if (n && cudaMemcpyAsync(x.data(), inputs[0], n * 4, cudaMemcpyDeviceToHost, stream) != cudaSuccess) return 1;
    if (cudaStreamSynchronize(stream) != cudaSuccess) return 1;
    if (int32_t rc = select(inDesc, outDesc, x.data(), y.data(), &size); rc != 0) return rc;
    if (n && cudaMemcpyAsync(outputs[0], y.data(), n * 4, cudaMemcpyHostToDevice, stream) != cudaSuccess) return 1;
    if (cudaMemcpyAsync(outputs[1], &size, sizeBytes, cudaMemcpyHostToDevice, stream) != cudaSuccess) return 1;
    return cudaStreamSynchronize(stream) == cudaSuccess ? 0 : 1;
  }
  int32_t enqueueHost(kiln::PluginTensorDesc const*, kiln::PluginTensorDesc const*, void const* const*, void* const*,
                      void*) noexcept override {
    return 7;
  }
};

class GpuSelectPositiveCreator final : public kiln::IPluginCreatorV3One {
 public:
  kiln::IPluginV3* createPlugin(char const* n, kiln::PluginFieldCollection const* fc, kiln::TensorRTPhase p) noexcept override {
    return inner_.createPlugin(n, fc, p);
  }
  kiln::PluginFieldCollection const* getFieldNames() noexcept override { return inner_.getFieldNames(); }
  char const* getPluginName() const noexcept override { return "KilnTestGpuSelectPositive"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  char const* getPluginNamespace() const noexcept override { return "kiln.test"; }

 private:
  kiln_test::RuntimeV3Creator<GpuSelectPositive> inner_{"KilnTestGpuSelectPositive"};
};

REGISTER_KILN_PLUGIN(GpuSelectPositiveCreator);

// Device memory for data-dependent outputs.
class DeviceOutputAllocator final : public kiln::IOutputAllocator {
 public:
  ~DeviceOutputAllocator() override { cudaFree(buf); }
  void* reallocateOutputAsync(char const*, void*, uint64_t size, uint64_t, cudaStream_t) override {
    ++calls;
    if (size <= capacity) return buf;
    cudaFree(buf);
    buf = nullptr;
    capacity = 0;
    if (cudaMalloc(&buf, size) != cudaSuccess) return nullptr;
    capacity = size;
    return buf;
  }
  void notifyShape(char const*, kiln::Dims const& d) noexcept override { shape = d; }
  void* buf = nullptr;
  uint64_t capacity = 0;
  kiln::Dims shape{};
  int calls = 0;
};

// x [N, 4] (N in [1, 8]) -> GpuSelectPositive -> pos [K] (output allocator), k (0-D), sum(pos) (0-D), for
// int32 and int64 size tensors and a size past the upper bound (refused).
TEST(PluginGpu, SizeTensorDataDependentOutput) {
  if (!gpuPresent()) GTEST_SKIP() << "no CUDA device";
  for (int32_t mode : {0, 1, 2}) {
    SCOPED_TRACE(mode);
    Logger logger;
    std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
    std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
    std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
    kiln::ITensor* x = net->addInput("x", kiln::DataType::kFLOAT, dims2(-1, 4));
    GpuSelectPositive plugin(mode, false);
    kiln::ITensor* ins[] = {x};
    kiln::IPluginV3Layer* l = net->addPluginV3(ins, 1, nullptr, 0, plugin);
    ASSERT_NE(l, nullptr);
    l->getOutput(0)->setName("pos");
    l->getOutput(1)->setName("k");
    net->markOutput(*l->getOutput(0));
    net->markOutput(*l->getOutput(1));
    kiln::IReduceLayer* r = net->addReduce(*l->getOutput(0), kiln::ReduceOperation::kSUM, 1u, false);
    r->getOutput(0)->setName("sum");
    net->markOutput(*r->getOutput(0));
    kiln::IOptimizationProfile* p = builder->createOptimizationProfile();
    p->setDimensions("x", kiln::OptProfileSelector::kMIN, dims2(1, 4));
    p->setDimensions("x", kiln::OptProfileSelector::kOPT, dims2(2, 4));
    p->setDimensions("x", kiln::OptProfileSelector::kMAX, dims2(8, 4));
    config->addOptimizationProfile(p);
    config->setDefaultDeviceType(kiln::DeviceType::kGPU);
    std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*net, *config));
    ASSERT_NE(plan, nullptr);
    std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
    kiln_test::runtimeBuildCalls() = 0;
    std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan->data(), plan->size()));
    ASSERT_NE(engine, nullptr);
    std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
    ASSERT_NE(ctx, nullptr);
    DeviceOutputAllocator alloc;
    ASSERT_TRUE(ctx->setOutputAllocator("pos", &alloc));
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    void *dx = nullptr, *dk = nullptr, *dsum = nullptr;
    ASSERT_EQ(cudaMalloc(&dx, 8 * 4 * 4), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dk, 8), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dsum, 4), cudaSuccess);
    for (int64_t rows : {3, 8, 1}) {
      SCOPED_TRACE(rows);
      std::vector<float> xs(static_cast<size_t>(rows * 4)), want;
      float sum = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        xs[i] = (i * 5 + static_cast<size_t>(rows)) % 3 == 0 ? static_cast<float>(i) + 0.25f : -1.0f;
        if (xs[i] > 0) want.push_back(xs[i]), sum += xs[i];
      }
      ASSERT_EQ(cudaMemcpy(dx, xs.data(), xs.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_TRUE(ctx->setInputShape("x", dims2(rows, 4)));
      ASSERT_TRUE(ctx->setTensorAddress("x", dx));
      ASSERT_TRUE(ctx->setTensorAddress("k", dk));
      ASSERT_TRUE(ctx->setTensorAddress("sum", dsum));
      bool ok = ctx->enqueueV3(stream);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      if (mode == 2) {  // K + n + 1 is past the upper bound n
        EXPECT_FALSE(ok);
        EXPECT_EQ(alloc.calls, 0);
        continue;
      }
      ASSERT_TRUE(ok);
      int64_t k = -1;
      int32_t k32 = -1;
      float got = -1;
      ASSERT_EQ(cudaMemcpy(mode == 1 ? static_cast<void*>(&k) : static_cast<void*>(&k32), dk, mode == 1 ? 8 : 4,
                           cudaMemcpyDeviceToHost),
                cudaSuccess);
      if (mode == 0) k = k32;
      EXPECT_EQ(k, static_cast<int64_t>(want.size()));
      ASSERT_EQ(alloc.shape.nbDims, 1);
      ASSERT_EQ(alloc.shape.d[0], static_cast<int64_t>(want.size()));
      std::vector<float> pos(want.size());
      if (!pos.empty()) {
        ASSERT_EQ(cudaMemcpy(pos.data(), alloc.buf, pos.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      }
      EXPECT_EQ(pos, want);
      ASSERT_EQ(cudaMemcpy(&got, dsum, 4, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_FLOAT_EQ(got, sum);
    }
    EXPECT_EQ(kiln_test::runtimeBuildCalls().load(), 0);
    cudaFree(dx);
    cudaFree(dk);
    cudaFree(dsum);
    cudaStreamDestroy(stream);
  }
}

// Keeps every message (the builder's verbose tactic log).
class TextLogger : public kiln::ILogger {
 public:
  void log(Severity s, char const* msg) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    if (s <= Severity::kERROR) std::fprintf(stderr, "[kiln error] %s\n", msg);
    text_ += std::string(msg) + "\n";
  }
  std::string text() {
    std::lock_guard<std::mutex> lock(mu_);
    return text_;
  }

 private:
  std::mutex mu_;
  std::string text_;
};

// GpuSelectPositive with tactics (mode 4: tactic 1 waits 2 ms, tactic 2 does not), built for kGPU at level 3: both
// are timed through enqueue on the device with the data-dependent output at its upper bound (the plugin refuses a
// smaller one), tactic 2 is chosen, and the engine runs it and selects right.
TEST(PluginGpu, SizeTensorPluginTacticsTimedOnTheDevice) {
  if (!gpuPresent()) GTEST_SKIP() << "no CUDA device";
  TextLogger logger;
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  kiln::ITensor* x = net->addInput("x", kiln::DataType::kFLOAT, dims2(-1, 4));
  GpuSelectPositive plugin(4, false);
  kiln::ITensor* ins[] = {x};
  kiln::IPluginV3Layer* l = net->addPluginV3(ins, 1, nullptr, 0, plugin);
  ASSERT_NE(l, nullptr);
  l->getOutput(0)->setName("pos");
  l->getOutput(1)->setName("k");
  net->markOutput(*l->getOutput(0));
  net->markOutput(*l->getOutput(1));
  kiln::IOptimizationProfile* p = builder->createOptimizationProfile();
  p->setDimensions("x", kiln::OptProfileSelector::kMIN, dims2(1, 4));
  p->setDimensions("x", kiln::OptProfileSelector::kOPT, dims2(2, 4));
  p->setDimensions("x", kiln::OptProfileSelector::kMAX, dims2(8, 4));
  config->addOptimizationProfile(p);
  config->setDefaultDeviceType(kiln::DeviceType::kGPU);
  config->setBuilderOptimizationLevel(3);
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*net, *config));
  ASSERT_NE(plan, nullptr) << logger.text();
  std::string log = logger.text();
  EXPECT_NE(log.find("plugin tactic 1 "), std::string::npos) << log;
  EXPECT_NE(log.find("on the GPU"), std::string::npos) << log;
  EXPECT_NE(log.find("plugin tactic 2 chosen"), std::string::npos) << log;
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan->data(), plan->size()));
  ASSERT_NE(engine, nullptr);
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  ASSERT_NE(ctx, nullptr);
  DeviceOutputAllocator alloc;
  ASSERT_TRUE(ctx->setOutputAllocator("pos", &alloc));
  std::vector<float> xs = {1.5f, -2, 0, 3, -1, 4.25f, -0.5f, 7, 2, -3, -4, 0.125f}, want;
  for (float v : xs)
    if (v > 0) want.push_back(v);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  void *dx = nullptr, *dk = nullptr;
  ASSERT_EQ(cudaMalloc(&dx, xs.size() * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dk, 4), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dx, xs.data(), xs.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  kiln_test::selectLastTactic() = 0;
  ASSERT_TRUE(ctx->setInputShape("x", dims2(3, 4)));
  ASSERT_TRUE(ctx->setTensorAddress("x", dx));
  ASSERT_TRUE(ctx->setTensorAddress("k", dk));
  EXPECT_TRUE(ctx->enqueueV3(stream));
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(kiln_test::selectLastTactic().load(), 2);
  int32_t k = -1;
  ASSERT_EQ(cudaMemcpy(&k, dk, 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(k, static_cast<int32_t>(want.size()));
  ASSERT_EQ(alloc.shape.nbDims, 1);
  ASSERT_EQ(alloc.shape.d[0], static_cast<int64_t>(want.size()));
  std::vector<float> pos(want.size());
  ASSERT_EQ(cudaMemcpy(pos.data(), alloc.buf, pos.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(pos, want);
  cudaFree(dx);
  cudaFree(dk);
  cudaStreamDestroy(stream);
}

}  // namespace
