// gpu + reliability: CUDA concurrency stress on one engine (a small ResNet: convolutions, pooling, a mean
// reduction, a matrix multiply, softmax; fp32 with TF32 off and fp16, level 3), every output compared bit for bit
// with a single-threaded run of the same input (the CUDA tactics in it use no atomics, so each is deterministic):
// N threads x M contexts each on its own stream; contexts of several threads sharing one stream; CUDA graph
// replay from several threads; and runtime, engine, inspector and contexts destroyed in every order while work is
// queued (a context's destruction must wait for its own queued work). Totals print as
// "[reliability] cuda_concurrency ...: runs N, mismatches M".
#include <atomic>
#include <cstdio>

#include "gpu_reliability/gpu_reliability_util.h"

namespace kiln_e2e::gpu {
namespace {

using kiln_samples::HostTensor;
using Outputs = std::vector<OutputBytes>;

constexpr int kThreads = 4;
constexpr int kContexts = 3;
constexpr int kRounds = 6;

kiln_samples::ResNetWeights const& weights() {
  static kiln_samples::ResNetWeights const w = [] {
    kiln_samples::ResNetSpec s = kiln_samples::smallResNetSpec();
    s.height = 16;
    s.width = 16;
    return kiln_samples::makeResNetWeights(s);
  }();
  return w;
}

DefineFn resnet() {
  return [](kiln::IBuilder&, kiln::INetworkDefinition& n, kiln::IBuilderConfig&) {
    return kiln_samples::addResNet(n, weights());
  };
}

// Input of context c of thread t in round r (all different).
HostTensor inputOf(int t, int c, int r) {
  kiln_samples::ResNetSpec const& s = weights().spec;
  return randomInput("input", kiln::Dims4(s.batch, s.inChannels, s.height, s.width),
                     static_cast<uint64_t>(500 + (t * kContexts + c) * kRounds + r));
}

using Table = std::vector<std::vector<std::vector<HostTensor>>>;  // [thread][context][round]

Table inputTable() {
  Table in(kThreads, std::vector<std::vector<HostTensor>>(kContexts));
  for (int t = 0; t < kThreads; ++t)
    for (int c = 0; c < kContexts; ++c)
      for (int r = 0; r < kRounds; ++r) in[t][c].push_back(inputOf(t, c, r));
  return in;
}

struct Totals {
  std::atomic<int> runs{0};
  std::atomic<int> failed{0};
  std::atomic<int> mismatches{0};
};

// Every input run alone, one context, one stream, one thread.
std::vector<std::vector<std::vector<Outputs>>> singleThreaded(kiln::ICudaEngine& engine, Table const& in) {
  std::vector<std::vector<std::vector<Outputs>>> out(kThreads, std::vector<std::vector<Outputs>>(kContexts));
  std::unique_ptr<kiln::IExecutionContext> ctx(engine.createExecutionContext());
  EXPECT_NE(ctx, nullptr);
  if (!ctx) return out;
  DeviceIO io;
  EXPECT_TRUE(io.bind(*ctx, {in[0][0][0]}));
  cudaStream_t s = nullptr;
  EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  for (int t = 0; t < kThreads; ++t)
    for (int c = 0; c < kContexts; ++c)
      for (int r = 0; r < kRounds; ++r) {
        bool ok = io.upload({in[t][c][r]}, s) && ctx->enqueueV3(s) && io.download(s) &&
                  cudaStreamSynchronize(s) == cudaSuccess;
        EXPECT_TRUE(ok);
        out[t][c].push_back(io.outputs());
      }
  cudaStreamDestroy(s);
  return out;
}

std::vector<uint8_t> buildEngine(CapturingLogger& logger, bool fp16) {
  std::vector<uint8_t> plan = tryBuildGpu(logger, resnet(), {3, fp16});
  EXPECT_FALSE(plan.empty()) << logger.lastError();
  return plan;
}

// N threads x M contexts; with `shared`, every context of every thread enqueues on one stream.
void stress(bool fp16, bool shared, char const* label) {
  CapturingLogger logger;
  std::vector<uint8_t> const plan = buildEngine(logger, fp16);
  ASSERT_FALSE(plan.empty());
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  auto engine = loadEngine(*rt, plan);
  ASSERT_NE(engine, nullptr) << logger.lastError();
  Table const in = inputTable();
  auto const expected = singleThreaded(*engine, in);
  cudaStream_t sharedStream = nullptr;
  if (shared) {
    ASSERT_EQ(cudaStreamCreateWithFlags(&sharedStream, cudaStreamNonBlocking), cudaSuccess);
  }
  Totals totals;
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::unique_ptr<kiln::IExecutionContext>> ctxs;
      std::vector<std::unique_ptr<DeviceIO>> ios;
      std::vector<cudaStream_t> streams(kContexts, sharedStream);
      bool ready = true;
      for (int c = 0; c < kContexts; ++c) {
        ctxs.emplace_back(engine->createExecutionContext());
        ios.push_back(std::make_unique<DeviceIO>());
        ready = ready && ctxs.back() && ios.back()->bind(*ctxs.back(), {in[t][c][0]});
        if (!shared) ready = ready && cudaStreamCreateWithFlags(&streams[c], cudaStreamNonBlocking) == cudaSuccess;
      }
      while (!go.load()) std::this_thread::yield();
      for (int r = 0; ready && r < kRounds; ++r) {
        // Every context of this thread queued before any is waited for: they run at once.
        std::vector<bool> queued(kContexts, false);
        for (int c = 0; c < kContexts; ++c)
          queued[c] = ios[c]->upload({in[t][c][r]}, streams[c]) && ctxs[c]->enqueueV3(streams[c]) &&
                      ios[c]->download(streams[c]);
        for (int c = 0; c < kContexts; ++c) {
          ++totals.runs;
          if (!queued[c] || cudaStreamSynchronize(streams[c]) != cudaSuccess) {
            ++totals.failed;
          } else if (difference(ios[c]->outputs(), expected[t][c][r]) != 0.0) {
            ++totals.mismatches;
          }
        }
      }
      if (!ready) totals.failed += kRounds * kContexts;
      ctxs.clear();
      if (!shared)
        for (cudaStream_t s : streams)
          if (s) cudaStreamDestroy(s);
    });
  }
  go = true;
  for (auto& th : threads) th.join();
  if (sharedStream) cudaStreamDestroy(sharedStream);
  std::printf("[reliability] cuda_concurrency %s %dx%d: runs %d, mismatches %d, failed %d (bit-exact)\n", label,
              kThreads, kContexts, totals.runs.load(), totals.mismatches.load(), totals.failed.load());
  EXPECT_EQ(totals.runs.load(), kThreads * kContexts * kRounds);
  EXPECT_EQ(totals.failed.load(), 0) << logger.lastError();
  EXPECT_EQ(totals.mismatches.load(), 0);
  EXPECT_EQ(logger.errorCount(), 0) << logger.lastError();
}

TEST(CudaConcurrency, ThreadsAndContextsOnTheirOwnStreamsAreBitExactFp32) {
  KILN_REQUIRE_GPU();
  stress(false, false, "fp32 own streams");
}

TEST(CudaConcurrency, ThreadsAndContextsOnTheirOwnStreamsAreBitExactFp16) {
  KILN_REQUIRE_GPU();
  stress(true, false, "fp16 own streams");
}

TEST(CudaConcurrency, ContextsOfSeveralThreadsSharingOneStream) {
  KILN_REQUIRE_GPU();
  stress(false, true, "fp32 one shared stream");
}

// Each thread captures its context's enqueue into a CUDA graph and replays it with new inputs. Every thread's
// first run (outside a capture) finishes before any thread begins its capture: a first run loads the modules of
// the library kernels it uses (cuDNN, cuBLASLt, lazily, CUDA_MODULE_LOADING=LAZY being CUDA's default), and a
// module load may synchronize the context, which invalidates a capture in progress in another thread (seen on the
// H200 as cudaErrorStreamCaptureInvalidated in one thread's capture). docs/reliability.md says so for users.
TEST(CudaConcurrency, GraphReplayFromSeveralThreads) {
  KILN_REQUIRE_GPU();
  CapturingLogger logger;
  std::vector<uint8_t> const plan = buildEngine(logger, true);
  ASSERT_FALSE(plan.empty());
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  auto engine = loadEngine(*rt, plan);
  ASSERT_NE(engine, nullptr) << logger.lastError();
  Table const in = inputTable();
  auto const expected = singleThreaded(*engine, in);
  Totals totals;
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> firstRunsDone{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
      DeviceIO io;
      cudaStream_t s = nullptr;
      cudaGraph_t graph = nullptr;
      cudaGraphExec_t exec = nullptr;
      bool ok = ctx && io.bind(*ctx, {in[t][0][0]}) &&
                cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess && ctx->enqueueV3(s) &&
                cudaStreamSynchronize(s) == cudaSuccess;  // per-shape state outside the capture
      firstRunsDone.fetch_add(1);
      while (firstRunsDone.load() < kThreads) std::this_thread::yield();
      if (ok) {
        ok = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
        bool const enq = ok && ctx->enqueueV3(s);
        ok = ok && cudaStreamEndCapture(s, &graph) == cudaSuccess && enq &&
             cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
        if (!ok) errors[t] = "capture failed: " + logger.lastError();
      }
      for (int r = 0; ok && r < kRounds; ++r) {
        for (int c = 0; c < kContexts; ++c) {  // every input of this thread, through the one graph
          ++totals.runs;
          if (!io.upload({in[t][c][r]}, s) || cudaGraphLaunch(exec, s) != cudaSuccess || !io.download(s) ||
              cudaStreamSynchronize(s) != cudaSuccess) {
            ++totals.failed;
          } else if (difference(io.outputs(), expected[t][c][r]) != 0.0) {
            ++totals.mismatches;
          }
        }
      }
      if (exec) cudaGraphExecDestroy(exec);
      if (graph) cudaGraphDestroy(graph);
      ctx.reset();
      if (s) cudaStreamDestroy(s);
    });
  }
  for (auto& th : threads) th.join();
  for (auto const& e : errors) EXPECT_EQ(e, "");
  std::printf("[reliability] cuda_concurrency graph replay %d threads: runs %d, mismatches %d, failed %d (bit-exact)\n",
              kThreads, totals.runs.load(), totals.mismatches.load(), totals.failed.load());
  EXPECT_EQ(totals.runs.load(), kThreads * kContexts * kRounds);
  EXPECT_EQ(totals.failed.load(), 0);
  EXPECT_EQ(totals.mismatches.load(), 0);
}

// Runtime, engine, inspector and contexts (each with runs still queued on its own stream) destroyed in each of the
// 24 orders. A destroyed context's queued work must be finished when its destructor returns (checked with an event
// recorded before its last run), its outputs right; after each step the surviving contexts queue and check more
// runs; at the end Kiln holds on the device what it held before.
TEST(CudaConcurrency, DestructionInEveryOrderWithWorkQueued) {
  KILN_REQUIRE_GPU();
  std::string why;
  kiln::backends::DeviceBackend* dev = cudaBackend(&why);
  ASSERT_NE(dev, nullptr) << why;
  CapturingLogger logger;
  std::vector<uint8_t> const plan = buildEngine(logger, false);
  ASSERT_FALSE(plan.empty());
  Table const in = inputTable();
  std::vector<std::vector<std::vector<Outputs>>> expected;
  {
    std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
    auto engine = loadEngine(*rt, plan);
    ASSERT_NE(engine, nullptr);
    expected = singleThreaded(*engine, in);
  }
  kiln::backends::DeviceResourceCounts const baseline = dev->outstanding();
  constexpr int kQueued = 6;              // runs queued per context before a destruction step
  std::vector<int> order = {0, 1, 2, 3};  // 0 runtime, 1 engine, 2 inspector, 3 contexts
  int orders = 0;
  int runs = 0;
  int mismatches = 0;
  int notWaited = 0;
  do {
    std::vector<cudaStream_t> streams(kContexts, nullptr);
    std::vector<cudaEvent_t> beforeLast(kContexts, nullptr);
    for (int c = 0; c < kContexts; ++c) {
      ASSERT_EQ(cudaStreamCreateWithFlags(&streams[c], cudaStreamNonBlocking), cudaSuccess);
      ASSERT_EQ(cudaEventCreate(&beforeLast[c]), cudaSuccess);
    }
    std::vector<std::unique_ptr<DeviceIO>> ios;  // test memory: outlives the contexts
    std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
    ASSERT_NE(runtime, nullptr);
    std::unique_ptr<kiln::ICudaEngine> engine = loadEngine(*runtime, plan);
    ASSERT_NE(engine, nullptr) << logger.lastError();
    std::unique_ptr<kiln::IEngineInspector> inspector(engine->createEngineInspector());
    ASSERT_NE(inspector, nullptr);
    std::vector<std::unique_ptr<kiln::IExecutionContext>> contexts;
    for (int c = 0; c < kContexts; ++c) {
      contexts.emplace_back(engine->createExecutionContext());
      ios.push_back(std::make_unique<DeviceIO>());
      ASSERT_NE(contexts.back(), nullptr) << logger.lastError();
      ASSERT_TRUE(ios.back()->bind(*contexts.back(), {in[0][c][0]}));
    }
    int round = 0;
    // Queues kQueued runs of round `round`'s input on every live context, then the output copies.
    auto queue = [&] {
      for (int c = 0; c < kContexts; ++c) {
        if (!contexts[c]) continue;
        bool ok = ios[c]->upload({in[0][c][round % kRounds]}, streams[c]);
        for (int q = 0; ok && q < kQueued; ++q) {
          if (q == kQueued - 1) ok = cudaEventRecord(beforeLast[c], streams[c]) == cudaSuccess;
          ok = ok && contexts[c]->enqueueV3(streams[c]);
        }
        ok = ok && ios[c]->download(streams[c]);
        EXPECT_TRUE(ok) << logger.lastError();
      }
    };
    auto check = [&](int c) {
      ++runs;
      if (cudaStreamSynchronize(streams[c]) != cudaSuccess ||
          difference(ios[c]->outputs(), expected[0][c][round % kRounds]) != 0.0)
        ++mismatches;
    };
    queue();
    for (int what : order) {
      switch (what) {
        case 0:
          runtime.reset();
          break;
        case 1:
          engine.reset();
          break;
        case 2:
          inspector.reset();
          break;
        default: {
          // From several threads at once, each while its work is queued.
          std::vector<std::thread> threads;
          std::atomic<int> early{0};
          for (int c = 0; c < kContexts; ++c) {
            threads.emplace_back([&, c] {
              contexts[c].reset();
              if (cudaEventQuery(beforeLast[c]) != cudaSuccess) ++early;
            });
          }
          for (auto& th : threads) th.join();
          notWaited += early.load();
          for (int c = 0; c < kContexts; ++c) check(c);
        }
      }
      // The survivors: check what was queued, then queue the next round.
      for (int c = 0; c < kContexts; ++c)
        if (contexts[c]) check(c);
      ++round;
      queue();
      if (inspector) {
        EXPECT_NE(inspector->getEngineInformation(kiln::LayerInformationFormat::kJSON), nullptr);
      }
    }
    ios.clear();
    for (int c = 0; c < kContexts; ++c) {
      cudaStreamDestroy(streams[c]);
      cudaEventDestroy(beforeLast[c]);
    }
    ++orders;
    kiln::backends::DeviceResourceCounts const after = dev->outstanding();
    EXPECT_TRUE(after == baseline) << "order " << orders << ": Kiln holds " << describe(after) << ", "
                                   << describe(baseline) << " before";
  } while (std::next_permutation(order.begin(), order.end()));
  std::printf(
      "[reliability] cuda_concurrency destruction orders: %d orders, runs %d, mismatches %d, contexts destroyed "
      "before their queued work finished %d\n",
      orders, runs, mismatches, notWaited);
  EXPECT_EQ(orders, 24);
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(notWaited, 0);
  EXPECT_EQ(logger.internalErrorCount(), 0);
  EXPECT_EQ(logger.errorCount(), 0) << logger.lastError();
}

}  // namespace
}  // namespace kiln_e2e::gpu
