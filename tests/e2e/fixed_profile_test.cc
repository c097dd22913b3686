// Engines built for one profile that fixes every input's shape (min = opt = max, kilnexec/trtexec --shapes) are
// specialized to it: a BERT-like residual block whose shapes the network leaves unrelated (-1s from exporter-style
// shape arithmetic) gets its residual add fused, yet the engine reports the network's -1 dims and still checks
// setInputShape against the profile. Ranged or several profiles build as before. Results against an unfused
// reference build.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "e2e/e2e_util.h"

namespace kiln_e2e {
namespace {

constexpr int64_t kSeq = 4;
constexpr int64_t kHidden = 16;

std::vector<float> values(size_t n, uint64_t seed, float lo, float hi) {
  kiln_samples::Random rng(seed);
  return rng.uniformVector(n, lo, hi);
}

// x [-1, kSeq, kHidden] -> relu -> reshape to [x.dim0, x.dim1, kHidden] through Shape -> Gather -> Concat (as the
// exporters write BERT's head merge; inference cannot say those dims equal x's) -> matmul + bias -> + x
// ("residual.sum") -> layer norm -> y. The weights live in `w` until the build ends.
struct Weights {
  std::vector<float> matrix = values(kHidden * kHidden, 11, -0.3F, 0.3F);
  std::vector<float> bias = values(kHidden, 12, -0.1F, 0.1F);
  std::vector<float> scale = values(kHidden, 13, 0.8F, 1.2F);
  std::vector<float> shift = values(kHidden, 14, -0.1F, 0.1F);
};

kiln::ITensor* constant(kiln::INetworkDefinition& net, kiln::Dims const& dims, std::vector<float> const& v) {
  kiln::IConstantLayer* c =
      net.addConstant(dims, kiln::Weights{kiln::DataType::kFLOAT, v.data(), static_cast<int64_t>(v.size())});
  return c != nullptr ? c->getOutput(0) : nullptr;
}

bool defineResidualBlock(kiln::INetworkDefinition& net, Weights const& w) {
  kiln::ITensor* x = net.addInput("x", kiln::DataType::kFLOAT, kiln::Dims3(-1, kSeq, kHidden));
  kiln::ITensor* r = net.addActivation(*x, kiln::ActivationType::kRELU)->getOutput(0);
  kiln::ITensor* shape = net.addShape(*r)->getOutput(0);
  static int32_t const kFirstTwo[] = {0, 1};
  kiln::ITensor* which =
      net.addConstant(kiln::Dims{1, {2}}, kiln::Weights{kiln::DataType::kINT32, kFirstTwo, 2})->getOutput(0);
  kiln::ITensor* lead = net.addGather(*shape, *which, 0)->getOutput(0);
  static int64_t const kLast[] = {kHidden};
  kiln::ITensor* last =
      net.addConstant(kiln::Dims{1, {1}}, kiln::Weights{kiln::DataType::kINT64, kLast, 1})->getOutput(0);
  kiln::ITensor* parts[] = {lead, last};
  kiln::ITensor* target = net.addConcatenation(parts, 2)->getOutput(0);
  kiln::IShuffleLayer* reshape = net.addShuffle(*r);
  reshape->setInput(1, *target);
  kiln::ITensor* m =
      net.addMatrixMultiply(*reshape->getOutput(0), kiln::MatrixOperation::kNONE,
                            *constant(net, kiln::Dims2(kHidden, kHidden), w.matrix), kiln::MatrixOperation::kNONE)
          ->getOutput(0);
  kiln::ITensor* b =
      net.addElementWise(*m, *constant(net, kiln::Dims3(1, 1, kHidden), w.bias), kiln::ElementWiseOperation::kSUM)
          ->getOutput(0);
  kiln::IElementWiseLayer* sum = net.addElementWise(*b, *x, kiln::ElementWiseOperation::kSUM);
  sum->setName("residual.sum");
  kiln::INormalizationLayer* norm =
      net.addNormalization(*sum->getOutput(0), *constant(net, kiln::Dims3(1, 1, kHidden), w.scale),
                           *constant(net, kiln::Dims3(1, 1, kHidden), w.shift), 1U << 2U);
  kiln::ITensor* y = norm->getOutput(0);
  y->setName("y");
  net.markOutput(*y);
  return true;
}

struct Engine {
  std::unique_ptr<kiln::IRuntime> runtime;
  std::unique_ptr<kiln::ICudaEngine> engine;
  kiln::Dims networkOutputDims{};  // y's dims in the network definition
};

// Builds the block with one profile per entry of `batches` ({min, opt, max} batch each); level 3 with the CPU
// backend's tactics, or level 0 with reference tactics only (the unfused oracle).
Engine build(CapturingLogger& logger, Weights const& w, std::vector<std::array<int32_t, 3>> const& batches,
             bool oracle) {
  Engine e;
  std::vector<uint8_t> const plan = buildPlan(
      logger,
      [&](kiln::IBuilder& builder, kiln::INetworkDefinition& net, kiln::IBuilderConfig& config) {
        if (!defineResidualBlock(net, w)) {
          return false;
        }
        e.networkOutputDims = net.getOutput(0)->getDimensions();
        for (auto const& b : batches) {
          kiln::IOptimizationProfile* p = builder.createOptimizationProfile();
          p->setDimensions("x", kiln::OptProfileSelector::kMIN, kiln::Dims3(b[0], kSeq, kHidden));
          p->setDimensions("x", kiln::OptProfileSelector::kOPT, kiln::Dims3(b[1], kSeq, kHidden));
          p->setDimensions("x", kiln::OptProfileSelector::kMAX, kiln::Dims3(b[2], kSeq, kHidden));
          if (config.addOptimizationProfile(p) < 0) {
            return false;
          }
        }
        return true;
      },
      BuildOptions{oracle ? 0 : 3, oracle});
  if (plan.empty()) {
    return e;
  }
  e.runtime.reset(kiln::createInferRuntime(logger));
  e.engine = loadEngine(*e.runtime, plan);
  return e;
}

bool hasLayer(kiln::ICudaEngine& engine, char const* name) {
  std::unique_ptr<kiln::IEngineInspector> inspector(engine.createEngineInspector());
  char const* info = inspector ? inspector->getEngineInformation(kiln::LayerInformationFormat::kONELINE) : nullptr;
  EXPECT_NE(info, nullptr);
  return info != nullptr && std::string(info).find(name) != std::string::npos;
}

std::vector<float> run(kiln::ICudaEngine& engine, CapturingLogger& logger, kiln_samples::HostTensor const& x) {
  std::unique_ptr<kiln::IExecutionContext> context(engine.createExecutionContext());
  EXPECT_NE(context, nullptr);
  std::vector<kiln_samples::HostTensor> outputs;
  if (!context || !kiln_samples::runContext(*context, {x}, outputs) || outputs.size() != 1) {
    ADD_FAILURE() << "the run failed: " << logger.lastError();
    return {};
  }
  EXPECT_TRUE(sameDims(outputs[0].dims, x.dims));
  return outputs[0].data;
}

std::vector<double> toDouble(std::vector<float> const& v) { return std::vector<double>(v.begin(), v.end()); }

TEST(FixedProfile, FusesTheResidualAddAndKeepsTheNetworksIODims) {
  Weights const w;
  CapturingLogger logger;
  Engine fixed = build(logger, w, {{2, 2, 2}}, false);
  ASSERT_NE(fixed.engine, nullptr) << logger.lastError();
  Engine oracle = build(logger, w, {{1, 2, 4}}, true);
  ASSERT_NE(oracle.engine, nullptr) << logger.lastError();

  // The sum went into the matmul (or the layer norm): fixed shapes prove its operands' shapes equal.
  EXPECT_FALSE(hasLayer(*fixed.engine, "residual.sum"));
  // The engine reports the network's dims, -1 included, as TensorRT does.
  EXPECT_TRUE(sameDims(fixed.engine->getTensorShape("x"), kiln::Dims3(-1, kSeq, kHidden)));
  EXPECT_TRUE(sameDims(fixed.engine->getTensorShape("y"), fixed.networkOutputDims));
  EXPECT_EQ(fixed.networkOutputDims.d[0], -1);

  // setInputShape is still needed and checked against the profile.
  std::unique_ptr<kiln::IExecutionContext> context(fixed.engine->createExecutionContext());
  ASSERT_NE(context, nullptr);
  EXPECT_FALSE(context->allInputDimensionsSpecified());
  logger.setEchoErrors(false);
  int const before = logger.errorCount();
  EXPECT_FALSE(context->setInputShape("x", kiln::Dims3(3, kSeq, kHidden)));
  EXPECT_GT(logger.errorCount(), before);
  logger.setEchoErrors(true);
  EXPECT_TRUE(context->setInputShape("x", kiln::Dims3(2, kSeq, kHidden)));
  EXPECT_TRUE(sameDims(context->getTensorShape("y"), kiln::Dims3(2, kSeq, kHidden)));

  kiln_samples::HostTensor const x = randomInput("x", kiln::Dims3(2, kSeq, kHidden), 7);
  std::vector<float> const got = run(*fixed.engine, logger, x);
  std::vector<float> const want = run(*oracle.engine, logger, x);
  EXPECT_LT(normRelError(got, toDouble(want)), 1e-5);
  EXPECT_EQ(logger.errorCount(), before + 1);
}

// A real range: the operands' batch dims are not provably equal, the sum stays, and every shape runs.
TEST(FixedProfile, RangedProfileKeepsTheSumAndRunsAtTwoShapes) {
  Weights const w;
  CapturingLogger logger;
  Engine ranged = build(logger, w, {{1, 2, 4}}, false);
  ASSERT_NE(ranged.engine, nullptr) << logger.lastError();
  Engine oracle = build(logger, w, {{1, 2, 4}}, true);
  ASSERT_NE(oracle.engine, nullptr) << logger.lastError();
  EXPECT_TRUE(hasLayer(*ranged.engine, "residual.sum"));
  EXPECT_TRUE(sameDims(ranged.engine->getTensorShape("x"), kiln::Dims3(-1, kSeq, kHidden)));
  for (int32_t batch : {1, 3}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    kiln_samples::HostTensor const x = randomInput("x", kiln::Dims3(batch, kSeq, kHidden), 100 + batch);
    EXPECT_LT(normRelError(run(*ranged.engine, logger, x), toDouble(run(*oracle.engine, logger, x))), 1e-5);
  }
  EXPECT_EQ(logger.errorCount(), 0);
}

// Several profiles, each fixed: a context may switch between them, so nothing is specialized.
TEST(FixedProfile, SeveralFixedProfilesAreNotSpecialized) {
  Weights const w;
  CapturingLogger logger;
  Engine two = build(logger, w, {{2, 2, 2}, {3, 3, 3}}, false);
  ASSERT_NE(two.engine, nullptr) << logger.lastError();
  Engine oracle = build(logger, w, {{1, 2, 4}}, true);
  ASSERT_NE(oracle.engine, nullptr) << logger.lastError();
  EXPECT_EQ(two.engine->getNbOptimizationProfiles(), 2);
  EXPECT_TRUE(hasLayer(*two.engine, "residual.sum"));
  kiln_samples::HostTensor const x = randomInput("x", kiln::Dims3(2, kSeq, kHidden), 21);
  EXPECT_LT(normRelError(run(*two.engine, logger, x), toDouble(run(*oracle.engine, logger, x))), 1e-5);
  EXPECT_EQ(logger.errorCount(), 0);
}

}  // namespace
}  // namespace kiln_e2e
