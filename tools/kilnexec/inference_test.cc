// Tests of kilnexec's runner: inputs (generated and converted), one inference of a small network built through
// the public API (checked against a hand computation), the benchmark loop's stopping rules and profiling, and
// outputs whose shape is only known while running.
#include "inference.h"

#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <cstring>
#include <memory>

#include "engine_build.h"

namespace kilnexec {
namespace {

// y = relu(x * 2 + (-1)), x: float [2, -1] (dynamic batch), plus nz = NonZero(y) (data-dependent shape).
struct SmallEngine {
  ToolLogger logger{false};
  std::unique_ptr<kiln::IRuntime> runtime;
  std::unique_ptr<kiln::ICudaEngine> engine;
  std::vector<float> two = {2.0F}, minusOne = {-1.0F};

  bool build(bool withNonZero) {
    std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
    std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
    kiln::ITensor* x = net->addInput("x", kiln::DataType::kFLOAT, kiln::Dims2(-1, 3));
    auto* c2 = net->addConstant(kiln::Dims2(1, 1), {kiln::DataType::kFLOAT, two.data(), 1});
    auto* cm = net->addConstant(kiln::Dims2(1, 1), {kiln::DataType::kFLOAT, minusOne.data(), 1});
    auto* mul = net->addElementWise(*x, *c2->getOutput(0), kiln::ElementWiseOperation::kPROD);
    mul->setName("mul");
    auto* add = net->addElementWise(*mul->getOutput(0), *cm->getOutput(0), kiln::ElementWiseOperation::kSUM);
    add->setName("add");
    auto* relu = net->addActivation(*add->getOutput(0), kiln::ActivationType::kRELU);
    relu->setName("relu");
    relu->getOutput(0)->setName("y");
    net->markOutput(*relu->getOutput(0));
    if (withNonZero) {
      auto* nz = net->addNonZero(*relu->getOutput(0));
      nz->getOutput(0)->setName("nz");
      net->markOutput(*nz->getOutput(0));
    }
    std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
    config->setDefaultDeviceType(kiln::DeviceType::kCPU);
    auto* profile = builder->createOptimizationProfile();
    profile->setDimensions("x", kiln::OptProfileSelector::kMIN, kiln::Dims2(1, 3));
    profile->setDimensions("x", kiln::OptProfileSelector::kOPT, kiln::Dims2(2, 3));
    profile->setDimensions("x", kiln::OptProfileSelector::kMAX, kiln::Dims2(4, 3));
    config->addOptimizationProfile(profile);
    std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*net, *config));
    if (!plan) return false;
    runtime.reset(kiln::createInferRuntime(logger));
    engine.reset(runtime->deserializeCudaEngine(plan->data(), plan->size()));
    return engine != nullptr;
  }
};

Tensor floats(std::string name, std::vector<int64_t> dims, std::vector<float> const& v) {
  Tensor t{std::move(name), kiln::DataType::kFLOAT, std::move(dims), {}};
  t.bytes.resize(v.size() * 4);
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

TEST(Inference, ConvertsDoublesToEveryType) {
  Tensor h{"h", kiln::DataType::kHALF, {3}, std::vector<uint8_t>(6)};
  setElementFromDouble(h, 0, 1.0 / 3);           // fp16 0x3555
  setElementFromDouble(h, 1, 1e6);               // overflows to +inf 0x7c00
  setElementFromDouble(h, 2, 1.0 + 1.0 / 2048);  // halfway between 1 and 1+2^-10: ties to even, 1.0 = 0x3c00
  EXPECT_EQ(h.bytes, (std::vector<uint8_t>{0x55, 0x35, 0x00, 0x7c, 0x00, 0x3c}));
  Tensor b{"b", kiln::DataType::kBF16, {1}, std::vector<uint8_t>(2)};
  setElementFromDouble(b, 0, 1.0 + 1.0 / 128 + 1.0 / 256);  // 1.01171875: rounds up to 1 + 2^-6 = 0x3f82
  EXPECT_EQ(b.bytes, (std::vector<uint8_t>{0x82, 0x3f}));
  Tensor i8{"i", kiln::DataType::kINT8, {2}, std::vector<uint8_t>(2)};
  setElementFromDouble(i8, 0, -300);  // saturates
  setElementFromDouble(i8, 1, 3);
  EXPECT_EQ(toDoubles(i8), (std::vector<double>{-128, 3}));
  Tensor f8{"f", kiln::DataType::kFP8, {1}, std::vector<uint8_t>(1)};
  setElementFromDouble(f8, 0, 448);
  EXPECT_EQ(f8.bytes[0], 0x7e);
}

TEST(Inference, RunsAndChecksAgainstHandComputation) {
  SmallEngine e;
  ASSERT_TRUE(e.build(false)) << e.logger.lastError();
  Runner runner;
  std::string error;
  ASSERT_TRUE(runner.setup(*e.engine, {floats("x", {1, 3}, {0.25F, 1.0F, -2.0F})}, error)) << error;
  ASSERT_TRUE(runner.infer(error)) << error;
  std::vector<Tensor> out = runner.outputs();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(toDoubles(out[0]), (std::vector<double>{0.0, 1.0, 0.0}));  // relu(-0.5), relu(1), relu(-5)
}

TEST(Inference, DataDependentOutputs) {
  SmallEngine e;
  ASSERT_TRUE(e.build(true)) << e.logger.lastError();
  Runner runner;
  std::string error;
  ASSERT_TRUE(runner.setup(*e.engine, {floats("x", {2, 3}, {1, 0, 1, 0, 0, 3})}, error)) << error;
  ASSERT_TRUE(runner.infer(error)) << error;
  std::vector<Tensor> out = runner.outputs();
  ASSERT_EQ(out.size(), 2u);
  // y = [[1, 0, 1], [0, 0, 5]]: nonzero at (0,0), (0,2), (1,2); ONNX/TensorRT layout [rank, count].
  EXPECT_EQ(out[1].name, "nz");
  EXPECT_EQ(out[1].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(toDoubles(out[1]), (std::vector<double>{0, 0, 1, 0, 2, 2}));
}

TEST(Inference, PrepareInputsUsesShapesAndIsDeterministic) {
  SmallEngine e;
  ASSERT_TRUE(e.build(false));
  Options o;
  std::vector<Tensor> a, b;
  std::string error;
  ASSERT_TRUE(prepareInputs(*e.engine, o, a, error)) << error;
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].dims, (std::vector<int64_t>{2, 3}));  // profile 0's opt shape
  for (double v : toDoubles(a[0])) {
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
  }
  o.shapes.push_back({"x", {4, 3}});
  ASSERT_TRUE(prepareInputs(*e.engine, o, b, error)) << error;
  EXPECT_EQ(b[0].dims, (std::vector<int64_t>{4, 3}));
  EXPECT_TRUE(std::equal(a[0].bytes.begin(), a[0].bytes.end(), b[0].bytes.begin()));  // same seed, same stream
  o.shapes = {{"nope", {1}}};
  EXPECT_FALSE(prepareInputs(*e.engine, o, b, error));
  EXPECT_NE(error.find("'nope'"), std::string::npos) << error;
}

TEST(Inference, BenchmarkStopsAfterIterationsAndDurationAndProfiles) {
  SmallEngine e;
  ASSERT_TRUE(e.build(false));
  Runner runner;
  std::string error;
  ASSERT_TRUE(runner.setup(*e.engine, {floats("x", {1, 3}, {1, 2, 3})}, error)) << error;
  Options o;
  o.iterations = 25;
  o.durationS = 0;
  o.warmUpMs = 0;
  o.avgRuns = 10;
  std::vector<std::string> trace;
  BenchmarkResult r;
  ASSERT_TRUE(benchmark(runner, o, true, r, error, [&](std::string const& s) { trace.push_back(s); })) << error;
  EXPECT_EQ(r.times.size(), 25u);  // duration 0: exactly the iterations
  EXPECT_EQ(r.warmUpRuns, 1);
  EXPECT_EQ(trace.size(), 2u);  // averages after runs 10 and 20
  EXPECT_EQ(r.profiler.runs(), 25u);
  ASSERT_EQ(r.profiler.layers().size(), 3u);
  EXPECT_EQ(r.profiler.layers()[0].name, "mul");
  for (size_t i = 1; i < r.times.size(); ++i) EXPECT_GE(r.times[i].enqStart, r.times[i - 1].d2hEnd);

  o.separateProfileRun = true;
  o.iterations = 3;
  o.durationS = 0.05;  // at least 50 ms of timed runs, then 3 profiled runs of their own
  BenchmarkResult s;
  ASSERT_TRUE(benchmark(runner, o, true, s, error, [](std::string const&) {})) << error;
  EXPECT_GE(s.walltimeMs, 50.0 - 1.0);
  EXPECT_GE(s.times.size(), 3u);
  EXPECT_EQ(s.profiler.runs(), 3u);
}

TEST(Inference, BenchmarkRunsEveryRunnerEachRoundOnTheCpu) {
  SmallEngine e;
  ASSERT_TRUE(e.build(false));
  Runner a, b;
  std::string error;
  ASSERT_TRUE(a.setup(*e.engine, {floats("x", {1, 3}, {1, 2, 3})}, error)) << error;
  ASSERT_TRUE(b.setup(*e.engine, {floats("x", {1, 3}, {1, 2, 3})}, error)) << error;
  EXPECT_FALSE(a.gpu());
  Options o;
  o.iterations = 5;
  o.durationS = 0;
  o.warmUpMs = 0;
  o.useCudaGraph = true;  // nothing to capture on the CPU: ignored, no warning
  BenchmarkResult r;
  ASSERT_TRUE(benchmark({&a, &b}, o, false, r, error, [](std::string const&) {})) << error;
  EXPECT_EQ(r.times.size(), 6u);  // rounds of 2 until at least 5
  EXPECT_EQ(r.warmUpRuns, 2);
  EXPECT_EQ(r.streams, 2);
  EXPECT_FALSE(r.gpu);
  EXPECT_FALSE(r.cudaGraph);
  EXPECT_TRUE(r.warnings.empty());
  for (auto const& t : r.times) {
    // Host memory in place: no transfers, and the compute is the enqueue call.
    EXPECT_EQ(t.h2dMs(), 0.0);
    EXPECT_EQ(t.d2hMs(), 0.0);
    EXPECT_EQ(t.computeMs(), t.enqueueMs());
    EXPECT_EQ(t.latencyMs(), t.computeMs());
  }
  EXPECT_GE(r.walltimeMs, r.times.back().d2hEnd);
  std::string why;
  EXPECT_FALSE(a.captureGraph(why));
  EXPECT_NE(why.find("GPU"), std::string::npos) << why;
}

}  // namespace
}  // namespace kilnexec
