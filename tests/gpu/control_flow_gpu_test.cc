// gpu: control flow through the public API on the GPU: an ONNX-like RNN (an ILoop over the time axis whose trip
// count is shape arithmetic, MatMuls and tanh in the body, last and concatenated outputs) followed by an
// IIfConditional on a value computed on the device, built for kGPU and compared with the CPU reference; the
// engine must run both on the device tactics, not the host fallbacks. Skips where no CUDA device is present.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "e2e/e2e_util.h"

namespace kiln_e2e {
namespace {

using kiln_samples::HostTensor;

bool gpuPresent() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

constexpr int32_t kT = 6, kB = 2, kI = 8, kH = 16;

// Weights (they must outlive the builds).
struct RnnWeights {
  std::vector<float> w, r, b, h0, zero{0.0F}, two{2.0F}, one{1.0F};
  std::vector<int32_t> axis0{0};
};
RnnWeights const& weights() {
  static RnnWeights const w = [] {
    RnnWeights x;
    kiln_samples::Random rng(21);
    x.w = rng.uniformVector(kI * kH, -0.5F, 0.5F);
    x.r = rng.uniformVector(kH * kH, -0.5F, 0.5F);
    x.b = rng.uniformVector(kH, -0.5F, 0.5F);
    x.h0 = rng.uniformVector(kB * kH, -0.5F, 0.5F);
    return x;
  }();
  return w;
}

kiln::ITensor* constant(kiln::INetworkDefinition& n, kiln::Dims d, std::vector<float> const& v) {
  return n.addConstant(d, {kiln::DataType::kFLOAT, v.data(), static_cast<int64_t>(v.size())})->getOutput(0);
}

// h_t = tanh(x_t W + h_{t-1} R + b) over x [T, B, I]; outputs "last" [B, H], "all" [T, B, H], and "branch":
// last * 2 when the sum of last is positive, else last - 1.
bool defineRnn(kiln::IBuilder&, kiln::INetworkDefinition& n, kiln::IBuilderConfig&) {
  using namespace kiln;
  RnnWeights const& wt = weights();
  ITensor* x = n.addInput("x", DataType::kFLOAT, Dims{3, {kT, kB, kI}});
  // The trip count as an ONNX export computes it: Shape(x)[0].
  ITensor* idx = n.addConstant(Dims{0, {}}, {DataType::kINT32, wt.axis0.data(), 1})->getOutput(0);
  ITensor* trips = n.addGather(*n.addShape(*x)->getOutput(0), *idx, 0)->getOutput(0);
  ILoop* loop = n.addLoop();
  if (!x || !trips || !loop) return false;
  loop->addTripLimit(*trips, TripLimit::kCOUNT);
  IRecurrenceLayer* rec = loop->addRecurrence(*constant(n, Dims{2, {kB, kH}}, wt.h0));
  ITensor* xt = loop->addIterator(*x, 0, false)->getOutput(0);
  ITensor* xw =
      n.addMatrixMultiply(*xt, MatrixOperation::kNONE, *constant(n, Dims{2, {kI, kH}}, wt.w), MatrixOperation::kNONE)
          ->getOutput(0);
  ITensor* hr = n.addMatrixMultiply(*rec->getOutput(0), MatrixOperation::kNONE, *constant(n, Dims{2, {kH, kH}}, wt.r),
                                    MatrixOperation::kNONE)
                    ->getOutput(0);
  ITensor* s = n.addElementWise(*xw, *hr, ElementWiseOperation::kSUM)->getOutput(0);
  s = n.addElementWise(*s, *constant(n, Dims{2, {1, kH}}, wt.b), ElementWiseOperation::kSUM)->getOutput(0);
  ITensor* h = n.addActivation(*s, ActivationType::kTANH)->getOutput(0);
  rec->setInput(1, *h);
  ILoopOutputLayer* last = loop->addLoopOutput(*h, LoopOutput::kLAST_VALUE);
  ILoopOutputLayer* all = loop->addLoopOutput(*h, LoopOutput::kCONCATENATE, 0);
  all->setInput(1, *trips);
  ITensor* lastT = last->getOutput(0);
  lastT->setName("last");
  all->getOutput(0)->setName("all");
  n.markOutput(*lastT);
  n.markOutput(*all->getOutput(0));
  ITensor* sum = n.addReduce(*lastT, ReduceOperation::kSUM, 3U, false)->getOutput(0);
  ITensor* cond =
      n.addElementWise(*sum, *constant(n, Dims{0, {}}, wt.zero), ElementWiseOperation::kGREATER)->getOutput(0);
  IIfConditional* ic = n.addIfConditional();
  ic->setCondition(*cond);
  ITensor* a = ic->addInput(*lastT)->getOutput(0);
  ITensor* t = n.addElementWise(*a, *constant(n, Dims{2, {1, 1}}, wt.two), ElementWiseOperation::kPROD)->getOutput(0);
  ITensor* f = n.addElementWise(*a, *constant(n, Dims{2, {1, 1}}, wt.one), ElementWiseOperation::kSUB)->getOutput(0);
  ITensor* branch = ic->addOutput(*t, *f)->getOutput(0);
  branch->setName("branch");
  n.markOutput(*branch);
  return true;
}

std::vector<uint8_t> buildGpu(kiln::ILogger& logger, int32_t level) {
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> network(builder->createNetworkV2(0));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  config->setDefaultDeviceType(kiln::DeviceType::kGPU);
  config->clearFlag(kiln::BuilderFlag::kTF32);
  config->setBuilderOptimizationLevel(level);
  config->setProfilingVerbosity(kiln::ProfilingVerbosity::kDETAILED);
  if (!defineRnn(*builder, *network, *config)) return {};
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*network, *config));
  if (!plan) return {};
  auto const* b = static_cast<uint8_t const*>(plan->data());
  return {b, b + plan->size()};
}

TEST(GpuControlFlow, OnnxLikeRnnLoopAndIfMatchTheReference) {
  CapturingLogger logger;
  std::vector<HostTensor> inputs = {randomInput("x", kiln::Dims{3, {kT, kB, kI}}, 5)};
  auto cpuPlan = buildPlan(logger, defineRnn);
  ASSERT_FALSE(cpuPlan.empty()) << logger.lastError();
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  std::vector<HostTensor> ref;
  {
    auto engine = loadEngine(*rt, cpuPlan);
    ASSERT_NE(engine, nullptr) << logger.lastError();
    std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
    ASSERT_TRUE(kiln_samples::runContext(*ctx, inputs, ref)) << logger.lastError();
  }
  ASSERT_EQ(ref.size(), 3U);
  if (!gpuPresent()) GTEST_SKIP() << "no CUDA device (the CPU reference ran)";
  for (int32_t level : {0, 3}) {
    SCOPED_TRACE("level " + std::to_string(level));
    auto plan = buildGpu(logger, level);
    ASSERT_FALSE(plan.empty()) << logger.lastError();
    auto engine = loadEngine(*rt, plan);
    ASSERT_NE(engine, nullptr) << logger.lastError();
    std::unique_ptr<kiln::IEngineInspector> inspector(engine->createEngineInspector());
    std::string info = inspector->getEngineInformation(kiln::LayerInformationFormat::kONELINE);
    EXPECT_NE(info.find("tactic=loop_cuda_subgraph"), std::string::npos) << info;
    EXPECT_NE(info.find("tactic=if_cuda_subgraph"), std::string::npos) << info;
    EXPECT_EQ(info.find("hostfallback_"), std::string::npos) << info;
    std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
    ASSERT_NE(ctx, nullptr) << logger.lastError();
    std::map<std::string, void*> dev;
    auto alloc = [&](std::string const& name, size_t bytes) {
      void* p = nullptr;
      EXPECT_EQ(cudaMalloc(&p, std::max<size_t>(bytes, 4)), cudaSuccess);
      dev[name] = p;
      return p;
    };
    ASSERT_TRUE(ctx->setInputShape("x", inputs[0].dims));
    void* xp = alloc("x", inputs[0].data.size() * 4);
    ASSERT_EQ(cudaMemcpy(xp, inputs[0].data.data(), inputs[0].data.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_TRUE(ctx->setTensorAddress("x", xp));
    for (auto const& r : ref) {
      void* p = alloc(r.name, r.data.size() * 4);
      ASSERT_EQ(cudaMemset(p, 0xff, r.data.size() * 4), cudaSuccess);  // poison: NaN
      ASSERT_TRUE(ctx->setTensorAddress(r.name.c_str(), p));
    }
    cudaStream_t s = nullptr;
    ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int rep = 0; rep < 2; ++rep) {
      ASSERT_TRUE(ctx->enqueueV3(s)) << logger.lastError();
      ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      for (auto const& r : ref) {
        std::vector<float> got(r.data.size());
        ASSERT_EQ(cudaMemcpy(got.data(), dev[r.name], got.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
        double err = normRelError(got, std::vector<double>(r.data.begin(), r.data.end()));
        EXPECT_LE(err, 1e-5) << r.name;
      }
    }
    cudaStreamDestroy(s);
    for (auto& [name, p] : dev) cudaFree(p);
  }
}

}  // namespace
}  // namespace kiln_e2e
