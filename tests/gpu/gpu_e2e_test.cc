// gpu: networks through the public API on the GPU against the CPU reference (ResNet-18, a BERT layer: fp32, TF32,
// fp16, bf16 at levels 0 and 3; fused attention, layout 1 when a fixed profile specializes the build; a
// MultiheadAttention block whose attention reads the in-projection packed), many contexts and streams, CUDA graphs,
// profiling, the timing cache, host fallback, in-place layers against fp64 (also captured); ViT's patch embedding on
// the patch GEMM; MobileNetV2's first blocks. Skips where no CUDA device is present.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <thread>

#include "e2e/builder_fix_nets.h"
#include "e2e/e2e_util.h"
#include "e2e/in_place_nets.h"

namespace kiln_e2e {
namespace {

using kiln_samples::HostTensor;

bool gpuPresent() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define REQUIRE_GPU()                                    \
  do {                                                   \
    if (!gpuPresent()) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

struct GpuBuild {
  int32_t level = 0;
  bool tf32 = false;
  bool fp16 = false;
  bool bf16 = false;
  kiln::ITimingCache* cache = nullptr;
  std::vector<uint32_t> sources{};  // empty: all
  bool detailed = false;            // kDETAILED profiling verbosity (the inspector then names ops and tactics)
};

std::vector<uint8_t> buildGpuPlan(kiln::ILogger& logger, DefineFn const& define, GpuBuild const& o) {
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> network(builder->createNetworkV2(0));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  config->setDefaultDeviceType(kiln::DeviceType::kGPU);
  if (!o.tf32) config->clearFlag(kiln::BuilderFlag::kTF32);
  if (o.fp16) config->setFlag(kiln::BuilderFlag::kFP16);
  if (o.bf16) config->setFlag(kiln::BuilderFlag::kBF16);
  config->setBuilderOptimizationLevel(o.level);
  if (o.detailed) config->setProfilingVerbosity(kiln::ProfilingVerbosity::kDETAILED);
  if (o.cache) {
    EXPECT_TRUE(config->setTimingCache(*o.cache, false));
  }
  if (!define(*builder, *network, *config)) {
    ADD_FAILURE() << "could not define the network";
    return {};
  }
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*network, *config));
  if (!plan) {
    ADD_FAILURE() << "GPU build failed";
    return {};
  }
  auto const* b = static_cast<uint8_t const*>(plan->data());
  return {b, b + plan->size()};
}

// Device copies of a context's I/O; runs on `stream`.
class DeviceIO {
 public:
  ~DeviceIO() {
    for (auto& [n, p] : ptrs_) cudaFree(p);
  }
  bool bind(kiln::IExecutionContext& ctx, std::vector<HostTensor> const& inputs) {
    kiln::ICudaEngine const& e = ctx.getEngine();
    for (auto const& in : inputs) {
      if (!ctx.setInputShape(in.name.c_str(), in.dims)) return false;
      void* p = alloc(in.name, in.data.size() * 4);
      if (cudaMemcpy(p, in.data.data(), in.data.size() * 4, cudaMemcpyHostToDevice) != cudaSuccess) return false;
      if (!ctx.setTensorAddress(in.name.c_str(), p)) return false;
    }
    outputs_.clear();
    for (int32_t i = 0; i < e.getNbIOTensors(); ++i) {
      char const* name = e.getIOTensorName(i);
      if (e.getTensorIOMode(name) != kiln::TensorIOMode::kOUTPUT) continue;
      HostTensor out{name, ctx.getTensorShape(name), {}};
      out.data.resize(static_cast<size_t>(std::max<int64_t>(kiln_samples::volume(out.dims), 1)));
      void* p = alloc(name, out.data.size() * 4);
      cudaMemset(p, 0xff, out.data.size() * 4);  // poison: NaN
      if (!ctx.setTensorAddress(name, p)) return false;
      outputs_.push_back(std::move(out));
    }
    // The copies and memsets above go to the legacy stream and may still run when they return; the runs that
    // follow may use a non-blocking stream, which does not wait for them.
    return cudaDeviceSynchronize() == cudaSuccess;
  }
  bool fetch(cudaStream_t s) {
    for (auto& o : outputs_)
      if (cudaMemcpyAsync(o.data.data(), ptrs_[o.name], o.data.size() * 4, cudaMemcpyDeviceToHost, s) != cudaSuccess)
        return false;
    return cudaStreamSynchronize(s) == cudaSuccess;
  }
  std::vector<HostTensor> const& outputs() const { return outputs_; }
  /// Fills the outputs with NaN again (synchronously).
  bool poison() {
    for (auto& o : outputs_)
      if (cudaMemset(ptrs_[o.name], 0xff, o.data.size() * 4) != cudaSuccess) return false;
    return cudaDeviceSynchronize() == cudaSuccess;
  }

 private:
  void* alloc(std::string const& name, size_t bytes) {
    void*& p = ptrs_[name];
    if (p) cudaFree(p);
    cudaMalloc(&p, std::max<size_t>(bytes, 4));
    return p;
  }
  std::map<std::string, void*> ptrs_;
  std::vector<HostTensor> outputs_;
};

std::vector<HostTensor> runCpu(CapturingLogger& logger, DefineFn const& define, std::vector<HostTensor> const& inputs) {
  auto plan = buildPlan(logger, define);
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  auto engine = loadEngine(*rt, plan);
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  std::vector<HostTensor> outs;
  EXPECT_TRUE(kiln_samples::runContext(*ctx, inputs, outs));
  return outs;
}

double compare(std::vector<HostTensor> const& got, std::vector<HostTensor> const& ref) {
  double worst = 0;
  EXPECT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < std::min(got.size(), ref.size()); ++i) {
    std::vector<double> r(ref[i].data.begin(), ref[i].data.end());
    std::vector<float> g(got[i].data.begin(), got[i].data.begin() + static_cast<long>(r.size()));
    worst = std::max(worst, normRelError(g, r));
  }
  return worst;
}

kiln_samples::ResNetWeights const& resnetWeights() {
  static auto const w = kiln_samples::makeResNetWeights(kiln_samples::resNet18Spec(2, 64, 64, 10));
  return w;
}
DefineFn resnet() {
  return [](kiln::IBuilder&, kiln::INetworkDefinition& n, kiln::IBuilderConfig&) {
    return kiln_samples::addResNet(n, resnetWeights());
  };
}
kiln_samples::BertWeights const& bertWeights() {
  static auto const w = [] {
    kiln_samples::BertSpec s;
    s.hidden = 256;
    s.heads = 4;
    s.ffn = 1024;
    s.maxSeq = 128;
    s.optSeq = 64;
    return kiln_samples::makeBertWeights(s);
  }();
  return w;
}
DefineFn bert() {
  return [](kiln::IBuilder& b, kiln::INetworkDefinition& n, kiln::IBuilderConfig& c) {
    return kiln_samples::addBertLayer(n, bertWeights()) && kiln_samples::addBertProfile(b, c, bertWeights().spec);
  };
}

struct Case {
  char const* name;
  GpuBuild build;
  double tolerance;
};

void checkModel(DefineFn const& define, std::vector<HostTensor> const& inputs, Case const& c) {
  SCOPED_TRACE(c.name);
  CapturingLogger logger;
  auto ref = runCpu(logger, define, inputs);
  auto plan = buildGpuPlan(logger, define, c.build);
  ASSERT_FALSE(plan.empty()) << logger.lastError();
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  auto engine = loadEngine(*rt, plan);
  ASSERT_NE(engine, nullptr) << logger.lastError();
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  ASSERT_NE(ctx, nullptr) << logger.lastError();
  DeviceIO io;
  ASSERT_TRUE(io.bind(*ctx, inputs)) << logger.lastError();
  cudaStream_t s;
  cudaStreamCreate(&s);
  for (int rep = 0; rep < 2; ++rep) {  // the second run reuses everything
    ASSERT_TRUE(ctx->enqueueV3(s)) << logger.lastError();
    ASSERT_TRUE(io.fetch(s));
    double err = compare(io.outputs(), ref);
    std::printf("%s: norm-relative error %.3g (limit %.3g)\n", c.name, err, c.tolerance);
    EXPECT_LE(err, c.tolerance);
  }
  cudaStreamDestroy(s);
}

std::vector<Case> precisionCases() {
  return {{"fp32 level 0", {0}, 1e-5},
          {"fp32 level 3", {3}, 1e-5},
          {"tf32 level 3", {3, true}, 3e-3},
          {"fp16 level 3", {3, false, true}, 5e-3},
          {"bf16 level 3", {3, false, false, true}, 2e-2}};
}

TEST(GpuModels, ResNet18MatchesTheReference) {
  REQUIRE_GPU();
  auto in = randomInput("input", kiln::Dims{4, {2, 3, 64, 64}}, 7);
  for (auto const& c : precisionCases()) checkModel(resnet(), {in}, c);
}

TEST(GpuModels, BertLayerMatchesTheReferenceAtSeveralShapes) {
  REQUIRE_GPU();
  for (auto dims : {kiln::Dims{3, {2, 64, 256}}, kiln::Dims{3, {1, 7, 256}}, kiln::Dims{3, {4, 128, 256}}}) {
    auto in = randomInput("input", dims, 11);
    for (auto const& c : precisionCases()) checkModel(bert(), {in}, c);
  }
}

// How many times `what` occurs in `text`.
int occurrences(std::string const& text, std::string const& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(GpuModels, BertLayerAttentionRunsAsOneFusedKernel) {
  REQUIRE_GPU();
  auto in = randomInput("input", kiln::Dims{3, {2, 100, 256}}, 13);
  CapturingLogger logger;
  auto ref = runCpu(logger, bert(), {in});
  struct Fused {
    char const* name;
    GpuBuild build;
    int attentionLayers;
    double tolerance;
  };
  for (auto const& c : {Fused{"fp32 level 3", {3}, 1, 1e-5}, Fused{"fp16 level 3", {3, false, true}, 1, 5e-3},
                        Fused{"bf16 level 3", {3, false, false, true}, 1, 2e-2}, Fused{"fp32 level 0", {0}, 0, 1e-5}}) {
    SCOPED_TRACE(c.name);
    GpuBuild b = c.build;
    b.detailed = true;
    auto plan = buildGpuPlan(logger, bert(), b);
    ASSERT_FALSE(plan.empty()) << logger.lastError();
    std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
    auto engine = loadEngine(*rt, plan);
    ASSERT_NE(engine, nullptr) << logger.lastError();
    std::unique_ptr<kiln::IEngineInspector> inspector(engine->createEngineInspector());
    ASSERT_NE(inspector, nullptr);
    char const* info = inspector->getEngineInformation(kiln::LayerInformationFormat::kJSON);
    ASSERT_NE(info, nullptr);
    std::string const text = info;
    // Level 3 fuses the scores, scale, softmax and context layers into one Attention layer on the flash kernel;
    // level 0 runs no fusion.
    EXPECT_EQ(occurrences(text, "\"LayerType\": \"Attention\""), c.attentionLayers) << text;
    EXPECT_EQ(occurrences(text, "attention_cuda_flash"), c.attentionLayers) << text;
    EXPECT_EQ(occurrences(text, "\"LayerType\": \"SoftMax\""), 1 - c.attentionLayers) << text;
    std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
    ASSERT_NE(ctx, nullptr) << logger.lastError();
    DeviceIO io;
    ASSERT_TRUE(io.bind(*ctx, {in})) << logger.lastError();
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
    ASSERT_TRUE(ctx->enqueueV3(s)) << logger.lastError();
    ASSERT_TRUE(io.fetch(s));
    cudaStreamDestroy(s);
    double err = compare(io.outputs(), ref);
    std::printf("%s: norm-relative error %.3g (limit %.3g)\n", c.name, err, c.tolerance);
    EXPECT_LE(err, c.tolerance);
  }
}

// A chain of six pointwise layers (broadcast bias, scalar constant, GELU, abs, sigmoid, residual subtraction) builds
// to one PointwiseFused layer named after them (one NVRTC-generated kernel) at level 3, matches the CPU build in fp32
// and fp16, and replays under CUDA graph capture; level 0 keeps the layers.
DefineFn pointwiseChain() {
  return [](kiln::IBuilder&, kiln::INetworkDefinition& n, kiln::IBuilderConfig&) {
    // ElementWise takes operands of equal rank (TensorRT's rule): the bias and the scalar are rank 3.
    kiln::ITensor* x = n.addInput("x", kiln::DataType::kFLOAT, kiln::Dims{3, {2, 64, 33}});
    kiln::ITensor* b = n.addInput("b", kiln::DataType::kFLOAT, kiln::Dims{3, {1, 1, 33}});
    static float const kScale = 0.75f;
    auto* k = n.addConstant(kiln::Dims{3, {1, 1, 1}}, kiln::Weights{kiln::DataType::kFLOAT, &kScale, 1});
    if (!x || !b || !k) return false;
    auto* add = n.addElementWise(*x, *b, kiln::ElementWiseOperation::kSUM);
    if (!add) return false;
    auto* gelu = n.addActivation(*add->getOutput(0), kiln::ActivationType::kGELU_TANH);
    if (!gelu) return false;
    auto* mul = n.addElementWise(*gelu->getOutput(0), *k->getOutput(0), kiln::ElementWiseOperation::kPROD);
    if (!mul) return false;
    auto* abs = n.addUnary(*mul->getOutput(0), kiln::UnaryOperation::kABS);
    if (!abs) return false;
    auto* sig = n.addActivation(*abs->getOutput(0), kiln::ActivationType::kSIGMOID);
    if (!sig) return false;
    auto* sub = n.addElementWise(*sig->getOutput(0), *x, kiln::ElementWiseOperation::kSUB);
    if (!sub) return false;
    add->setName("bias");
    gelu->setName("gelu");
    mul->setName("scale");
    abs->setName("abs");
    sig->setName("sigmoid");
    sub->setName("residual");
    sub->getOutput(0)->setName("y");
    n.markOutput(*sub->getOutput(0));
    return true;
  };
}

TEST(GpuModels, PointwiseChainBuildsToOneGeneratedKernel) {
  auto x = randomInput("x", kiln::Dims{3, {2, 64, 33}}, 21);
  auto b = randomInput("b", kiln::Dims{3, {1, 1, 33}}, 22);
  CapturingLogger logger;
  // The CPU reference first, so that the network itself is checked on machines without a GPU too.
  auto ref = runCpu(logger, pointwiseChain(), {x, b});
  ASSERT_FALSE(ref.empty()) << logger.lastError();
  REQUIRE_GPU();
  for (auto const& c : {Case{"fp32 level 3", {3}, 1e-5}, Case{"fp16 level 3", {3, false, true}, 5e-3},
                        Case{"fp32 level 0", {0}, 1e-5}}) {
    SCOPED_TRACE(c.name);
    GpuBuild bld = c.build;
    bld.detailed = true;
    auto plan = buildGpuPlan(logger, pointwiseChain(), bld);
    ASSERT_FALSE(plan.empty()) << logger.lastError();
    std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
    auto engine = loadEngine(*rt, plan);
    ASSERT_NE(engine, nullptr) << logger.lastError();
    std::unique_ptr<kiln::IEngineInspector> inspector(engine->createEngineInspector());
    std::string const text = inspector->getEngineInformation(kiln::LayerInformationFormat::kJSON);
    if (c.build.level > 0) {
      // fp16 builds add the precision casts at the network's edges; they fuse into the chain too.
      EXPECT_EQ(engine->getNbLayers(), 1) << text;
      EXPECT_EQ(occurrences(text, "\"LayerType\": \"PointwiseFused\""), 1) << text;
      EXPECT_EQ(occurrences(text, "pointwisefused_cuda_nvrtc"), 1) << text;
      EXPECT_NE(text.find("PWN("), std::string::npos) << text;
      for (char const* layer : {"bias", "gelu", "scale", "abs", "sigmoid", "residual"})
        EXPECT_NE(text.find(layer), std::string::npos) << layer << " is not named in the fused layer\n" << text;
    } else {
      EXPECT_EQ(occurrences(text, "\"LayerType\": \"PointwiseFused\""), 0) << text;
    }
    std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
    ASSERT_NE(ctx, nullptr) << logger.lastError();
    DeviceIO io;
    ASSERT_TRUE(io.bind(*ctx, {x, b})) << logger.lastError();
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
    ASSERT_TRUE(ctx->enqueueV3(s)) << logger.lastError();
    ASSERT_TRUE(io.fetch(s));
    double err = compare(io.outputs(), ref);
    std::printf("%s: norm-relative error %.3g (limit %.3g)\n", c.name, err, c.tolerance);
    EXPECT_LE(err, c.tolerance);
    // Captured into a CUDA graph and replayed.
    ASSERT_TRUE(io.poison());
    ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    bool enq = ctx->enqueueV3(s);
    cudaGraph_t g = nullptr;
    ASSERT_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
    ASSERT_TRUE(enq) << logger.lastError();
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
    ASSERT_TRUE(io.fetch(s));
    EXPECT_LE(compare(io.outputs(), ref), c.tolerance);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
  }
}

// One profile fixing the input's shape (kilnexec/trtexec --shapes): the build specializes to it (the attention
// reads and writes [B, S, H, D], layout 1, as with the ranged profile, whose -1 batch fuse_attention proves one),
// while the engine reports the network's -1 dims and checks setInputShape against the profile. Results against the
// CPU reference.
TEST(GpuModels, BertLayerSpecializedToAFixedProfile) {
  REQUIRE_GPU();
  kiln::Dims const fixed{3, {2, 64, 256}};
  DefineFn const fixedBert = [&](kiln::IBuilder& b, kiln::INetworkDefinition& n, kiln::IBuilderConfig& c) {
    kiln::IOptimizationProfile* p = b.createOptimizationProfile();
    for (auto sel : {kiln::OptProfileSelector::kMIN, kiln::OptProfileSelector::kOPT, kiln::OptProfileSelector::kMAX})
      p->setDimensions("input", sel, fixed);
    return kiln_samples::addBertLayer(n, bertWeights()) && c.addOptimizationProfile(p) >= 0;
  };
  auto in = randomInput("input", fixed, 17);
  CapturingLogger logger;
  auto ref = runCpu(logger, bert(), {in});
  struct Variant {
    char const* name;
    DefineFn define;
    GpuBuild build;
    int bshdLayers;
    double tolerance;
    bool fixedProfile;
  };
  for (auto const& c :
       {Variant{"fixed fp32", fixedBert, {3}, 1, 1e-5, true},
        Variant{"fixed fp16", fixedBert, {3, false, true}, 1, 5e-3, true},
        // The ranged profile's batch stays -1, yet q, k and v provably share it (projections of one input).
        Variant{"ranged fp32", bert(), {3}, 1, 1e-5, false}}) {
    SCOPED_TRACE(c.name);
    GpuBuild b = c.build;
    b.detailed = true;
    auto plan = buildGpuPlan(logger, c.define, b);
    ASSERT_FALSE(plan.empty()) << logger.lastError();
    std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
    auto engine = loadEngine(*rt, plan);
    ASSERT_NE(engine, nullptr) << logger.lastError();
    std::unique_ptr<kiln::IEngineInspector> inspector(engine->createEngineInspector());
    ASSERT_NE(inspector, nullptr);
    std::string const text = inspector->getEngineInformation(kiln::LayerInformationFormat::kJSON);
    EXPECT_EQ(occurrences(text, "\"LayerType\": \"Attention\""), 1) << text;
    EXPECT_EQ(occurrences(text, "\"layout\": 1"), c.bshdLayers) << text;
    EXPECT_TRUE(sameDims(engine->getTensorShape("input"), kiln::Dims3(-1, -1, 256)));
    EXPECT_TRUE(sameDims(engine->getTensorShape("output"), kiln::Dims3(-1, -1, 256)));
    std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
    ASSERT_NE(ctx, nullptr) << logger.lastError();
    if (c.fixedProfile) {
      logger.setEchoErrors(false);
      EXPECT_FALSE(ctx->setInputShape("input", kiln::Dims3(3, 64, 256)));
      logger.setEchoErrors(true);
    }
    DeviceIO io;
    ASSERT_TRUE(io.bind(*ctx, {in})) << logger.lastError();
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
    for (int rep = 0; rep < 2; ++rep) {
      ASSERT_TRUE(ctx->enqueueV3(s)) << logger.lastError();
      ASSERT_TRUE(io.fetch(s));
      double err = compare(io.outputs(), ref);
      std::printf("%s: norm-relative error %.3g (limit %.3g)\n", c.name, err, c.tolerance);
      EXPECT_LE(err, c.tolerance);
    }
    cudaStreamDestroy(s);
  }
}

// torch.nn.MultiheadAttention as torch 1.13 exports it (torchvision's ViT, static shapes): in_proj [S, B, 3E],
// three Slices, heads split to [B*H, S, D] by Reshape + Transpose, q k^T, softmax, p v, heads merged by Transpose +
// Reshape to [S*B, E], out_proj. Level 3 reads the in_proj output packed (layout 2): no Slice is left.
struct MhaWeights {
  std::vector<float> in, bias, out, scale;
};
constexpr int64_t kMhaS = 50, kMhaB = 2, kMhaE = 128, kMhaH = 2, kMhaD = 64;
MhaWeights const& mhaWeights() {
  static MhaWeights const w = [] {
    MhaWeights m;
    auto fill = [](std::vector<float>& v, size_t n, uint64_t seed, float amp) {
      kiln_samples::Random rng(seed);
      v = rng.uniformVector(n, -amp, amp);
    };
    fill(m.in, kMhaE * 3 * kMhaE, 31, 0.1f);
    fill(m.bias, 3 * kMhaE, 32, 0.1f);
    fill(m.out, kMhaE * kMhaE, 33, 0.1f);
    m.scale = {0.125f};
    return m;
  }();
  return w;
}
// The layers from x [S, B, E] to the out_proj's output [S*B, E].
kiln::ITensor* mhaLayers(kiln::INetworkDefinition& n, kiln::ITensor* x) {
  MhaWeights const& w = mhaWeights();
  auto constant = [&](kiln::Dims const& d, std::vector<float> const& v) {
    return n.addConstant(d, kiln::Weights{kiln::DataType::kFLOAT, v.data(), static_cast<int64_t>(v.size())})
        ->getOutput(0);
  };
  kiln::ITensor* p =
      n.addMatrixMultiply(*x, kiln::MatrixOperation::kNONE, *constant(kiln::Dims3(1, kMhaE, 3 * kMhaE), w.in),
                          kiln::MatrixOperation::kNONE)
          ->getOutput(0);
  p = n.addElementWise(*p, *constant(kiln::Dims3(1, 1, 3 * kMhaE), w.bias), kiln::ElementWiseOperation::kSUM)
          ->getOutput(0);
  std::vector<kiln::ITensor*> qkv;
  for (int64_t j = 0; j < 3; ++j) {
    kiln::ITensor* t =
        n.addSlice(*p, kiln::Dims3(0, 0, j * kMhaE), kiln::Dims3(kMhaS, kMhaB, kMhaE), kiln::Dims3(1, 1, 1))
            ->getOutput(0);
    kiln::IShuffleLayer* r = n.addShuffle(*t);
    r->setReshapeDimensions(kiln::Dims3(kMhaS, kMhaB * kMhaH, kMhaD));
    kiln::IShuffleLayer* tr = n.addShuffle(*r->getOutput(0));
    kiln::Permutation perm{};
    perm.order[0] = 1;
    perm.order[1] = j == 1 ? 2 : 0;  // k^T: [B*H, D, S]
    perm.order[2] = j == 1 ? 0 : 2;
    tr->setFirstTranspose(perm);
    qkv.push_back(tr->getOutput(0));
  }
  kiln::ITensor* q =
      n.addElementWise(*qkv[0], *constant(kiln::Dims3(1, 1, 1), w.scale), kiln::ElementWiseOperation::kPROD)
          ->getOutput(0);
  kiln::ITensor* s =
      n.addMatrixMultiply(*q, kiln::MatrixOperation::kNONE, *qkv[1], kiln::MatrixOperation::kNONE)->getOutput(0);
  kiln::ISoftMaxLayer* sm = n.addSoftMax(*s);
  sm->setAxes(1u << 2);
  kiln::ITensor* y =
      n.addMatrixMultiply(*sm->getOutput(0), kiln::MatrixOperation::kNONE, *qkv[2], kiln::MatrixOperation::kNONE)
          ->getOutput(0);
  kiln::IShuffleLayer* merge = n.addShuffle(*y);
  kiln::Permutation back{};
  back.order[0] = 1;
  back.order[1] = 0;
  back.order[2] = 2;
  merge->setFirstTranspose(back);
  kiln::IShuffleLayer* view = n.addShuffle(*merge->getOutput(0));
  view->setReshapeDimensions(kiln::Dims2(kMhaS * kMhaB, kMhaE));
  return n
      .addMatrixMultiply(*view->getOutput(0), kiln::MatrixOperation::kNONE, *constant(kiln::Dims2(kMhaE, kMhaE), w.out),
                         kiln::MatrixOperation::kNONE)
      ->getOutput(0);
}
DefineFn mha() {
  return [](kiln::IBuilder&, kiln::INetworkDefinition& n, kiln::IBuilderConfig&) {
    kiln::ITensor* x = n.addInput("input", kiln::DataType::kFLOAT, kiln::Dims3(kMhaS, kMhaB, kMhaE));
    kiln::ITensor* o = mhaLayers(n, x);
    o->setName("output");
    n.markOutput(*o);
    return true;
  };
}

// torchvision ViT's self-attention block around it: x [B, S, E] transposed to [S, B, E], the attention, the
// out_proj's output reshaped to [S, B, E] and transposed back, plus the residual x. Level 3 removes both
// transposes (absorb_batch_transposes: the Attention takes layout 1) and fuses the residual into the out_proj.
DefineFn vitSelfAttentionBlock() {
  return [](kiln::IBuilder&, kiln::INetworkDefinition& n, kiln::IBuilderConfig&) {
    kiln::ITensor* x = n.addInput("input", kiln::DataType::kFLOAT, kiln::Dims3(kMhaB, kMhaS, kMhaE));
    kiln::Permutation swap{};
    swap.order[0] = 1;
    swap.order[1] = 0;
    swap.order[2] = 2;
    kiln::IShuffleLayer* t = n.addShuffle(*x);
    t->setFirstTranspose(swap);
    t->setName("vit_transpose");
    kiln::IShuffleLayer* back = n.addShuffle(*mhaLayers(n, t->getOutput(0)));
    back->setReshapeDimensions(kiln::Dims3(kMhaS, kMhaB, kMhaE));
    back->setSecondTranspose(swap);
    back->setName("vit_transpose_back");
    kiln::ITensor* y = n.addElementWise(*back->getOutput(0), *x, kiln::ElementWiseOperation::kSUM)->getOutput(0);
    y->setName("output");
    n.markOutput(*y);
    return true;
  };
}

TEST(GpuModels, MultiheadAttentionReadsTheInProjectionPacked) {
  REQUIRE_GPU();
  auto in = randomInput("input", kiln::Dims3(kMhaS, kMhaB, kMhaE), 17);
  for (auto const& c : precisionCases()) checkModel(mha(), {in}, c);
  CapturingLogger logger;
  GpuBuild b{3};
  b.detailed = true;
  auto plan = buildGpuPlan(logger, mha(), b);
  ASSERT_FALSE(plan.empty()) << logger.lastError();
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  auto engine = loadEngine(*rt, plan);
  ASSERT_NE(engine, nullptr) << logger.lastError();
  std::unique_ptr<kiln::IEngineInspector> inspector(engine->createEngineInspector());
  ASSERT_NE(inspector, nullptr);
  char const* info = inspector->getEngineInformation(kiln::LayerInformationFormat::kJSON);
  ASSERT_NE(info, nullptr);
  std::string const text = info;
  EXPECT_EQ(occurrences(text, "\"LayerType\": \"Attention\""), 1) << text;
  EXPECT_EQ(occurrences(text, "attention_cuda_flash"), 1) << text;
  EXPECT_EQ(occurrences(text, "\"LayerType\": \"Slice\""), 0) << text;
  EXPECT_EQ(occurrences(text, "\"LayerType\": \"SoftMax\""), 0) << text;
}

TEST(GpuModels, VitSelfAttentionBlockRunsWithoutTransposes) {
  REQUIRE_GPU();
  auto in = randomInput("input", kiln::Dims3(kMhaB, kMhaS, kMhaE), 23);
  for (auto const& c : precisionCases()) checkModel(vitSelfAttentionBlock(), {in}, c);
  CapturingLogger logger;
  GpuBuild b{3};
  b.detailed = true;
  auto plan = buildGpuPlan(logger, vitSelfAttentionBlock(), b);
  ASSERT_FALSE(plan.empty()) << logger.lastError();
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  auto engine = loadEngine(*rt, plan);
  ASSERT_NE(engine, nullptr) << logger.lastError();
  std::unique_ptr<kiln::IEngineInspector> inspector(engine->createEngineInspector());
  ASSERT_NE(inspector, nullptr);
  char const* info = inspector->getEngineInformation(kiln::LayerInformationFormat::kJSON);
  ASSERT_NE(info, nullptr);
  std::string const text = info;
  EXPECT_EQ(occurrences(text, "\"LayerType\": \"Attention\""), 1) << text;
  EXPECT_EQ(occurrences(text, "\"LayerType\": \"Slice\""), 0) << text;
  // The residual add is in the out_proj GEMM; the transposes are nowhere (only the two views are Shuffles).
  EXPECT_EQ(occurrences(text, "\"LayerType\": \"ElementWise\""), 0) << text;
  EXPECT_EQ(occurrences(text, "\"LayerType\": \"MatrixMultiply\""), 2) << text;
  EXPECT_LE(occurrences(text, "\"LayerType\": \"Shuffle\""), 2) << text;
}

// ViT-B/16's patch embedding (a 16x16 convolution with stride 16, 3 -> 768 channels on 224x224) and the token
// reshape after it: the builder's timing picks the patch GEMM (convolution_cublaslt_patch_algo*) over cuDNN on the
// tensor-core precisions; every precision's result against the CPU reference.
constexpr int64_t kVitBatch = 2, kVitDim = 768, kVitPatch = 16, kVitSize = 224;
struct VitPatchWeights {
  std::vector<float> w, b;
};
VitPatchWeights const& vitPatchWeights() {
  static VitPatchWeights const w = [] {
    kiln_samples::Random rng(23);
    VitPatchWeights v;
    v.w = rng.uniformVector(static_cast<size_t>(kVitDim * 3 * kVitPatch * kVitPatch), -0.05F, 0.05F);
    v.b = rng.uniformVector(static_cast<size_t>(kVitDim), -0.5F, 0.5F);
    return v;
  }();
  return w;
}
DefineFn vitPatchEmbedding() {
  return [](kiln::IBuilder&, kiln::INetworkDefinition& n, kiln::IBuilderConfig&) {
    VitPatchWeights const& v = vitPatchWeights();
    kiln::ITensor* x = n.addInput("input", kiln::DataType::kFLOAT, kiln::Dims4(kVitBatch, 3, kVitSize, kVitSize));
    if (x == nullptr) return false;
    kiln::IConvolutionLayer* conv =
        n.addConvolutionNd(*x, kVitDim, kiln::DimsHW(kVitPatch, kVitPatch),
                           kiln::Weights{kiln::DataType::kFLOAT, v.w.data(), static_cast<int64_t>(v.w.size())},
                           kiln::Weights{kiln::DataType::kFLOAT, v.b.data(), static_cast<int64_t>(v.b.size())});
    if (conv == nullptr) return false;
    conv->setStrideNd(kiln::DimsHW(kVitPatch, kVitPatch));
    conv->setName("patch_embed");
    // [n, 768, 14, 14] -> [n, 196, 768], as torchvision's ViT flattens and transposes the patches.
    kiln::IShuffleLayer* tokens = n.addShuffle(*conv->getOutput(0));
    if (tokens == nullptr) return false;
    int64_t const grid = kVitSize / kVitPatch;
    tokens->setReshapeDimensions(kiln::Dims3(0, kVitDim, grid * grid));
    kiln::Permutation order{};
    order.order[0] = 0;
    order.order[1] = 2;
    order.order[2] = 1;
    tokens->setSecondTranspose(order);
    tokens->getOutput(0)->setName("tokens");
    n.markOutput(*tokens->getOutput(0));
    return true;
  };
}

TEST(GpuModels, VitPatchEmbeddingRunsAsOneGemm) {
  auto in = randomInput("input", kiln::Dims4(kVitBatch, 3, kVitSize, kVitSize), 19);
  CapturingLogger logger;
  auto ref = runCpu(logger, vitPatchEmbedding(), {in});
  ASSERT_EQ(ref.size(), 1U);
  ASSERT_EQ(kiln_samples::volume(ref[0].dims), kVitBatch * 196 * kVitDim);
  REQUIRE_GPU();  // after the CPU reference, which checks the network where no GPU is present
  struct Precision {
    Case c;
    bool mustPickPatchGemm;  // fp32 and TF32: whichever the timing finds faster (printed)
  };
  for (Precision const& p :
       {Precision{{"fp16 level 3", {3, false, true}, 5e-3}, true},
        Precision{{"bf16 level 3", {3, false, false, true}, 2e-2}, true}, Precision{{"fp32 level 3", {3}, 1e-5}, false},
        Precision{{"tf32 level 3", {3, true}, 3e-3}, false}, Precision{{"fp32 level 0", {0}, 1e-5}, true}}) {
    SCOPED_TRACE(p.c.name);
    GpuBuild b = p.c.build;
    b.detailed = true;
    auto plan = buildGpuPlan(logger, vitPatchEmbedding(), b);
    ASSERT_FALSE(plan.empty()) << logger.lastError();
    std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
    auto engine = loadEngine(*rt, plan);
    ASSERT_NE(engine, nullptr) << logger.lastError();
    std::unique_ptr<kiln::IEngineInspector> inspector(engine->createEngineInspector());
    ASSERT_NE(inspector, nullptr);
    char const* info = inspector->getEngineInformation(kiln::LayerInformationFormat::kONELINE);
    ASSERT_NE(info, nullptr);
    std::string const text = info;
    std::printf("%s:\n%s\n", p.c.name, info);
    // Level 0 takes the highest priority, which the patch GEMM has among the convolution tactics.
    if (p.mustPickPatchGemm) {
      EXPECT_EQ(occurrences(text, "tactic=convolution_cublaslt_patch_algo"), 1) << text;
    }
    std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
    ASSERT_NE(ctx, nullptr) << logger.lastError();
    DeviceIO io;
    ASSERT_TRUE(io.bind(*ctx, {in})) << logger.lastError();
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
    ASSERT_TRUE(ctx->enqueueV3(s)) << logger.lastError();
    ASSERT_TRUE(io.fetch(s));
    cudaStreamDestroy(s);
    double err = compare(io.outputs(), ref);
    std::printf("%s: norm-relative error %.3g (limit %.3g)\n", p.c.name, err, p.c.tolerance);
    EXPECT_LE(err, p.c.tolerance);
  }
}

// MobileNetV2's first blocks at a small size: the 3x3/2 stem (3 -> 32) with ReLU6, a depthwise 3x3 and projection,
// expansions 16 -> 96 and 24 -> 144 with ReLU6, depthwise 3x3 at strides 2 and 1, projections and a residual sum:
// the memory-bound convolutions the small-channel, small-window and pipelined depthwise tactics take.
struct MbV2Weights {
  std::vector<std::vector<float>> w, b;
};
struct MbV2Conv {
  int64_t cin, cout, k, stride, groups;
  bool relu6;
};
std::vector<MbV2Conv> const& mbv2Convs() {
  static std::vector<MbV2Conv> const c{
      {3, 32, 3, 2, 1, true},   {32, 32, 3, 1, 32, true},    {32, 16, 1, 1, 1, false},
      {16, 96, 1, 1, 1, true},  {96, 96, 3, 2, 96, true},    {96, 24, 1, 1, 1, false},
      {24, 144, 1, 1, 1, true}, {144, 144, 3, 1, 144, true}, {144, 24, 1, 1, 1, false}};
  return c;
}
MbV2Weights const& mbv2Weights() {
  static MbV2Weights const w = [] {
    kiln_samples::Random rng(31);
    MbV2Weights m;
    for (MbV2Conv const& c : mbv2Convs()) {
      float const scale = 1.5F / std::sqrt(static_cast<float>(c.cin / c.groups * c.k * c.k));
      m.w.push_back(rng.uniformVector(static_cast<size_t>(c.cout * (c.cin / c.groups) * c.k * c.k), -scale, scale));
      m.b.push_back(rng.uniformVector(static_cast<size_t>(c.cout), -0.2F, 0.2F));
    }
    return m;
  }();
  return w;
}
DefineFn mbv2Blocks() {
  return [](kiln::IBuilder&, kiln::INetworkDefinition& n, kiln::IBuilderConfig&) {
    MbV2Weights const& m = mbv2Weights();
    kiln::ITensor* y = n.addInput("input", kiln::DataType::kFLOAT, kiln::Dims4(2, 3, 96, 96));
    kiln::ITensor* shortcut = nullptr;
    for (size_t i = 0; i < mbv2Convs().size() && y != nullptr; ++i) {
      MbV2Conv const& c = mbv2Convs()[i];
      kiln::IConvolutionLayer* conv =
          n.addConvolutionNd(*y, c.cout, kiln::DimsHW(c.k, c.k),
                             kiln::Weights{kiln::DataType::kFLOAT, m.w[i].data(), static_cast<int64_t>(m.w[i].size())},
                             kiln::Weights{kiln::DataType::kFLOAT, m.b[i].data(), static_cast<int64_t>(m.b[i].size())});
      if (conv == nullptr) return false;
      conv->setStrideNd(kiln::DimsHW(c.stride, c.stride));
      conv->setPaddingNd(kiln::DimsHW(c.k / 2, c.k / 2));
      conv->setNbGroups(c.groups);
      conv->setName(("conv" + std::to_string(i)).c_str());
      y = conv->getOutput(0);
      if (c.relu6) {
        kiln::IActivationLayer* act = n.addActivation(*y, kiln::ActivationType::kCLIP);
        if (act == nullptr) return false;
        act->setAlpha(0.F);
        act->setBeta(6.F);
        y = act->getOutput(0);
      }
      if (i == 5) shortcut = y;  // the 24-channel stream the last block adds to
      if (i == 8) {
        kiln::IElementWiseLayer* sum = n.addElementWise(*y, *shortcut, kiln::ElementWiseOperation::kSUM);
        if (sum == nullptr) return false;
        y = sum->getOutput(0);
      }
    }
    if (y == nullptr) return false;
    y->setName("features");
    n.markOutput(*y);
    return true;
  };
}

// Built at level 3 in fp16 and bf16 (every convolution channels-last; the builder times each candidate, the new
// kernels among them: which one each layer gets is printed, not asserted) and at level 0, against the CPU.
TEST(GpuModels, MobileNetV2BlocksMatchTheReference) {
  auto in = randomInput("input", kiln::Dims4(2, 3, 96, 96), 29);
  CapturingLogger logger;
  auto ref = runCpu(logger, mbv2Blocks(), {in});
  ASSERT_EQ(ref.size(), 1U);
  REQUIRE_GPU();
  for (Case const& c :
       {Case{"fp16 level 3", {3, false, true}, 5e-3}, Case{"bf16 level 3", {3, false, false, true}, 2e-2},
        Case{"fp16 level 0", {0, false, true}, 5e-3}}) {
    SCOPED_TRACE(c.name);
    GpuBuild b = c.build;
    b.detailed = true;
    auto plan = buildGpuPlan(logger, mbv2Blocks(), b);
    ASSERT_FALSE(plan.empty()) << logger.lastError();
    std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
    auto engine = loadEngine(*rt, plan);
    ASSERT_NE(engine, nullptr) << logger.lastError();
    std::unique_ptr<kiln::IEngineInspector> inspector(engine->createEngineInspector());
    ASSERT_NE(inspector, nullptr);
    char const* info = inspector->getEngineInformation(kiln::LayerInformationFormat::kONELINE);
    ASSERT_NE(info, nullptr);
    std::printf("%s:\n%s\n", c.name, info);
    std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
    ASSERT_NE(ctx, nullptr) << logger.lastError();
    DeviceIO io;
    ASSERT_TRUE(io.bind(*ctx, {in})) << logger.lastError();
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
    for (int rep = 0; rep < 2; ++rep) {
      ASSERT_TRUE(ctx->enqueueV3(s)) << logger.lastError();
      ASSERT_TRUE(io.fetch(s));
      double err = compare(io.outputs(), ref);
      std::printf("%s: norm-relative error %.3g (limit %.3g)\n", c.name, err, c.tolerance);
      EXPECT_LE(err, c.tolerance);
    }
    cudaStreamDestroy(s);
  }
}

TEST(GpuRuntime, ManyContextsOnManyStreams) {
  REQUIRE_GPU();
  CapturingLogger logger;
  auto plan = buildGpuPlan(logger, bert(), {3});
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  auto engine = loadEngine(*rt, plan);
  ASSERT_NE(engine, nullptr);
  constexpr int kThreads = 4, kContexts = 2;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int c = 0; c < kContexts; ++c) {
        auto in = randomInput("input", kiln::Dims{3, {1 + (t + c) % 4, 16 + 8 * t, 256}}, 100 + t * 10 + c);
        CapturingLogger l2;
        auto ref = runCpu(l2, bert(), {in});
        std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
        DeviceIO io;
        cudaStream_t s;
        cudaStreamCreate(&s);
        bool ok = ctx && io.bind(*ctx, {in});
        for (int rep = 0; ok && rep < 5; ++rep) ok = ctx->enqueueV3(s);
        ok = ok && io.fetch(s);
        cudaStreamDestroy(s);
        double err = ok ? compare(io.outputs(), ref) : INFINITY;
        if (!(err <= 1e-5))
          failures[t] +=
              "thread " + std::to_string(t) + " context " + std::to_string(c) + ": error " + std::to_string(err) + "; ";
      }
    });
  }
  for (auto& th : threads) th.join();
  for (auto const& f : failures) EXPECT_EQ(f, "");
}

// One run of `ctx` on `s` outside a capture (lazy per-shape state; the L2 prefetch's side stream), then one captured
// into *graph (its end fails if a forked branch did not join).
void captureOneRun(kiln::IExecutionContext& ctx, cudaStream_t s, CapturingLogger& logger, cudaGraph_t* graph) {
  ASSERT_TRUE(ctx.enqueueV3(s)) << logger.lastError();
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  bool enq = ctx.enqueueV3(s);
  ASSERT_EQ(cudaStreamEndCapture(s, graph), cudaSuccess);
  ASSERT_TRUE(enq) << logger.lastError();
}

// Instantiates `g`, replays it three times on `s`, checks the outputs against `ref` (1e-5), and destroys it.
void replayAndCompare(cudaGraph_t g, cudaStream_t s, DeviceIO& io, std::vector<HostTensor> const& ref) {
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
  ASSERT_TRUE(io.fetch(s));
  EXPECT_LE(compare(io.outputs(), ref), 1e-5);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
}

TEST(GpuRuntime, CudaGraphCaptureAndReplay) {
  REQUIRE_GPU();
  CapturingLogger logger;
  auto in = randomInput("input", kiln::Dims{4, {2, 3, 64, 64}}, 5);
  auto ref = runCpu(logger, resnet(), {in});
  auto plan = buildGpuPlan(logger, resnet(), {3});
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  auto engine = loadEngine(*rt, plan);
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  DeviceIO io;
  ASSERT_TRUE(io.bind(*ctx, {in}));
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaGraph_t g = nullptr;
  captureOneRun(*ctx, s, logger, &g);
  if (HasFatalFailure()) return;
  replayAndCompare(g, s, io, ref);
  cudaStreamDestroy(s);
}

// Five 256 x 256 fp32 GEMMs with ReLUs between (256 KB of weights each, so the engine prefetches their weights into
// L2): under CUDA graph capture the run forks the prefetch kernels off onto a side branch that joins at the end, and
// the replays still match the CPU build.
DefineFn gemmChain() {
  return [](kiln::IBuilder&, kiln::INetworkDefinition& n, kiln::IBuilderConfig&) {
    constexpr int64_t kWidth = 256;
    static std::vector<std::vector<float>> const w = [] {
      std::vector<std::vector<float>> all(5, std::vector<float>(kWidth * kWidth));
      for (size_t l = 0; l < all.size(); ++l)
        for (size_t i = 0; i < all[l].size(); ++i)
          all[l][i] =
              0.12f * static_cast<float>(static_cast<int64_t>((i * 2654435761u + l * 97) % 2001) - 1000) / 1000.f;
      return all;
    }();
    kiln::ITensor* x = n.addInput("x", kiln::DataType::kFLOAT, kiln::Dims2(8, kWidth));
    if (!x) return false;
    for (size_t l = 0; l < w.size(); ++l) {
      auto* c = n.addConstant(kiln::Dims2(kWidth, kWidth),
                              kiln::Weights{kiln::DataType::kFLOAT, w[l].data(), static_cast<int64_t>(w[l].size())});
      if (!c) return false;
      auto* mm = n.addMatrixMultiply(*x, kiln::MatrixOperation::kNONE, *c->getOutput(0), kiln::MatrixOperation::kNONE);
      if (!mm) return false;
      x = mm->getOutput(0);
      if (l + 1 < w.size()) {
        auto* relu = n.addActivation(*x, kiln::ActivationType::kRELU);
        if (!relu) return false;
        x = relu->getOutput(0);
      }
    }
    x->setName("y");
    n.markOutput(*x);
    return true;
  };
}

TEST(GpuRuntime, L2PrefetchForksOffUnderCapture) {
  REQUIRE_GPU();
  CapturingLogger logger;
  auto in = randomInput("x", kiln::Dims2(8, 256), 9);
  auto ref = runCpu(logger, gemmChain(), {in});
  auto plan = buildGpuPlan(logger, gemmChain(), {3});
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  auto engine = loadEngine(*rt, plan);
  ASSERT_NE(engine, nullptr) << logger.lastError();
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  DeviceIO io;
  ASSERT_TRUE(io.bind(*ctx, {in}));
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  cudaGraph_t g = nullptr;
  captureOneRun(*ctx, s, logger, &g);  // the first run, not captured, creates the side stream
  if (HasFatalFailure()) return;
  size_t count = 0;
  ASSERT_EQ(cudaGraphGetNodes(g, nullptr, &count), cudaSuccess);
  std::vector<cudaGraphNode_t> nodes(count);
  ASSERT_EQ(cudaGraphGetNodes(g, nodes.data(), &count), cudaSuccess);
  int prefetches = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    ASSERT_EQ(cudaGraphNodeGetType(node, &type), cudaSuccess);
    if (type != cudaGraphNodeTypeKernel) continue;
    cudaKernelNodeParams params{};
    if (cudaGraphKernelNodeGetParams(node, &params) != cudaSuccess) {  // a library's driver-API kernel
      (void)cudaGetLastError();
      continue;
    }
    char const* name = nullptr;
    if (cudaFuncGetName(&name, params.func) == cudaSuccess && name &&
        std::string(name).find("l2Prefetch") != std::string::npos)
      ++prefetches;
  }
  (void)cudaGetLastError();
  // Weight layers at positions 0-4 (each GEMM with its ReLU fused) or 0, 2, 4, 6, 8: the weights of the second,
  // third and fourth fork off after the first layer, the fifth's after the second GEMM.
  EXPECT_EQ(prefetches, 2);
  replayAndCompare(g, s, io, ref);
  cudaStreamDestroy(s);
}

class CountingProfiler : public kiln::IProfiler {
 public:
  void reportLayerTime(char const* name, float ms) noexcept override {
    ++count;
    total += ms;
    if (ms < 0) negative = true;
  }
  int count = 0;
  double total = 0;
  bool negative = false;
};

TEST(GpuRuntime, ProfilerReportsEveryLayer) {
  REQUIRE_GPU();
  CapturingLogger logger;
  auto plan = buildGpuPlan(logger, resnet(), {3});
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  auto engine = loadEngine(*rt, plan);
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  CountingProfiler prof;
  ctx->setProfiler(&prof);
  DeviceIO io;
  ASSERT_TRUE(io.bind(*ctx, {randomInput("input", kiln::Dims{4, {2, 3, 64, 64}}, 5)}));
  ASSERT_TRUE(ctx->enqueueV3(nullptr));
  EXPECT_EQ(prof.count, engine->getNbLayers());
  EXPECT_GT(prof.total, 0);
  EXPECT_FALSE(prof.negative);
}

TEST(GpuBuilder, TimingCacheHitSkipsTiming) {
  REQUIRE_GPU();
  CapturingLogger logger;
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  std::unique_ptr<kiln::ITimingCache> cache(config->createTimingCache(nullptr, 0));
  ASSERT_NE(cache, nullptr);
  auto first = buildGpuPlan(logger, resnet(), {3, false, false, false, cache.get()});
  std::unique_ptr<kiln::IHostMemory> bytes(cache->serialize());
  ASSERT_NE(bytes, nullptr);
  EXPECT_GT(bytes->size(), 16u);
  std::unique_ptr<kiln::ITimingCache> loaded(config->createTimingCache(bytes->data(), bytes->size()));
  ASSERT_NE(loaded, nullptr);
  auto second = buildGpuPlan(logger, resnet(), {3, false, false, false, loaded.get()});
  // Same choices from the cache: identical plans.
  EXPECT_EQ(first, second);
  // A corrupt cache is refused.
  std::vector<uint8_t> bad(static_cast<uint8_t*>(bytes->data()), static_cast<uint8_t*>(bytes->data()) + bytes->size());
  bad[bad.size() / 2] ^= 1;
  logger.setEchoErrors(false);
  EXPECT_EQ(config->createTimingCache(bad.data(), bad.size()), nullptr);
}

// An in-place network on the GPU: built (the builder must report in-place layers where `expectInPlace`), run
// twice on a stream, then captured into a CUDA graph and replayed, each time against the fp64 results.
void checkInPlace(DefineFn const& define, HostTensor const& x, std::vector<std::string> const& names,
                  std::vector<std::vector<double>> const& want, Case const& c, bool expectInPlace) {
  SCOPED_TRACE(c.name);
  RecordingLogger logger;
  auto plan = buildGpuPlan(logger, define, c.build);
  ASSERT_FALSE(plan.empty()) << logger.lastError();
  int placed = inPlaceLines(logger.messages(), "");
  std::printf("%s: %d in-place layers\n", c.name, placed);
  if (expectInPlace) {
    EXPECT_GT(inPlaceLines(logger.messages(), "written in place"), 0);
  }
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  auto engine = loadEngine(*rt, plan);
  ASSERT_NE(engine, nullptr) << logger.lastError();
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  ASSERT_NE(ctx, nullptr) << logger.lastError();
  DeviceIO io;
  ASSERT_TRUE(io.bind(*ctx, {x})) << logger.lastError();
  auto check = [&](char const* when) {
    for (size_t i = 0; i < names.size(); ++i) {
      HostTensor const* t = findTensor(io.outputs(), names[i]);
      ASSERT_NE(t, nullptr) << names[i];
      std::vector<float> got(t->data.begin(), t->data.begin() + static_cast<long>(want[i].size()));
      double err = normRelError(got, want[i]);
      EXPECT_LE(err, c.tolerance) << when << ": " << names[i];
    }
  };
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  for (int rep = 0; rep < 2; ++rep) {
    ASSERT_TRUE(ctx->enqueueV3(s)) << logger.lastError();
    ASSERT_TRUE(io.fetch(s));
    check("enqueueV3");
  }
  // Poison the outputs, then capture one run (the in-place copies become memcpy nodes) and replay it.
  ASSERT_TRUE(io.poison());
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  bool enq = ctx->enqueueV3(s);
  cudaGraph_t g = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
  ASSERT_TRUE(enq) << logger.lastError();
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
  ASSERT_TRUE(io.fetch(s));
  check("CUDA graph replay");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
}

std::vector<std::pair<Case, bool>> inPlaceCases() {
  // fp16 builds insert casts and channels-last reformats: in-place layers are likely there but not asserted.
  return {{{"fp32 level 0", {0}, 1e-5}, true},
          {{"fp32 level 3", {3}, 1e-5}, true},
          {{"fp16 level 3", {3, false, true}, 5e-3}, false}};
}

TEST(GpuInPlace, ConcatenationOfTwoConvolutionsMatchesFp64) {
  REQUIRE_GPU();
  TwoConvConcat net;
  HostTensor x = randomInput("x", net.inputDims(), 3);
  for (auto const& [c, expect] : inPlaceCases())
    checkInPlace(net.define(), x, {"y"}, {net.expected(x.data)}, c, expect);
}

TEST(GpuInPlace, ClassTokenConcatenationAndSliceGatherViewsMatchFp64) {
  REQUIRE_GPU();
  for (bool computed : {true, false}) {
    VitHead net(computed);
    HostTensor x = randomInput("x", net.inputDims(), 5);
    for (auto const& [c, expect] : inPlaceCases())
      checkInPlace(net.define(), x, {"logits", "tokens", "picked"}, net.expected(x.data), c, expect);
  }
}

// Builder rules (tests/e2e/builder_fix_nets.h) on the GPU.
// y = x w + r with independent dynamic batches: not fused into the GEMM, so x's batch 1 against r's 4 (and back)
// broadcasts on the GPU as the sum does, on one context whose shapes change between runs.
TEST(GpuBuilderFixes, ResidualOfIndependentBatchesBroadcastsAtRunTime) {
  REQUIRE_GPU();
  IndependentResidual net;
  for (auto const& c : {Case{"fp32 level 3", {3}, 1e-5}, Case{"fp16 level 3", {3, false, true}, 5e-3}}) {
    SCOPED_TRACE(c.name);
    CapturingLogger logger;
    auto plan = buildGpuPlan(logger, net.define(), c.build);
    ASSERT_FALSE(plan.empty()) << logger.lastError();
    std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
    auto engine = loadEngine(*rt, plan);
    ASSERT_NE(engine, nullptr) << logger.lastError();
    std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
    ASSERT_NE(ctx, nullptr) << logger.lastError();
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    for (auto [xRows, rRows] : {std::pair<int64_t, int64_t>{1, 4}, {4, 1}, {4, 4}, {1, 4}}) {
      SCOPED_TRACE(testing::Message() << xRows << " x rows, " << rRows << " r rows");
      HostTensor x = randomInput("x", kiln::Dims2{xRows, IndependentResidual::kN}, 5);
      HostTensor r = randomInput("r", kiln::Dims2{rRows, IndependentResidual::kN}, 6);
      DeviceIO io;
      ASSERT_TRUE(io.bind(*ctx, {x, r})) << logger.lastError();
      ASSERT_TRUE(ctx->enqueueV3(s)) << logger.lastError();
      ASSERT_TRUE(io.fetch(s));
      ASSERT_EQ(io.outputs().size(), 1u);
      EXPECT_EQ(io.outputs()[0].dims.d[0], std::max(xRows, rRows));
      EXPECT_LE(normRelError(io.outputs()[0].data, net.expected(x.data, xRows, r.data, rRows)), c.tolerance);
    }
    cudaStreamDestroy(s);
  }
}

// BERT's word embeddings in an fp16 build: the Gather reads the table converted to fp16 at build time (no Cast
// layer converts the gathered rows, the position rows are a folded fp16 constant); results against fp64 at two
// batch sizes.
TEST(GpuBuilderFixes, Fp16EmbeddingsGatherFromTheConvertedTable) {
  REQUIRE_GPU();
  WordEmbeddings net;
  CapturingLogger logger;
  GpuBuild b{3, false, true};
  b.detailed = true;
  auto plan = buildGpuPlan(logger, net.define(), b);
  ASSERT_FALSE(plan.empty()) << logger.lastError();
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  auto engine = loadEngine(*rt, plan);
  ASSERT_NE(engine, nullptr) << logger.lastError();
  std::unique_ptr<kiln::IEngineInspector> inspector(engine->createEngineInspector());
  ASSERT_NE(inspector, nullptr);
  std::string layers;
  for (int32_t i = 0; i < engine->getNbLayers(); ++i)
    layers += std::string(inspector->getLayerInformation(i, kiln::LayerInformationFormat::kONELINE)) + "\n";
  size_t const gather = layers.find("word_gather [Gather]");
  ASSERT_NE(gather, std::string::npos) << layers;
  EXPECT_NE(layers.substr(gather, layers.find('\n', gather) - gather).find("precision=float16"), std::string::npos)
      << layers;
  // At most the float32 output's Cast: none converts the gathered rows.
  for (size_t at = layers.find("[Cast]"); at != std::string::npos; at = layers.find("[Cast]", at + 1)) {
    size_t const end = layers.find('\n', at);
    EXPECT_NE(layers.substr(at, end - at).find(" out:y["), std::string::npos) << layers;
  }
  EXPECT_LE(occurrences(layers, "[Cast]"), 1) << layers;
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  ASSERT_NE(ctx, nullptr) << logger.lastError();
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  for (int64_t batch : {1, 4}) {
    SCOPED_TRACE(batch);
    std::vector<int32_t> ids = WordEmbeddings::ids(batch);
    std::vector<float> y(ids.size() * WordEmbeddings::kHidden, -1.F);
    void* dIds = nullptr;
    void* dY = nullptr;
    ASSERT_EQ(cudaMalloc(&dIds, ids.size() * sizeof(int32_t)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dY, y.size() * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dIds, ids.data(), ids.size() * sizeof(int32_t), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemset(dY, 0xff, y.size() * sizeof(float)), cudaSuccess);  // poison: NaN
    ASSERT_TRUE(ctx->setInputShape("ids", kiln::Dims2{batch, WordEmbeddings::kSeq}));
    ASSERT_TRUE(ctx->setTensorAddress("ids", dIds));
    ASSERT_TRUE(ctx->setTensorAddress("y", dY));
    ASSERT_TRUE(ctx->enqueueV3(s)) << logger.lastError();
    ASSERT_EQ(cudaMemcpyAsync(y.data(), dY, y.size() * sizeof(float), cudaMemcpyDeviceToHost, s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    cudaFree(dIds);
    cudaFree(dY);
    double const err = normRelError(y, net.expected(ids));
    std::printf("fp16 embeddings batch %lld: norm-relative error %.3g\n", static_cast<long long>(batch), err);
    EXPECT_LE(err, 2e-3);
  }
  cudaStreamDestroy(s);
}

}  // namespace
}  // namespace kiln_e2e
