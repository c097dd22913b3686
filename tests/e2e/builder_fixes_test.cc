// Builder rules end to end on the CPU: a residual sum whose operands have independent dynamic batches stays a sum
// (1 against 4 broadcasts at run time), and an fp16 build whose sum is constrained to fp16 gathers BERT-style
// embeddings from the table converted at build time (no Cast layer on the rows) with the float32 results within fp16's
// error.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "e2e/builder_fix_nets.h"

namespace kiln_e2e {
namespace {

using kiln_samples::HostTensor;

TEST(BuilderFixes, ResidualOfIndependentBatchesBroadcastsAtRunTime) {
  IndependentResidual net;
  for (BuildOptions o : {BuildOptions{3, false}, BuildOptions{3, true}, BuildOptions{0, true}}) {
    SCOPED_TRACE(testing::Message() << "level " << o.optimizationLevel << (o.referenceOnly ? " reference" : ""));
    CapturingLogger logger;
    auto plan = buildPlan(logger, net.define(), o);
    ASSERT_FALSE(plan.empty());
    std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
    auto engine = loadEngine(*rt, plan);
    ASSERT_NE(engine, nullptr) << logger.lastError();
    std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
    ASSERT_NE(ctx, nullptr);
    // One context through every pairing, so that shapes change between runs.
    for (auto [xRows, rRows] : {std::pair<int64_t, int64_t>{1, 4}, {4, 1}, {4, 4}, {1, 1}, {1, 4}}) {
      SCOPED_TRACE(testing::Message() << xRows << " x rows, " << rRows << " r rows");
      HostTensor x = randomInput("x", kiln::Dims2{xRows, IndependentResidual::kN}, 5);
      HostTensor r = randomInput("r", kiln::Dims2{rRows, IndependentResidual::kN}, 6);
      std::vector<HostTensor> outs;
      ASSERT_TRUE(kiln_samples::runContext(*ctx, {x, r}, outs)) << logger.lastError();
      ASSERT_EQ(outs.size(), 1u);
      EXPECT_EQ(outs[0].dims.d[0], std::max(xRows, rRows));
      EXPECT_LE(normRelError(outs[0].data, net.expected(x.data, xRows, r.data, rRows)), 1e-6);
    }
  }
}

TEST(BuilderFixes, Fp16EmbeddingsGatherFromTheConvertedTable) {
  WordEmbeddings net;
  CapturingLogger logger;
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> network(builder->createNetworkV2(0));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  config->setDefaultDeviceType(kiln::DeviceType::kCPU);
  config->setFlag(kiln::BuilderFlag::kFP16);
  config->setProfilingVerbosity(kiln::ProfilingVerbosity::kDETAILED);
  ASSERT_TRUE(net.define()(*builder, *network, *config));
  // kFP16 allows fp16, it does not require it: the sum has no fp16 library tactic on the CPU, so unconstrained it
  // (and with it the gather) would keep float32. Constrained to fp16, it reads the rows in fp16.
  for (int32_t i = 0; i < network->getNbLayers(); ++i)
    if (network->getLayer(i)->getType() == kiln::LayerType::kELEMENTWISE)
      network->getLayer(i)->setPrecision(kiln::DataType::kHALF);
  config->setFlag(kiln::BuilderFlag::kOBEY_PRECISION_CONSTRAINTS);
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*network, *config));
  ASSERT_NE(plan, nullptr) << logger.lastError();
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  std::unique_ptr<kiln::ICudaEngine> engine(rt->deserializeCudaEngine(plan->data(), plan->size()));
  ASSERT_NE(engine, nullptr) << logger.lastError();
  std::unique_ptr<kiln::IEngineInspector> inspector(engine->createEngineInspector());
  std::string layers;
  for (int32_t i = 0; i < engine->getNbLayers(); ++i)
    layers += std::string(inspector->getLayerInformation(i, kiln::LayerInformationFormat::kONELINE)) + "\n";
  EXPECT_NE(layers.find("word_gather [Gather] tactic=gather_reference precision=float16"), std::string::npos) << layers;
  // The float32 output's Cast only: none on the gathered rows, none on the position rows (a folded constant).
  size_t casts = 0;
  for (size_t at = layers.find("[Cast]"); at != std::string::npos; at = layers.find("[Cast]", at + 1)) ++casts;
  EXPECT_EQ(casts, 1u) << layers;
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  ASSERT_NE(ctx, nullptr);
  for (int64_t batch : {1, 3}) {
    std::vector<int32_t> ids = WordEmbeddings::ids(batch);
    std::vector<float> y(ids.size() * WordEmbeddings::kHidden, -1.F);
    ASSERT_TRUE(ctx->setInputShape("ids", kiln::Dims2{batch, WordEmbeddings::kSeq}));
    ASSERT_TRUE(ctx->setTensorAddress("ids", ids.data()));
    ASSERT_TRUE(ctx->setTensorAddress("y", y.data()));
    ASSERT_TRUE(ctx->enqueueV3(nullptr)) << logger.lastError();
    double const err = normRelError(y, net.expected(ids));
    EXPECT_LE(err, 2e-3) << batch;
    EXPECT_GT(err, 0.0) << "fp16 rows should differ from float32 ones";
  }
}

}  // namespace
}  // namespace kiln_e2e
