// gpu: the cuDNN and cuBLAS handles V2 plugins are attached with, as TensorRT gives them: a plugin whose enqueue runs
// cublasSgemm and cudnnAddTensor on the handles of attachToContext (checked against host math, on several contexts
// and streams, inside a CUDA-graph capture); each context's handles are its own and bound to the launch's stream;
// a build without kCUBLAS / kCUDNN attaches a null handle of that kind. Skips where no CUDA device is present.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

bool gpuPresent() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

constexpr int kK = 5;  // input columns
constexpr int kM = 3;  // output columns

float weight(int k, int m) { return 0.1f * static_cast<float>(k + 1) - 0.05f * static_cast<float>(m); }
float bias(int m) { return 0.5f * static_cast<float>(m) - 1.0f; }

// What attachToContext received, in order, for the test to inspect.
struct Attached {
  cudnnContext* cudnn;
  cublasContext* cublas;
};
std::mutex gMu;
std::vector<Attached> gAttached;
int gDetached = 0;

std::vector<Attached> attachedSince(size_t from) {
  std::lock_guard<std::mutex> lock(gMu);
  return std::vector<Attached>(gAttached.begin() + static_cast<std::ptrdiff_t>(from), gAttached.end());
}
size_t attachedCount() {
  std::lock_guard<std::mutex> lock(gMu);
  return gAttached.size();
}

// y [N, M] = x [N, K] * W [K, M] (cublasSgemm) + bias [M] (cudnnAddTensor), both on the attached handles, which
// must be bound to the stream enqueue gets.
class BlasDnn final : public kiln::IPluginV2DynamicExt {
 public:
  char const* getPluginType() const noexcept override { return "KilnTestBlasDnn"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  int32_t getNbOutputs() const noexcept override { return 1; }
  int32_t initialize() noexcept override {
    if (w_) return 0;
    std::vector<float> w(kK * kM), b(kM);
    for (int k = 0; k < kK; ++k)
      for (int m = 0; m < kM; ++m) w[k * kM + m] = weight(k, m);
    for (int m = 0; m < kM; ++m) b[m] = bias(m);
    if (cudaMalloc(reinterpret_cast<void**>(&w_), w.size() * 4) != cudaSuccess) return 1;
    if (cudaMalloc(reinterpret_cast<void**>(&b_), b.size() * 4) != cudaSuccess) return 1;
    if (cudaMemcpy(w_, w.data(), w.size() * 4, cudaMemcpyHostToDevice) != cudaSuccess) return 1;
    if (cudaMemcpy(b_, b.data(), b.size() * 4, cudaMemcpyHostToDevice) != cudaSuccess) return 1;
    return 0;
  }
  void terminate() noexcept override {
    cudaFree(w_);
    cudaFree(b_);
    w_ = b_ = nullptr;
  }
  size_t getSerializationSize() const noexcept override { return 0; }
  void serialize(void*) const noexcept override {}
  void destroy() noexcept override { delete this; }
  kiln::IPluginV2DynamicExt* clone() const noexcept override { return new BlasDnn(); }
  void setPluginNamespace(char const* ns) noexcept override { ns_ = ns ? ns : ""; }
  char const* getPluginNamespace() const noexcept override { return ns_.c_str(); }
  kiln::DataType getOutputDataType(int32_t, kiln::DataType const*, int32_t) const noexcept override {
    return kiln::DataType::kFLOAT;
  }
  kiln::DimsExprs getOutputDimensions(int32_t, kiln::DimsExprs const* in, int32_t,
                                      kiln::IExprBuilder& eb) noexcept override {
    kiln::DimsExprs o = in[0];
    o.d[1] = eb.constant(kM);
    return o;
  }
  bool supportsFormatCombination(int32_t pos, kiln::PluginTensorDesc const* io, int32_t, int32_t) noexcept override {
    return io[pos].type == kiln::DataType::kFLOAT && io[pos].format == kiln::TensorFormat::kLINEAR;
  }
  void configurePlugin(kiln::DynamicPluginTensorDesc const*, int32_t, kiln::DynamicPluginTensorDesc const*,
                       int32_t) noexcept override {}
  size_t getWorkspaceSize(kiln::PluginTensorDesc const*, int32_t, kiln::PluginTensorDesc const*,
                          int32_t) const noexcept override {
    return 0;
  }
  void attachToContext(cudnnContext* cudnn, cublasContext* cublas, kiln::IGpuAllocator*) noexcept override {
    cudnn_ = cudnn;
    cublas_ = cublas;
    std::lock_guard<std::mutex> lock(gMu);
    gAttached.push_back({cudnn, cublas});
  }
  void detachFromContext() noexcept override {
    std::lock_guard<std::mutex> lock(gMu);
    ++gDetached;
  }
  int32_t enqueue(kiln::PluginTensorDesc const* in, kiln::PluginTensorDesc const*, void const* const* inputs,
                  void* const* outputs, void*, cudaStream_t stream) noexcept override {
    if (!cudnn_ || !cublas_) return 10;
    cudaStream_t bound = nullptr;
    if (cublasGetStream(cublas_, &bound) != CUBLAS_STATUS_SUCCESS || bound != stream) return 11;
    if (cudnnGetStream(cudnn_, &bound) != CUDNN_STATUS_SUCCESS || bound != stream) return 12;
    int n = static_cast<int>(in[0].dims.d[0]);
    auto const* x = static_cast<float const*>(inputs[0]);
    auto* y = static_cast<float*>(outputs[0]);
    // Row-major y = x W is column-major y^T = W^T x^T: an (M x K) by (K x N) product.
    float one = 1.0f, zero = 0.0f;
    if (cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, kM, n, kK, &one, w_, kM, x, kK, &zero, y, kM) !=
        CUBLAS_STATUS_SUCCESS)
      return 13;
    cudnnTensorDescriptor_t bd = nullptr, yd = nullptr;
    int rc = 0;
    if (cudnnCreateTensorDescriptor(&bd) != CUDNN_STATUS_SUCCESS ||
        cudnnCreateTensorDescriptor(&yd) != CUDNN_STATUS_SUCCESS ||
        cudnnSetTensor4dDescriptor(bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, kM, 1, 1) != CUDNN_STATUS_SUCCESS ||
        cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, kM, 1, 1) != CUDNN_STATUS_SUCCESS ||
        cudnnAddTensor(cudnn_, &one, bd, b_, &one, yd, y) != CUDNN_STATUS_SUCCESS)
      rc = 14;
    if (bd) cudnnDestroyTensorDescriptor(bd);
    if (yd) cudnnDestroyTensorDescriptor(yd);
    return rc;
  }

 private:
  std::string ns_;
  float* w_ = nullptr;
  float* b_ = nullptr;
  cudnnContext* cudnn_ = nullptr;
  cublasContext* cublas_ = nullptr;
};

class BlasDnnCreator final : public kiln::IPluginCreator {
 public:
  char const* getPluginName() const noexcept override { return "KilnTestBlasDnn"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  kiln::PluginFieldCollection const* getFieldNames() noexcept override { return &fc_; }
  kiln::IPluginV2* createPlugin(char const*, kiln::PluginFieldCollection const*) noexcept override {
    return new BlasDnn();
  }
  kiln::IPluginV2* deserializePlugin(char const*, void const*, size_t length) noexcept override {
    return length == 0 ? new BlasDnn() : nullptr;
  }
  void setPluginNamespace(char const* ns) noexcept override { ns_ = ns ? ns : ""; }
  char const* getPluginNamespace() const noexcept override { return ns_.c_str(); }

 private:
  kiln::PluginFieldCollection fc_{};
  std::string ns_;
};

REGISTER_KILN_PLUGIN(BlasDnnCreator);

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

// x [N, K] (N in [1, 8]) -> the plugin -> y [N, M], built for the GPU with `sources` (0: the default sources).
std::unique_ptr<kiln::ICudaEngine> buildEngine(Logger& logger, kiln::IRuntime& runtime, kiln::TacticSources sources) {
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  kiln::ITensor* x = net->addInput("x", kiln::DataType::kFLOAT, dims2(-1, kK));
  BlasDnn plugin;
  kiln::ITensor* ins[] = {x};
  kiln::IPluginV2Layer* l = net->addPluginV2(ins, 1, plugin);
  if (!l) return nullptr;
  l->getOutput(0)->setName("y");
  net->markOutput(*l->getOutput(0));
  kiln::IOptimizationProfile* p = builder->createOptimizationProfile();
  p->setDimensions("x", kiln::OptProfileSelector::kMIN, dims2(1, kK));
  p->setDimensions("x", kiln::OptProfileSelector::kOPT, dims2(4, kK));
  p->setDimensions("x", kiln::OptProfileSelector::kMAX, dims2(8, kK));
  config->addOptimizationProfile(p);
  config->setDefaultDeviceType(kiln::DeviceType::kGPU);
  if (sources != 0) {
    EXPECT_TRUE(config->setTacticSources(sources));
  }
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*net, *config));
  if (!plan) return nullptr;
  return std::unique_ptr<kiln::ICudaEngine>(runtime.deserializeCudaEngine(plan->data(), plan->size()));
}

// Runs `ctx` at N rows on `stream` (through a captured CUDA graph when `graph`) and checks y against host math.
void runAndCheck(kiln::IExecutionContext& ctx, int64_t n, cudaStream_t stream, bool graph, int seed) {
  size_t inCount = static_cast<size_t>(n * kK), outCount = static_cast<size_t>(n * kM);
  std::vector<float> x(inCount), y(outCount, -1.0f);
  for (size_t i = 0; i < inCount; ++i) x[i] = static_cast<float>((seed + static_cast<int>(i) * 3) % 11) * 0.25f - 1.0f;
  void *dx = nullptr, *dy = nullptr;
  ASSERT_EQ(cudaMalloc(&dx, inCount * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dy, outCount * 4), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dx, x.data(), inCount * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_TRUE(ctx.setInputShape("x", dims2(n, kK)));
  ASSERT_TRUE(ctx.setTensorAddress("x", dx));
  ASSERT_TRUE(ctx.setTensorAddress("y", dy));
  ASSERT_TRUE(ctx.enqueueV3(stream));  // also settles the shapes before a capture
  if (graph) {
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ASSERT_EQ(cudaMemset(dy, 0, outCount * 4), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the memset is on the legacy stream
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    bool ok = ctx.enqueueV3(stream);
    ASSERT_EQ(cudaStreamEndCapture(stream, &g), cudaSuccess);
    ASSERT_TRUE(ok);
    ASSERT_EQ(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(g);
  }
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(y.data(), dy, outCount * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int64_t r = 0; r < n; ++r)
    for (int m = 0; m < kM; ++m) {
      double want = bias(m);
      for (int k = 0; k < kK; ++k) want += static_cast<double>(x[r * kK + k]) * weight(k, m);
      EXPECT_NEAR(y[r * kM + m], want, 1e-4 * (1 + std::fabs(want))) << "y[" << r << ", " << m << "]";
    }
  cudaFree(dx);
  cudaFree(dy);
}

TEST(PluginHandlesGpu, SgemmAndCudnnOnEachContextsOwnHandles) {
  if (!gpuPresent()) GTEST_SKIP() << "no CUDA device";
  Logger logger;
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  std::unique_ptr<kiln::ICudaEngine> engine = buildEngine(logger, *runtime, 0);
  ASSERT_NE(engine, nullptr);
  int detachedBefore = 0;
  {
    std::lock_guard<std::mutex> lock(gMu);
    detachedBefore = gDetached;
  }
  size_t before = attachedCount();
  std::unique_ptr<kiln::IExecutionContext> c1(engine->createExecutionContext());
  std::unique_ptr<kiln::IExecutionContext> c2(engine->createExecutionContext());
  ASSERT_NE(c1, nullptr);
  ASSERT_NE(c2, nullptr);
  std::vector<Attached> got = attachedSince(before);
  ASSERT_EQ(got.size(), 2u) << "one attachToContext per context";
  for (auto const& a : got) {
    EXPECT_NE(a.cudnn, nullptr);
    EXPECT_NE(a.cublas, nullptr);
  }
  EXPECT_NE(got[0].cudnn, got[1].cudnn) << "each context has its own cuDNN handle";
  EXPECT_NE(got[0].cublas, got[1].cublas) << "each context has its own cuBLAS handle";
  cudaStream_t s1 = nullptr, s2 = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
  // Shapes change between runs; the handles follow each launch's stream (the plugin checks that).
  runAndCheck(*c1, 3, s1, false, 1);
  runAndCheck(*c2, 7, s2, false, 2);
  runAndCheck(*c1, 8, s2, false, 3);
  runAndCheck(*c2, 1, s1, false, 4);
  runAndCheck(*c1, 5, s1, true, 5);
  runAndCheck(*c2, 6, s2, true, 6);
  c1.reset();
  c2.reset();
  {
    std::lock_guard<std::mutex> lock(gMu);
    EXPECT_EQ(gDetached - detachedBefore, 2) << "each context's copy is detached when the context goes";
  }
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

TEST(PluginHandlesGpu, DisabledTacticSourcesGiveNullHandles) {
  if (!gpuPresent()) GTEST_SKIP() << "no CUDA device";
  Logger logger;
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  kiln::TacticSources all = (1u << static_cast<uint32_t>(kiln::EnumMax<kiln::TacticSource>())) - 1;
  struct Case {
    uint32_t off;
    bool cudnn, cublas;
  };
  for (Case c : {Case{1u << static_cast<uint32_t>(kiln::TacticSource::kCUBLAS), true, false},
                 Case{1u << static_cast<uint32_t>(kiln::TacticSource::kCUDNN), false, true},
                 Case{(1u << static_cast<uint32_t>(kiln::TacticSource::kCUBLAS)) |
                          (1u << static_cast<uint32_t>(kiln::TacticSource::kCUDNN)),
                      false, false}}) {
    std::unique_ptr<kiln::ICudaEngine> engine = buildEngine(logger, *runtime, all & ~c.off);
    ASSERT_NE(engine, nullptr);
    size_t before = attachedCount();
    std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
    ASSERT_NE(ctx, nullptr);
    std::vector<Attached> got = attachedSince(before);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].cudnn != nullptr, c.cudnn) << "sources off: " << c.off;
    EXPECT_EQ(got[0].cublas != nullptr, c.cublas) << "sources off: " << c.off;
  }
}

}  // namespace
