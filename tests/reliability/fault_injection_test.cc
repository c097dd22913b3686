// Fault injection: the k-th host allocation fails, for every k on the build path and, separately, on the load and
// run path of small models (a CNN on the CPU tactics, a BERT-style layer with dynamic shapes, a data-dependent
// NonZero output). Each attempt must fail cleanly (nullptr/false and an error naming the injected failure) or
// succeed with the right answer, and the next build or run in the same process must work. Leaks are
// LeakSanitizer's to find (the sanitized CI stage runs this binary). Counts print as "survived N / tried M".
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/memory.h"
#include "e2e/e2e_util.h"

namespace kiln_e2e {
namespace {

// Host memory for outputs of data-dependent shape.
class VectorAllocator : public kiln::IOutputAllocator {
 public:
  void* reallocateOutputAsync(char const*, void* current, uint64_t size, uint64_t, cudaStream_t) override {
    if (current != nullptr && size <= bytes.size()) {
      return current;
    }
    bytes.assign(static_cast<size_t>(size == 0 ? 1 : size), 0);
    return bytes.data();
  }
  void notifyShape(char const*, kiln::Dims const& dims) noexcept override { shape = dims; }
  std::vector<uint8_t> bytes;
  kiln::Dims shape{};
};

// One small model: how to define it and how to run a context of it (outputs flattened to bytes).
struct Model {
  std::string name;
  DefineFn define;
  BuildOptions options;
  std::function<bool(kiln::IExecutionContext&, std::vector<uint8_t>&)> run;
};

// conv(3x3) -> relu -> flatten -> matmul, on the default CPU tactics (oneDNN where built).
std::vector<float> const kW(4 * 2 * 3 * 3, 0.05F);
std::vector<float> const kB(4, 0.1F);
std::vector<float> const kFc(4 * 4 * 4 * 3, 0.01F);

bool defineConvNet(kiln::IBuilder&, kiln::INetworkDefinition& net, kiln::IBuilderConfig&) {
  kiln::ITensor* x = net.addInput("x", kiln::DataType::kFLOAT, kiln::Dims4{1, 2, 4, 4});
  if (x == nullptr) return false;
  auto* conv = net.addConvolutionNd(*x, 4, kiln::DimsHW{3, 3},
                                    kiln::Weights{kiln::DataType::kFLOAT, kW.data(), int64_t(kW.size())},
                                    kiln::Weights{kiln::DataType::kFLOAT, kB.data(), int64_t(kB.size())});
  if (conv == nullptr) return false;
  conv->setPaddingNd(kiln::DimsHW{1, 1});
  auto* relu = net.addActivation(*conv->getOutput(0), kiln::ActivationType::kRELU);
  if (relu == nullptr) return false;
  auto* flat = net.addShuffle(*relu->getOutput(0));
  if (flat == nullptr) return false;
  flat->setReshapeDimensions(kiln::Dims2{1, 64});
  auto* w = net.addConstant(kiln::Dims2{64, 3}, kiln::Weights{kiln::DataType::kFLOAT, kFc.data(), int64_t(kFc.size())});
  if (w == nullptr) return false;
  auto* mm = net.addMatrixMultiply(*flat->getOutput(0), kiln::MatrixOperation::kNONE, *w->getOutput(0),
                                   kiln::MatrixOperation::kNONE);
  if (mm == nullptr) return false;
  mm->getOutput(0)->setName("y");
  net.markOutput(*mm->getOutput(0));
  return true;
}

bool runFloats(kiln::IExecutionContext& ctx, std::vector<kiln_samples::HostTensor> const& inputs,
               std::vector<uint8_t>& out) {
  std::vector<kiln_samples::HostTensor> outputs;
  if (!kiln_samples::runContext(ctx, inputs, outputs)) return false;
  out.clear();
  for (auto const& t : outputs) {
    auto const* p = reinterpret_cast<uint8_t const*>(t.data.data());
    out.insert(out.end(), p, p + t.data.size() * sizeof(float));
  }
  return true;
}

kiln_samples::BertSpec smallBertSpec() {
  kiln_samples::BertSpec s;
  s.hidden = 16;
  s.heads = 2;
  s.ffn = 32;
  s.maxSeq = 8;
  s.optSeq = 4;
  return s;
}

kiln_samples::BertWeights const& bertWeights() {
  static kiln_samples::BertWeights const w = kiln_samples::makeBertWeights(smallBertSpec());
  return w;
}

// x [2, 6] -> NonZero (data-dependent [2, count] output through an IOutputAllocator) and x * 2.
bool defineNonZero(kiln::IBuilder&, kiln::INetworkDefinition& net, kiln::IBuilderConfig&) {
  kiln::ITensor* x = net.addInput("x", kiln::DataType::kFLOAT, kiln::Dims2{2, 6});
  if (x == nullptr) return false;
  kiln::INonZeroLayer* nz = net.addNonZero(*x);
  kiln::IElementWiseLayer* twice = net.addElementWise(*x, *x, kiln::ElementWiseOperation::kSUM);
  if (nz == nullptr || twice == nullptr) return false;
  nz->getOutput(0)->setName("indices");
  twice->getOutput(0)->setName("twice");
  net.markOutput(*nz->getOutput(0));
  net.markOutput(*twice->getOutput(0));
  return true;
}

bool runNonZero(kiln::IExecutionContext& ctx, std::vector<uint8_t>& out) {
  std::vector<float> x = {0, 1, 0, 2, 3, 0, 0, 0, 4, 0, 5, 6};
  std::vector<float> twice(12, -1.F);
  VectorAllocator indices;
  if (!ctx.setTensorAddress("x", x.data()) || !ctx.setTensorAddress("twice", twice.data()) ||
      !ctx.setOutputAllocator("indices", &indices) || !ctx.enqueueV3(nullptr)) {
    return false;
  }
  auto const* p = reinterpret_cast<uint8_t const*>(twice.data());
  out.assign(p, p + twice.size() * sizeof(float));
  out.insert(out.end(), indices.bytes.begin(), indices.bytes.end());
  return true;
}

kiln_samples::ResNetWeights const& resnetWeights() {
  static kiln_samples::ResNetWeights const w = [] {
    kiln_samples::ResNetSpec s = kiln_samples::smallResNetSpec();
    s.height = 8;
    s.width = 8;
    s.stemChannels = 4;
    s.stageChannels = {4, 8};
    return kiln_samples::makeResNetWeights(s);
  }();
  return w;
}

// Constants computed at build time: (c1 * c2) + x, with c1 * c2 folded, then a Unary on the folded constant.
std::vector<float> const kC1(12, 1.5F);
std::vector<float> const kC2(12, -2.F);

bool defineFolding(kiln::IBuilder&, kiln::INetworkDefinition& net, kiln::IBuilderConfig&) {
  kiln::ITensor* x = net.addInput("x", kiln::DataType::kFLOAT, kiln::Dims2{3, 4});
  auto* c1 = net.addConstant(kiln::Dims2{3, 4}, kiln::Weights{kiln::DataType::kFLOAT, kC1.data(), 12});
  auto* c2 = net.addConstant(kiln::Dims2{3, 4}, kiln::Weights{kiln::DataType::kFLOAT, kC2.data(), 12});
  if (x == nullptr || c1 == nullptr || c2 == nullptr) return false;
  auto* prod = net.addElementWise(*c1->getOutput(0), *c2->getOutput(0), kiln::ElementWiseOperation::kPROD);
  if (prod == nullptr) return false;
  auto* neg = net.addUnary(*prod->getOutput(0), kiln::UnaryOperation::kABS);
  if (neg == nullptr) return false;
  auto* sum = net.addElementWise(*neg->getOutput(0), *x, kiln::ElementWiseOperation::kSUM);
  if (sum == nullptr) return false;
  sum->getOutput(0)->setName("y");
  net.markOutput(*sum->getOutput(0));
  return true;
}

std::vector<Model> models() {
  std::vector<Model> ms;
  BuildOptions cpu;
  cpu.referenceOnly = false;
  // Level 1: batch-norm folding and bias/activation fusion; level 3 (conv_matmul): candidates (oneDNN and
  // reference) are timed, with their own allocations.
  BuildOptions level1cpu;  // reference tactics: the oneDNN ones are exercised by conv_matmul_timed
  level1cpu.optimizationLevel = 1;
  BuildOptions timed = cpu;
  timed.optimizationLevel = 3;
  ms.push_back({"resnet_fused",
                [](kiln::IBuilder&, kiln::INetworkDefinition& net, kiln::IBuilderConfig&) {
                  return kiln_samples::addResNet(net, resnetWeights());
                },
                level1cpu,
                [](kiln::IExecutionContext& ctx, std::vector<uint8_t>& out) {
                  kiln_samples::ResNetSpec const& s = resnetWeights().spec;
                  return runFloats(ctx, {randomInput("input", kiln::Dims4(s.batch, s.inChannels, s.height, s.width), 9)},
                                   out);
                }});
  BuildOptions level1;
  level1.optimizationLevel = 1;
  ms.push_back({"folding", defineFolding, level1, [](kiln::IExecutionContext& ctx, std::vector<uint8_t>& out) {
                  return runFloats(ctx, {randomInput("x", kiln::Dims2{3, 4}, 4)}, out);
                }});
  ms.push_back({"conv_matmul_timed", defineConvNet, timed, [](kiln::IExecutionContext& ctx, std::vector<uint8_t>& out) {
                  return runFloats(ctx, {kiln_samples::HostTensor{"x", kiln::Dims4{1, 2, 4, 4},
                                                                  std::vector<float>(32, 1.F)}},
                                   out);
                }});
  ms.push_back({"bert_dynamic",
                [](kiln::IBuilder& b, kiln::INetworkDefinition& net, kiln::IBuilderConfig& config) {
                  return kiln_samples::addBertLayer(net, bertWeights()) &&
                         kiln_samples::addBertProfile(b, config, bertWeights().spec);
                },
                BuildOptions{},
                [](kiln::IExecutionContext& ctx, std::vector<uint8_t>& out) {
                  return runFloats(ctx, {randomInput("input", kiln::Dims3{2, 3, 16}, 3)}, out);
                }});
  ms.push_back({"nonzero", defineNonZero, BuildOptions{}, runNonZero});
  return ms;
}

// Builds without failing the test on a refusal (buildPlan would record a gtest failure).
std::vector<uint8_t> tryBuild(kiln::ILogger& logger, Model const& m) {
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  if (!builder) return {};
  std::unique_ptr<kiln::INetworkDefinition> network(builder->createNetworkV2(0));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  if (!network || !config) return {};
  config->setDefaultDeviceType(kiln::DeviceType::kCPU);
  config->clearFlag(kiln::BuilderFlag::kTF32);
  config->setBuilderOptimizationLevel(m.options.optimizationLevel);
  if (m.options.referenceOnly &&
      !config->setTacticSources(1U << static_cast<uint32_t>(kiln::TacticSource::kREFERENCE))) {
    return {};
  }
  if (!m.define(*builder, *network, *config)) return {};
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*network, *config));
  if (!plan) return {};
  auto const* p = static_cast<uint8_t const*>(plan->data());
  return std::vector<uint8_t>(p, p + plan->size());
}

// Loads `plan`, makes a context and runs it once.
bool tryRun(kiln::ILogger& logger, Model const& m, std::vector<uint8_t> const& plan, std::vector<uint8_t>& out) {
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  if (!runtime) return false;
  std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan.data(), plan.size()));
  if (!engine) return false;
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  if (!ctx) return false;
  return m.run(*ctx, out);
}

// Equal as floats up to rounding (a dropped candidate may change the tactic); the NonZero indices exactly.
bool sameResult(std::vector<uint8_t> const& a, std::vector<uint8_t> const& b, size_t floatBytes) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i + 4 <= std::min(floatBytes, a.size()); i += 4) {
    float x = 0;
    float y = 0;
    std::memcpy(&x, a.data() + i, 4);
    std::memcpy(&y, b.data() + i, 4);
    if (!(std::fabs(x - y) <= 1e-5F * std::fabs(y) + 1e-6F)) return false;
  }
  return std::memcmp(a.data() + std::min(floatBytes, a.size()), b.data() + std::min(floatBytes, b.size()),
                     a.size() - std::min(floatBytes, a.size())) == 0;
}

struct Walk {
  int tried = 0;
  int survived = 0;
  std::vector<std::string> failures;
};

// Fails allocation k = 1..total of `step` (counted first), checking each outcome, then (`check`, with faults off)
// what a step that reported success produced, and that a clean step follows.
void walk(std::string const& what, std::function<bool(CapturingLogger&)> const& step,
          std::function<std::string()> const& check, Walk& w) {
  CapturingLogger counting(false);
  kiln::setHostAllocFailAt(int64_t{1} << 40);  // count without failing
  bool const counted = step(counting);
  int64_t const total = kiln::hostAllocCount();
  kiln::setHostAllocFailAt(0);
  ASSERT_TRUE(counted) << what << ": " << counting.lastError();
  ASSERT_GE(total, 1) << what;
  std::printf("[reliability] fault_injection %s: %lld host allocations\n", what.c_str(), static_cast<long long>(total));
  for (int64_t k = 1; k <= total; ++k) {
    ++w.tried;
    CapturingLogger logger(false);
    kiln::setHostAllocFailAt(k);
    bool const ok = step(logger);
    kiln::setHostAllocFailAt(0);
    std::string const where = what + ", allocation " + std::to_string(k) + " of " + std::to_string(total);
    if (!ok && logger.errorCount() == 0) {
      w.failures.push_back(where + ": failed without an error message");
      continue;
    }
    if (!ok && logger.lastError().find("injected") == std::string::npos) {
      w.failures.push_back(where + ": the error does not name the injected failure: " + logger.lastError());
      continue;
    }
    if (logger.internalErrorCount() != 0) {
      w.failures.push_back(where + ": internal error: " + logger.lastError());
      continue;
    }
    if (ok) {
      std::string const wrong = check();
      if (!wrong.empty()) {
        w.failures.push_back(where + ": succeeded but " + wrong);
        continue;
      }
    }
    CapturingLogger after(false);
    if (!step(after)) {
      w.failures.push_back(where + ": the next attempt, without a fault, failed: " + after.lastError());
      continue;
    }
    ++w.survived;
  }
}

TEST(FaultInjection, EveryHostAllocationFailureOnBuildAndRunIsClean) {
  Walk build;
  Walk run;
  for (Model const& m : models()) {
    CapturingLogger clean;
    kiln::setHostAllocFailAt(0);
    std::vector<uint8_t> const plan = tryBuild(clean, m);
    ASSERT_FALSE(plan.empty()) << m.name << ": " << clean.lastError();
    std::vector<uint8_t> expected;
    ASSERT_TRUE(tryRun(clean, m, plan, expected)) << m.name << ": " << clean.lastError();
    size_t const floatBytes = m.name == "nonzero" ? 12 * sizeof(float) : expected.size();

    // Build path: a build that survives its fault must still give a plan computing the same outputs.
    std::vector<uint8_t> built;
    walk(
        m.name + " build",
        [&](CapturingLogger& logger) {
          built = tryBuild(logger, m);
          return !built.empty();
        },
        [&]() -> std::string {
          std::vector<uint8_t> out;
          CapturingLogger runLogger(false);
          if (!tryRun(runLogger, m, built, out)) return "its plan does not run: " + runLogger.lastError();
          return sameResult(out, expected, floatBytes) ? "" : "its plan computes other results";
        },
        build);
    // Load and run path, on the clean plan.
    std::vector<uint8_t> out;
    walk(
        m.name + " load+run", [&](CapturingLogger& logger) { return tryRun(logger, m, plan, out); },
        [&]() -> std::string { return sameResult(out, expected, floatBytes) ? "" : "it computed other results"; },
        run);
  }
  std::printf("[reliability] fault_injection build: survived %d / tried %d\n", build.survived, build.tried);
  std::printf("[reliability] fault_injection load+run: survived %d / tried %d\n", run.survived, run.tried);
  RecordProperty("build_survived", build.survived);
  RecordProperty("build_tried", build.tried);
  RecordProperty("run_survived", run.survived);
  RecordProperty("run_tried", run.tried);
  for (Walk const* w : {&build, &run}) {
    EXPECT_EQ(w->survived, w->tried);
    EXPECT_TRUE(w->failures.empty()) << w->failures.size() << " failures, first: " << w->failures.front();
  }
}

}  // namespace
}  // namespace kiln_e2e
