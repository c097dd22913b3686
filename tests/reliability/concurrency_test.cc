// Concurrency: N threads x M execution contexts on one engine, each run compared with a single-threaded run of
// the same input: bit for bit on the reference backend, within 1e-5 (norm-relative) on the oneDNN CPU tactics;
// a dynamic-shape engine whose contexts run different shapes at once; and runtime, engine, inspector and
// contexts destroyed in every order, the contexts left still running. scripts/tsan runs this binary under
// ThreadSanitizer. Totals print as "[reliability] concurrency ...: runs N, mismatches M".
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "e2e/e2e_util.h"

namespace kiln_e2e {
namespace {

constexpr int kThreads = 4;
constexpr int kContextsPerThread = 3;
constexpr int kRounds = 4;

using Outputs = std::vector<kiln_samples::HostTensor>;

kiln_samples::ResNetSpec cnnSpec() {
  kiln_samples::ResNetSpec s = kiln_samples::smallResNetSpec();
  s.height = 16;
  s.width = 16;
  return s;
}

std::vector<uint8_t> cnnPlan(CapturingLogger& logger, kiln_samples::ResNetWeights const& weights, bool reference) {
  BuildOptions options;
  options.referenceOnly = reference;
  return buildPlan(
      logger,
      [&](kiln::IBuilder&, kiln::INetworkDefinition& net, kiln::IBuilderConfig&) {
        return kiln_samples::addResNet(net, weights);
      },
      options);
}

// Largest norm-relative difference over the outputs (0 when bit-identical); infinity when they do not match up.
double difference(Outputs const& a, Outputs const& b, bool exact) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].data.size() != b[i].data.size()) return INFINITY;
    if (exact) {
      if (std::memcmp(a[i].data.data(), b[i].data.data(), a[i].data.size() * sizeof(float)) != 0) return INFINITY;
      continue;
    }
    std::vector<double> ref(b[i].data.begin(), b[i].data.end());
    worst = std::max(worst, normRelError(a[i].data, ref));
  }
  return worst;
}

// Input of context c of thread t in round r.
kiln_samples::HostTensor cnnInput(kiln_samples::ResNetSpec const& s, int t, int c, int r) {
  return randomInput("input", kiln::Dims4(s.batch, s.inChannels, s.height, s.width),
                     static_cast<uint64_t>(1000 + (t * kContextsPerThread + c) * kRounds + r));
}

struct Totals {
  std::atomic<int> runs{0};
  std::atomic<int> failedRuns{0};
  std::atomic<int> mismatches{0};
};

// N threads x M contexts, every run of thread t / context c / round r checked against expected[t][c][r].
void runMatrix(kiln::ICudaEngine& engine, std::function<kiln_samples::HostTensor(int, int, int)> const& input,
               bool exact, double tolerance, Totals& totals) {
  // Expected results: one context, one thread.
  std::vector<std::vector<std::vector<Outputs>>> expected(
      kThreads, std::vector<std::vector<Outputs>>(kContextsPerThread, std::vector<Outputs>(kRounds)));
  {
    std::unique_ptr<kiln::IExecutionContext> context(engine.createExecutionContext());
    ASSERT_NE(context, nullptr);
    for (int t = 0; t < kThreads; ++t) {
      for (int c = 0; c < kContextsPerThread; ++c) {
        for (int r = 0; r < kRounds; ++r) {
          ASSERT_TRUE(kiln_samples::runContext(*context, {input(t, c, r)}, expected[t][c][r]));
        }
      }
    }
  }
  std::vector<std::vector<std::unique_ptr<kiln::IExecutionContext>>> contexts(kThreads);
  for (auto& mine : contexts) {
    for (int c = 0; c < kContextsPerThread; ++c) {
      mine.emplace_back(engine.createExecutionContext());
      ASSERT_NE(mine.back(), nullptr);
    }
  }
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) {
        std::this_thread::yield();
      }
      // Rounds outermost: each thread interleaves its contexts.
      for (int r = 0; r < kRounds; ++r) {
        for (int c = 0; c < kContextsPerThread; ++c) {
          Outputs out;
          ++totals.runs;
          if (!kiln_samples::runContext(*contexts[t][c], {input(t, c, r)}, out)) {
            ++totals.failedRuns;
          } else if (!(difference(out, expected[t][c][r], exact) <= tolerance)) {
            ++totals.mismatches;
          }
        }
      }
    });
  }
  go = true;
  for (std::thread& th : threads) {
    th.join();
  }
}

TEST(Concurrency, ReferenceContextsAreBitExactAgainstOneThread) {
  CapturingLogger logger;
  kiln_samples::ResNetWeights const weights = kiln_samples::makeResNetWeights(cnnSpec());
  std::vector<uint8_t> const plan = cnnPlan(logger, weights, true);
  ASSERT_FALSE(plan.empty());
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  ASSERT_NE(runtime, nullptr);
  std::unique_ptr<kiln::ICudaEngine> engine = loadEngine(*runtime, plan);
  ASSERT_NE(engine, nullptr) << logger.lastError();
  Totals totals;
  runMatrix(
      *engine, [&](int t, int c, int r) { return cnnInput(weights.spec, t, c, r); }, true, 0.0, totals);
  std::printf("[reliability] concurrency reference %dx%d: runs %d, mismatches %d, failed %d\n", kThreads,
              kContextsPerThread, totals.runs.load(), totals.mismatches.load(), totals.failedRuns.load());
  EXPECT_EQ(totals.runs.load(), kThreads * kContextsPerThread * kRounds);
  EXPECT_EQ(totals.failedRuns.load(), 0) << logger.lastError();
  EXPECT_EQ(totals.mismatches.load(), 0);
  EXPECT_EQ(logger.errorCount(), 0);
}

#ifdef KILN_HAVE_ONEDNN
TEST(Concurrency, OneDnnContextsMatchOneThreadWithinTolerance) {
  CapturingLogger logger;
  kiln_samples::ResNetWeights const weights = kiln_samples::makeResNetWeights(cnnSpec());
  std::vector<uint8_t> const plan = cnnPlan(logger, weights, false);
  ASSERT_FALSE(plan.empty());
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  ASSERT_NE(runtime, nullptr);
  ASSERT_TRUE(runtime->setMaxThreads(2));  // each context's oneDNN calls use two OpenMP threads
  std::unique_ptr<kiln::ICudaEngine> engine = loadEngine(*runtime, plan);
  ASSERT_NE(engine, nullptr) << logger.lastError();
  Totals totals;
  runMatrix(
      *engine, [&](int t, int c, int r) { return cnnInput(weights.spec, t, c, r); }, false, 1e-5, totals);
  std::printf("[reliability] concurrency onednn %dx%d: runs %d, mismatches %d, failed %d\n", kThreads,
              kContextsPerThread, totals.runs.load(), totals.mismatches.load(), totals.failedRuns.load());
  EXPECT_EQ(totals.failedRuns.load(), 0) << logger.lastError();
  EXPECT_EQ(totals.mismatches.load(), 0);
  EXPECT_EQ(logger.errorCount(), 0);
}
#endif

// Contexts of one dynamic-shape engine run different batch and sequence sizes at the same time.
TEST(Concurrency, DynamicShapeContextsRunDifferentShapesAtOnce) {
  CapturingLogger logger;
  kiln_samples::BertSpec spec;
  spec.hidden = 16;
  spec.heads = 2;
  spec.ffn = 32;
  spec.maxSeq = 8;
  spec.optSeq = 4;
  kiln_samples::BertWeights const weights = kiln_samples::makeBertWeights(spec);
  std::vector<uint8_t> const plan =
      buildPlan(logger, [&](kiln::IBuilder& b, kiln::INetworkDefinition& net, kiln::IBuilderConfig& config) {
        return kiln_samples::addBertLayer(net, weights) && kiln_samples::addBertProfile(b, config, spec);
      });
  ASSERT_FALSE(plan.empty());
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  ASSERT_NE(runtime, nullptr);
  std::unique_ptr<kiln::ICudaEngine> engine = loadEngine(*runtime, plan);
  ASSERT_NE(engine, nullptr) << logger.lastError();
  Totals totals;
  runMatrix(
      *engine,
      [&](int t, int c, int r) {
        int64_t const batch = 1 + (t + r) % spec.maxBatch;
        int64_t const seq = 1 + (c * 3 + r) % spec.maxSeq;
        return randomInput("input", kiln::Dims3{batch, seq, spec.hidden},
                           static_cast<uint64_t>(77 + (t * kContextsPerThread + c) * kRounds + r));
      },
      true, 0.0, totals);
  std::printf("[reliability] concurrency dynamic-shape %dx%d: runs %d, mismatches %d, failed %d\n", kThreads,
              kContextsPerThread, totals.runs.load(), totals.mismatches.load(), totals.failedRuns.load());
  EXPECT_EQ(totals.failedRuns.load(), 0) << logger.lastError();
  EXPECT_EQ(totals.mismatches.load(), 0);
  EXPECT_EQ(logger.errorCount(), 0);
}

// Runtime, engine, inspector and the contexts (as one, destroyed from several threads at once) released in
// each of the 24 orders; after every release the contexts still alive run again and must give the same results.
TEST(Concurrency, ObjectsDestroyedInAnyOrderStaySafe) {
  CapturingLogger logger;
  kiln_samples::ResNetSpec spec = kiln_samples::smallResNetSpec();
  spec.height = 8;
  spec.width = 8;
  kiln_samples::ResNetWeights const weights = kiln_samples::makeResNetWeights(spec);
  std::vector<uint8_t> const plan = cnnPlan(logger, weights, true);
  ASSERT_FALSE(plan.empty());
  kiln_samples::HostTensor const input = cnnInput(spec, 0, 0, 0);
  Outputs expected;
  {
    std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
    std::unique_ptr<kiln::ICudaEngine> engine = loadEngine(*runtime, plan);
    ASSERT_NE(engine, nullptr);
    std::unique_ptr<kiln::IExecutionContext> context(engine->createExecutionContext());
    ASSERT_TRUE(kiln_samples::runContext(*context, {input}, expected));
  }
  std::vector<int> order = {0, 1, 2, 3};  // 0 runtime, 1 engine, 2 inspector, 3 contexts
  int orders = 0;
  int runs = 0;
  int mismatches = 0;
  do {
    std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
    ASSERT_NE(runtime, nullptr);
    std::unique_ptr<kiln::ICudaEngine> engine = loadEngine(*runtime, plan);
    ASSERT_NE(engine, nullptr) << logger.lastError();
    std::unique_ptr<kiln::IEngineInspector> inspector(engine->createEngineInspector());
    ASSERT_NE(inspector, nullptr);
    std::vector<std::unique_ptr<kiln::IExecutionContext>> contexts;
    for (int c = 0; c < kThreads; ++c) {
      contexts.emplace_back(engine->createExecutionContext());
      ASSERT_NE(contexts.back(), nullptr);
    }
    for (int what : order) {
      switch (what) {
        case 0: runtime.reset(); break;
        case 1: engine.reset(); break;
        case 2: inspector.reset(); break;
        default: {
          std::vector<std::thread> threads;
          for (auto& c : contexts) {
            threads.emplace_back([context = c.get()] { delete context; });
            c.release();
          }
          for (std::thread& th : threads) {
            th.join();
          }
          contexts.clear();
        }
      }
      // The survivors, concurrently.
      std::atomic<int> bad{0};
      std::vector<std::thread> threads;
      for (auto& c : contexts) {
        threads.emplace_back([&input, &expected, &bad, context = c.get()] {
          Outputs out;
          if (!kiln_samples::runContext(*context, {input}, out) || difference(out, expected, true) != 0.0) {
            ++bad;
          }
        });
      }
      for (std::thread& th : threads) {
        th.join();
      }
      runs += static_cast<int>(contexts.size());
      mismatches += bad.load();
      if (inspector != nullptr) {
        EXPECT_NE(inspector->getEngineInformation(kiln::LayerInformationFormat::kJSON), nullptr);
      }
    }
    ++orders;
  } while (std::next_permutation(order.begin(), order.end()));
  std::printf("[reliability] concurrency destruction orders: %d orders, runs %d, mismatches %d\n", orders, runs,
              mismatches);
  EXPECT_EQ(orders, 24);
  EXPECT_EQ(mismatches, 0) << logger.lastError();
  EXPECT_EQ(logger.internalErrorCount(), 0);
  EXPECT_EQ(logger.errorCount(), 0) << logger.lastError();
}

}  // namespace
}  // namespace kiln_e2e
