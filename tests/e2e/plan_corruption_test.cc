// End-to-end: corrupted plans are refused. A flipped bit anywhere in a plan (about 200 sampled positions) and
// truncations (every length of a tiny plan, many of a larger one) make deserializeCudaEngine return nullptr
// and log an error, never crash or load. Also: a re-serialized engine loads and computes the same outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "e2e/e2e_util.h"

namespace kiln_e2e {
namespace {

// A one-layer network: the smallest plan there is.
std::vector<uint8_t> tinyPlan(CapturingLogger& logger) {
  return buildPlan(logger, [](kiln::IBuilder&, kiln::INetworkDefinition& net, kiln::IBuilderConfig&) {
    kiln::ITensor* x = net.addInput("input", kiln::DataType::kFLOAT, kiln::Dims2(2, 8));
    kiln::IActivationLayer* relu = x == nullptr ? nullptr : net.addActivation(*x, kiln::ActivationType::kRELU);
    if (relu == nullptr) {
      return false;
    }
    relu->getOutput(0)->setName("output");
    net.markOutput(*relu->getOutput(0));
    return true;
  });
}

kiln_samples::ResNetSpec smallCnnSpec() {
  kiln_samples::ResNetSpec s = kiln_samples::smallResNetSpec();
  s.height = 16;
  s.width = 16;
  return s;
}

// The demo CNN at 16x16 (tens of KB of weights in their own sections).
std::vector<uint8_t> cnnPlan(CapturingLogger& logger, kiln_samples::ResNetWeights const& weights) {
  return buildPlan(logger, [&](kiln::IBuilder&, kiln::INetworkDefinition& net, kiln::IBuilderConfig&) {
    return kiln_samples::addResNet(net, weights);
  });
}

// Loads `bytes`, expecting refusal with an error. Returns "" if so, else what went wrong.
std::string expectRefused(kiln::IRuntime& runtime, CapturingLogger& logger, std::vector<uint8_t> const& bytes) {
  int const before = logger.errorCount();
  std::unique_ptr<kiln::ICudaEngine> engine(runtime.deserializeCudaEngine(bytes.data(), bytes.size()));
  if (engine != nullptr) {
    return "loaded";
  }
  if (logger.errorCount() == before) {
    return "refused without logging an error";
  }
  return "";
}

TEST(PlanCorruption, IntactPlansLoad) {
  CapturingLogger logger;
  kiln_samples::ResNetWeights const weights = kiln_samples::makeResNetWeights(smallCnnSpec());
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  ASSERT_NE(runtime, nullptr);
  for (auto const& plan : {tinyPlan(logger), cnnPlan(logger, weights)}) {
    ASSERT_FALSE(plan.empty());
    EXPECT_NE(loadEngine(*runtime, plan), nullptr) << logger.lastError();
  }
  EXPECT_EQ(logger.errorCount(), 0);
}

TEST(PlanCorruption, AnyFlippedBitIsRefused) {
  CapturingLogger logger;
  kiln_samples::ResNetWeights const weights = kiln_samples::makeResNetWeights(smallCnnSpec());
  std::vector<uint8_t> const plan = cnnPlan(logger, weights);
  ASSERT_GT(plan.size(), 1024U);
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  ASSERT_NE(runtime, nullptr);
  logger.setEchoErrors(false);

  // Every byte of the first 64 (magic, versions, header fields), then positions spread over the whole plan,
  // including the last byte; a different bit of each byte.
  std::set<size_t> positions;
  for (size_t i = 0; i < 64; ++i) {
    positions.insert(i);
  }
  kiln_samples::Random rng(7);
  while (positions.size() < 200) {
    positions.insert(static_cast<size_t>(rng.next() % plan.size()));
  }
  positions.insert(plan.size() - 1);

  std::vector<std::string> failures;
  std::vector<uint8_t> bytes = plan;
  for (size_t pos : positions) {
    auto const bit = static_cast<uint8_t>(1U << (pos % 8));
    bytes[pos] ^= bit;
    std::string const what = expectRefused(*runtime, logger, bytes);
    if (!what.empty()) {
      failures.push_back("byte " + std::to_string(pos) + " bit " + std::to_string(pos % 8) + ": " + what);
    }
    bytes[pos] ^= bit;
  }
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << positions.size() << " flips not refused (plan of "
                                << plan.size() << " bytes), first: " << failures.front();
  EXPECT_EQ(logger.internalErrorCount(), 0);
}

TEST(PlanCorruption, EveryTruncationOfATinyPlanIsRefused) {
  CapturingLogger logger;
  std::vector<uint8_t> const plan = tinyPlan(logger);
  ASSERT_FALSE(plan.empty());
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  ASSERT_NE(runtime, nullptr);
  logger.setEchoErrors(false);
  std::vector<std::string> failures;
  for (size_t len = 0; len < plan.size(); ++len) {
    std::vector<uint8_t> const bytes(plan.begin(), plan.begin() + static_cast<std::ptrdiff_t>(len));
    std::string const what = expectRefused(*runtime, logger, bytes);
    if (!what.empty()) {
      failures.push_back("length " + std::to_string(len) + ": " + what);
    }
  }
  EXPECT_TRUE(failures.empty()) << failures.size() << " truncations of " << plan.size()
                                << " bytes not refused, first: " << failures.front();
}

TEST(PlanCorruption, TruncationsOfALargerPlanAreRefused) {
  CapturingLogger logger;
  kiln_samples::ResNetWeights const weights = kiln_samples::makeResNetWeights(smallCnnSpec());
  std::vector<uint8_t> const plan = cnnPlan(logger, weights);
  ASSERT_GT(plan.size(), 1024U);
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  ASSERT_NE(runtime, nullptr);
  logger.setEchoErrors(false);
  // Every length up to 512 (the header and section table), the last 64, and 100 spread in between.
  std::set<size_t> lengths;
  for (size_t len = 0; len < 512; ++len) {
    lengths.insert(len);
  }
  for (size_t back = 1; back <= 64; ++back) {
    lengths.insert(plan.size() - back);
  }
  for (size_t i = 0; i < 100; ++i) {
    lengths.insert(plan.size() * i / 100);
  }
  std::vector<std::string> failures;
  for (size_t len : lengths) {
    std::vector<uint8_t> const bytes(plan.begin(), plan.begin() + static_cast<std::ptrdiff_t>(len));
    std::string const what = expectRefused(*runtime, logger, bytes);
    if (!what.empty()) {
      failures.push_back("length " + std::to_string(len) + ": " + what);
    }
  }
  EXPECT_TRUE(failures.empty()) << failures.size() << " truncations of " << plan.size()
                                << " bytes not refused, first: " << failures.front();
}

TEST(PlanCorruption, NullAndEmptyBlobsAreRefused) {
  CapturingLogger logger(false);
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  ASSERT_NE(runtime, nullptr);
  int before = logger.errorCount();
  EXPECT_EQ(std::unique_ptr<kiln::ICudaEngine>(runtime->deserializeCudaEngine(nullptr, 0)), nullptr);
  EXPECT_GT(logger.errorCount(), before);
  before = logger.errorCount();
  EXPECT_EQ(std::unique_ptr<kiln::ICudaEngine>(runtime->deserializeCudaEngine(nullptr, 4096)), nullptr);
  EXPECT_GT(logger.errorCount(), before);
  std::vector<uint8_t> const zeros(4096, 0);
  before = logger.errorCount();
  EXPECT_EQ(std::unique_ptr<kiln::ICudaEngine>(runtime->deserializeCudaEngine(zeros.data(), zeros.size())), nullptr);
  EXPECT_GT(logger.errorCount(), before);
}

TEST(PlanCorruption, ReserializedEngineLoadsAndComputesTheSame) {
  CapturingLogger logger;
  kiln_samples::ResNetWeights const weights = kiln_samples::makeResNetWeights(smallCnnSpec());
  std::vector<uint8_t> const plan = cnnPlan(logger, weights);
  ASSERT_FALSE(plan.empty());
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  ASSERT_NE(runtime, nullptr);
  std::unique_ptr<kiln::ICudaEngine> engine = loadEngine(*runtime, plan);
  ASSERT_NE(engine, nullptr) << logger.lastError();
  std::unique_ptr<kiln::IHostMemory> again(engine->serialize());
  ASSERT_NE(again, nullptr);
  auto const* p = static_cast<uint8_t const*>(again->data());
  std::unique_ptr<kiln::ICudaEngine> engine2 = loadEngine(*runtime, std::vector<uint8_t>(p, p + again->size()));
  ASSERT_NE(engine2, nullptr) << logger.lastError();

  kiln_samples::ResNetSpec const& s = weights.spec;
  kiln_samples::HostTensor const input = randomInput("input", kiln::Dims4(s.batch, s.inChannels, s.height, s.width), 5);
  std::vector<kiln_samples::HostTensor> out1;
  std::vector<kiln_samples::HostTensor> out2;
  std::unique_ptr<kiln::IExecutionContext> c1(engine->createExecutionContext());
  std::unique_ptr<kiln::IExecutionContext> c2(engine2->createExecutionContext());
  ASSERT_TRUE(c1 != nullptr && c2 != nullptr);
  ASSERT_TRUE(kiln_samples::runContext(*c1, {input}, out1));
  ASSERT_TRUE(kiln_samples::runContext(*c2, {input}, out2));
  ASSERT_EQ(out1.size(), out2.size());
  for (size_t i = 0; i < out1.size(); ++i) {
    ASSERT_EQ(out1[i].data.size(), out2[i].data.size());
    EXPECT_EQ(std::memcmp(out1[i].data.data(), out2[i].data.data(), out1[i].data.size() * sizeof(float)), 0)
        << out1[i].name;
  }
}

}  // namespace
}  // namespace kiln_e2e
