// Plugin layers through the whole pipeline, public API only: network -> build for the CPU (levels 0 and 3, with
// and without kFP16) -> serialize -> deserialize (the registry's creators rebuild the plugins) -> run, against
// the plugins' math; missing creators, plugins without host execution, many contexts on many threads, plan
// inspection, and ONNX models with plugin nodes.
#include <gtest/gtest.h>
#include <kiln/kiln.h>
#include <kiln/onnx_parser.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "e2e/test_plugins.h"

namespace {

using kiln::DataType;
using kiln::Dims;
using kiln_test::counters;

// The creators, registered during static initialization as plugin libraries do.
using ScaledAddV2Creator = kiln_test::ScaledAddV2Creator;
using ScaledAddV3Creator = kiln_test::ScaledAddV3Creator;
REGISTER_KILN_PLUGIN(ScaledAddV2Creator);
REGISTER_KILN_PLUGIN(ScaledAddV3Creator);
using ShapeFillV3Creator = kiln_test::ShapeFillV3Creator;
REGISTER_KILN_PLUGIN(ShapeFillV3Creator);

class Logger : public kiln::ILogger {
 public:
  void log(Severity s, char const* msg) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    if (s <= Severity::kERROR) errors_ += std::string(msg) + "\n";
    if (s <= Severity::kINFO) infos_ += std::string(msg) + "\n";
  }
  std::string errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }
  std::string infos() {
    std::lock_guard<std::mutex> lock(mu_);
    return infos_;
  }

 private:
  std::mutex mu_;
  std::string errors_, infos_;
};

Dims dims2(int64_t a, int64_t b) {
  Dims d{};
  d.nbDims = 2;
  d.d[0] = a;
  d.d[1] = b;
  return d;
}

enum class Kind { kV2, kV3 };

struct Case {
  Kind kind;
  int32_t level;
  bool fp16;
};
// Printed by field: gtest's default prints the struct's bytes, padding included, so test names varied by build.
void PrintTo(Case const& c, std::ostream* os) {
  *os << (c.kind == Kind::kV2 ? "V2" : "V3") << " level " << c.level << (c.fp16 ? " fp16" : " fp32");
}

constexpr float kAlpha = 2.5f;
constexpr double kBeta = 0.25;  // V3 only

// a: [N, 3], b: [N, 3] with N in [1, 8]; with fp16 a goes through an add (a + a) first, so the plugin reads a
// reduced-precision tensor in a kFP16 engine. Outputs: y = alpha * a' + b (+ beta for V3), cat = [a'; b].
std::vector<uint8_t> buildPlan(Logger& logger, Case c, kiln::IPluginV2* v2, kiln::IPluginV3* v3, int32_t* nbLayersOut = nullptr,
                               kiln::ITimingCache* cache = nullptr) {
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  kiln::ITensor* a = net->addInput("a", DataType::kFLOAT, dims2(-1, 3));
  kiln::ITensor* b = net->addInput("b", DataType::kFLOAT, dims2(-1, 3));
  kiln::ITensor* x = a;
  if (c.fp16) x = net->addElementWise(*a, *a, kiln::ElementWiseOperation::kSUM)->getOutput(0);
  kiln::ITensor* ins[] = {x, b};
  kiln::ILayer* layer = nullptr;
  if (c.kind == Kind::kV2) layer = net->addPluginV2(ins, 2, *v2);
  else layer = net->addPluginV3(ins, 2, nullptr, 0, *v3);
  if (!layer) return {};
  EXPECT_EQ(layer->getType(), c.kind == Kind::kV2 ? kiln::LayerType::kPLUGIN_V2 : kiln::LayerType::kPLUGIN_V3);
  EXPECT_EQ(layer->getNbOutputs(), 2);
  layer->setName("scaled_add");
  // Shapes while defining: N unknown, the second output's first dim is N + N (unknown too).
  EXPECT_EQ(layer->getOutput(0)->getDimensions().nbDims, 2);
  EXPECT_EQ(layer->getOutput(1)->getDimensions().d[0], -1);
  EXPECT_EQ(layer->getOutput(1)->getDimensions().d[1], 3);
  layer->getOutput(0)->setName("y");
  layer->getOutput(1)->setName("cat");
  net->markOutput(*layer->getOutput(0));
  net->markOutput(*layer->getOutput(1));
  kiln::IOptimizationProfile* p = builder->createOptimizationProfile();
  for (char const* name : {"a", "b"}) {
    p->setDimensions(name, kiln::OptProfileSelector::kMIN, dims2(1, 3));
    p->setDimensions(name, kiln::OptProfileSelector::kOPT, dims2(4, 3));
    p->setDimensions(name, kiln::OptProfileSelector::kMAX, dims2(8, 3));
  }
  config->addOptimizationProfile(p);
  config->setDefaultDeviceType(kiln::DeviceType::kCPU);
  config->setBuilderOptimizationLevel(c.level);
  if (c.fp16) config->setFlag(kiln::BuilderFlag::kFP16);
  if (cache) {
    EXPECT_TRUE(config->setTimingCache(*cache, false));
  }
  if (nbLayersOut) *nbLayersOut = net->getNbLayers();
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*net, *config));
  if (!plan) return {};
  auto const* bytes = static_cast<uint8_t const*>(plan->data());
  return std::vector<uint8_t>(bytes, bytes + plan->size());
}

// Runs one context at N rows; checks the outputs against the math (tolerance for fp16).
void runAndCheck(kiln::IExecutionContext& ctx, int64_t n, Case c, uint32_t seed) {
  std::vector<float> a(static_cast<size_t>(n * 3)), b(a.size()), y(a.size(), -99.0f), cat(a.size() * 2, -99.0f);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(((seed + i * 7) % 17) / 8.0 - 1.0);
    b[i] = static_cast<float>(((seed + i * 5) % 13) / 6.0 - 1.0);
  }
  ASSERT_TRUE(ctx.setInputShape("a", dims2(n, 3)));
  ASSERT_TRUE(ctx.setInputShape("b", dims2(n, 3)));
  Dims catShape = ctx.getTensorShape("cat");
  ASSERT_EQ(catShape.nbDims, 2);
  EXPECT_EQ(catShape.d[0], 2 * n);
  EXPECT_EQ(catShape.d[1], 3);
  ASSERT_TRUE(ctx.setTensorAddress("a", a.data()));
  ASSERT_TRUE(ctx.setTensorAddress("b", b.data()));
  ASSERT_TRUE(ctx.setTensorAddress("y", y.data()));
  ASSERT_TRUE(ctx.setTensorAddress("cat", cat.data()));
  ASSERT_TRUE(ctx.enqueueV3(nullptr));
  double const tol = c.fp16 ? 2e-2 : 1e-6;
  double const beta = c.kind == Kind::kV3 ? kBeta : 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    double xa = c.fp16 ? 2.0 * a[i] : a[i];
    EXPECT_NEAR(y[i], kAlpha * xa + b[i] + beta, tol * (1 + std::fabs(kAlpha * xa))) << "y[" << i << "]";
    EXPECT_NEAR(cat[i], xa, tol * (1 + std::fabs(xa))) << "cat[" << i << "]";
    EXPECT_NEAR(cat[a.size() + i], b[i], tol) << "cat[" << a.size() + i << "]";
  }
}

class PluginPipeline : public ::testing::TestWithParam<Case> {};

TEST_P(PluginPipeline, BuildSerializeDeserializeRun) {
  Case const c = GetParam();
  Logger logger;
  int const liveBefore = counters().live.load();
  int const concurrentBefore = counters().concurrentRuns.load();
  {
    kiln_test::ScaledAddV2 v2(kAlpha);
    kiln_test::ScaledAddV3 v3(kAlpha, kBeta, "pipeline");
    int const configuresBefore = counters().configures.load();
    std::vector<uint8_t> plan = buildPlan(logger, c, &v2, &v3);
    ASSERT_FALSE(plan.empty()) << logger.errors();
    // configurePlugin ran on the builder's clones with the profile's bounds.
    EXPECT_GT(counters().configures.load(), configuresBefore);
    std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
    std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan.data(), plan.size()));
    ASSERT_NE(engine, nullptr) << logger.errors();
    std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
    ASSERT_NE(ctx, nullptr) << logger.errors();
    int const shapeChangesBefore = counters().shapeChanges.load();
    runAndCheck(*ctx, 5, c, 1);
    runAndCheck(*ctx, 5, c, 2);
    runAndCheck(*ctx, 2, c, 3);
    if (c.kind == Kind::kV3) {
      EXPECT_EQ(counters().shapeChanges.load() - shapeChangesBefore, 2);  // N=5, then N=2
      // The plugin's tactics: the first at level 0, the faster one (timed) at level 3.
      EXPECT_EQ(counters().lastTactic.load(), c.level == 0 ? 1 : 2);
    }
    // The engine serializes again to a plan that loads and runs the same.
    std::unique_ptr<kiln::IHostMemory> again(engine->serialize());
    ASSERT_NE(again, nullptr);
    std::unique_ptr<kiln::ICudaEngine> engine2(runtime->deserializeCudaEngine(again->data(), again->size()));
    ASSERT_NE(engine2, nullptr) << logger.errors();
    std::unique_ptr<kiln::IExecutionContext> ctx2(engine2->createExecutionContext());
    ASSERT_NE(ctx2, nullptr);
    runAndCheck(*ctx2, 8, c, 4);
  }
  EXPECT_EQ(counters().concurrentRuns.load(), concurrentBefore);
  EXPECT_EQ(counters().live.load(), liveBefore) << "every plugin object Kiln made was released";
  EXPECT_EQ(logger.errors(), "");
}

INSTANTIATE_TEST_SUITE_P(Cpu, PluginPipeline,
                         ::testing::Values(Case{Kind::kV2, 0, false}, Case{Kind::kV2, 3, false}, Case{Kind::kV2, 0, true},
                                           Case{Kind::kV2, 3, true}, Case{Kind::kV3, 0, false}, Case{Kind::kV3, 3, false},
                                           Case{Kind::kV3, 0, true}, Case{Kind::kV3, 3, true}),
                         [](auto const& param) {
                           Case c = param.param;
                           return std::string(c.kind == Kind::kV2 ? "V2" : "V3") + "_level" + std::to_string(c.level) +
                                  (c.fp16 ? "_fp16" : "_fp32");
                         });

// A V3 plugin's tactic choice goes into the builder's timing cache under its getTimingCacheID(): a second build
// with the cache runs the plugin only in the tactic-free steps (no timing runs) and picks the same tactic; a
// plugin returning nullptr there is timed on every build.
TEST(PluginPipeline, V3TacticChoiceIsKeptInTheTimingCache) {
  for (char const* tag : {"cached", "uncached"}) {
    Logger logger;
    std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
    std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
    std::unique_ptr<kiln::ITimingCache> cache(config->createTimingCache(nullptr, 0));
    ASSERT_NE(cache, nullptr);
    kiln_test::ScaledAddV2 v2(kAlpha);
    kiln_test::ScaledAddV3 v3(kAlpha, kBeta, tag);
    Case const c{Kind::kV3, 3, false};
    int const before = counters().enqueues.load();
    ASSERT_FALSE(buildPlan(logger, c, &v2, &v3, nullptr, cache.get()).empty()) << logger.errors();
    int const firstBuildRuns = counters().enqueues.load() - before;
    EXPECT_GE(firstBuildRuns, 12) << tag;  // both tactics timed, 6 runs each
    int const before2 = counters().enqueues.load();
    std::vector<uint8_t> plan = buildPlan(logger, c, &v2, &v3, nullptr, cache.get());
    ASSERT_FALSE(plan.empty()) << logger.errors();
    int const secondBuildRuns = counters().enqueues.load() - before2;
    if (std::string(tag) == "cached")
      EXPECT_EQ(secondBuildRuns, firstBuildRuns - 12) << "the second build timed the plugin's tactics again";
    else
      EXPECT_EQ(secondBuildRuns, firstBuildRuns) << "a plugin without a timing-cache ID is timed on every build";
    // The engine runs the fast tactic either way.
    std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
    std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan.data(), plan.size()));
    ASSERT_NE(engine, nullptr) << logger.errors();
    std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
    ASSERT_NE(ctx, nullptr) << logger.errors();
    runAndCheck(*ctx, 4, c, 1);
    EXPECT_EQ(counters().lastTactic.load(), 2) << tag;
  }
}

TEST(PluginPipeline, V2AddedToTheNetworkIsAClone) {
  Logger logger;
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
  kiln_test::ScaledAddV2 v2(kAlpha);
  kiln::ITensor* a = net->addInput("a", DataType::kFLOAT, dims2(2, 3));
  kiln::ITensor* ins[] = {a, a};
  kiln::IPluginV2Layer* l = net->addPluginV2(ins, 2, v2);
  ASSERT_NE(l, nullptr);
  EXPECT_NE(&l->getPlugin(), static_cast<kiln::IPluginV2*>(&v2));
  EXPECT_STREQ(l->getPlugin().getPluginType(), "KilnTestScaledAddV2");
  EXPECT_EQ(l->getOutput(1)->getDimensions().d[0], 4);  // 2 + 2, evaluated while defining
  // A null input is refused with a message.
  kiln::ITensor* bad[] = {a, nullptr};
  EXPECT_EQ(net->addPluginV2(bad, 2, v2), nullptr);
  EXPECT_NE(logger.errors().find("input 1 is null"), std::string::npos) << logger.errors();
}

TEST(PluginPipeline, MissingCreatorFailsTheLoadNamingThePlugin) {
  Logger logger;
  kiln_test::ScaledAddV2 v2(kAlpha);
  v2.setPluginNamespace("unregistered.ns");
  std::vector<uint8_t> plan = buildPlan(logger, Case{Kind::kV2, 0, false}, &v2, nullptr);
  ASSERT_FALSE(plan.empty()) << logger.errors();
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan.data(), plan.size()));
  EXPECT_EQ(engine, nullptr);
  std::string const e = logger.errors();
  for (char const* s : {"KilnTestScaledAddV2", "version '1'", "namespace 'unregistered.ns'", "loadLibrary", "--dynamicPlugins"})
    EXPECT_NE(e.find(s), std::string::npos) << s << " in: " << e;
}

TEST(PluginPipeline, PluginWithoutHostExecutionIsACpuBuildError) {
  Logger logger;
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  kiln_test::GpuOnlyV2 gpuOnly;
  kiln::ITensor* a = net->addInput("a", DataType::kFLOAT, dims2(2, 3));
  kiln::ITensor* ins[] = {a};
  kiln::IPluginV2Layer* l = net->addPluginV2(ins, 1, gpuOnly);
  ASSERT_NE(l, nullptr);
  net->markOutput(*l->getOutput(0));
  config->setDefaultDeviceType(kiln::DeviceType::kCPU);
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*net, *config));
  EXPECT_EQ(plan, nullptr);
  std::string const e = logger.errors();
  for (char const* s : {"KilnTestGpuOnly", "IPluginHostExecution", "DeviceType::kCPU"})
    EXPECT_NE(e.find(s), std::string::npos) << s << " in: " << e;
}

TEST(PluginPipeline, PlanSummaryListsThePlugins) {
  Logger logger;
  kiln_test::ScaledAddV3 v3(kAlpha, kBeta, "summary");
  std::vector<uint8_t> plan = buildPlan(logger, Case{Kind::kV3, 0, false}, nullptr, &v3);
  ASSERT_FALSE(plan.empty()) << logger.errors();
  std::unique_ptr<kiln::IHostMemory> s(kiln::getPlanSummary(plan.data(), plan.size(), &logger));
  ASSERT_NE(s, nullptr);
  std::string const json(static_cast<char const*>(s->data()), s->size());
  EXPECT_NE(json.find("scaled_add: plugin 'KilnTestScaledAddV3' version '2' namespace 'kiln.test'"), std::string::npos)
      << json;
}

TEST(PluginPipeline, ManyContextsOnManyThreads) {
  for (Kind kind : {Kind::kV2, Kind::kV3}) {
    Logger logger;
    kiln_test::ScaledAddV2 v2(kAlpha);
    kiln_test::ScaledAddV3 v3(kAlpha, kBeta, "threads");
    Case const c{kind, 0, false};
    std::vector<uint8_t> plan = buildPlan(logger, c, &v2, &v3);
    ASSERT_FALSE(plan.empty()) << logger.errors();
    std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
    std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan.data(), plan.size()));
    ASSERT_NE(engine, nullptr) << logger.errors();
    int const attachesBefore = counters().attaches.load();
    int const concurrentBefore = counters().concurrentRuns.load();
    constexpr int kThreads = 6;
    std::vector<std::unique_ptr<kiln::IExecutionContext>> ctxs;
    for (int t = 0; t < kThreads; ++t) ctxs.emplace_back(engine->createExecutionContext());
    EXPECT_EQ(counters().attaches.load() - attachesBefore, kThreads) << "one plugin copy per context";
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < 15; ++i) runAndCheck(*ctxs[t], 1 + (t + i) % 8, c, static_cast<uint32_t>(t * 100 + i));
      });
    for (auto& th : threads) th.join();
    EXPECT_EQ(counters().concurrentRuns.load(), concurrentBefore) << "a plugin object ran on two threads at once";
    EXPECT_EQ(logger.errors(), "");
  }
}

// A V3 plugin whose output shape is the value of a shape input (a Shape layer of the dynamic input).
TEST(PluginPipeline, V3ShapeInputsGiveOutputShapes) {
  Logger logger;
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  kiln::ITensor* x = net->addInput("x", DataType::kFLOAT, dims2(-1, 3));
  kiln::ITensor* shape = net->addShape(*x)->getOutput(0);
  kiln_test::ShapeFillV3 plugin;
  kiln::ITensor* ins[] = {x};
  kiln::ITensor* shapeIns[] = {shape};
  kiln::IPluginV3Layer* l = net->addPluginV3(ins, 1, shapeIns, 1, plugin);
  ASSERT_NE(l, nullptr) << logger.errors();
  EXPECT_EQ(l->getNbInputs(), 2);
  // While defining, the shape tensor of a dynamic input has unknown contents: the rank is known, the dims not.
  EXPECT_EQ(l->getOutput(0)->getDimensions().nbDims, 2);
  l->getOutput(0)->setName("out");
  net->markOutput(*l->getOutput(0));
  kiln::ITensor* bad[] = {x};
  EXPECT_EQ(net->addPluginV3(ins, 1, bad, 1, plugin), nullptr);  // a float shape input is refused
  EXPECT_NE(logger.errors().find("shape input 0 must be int32 or int64"), std::string::npos) << logger.errors();
  kiln::IOptimizationProfile* p = builder->createOptimizationProfile();
  p->setDimensions("x", kiln::OptProfileSelector::kMIN, dims2(1, 3));
  p->setDimensions("x", kiln::OptProfileSelector::kOPT, dims2(2, 3));
  p->setDimensions("x", kiln::OptProfileSelector::kMAX, dims2(6, 3));
  config->addOptimizationProfile(p);
  config->setDefaultDeviceType(kiln::DeviceType::kCPU);
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*net, *config));
  ASSERT_NE(plan, nullptr) << logger.errors();
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan->data(), plan->size()));
  ASSERT_NE(engine, nullptr) << logger.errors();
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  for (int64_t n : {2, 5}) {
    std::vector<float> xs(static_cast<size_t>(n * 3), 0.0f), out(static_cast<size_t>(n * 3), -1.0f);
    xs[0] = 10.0f;
    ASSERT_TRUE(ctx->setInputShape("x", dims2(n, 3)));
    Dims o = ctx->getTensorShape("out");
    ASSERT_EQ(o.nbDims, 2);
    EXPECT_EQ(o.d[0], n);
    EXPECT_EQ(o.d[1], 3);
    ASSERT_TRUE(ctx->setTensorAddress("x", xs.data()));
    ASSERT_TRUE(ctx->setTensorAddress("out", out.data()));
    ASSERT_TRUE(ctx->enqueueV3(nullptr)) << logger.errors();
    for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], 10.0f + static_cast<float>(i)) << i;
  }
}

#ifdef KILN_TEST_ONNX_MODELS
// Models written by plugin_models.py (onnx.helper): a node of the custom domain 'kiln.test' (opset 2) running
// KilnTestScaledAddV3 with attributes alpha, beta, tag; then a TRT_PluginV2 node holding a serialized
// KilnTestScaledAddV2 (alpha 2.5) applied to (y, b).
TEST(PluginOnnx, CustomDomainNodeAndTrtPluginV2) {
  std::string const dir = ::testing::TempDir() + "/kiln_plugin_onnx";
  std::string const cmd = std::string("/usr/bin/python3 ") + KILN_TEST_ONNX_MODELS + " " + dir;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  Logger logger;
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
  std::unique_ptr<kiln::onnx::IParser> parser(kiln::onnx::createParser(*net, logger));
  ASSERT_TRUE(parser->parseFromFile((dir + "/plugins.onnx").c_str(), static_cast<int32_t>(kiln::ILogger::Severity::kINFO)))
      << logger.errors();
  std::string const infos = logger.infos();
  EXPECT_NE(infos.find("runs plugin 'KilnTestScaledAddV3' version '2' namespace 'kiln.test' with 3 fields"),
            std::string::npos)
      << infos;
  EXPECT_NE(infos.find("(TRT_PluginV2) rebuilds plugin 'KilnTestScaledAddV2'"), std::string::npos) << infos;
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  config->setDefaultDeviceType(kiln::DeviceType::kCPU);
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*net, *config));
  ASSERT_NE(plan, nullptr) << logger.errors();
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan->data(), plan->size()));
  ASSERT_NE(engine, nullptr) << logger.errors();
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  std::vector<float> a(6), b(6), z(6, -1), cat(12, -1);
  for (int i = 0; i < 6; ++i) {
    a[i] = 0.5f * static_cast<float>(i) - 1.0f;
    b[i] = 0.25f * static_cast<float>(i);
  }
  ASSERT_TRUE(ctx->setTensorAddress("a", a.data()));
  ASSERT_TRUE(ctx->setTensorAddress("b", b.data()));
  ASSERT_TRUE(ctx->setTensorAddress("z", z.data()));
  ASSERT_TRUE(ctx->setTensorAddress("cat", cat.data()));
  ASSERT_TRUE(ctx->enqueueV3(nullptr)) << logger.errors();
  for (int i = 0; i < 6; ++i) {
    double y = 1.5 * a[i] + b[i] + 0.5;  // V3: alpha 1.5, beta 0.5
    EXPECT_NEAR(z[i], 2.5 * y + b[i], 1e-5) << i;  // V2: alpha 2.5 on (y, b)
    EXPECT_NEAR(cat[i], a[i], 1e-6);
    EXPECT_NEAR(cat[6 + i], b[i], 1e-6);
  }
}

TEST(PluginOnnx, UnknownOpWithoutCreatorKeepsTheError) {
  std::string const dir = ::testing::TempDir() + "/kiln_plugin_onnx";
  std::string const cmd = std::string("/usr/bin/python3 ") + KILN_TEST_ONNX_MODELS + " " + dir;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  Logger logger;
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
  std::unique_ptr<kiln::onnx::IParser> parser(kiln::onnx::createParser(*net, logger));
  EXPECT_FALSE(parser->parseFromFile((dir + "/unknown.onnx").c_str(), 0));
  EXPECT_NE(logger.errors().find("no importer for op 'KilnTestNobody'"), std::string::npos) << logger.errors();
}
#endif

}  // namespace
