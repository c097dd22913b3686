// End-to-end: a kFP16/kBF16 build converts float32 weights once, at build time: the engine holds them in the
// reduced type and runs no per-inference cast of a constant (only the casts at the network's float32 edges),
// and its results stay close to the float32 engine.
#include <gtest/gtest.h>

#include <cstdlib>

#include <memory>
#include <string>
#include <vector>

#include "e2e/e2e_util.h"

namespace kiln_e2e {
namespace {

std::vector<float> const& weights() {
  static std::vector<float> const w = [] {
    kiln_samples::Random rng(3);
    return rng.uniformVector(8 * 4 * 3 * 3, -0.5F, 0.5F);
  }();
  return w;
}
std::vector<float> const& bias() {
  static std::vector<float> const b(8, 0.25F);
  return b;
}

DefineFn convNet() {
  return [](kiln::IBuilder&, kiln::INetworkDefinition& n, kiln::IBuilderConfig&) {
    auto* x = n.addInput("x", kiln::DataType::kFLOAT, kiln::Dims{4, {1, 4, 6, 6}});
    kiln::Weights w{kiln::DataType::kFLOAT, weights().data(), static_cast<int64_t>(weights().size())};
    kiln::Weights b{kiln::DataType::kFLOAT, bias().data(), static_cast<int64_t>(bias().size())};
    auto* conv = n.addConvolutionNd(*x, 8, kiln::Dims{2, {3, 3}}, w, b);
    if (!conv) return false;
    conv->setName("conv");
    n.markOutput(*conv->getOutput(0));
    return true;
  };
}

std::vector<uint8_t> build(CapturingLogger& logger, kiln::BuilderFlag flag) {
  return buildPlan(logger, [flag](kiln::IBuilder& b, kiln::INetworkDefinition& n, kiln::IBuilderConfig& c) {
    c.setFlag(flag);
    return convNet()(b, n, c);
  });
}

TEST(ReducedPrecision, WeightsAreConvertedOnceAtBuildTime) {
  for (kiln::BuilderFlag flag : {kiln::BuilderFlag::kFP16, kiln::BuilderFlag::kBF16}) {
    CapturingLogger logger;
    auto plan = build(logger, flag);
    ASSERT_FALSE(plan.empty());
    std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
    auto engine = loadEngine(*rt, plan);
    ASSERT_NE(engine, nullptr);
    // The input cast, the convolution and the output cast: no layer converts the weights or the bias.
    EXPECT_EQ(engine->getNbLayers(), 3);
    std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
    auto in = randomInput("x", kiln::Dims{4, {1, 4, 6, 6}}, 9);
    std::vector<kiln_samples::HostTensor> out;
    ASSERT_TRUE(kiln_samples::runContext(*ctx, {in}, out));
    // Against the float32 engine.
    auto ref32 = buildPlan(logger, convNet());
    auto e32 = loadEngine(*rt, ref32);
    std::unique_ptr<kiln::IExecutionContext> c32(e32->createExecutionContext());
    std::vector<kiln_samples::HostTensor> ref;
    ASSERT_TRUE(kiln_samples::runContext(*c32, {in}, ref));
    std::vector<double> r(ref[0].data.begin(), ref[0].data.end());
    EXPECT_LT(normRelError(out[0].data, r), flag == kiln::BuilderFlag::kFP16 ? 5e-3 : 2e-2);
  }
}

// The layers' precisions and tactics of a CPU build of convNet with the oneDNN sources and `flag`, one line each.
std::string cpuLayers(kiln::BuilderFlag flag) {
  CapturingLogger logger;
  auto plan = buildPlan(
      logger,
      [flag](kiln::IBuilder& b, kiln::INetworkDefinition& n, kiln::IBuilderConfig& c) {
        c.setFlag(flag);
        c.setProfilingVerbosity(kiln::ProfilingVerbosity::kDETAILED);
        return convNet()(b, n, c);
      },
      BuildOptions{0, false});
  EXPECT_FALSE(plan.empty());
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  auto engine = loadEngine(*rt, plan);
  if (!engine) return {};
  std::unique_ptr<kiln::IEngineInspector> inspector(engine->createEngineInspector());
  std::string layers;
  for (int32_t i = 0; i < engine->getNbLayers(); ++i)
    layers += std::string(inspector->getLayerInformation(i, kiln::LayerInformationFormat::kONELINE)) + "\n";
  return layers;
}

// On the CPU a reduced type is taken where a library tactic runs it: kBF16 runs the convolution in bf16 on oneDNN
// (casts at the network's float32 edges); kFP16 has no fp16 library convolution there, so the layer keeps float32
// and the engine holds no Cast, instead of running the fp64 reference loops in fp16. oneDNN runs bf16 only with
// AVX-512: on a CPU without it kBF16 is as kFP16 (the build succeeds, float32, no Cast). ONEDNN_MAX_CPU_ISA in the
// environment may hide AVX-512 from oneDNN, so there either outcome is accepted, each whole.
TEST(ReducedPrecision, CpuTakesAReducedTypeOnlyWhereALibraryTacticRunsIt) {
  std::string bf16 = cpuLayers(kiln::BuilderFlag::kBF16);
  bool const avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  bool const limited = std::getenv("ONEDNN_MAX_CPU_ISA") || std::getenv("DNNL_MAX_CPU_ISA");
  bool const ranBf16 =
      bf16.find("conv [Convolution] tactic=convolution_onednn_direct precision=bfloat16") != std::string::npos;
  if (!limited) {
    EXPECT_EQ(ranBf16, avx512) << bf16;
  }
  if (ranBf16) {
    EXPECT_NE(bf16.find("[Cast]"), std::string::npos) << bf16;
  } else {
    EXPECT_NE(bf16.find("conv [Convolution] tactic=convolution_onednn_direct precision=float32"), std::string::npos)
        << bf16;
    EXPECT_EQ(bf16.find("[Cast]"), std::string::npos) << bf16;
  }
  std::string fp16 = cpuLayers(kiln::BuilderFlag::kFP16);
  EXPECT_NE(fp16.find("conv [Convolution] tactic=convolution_onednn_direct precision=float32"), std::string::npos)
      << fp16;
  EXPECT_EQ(fp16.find("[Cast]"), std::string::npos) << fp16;
}

}  // namespace
}  // namespace kiln_e2e
