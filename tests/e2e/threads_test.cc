// End-to-end: one engine shared by 8 threads, each with its own execution context, 20 runs each on different
// inputs, must give bit-identical results to a single-threaded run; destroying objects in the wrong order
// (engine before its contexts, runtime before its engine) must be safe.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "e2e/e2e_util.h"

namespace kiln_e2e {
namespace {

constexpr int kThreads = 8;
constexpr int kRunsPerThread = 20;

kiln_samples::ResNetSpec threadSpec() {
  kiln_samples::ResNetSpec s = kiln_samples::smallResNetSpec();
  s.height = 24;
  s.width = 24;
  return s;
}

std::vector<uint8_t> threadPlan(CapturingLogger& logger, kiln_samples::ResNetWeights const& weights) {
  return buildPlan(logger, [&](kiln::IBuilder&, kiln::INetworkDefinition& net, kiln::IBuilderConfig&) {
    return kiln_samples::addResNet(net, weights);
  });
}

kiln_samples::HostTensor inputFor(kiln_samples::ResNetSpec const& s, int thread, int run) {
  return randomInput("input", kiln::Dims4(s.batch, s.inChannels, s.height, s.width),
                     static_cast<uint64_t>(1000 + thread * kRunsPerThread + run));
}

bool identical(std::vector<kiln_samples::HostTensor> const& a, std::vector<kiln_samples::HostTensor> const& b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].data.size() != b[i].data.size() ||
        std::memcmp(a[i].data.data(), b[i].data.data(), a[i].data.size() * sizeof(float)) != 0) {
      return false;
    }
  }
  return true;
}

TEST(Threads, ContextsOnOneEngineMatchSingleThreadedResults) {
  CapturingLogger logger;
  kiln_samples::ResNetWeights const weights = kiln_samples::makeResNetWeights(threadSpec());
  std::vector<uint8_t> const plan = threadPlan(logger, weights);
  ASSERT_FALSE(plan.empty());
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  ASSERT_NE(runtime, nullptr);
  std::unique_ptr<kiln::ICudaEngine> engine = loadEngine(*runtime, plan);
  ASSERT_NE(engine, nullptr) << logger.lastError();

  // Expected results, one context, one thread.
  std::vector<std::vector<std::vector<kiln_samples::HostTensor>>> expected(kThreads);
  {
    std::unique_ptr<kiln::IExecutionContext> context(engine->createExecutionContext());
    ASSERT_NE(context, nullptr);
    for (int t = 0; t < kThreads; ++t) {
      expected[static_cast<size_t>(t)].resize(kRunsPerThread);
      for (int r = 0; r < kRunsPerThread; ++r) {
        ASSERT_TRUE(kiln_samples::runContext(*context, {inputFor(weights.spec, t, r)},
                                             expected[static_cast<size_t>(t)][static_cast<size_t>(r)]));
      }
    }
  }

  std::vector<std::unique_ptr<kiln::IExecutionContext>> contexts;
  for (int t = 0; t < kThreads; ++t) {
    contexts.emplace_back(engine->createExecutionContext());
    ASSERT_NE(contexts.back(), nullptr);
  }
  std::atomic<int> failedRuns{0};
  std::atomic<int> mismatches{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) {
        std::this_thread::yield();
      }
      for (int r = 0; r < kRunsPerThread; ++r) {
        std::vector<kiln_samples::HostTensor> outputs;
        if (!kiln_samples::runContext(*contexts[static_cast<size_t>(t)], {inputFor(weights.spec, t, r)}, outputs)) {
          ++failedRuns;
        } else if (!identical(outputs, expected[static_cast<size_t>(t)][static_cast<size_t>(r)])) {
          ++mismatches;
        }
      }
    });
  }
  go = true;
  for (std::thread& th : threads) {
    th.join();
  }
  EXPECT_EQ(failedRuns.load(), 0) << logger.lastError();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(logger.errorCount(), 0);
}

TEST(Threads, DestroyingTheEngineBeforeItsContextsIsSafe) {
  CapturingLogger logger;
  kiln_samples::ResNetWeights const weights = kiln_samples::makeResNetWeights(threadSpec());
  std::vector<uint8_t> const plan = threadPlan(logger, weights);
  ASSERT_FALSE(plan.empty());
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  ASSERT_NE(runtime, nullptr);
  std::unique_ptr<kiln::ICudaEngine> engine = loadEngine(*runtime, plan);
  ASSERT_NE(engine, nullptr) << logger.lastError();
  std::vector<std::unique_ptr<kiln::IExecutionContext>> contexts;
  for (int t = 0; t < kThreads; ++t) {
    contexts.emplace_back(engine->createExecutionContext());
    ASSERT_NE(contexts.back(), nullptr);
    std::vector<kiln_samples::HostTensor> outputs;
    ASSERT_TRUE(kiln_samples::runContext(*contexts.back(), {inputFor(weights.spec, t, 0)}, outputs));
  }
  // Wrong order on purpose: runtime, then engine, then the contexts (from several threads at once).
  runtime.reset();
  engine.reset();
  std::vector<std::thread> threads;
  for (auto& c : contexts) {
    threads.emplace_back([&c] { c.reset(); });
  }
  for (std::thread& th : threads) {
    th.join();
  }
  EXPECT_EQ(logger.internalErrorCount(), 0);
}

}  // namespace
}  // namespace kiln_e2e
