// gpu + reliability: the k-th device allocation (or stream, event, graph, cuBLASLt/cuDNN handle creation) fails,
// for every k on the build path and on the load + context + enqueue + sync path of small models built for kGPU at
// level 0 and at level 3 (timed tactics): a clean failure naming the injected fault, or success with the right
// results; no sticky CUDA error; Kiln's outstanding device allocations, bytes, streams, events and graphs back at
// their baseline once the objects are gone; and the next clean attempt builds and runs correctly. Also a user
// IGpuAllocator that fails its k-th allocate. Figures print as "[reliability] gpu_fault_injection ...".
// KILN_GPU_FAULT_STRIDE=s tries every s-th k only (default 1: every k).
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "gpu_reliability/gpu_reliability_util.h"

namespace kiln_e2e::gpu {
namespace {

using kiln_samples::HostTensor;

kiln_samples::ResNetWeights const& convWeights() {
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

kiln_samples::BertWeights const& bertWeights() {
  static kiln_samples::BertWeights const w = [] {
    kiln_samples::BertSpec s;
    s.hidden = 16;
    s.heads = 2;
    s.ffn = 32;
    s.maxSeq = 8;
    s.optSeq = 4;
    return kiln_samples::makeBertWeights(s);
  }();
  return w;
}

// x [2, 6] -> NonZero (data-dependent [2, count] int64 output) and x + x.
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

// x [2, 256] through two 256 x 256 GEMMs: 256 KB of weights each, so the engine prefetches the second's into L2 and
// each context makes the prefetch's side stream and events on its first run (fault points of load + run).
bool defineGemms(kiln::IBuilder&, kiln::INetworkDefinition& net, kiln::IBuilderConfig&) {
  static std::vector<float> const w = [] {
    std::vector<float> v(2 * 256 * 256);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>((i * 7919) % 201) - 100) / 1600.f;
    return v;
  }();
  kiln::ITensor* x = net.addInput("x", kiln::DataType::kFLOAT, kiln::Dims2{2, 256});
  if (x == nullptr) return false;
  for (int l = 0; l < 2; ++l) {
    kiln::IConstantLayer* c = net.addConstant(
        kiln::Dims2{256, 256}, kiln::Weights{kiln::DataType::kFLOAT, w.data() + l * 256 * 256, 256 * 256});
    if (c == nullptr) return false;
    kiln::IMatrixMultiplyLayer* mm =
        net.addMatrixMultiply(*x, kiln::MatrixOperation::kNONE, *c->getOutput(0), kiln::MatrixOperation::kNONE);
    if (mm == nullptr) return false;
    x = mm->getOutput(0);
  }
  x->setName("y");
  net.markOutput(*x);
  return true;
}

struct Model {
  std::string name;
  DefineFn define;
  std::vector<HostTensor> inputs;
  std::vector<OutputBytes> expected;  // filled from the CPU reference, or by hand
};

std::vector<Model> models() {
  std::vector<Model> ms;
  kiln_samples::ResNetSpec const& cs = convWeights().spec;
  ms.push_back({"convnet",
                [](kiln::IBuilder&, kiln::INetworkDefinition& net, kiln::IBuilderConfig&) {
                  return kiln_samples::addResNet(net, convWeights());
                },
                {randomInput("input", kiln::Dims4(cs.batch, cs.inChannels, cs.height, cs.width), 9)},
                {}});
  ms.push_back({"bert_dynamic",
                [](kiln::IBuilder& b, kiln::INetworkDefinition& net, kiln::IBuilderConfig& config) {
                  return kiln_samples::addBertLayer(net, bertWeights()) &&
                         kiln_samples::addBertProfile(b, config, bertWeights().spec);
                },
                {randomInput("input", kiln::Dims3{2, 3, 16}, 3)},
                {}});
  ms.push_back({"gemms", defineGemms, {randomInput("x", kiln::Dims2{2, 256}, 5)}, {}});
  Model nz{"nonzero", defineNonZero, {{"x", kiln::Dims2{2, 6}, {0, 1, 0, 2, 3, 0, 0, 0, 4, 0, 5, 6}}}, {}};
  // Outputs in the engine's order (indices, then twice): NonZero's [2, 6] int64 row/column indices.
  std::vector<int64_t> idx = {0, 0, 0, 1, 1, 1, 1, 3, 4, 2, 4, 5};
  OutputBytes indices{"indices", kiln::DataType::kINT64, kiln::Dims2{2, 6}, {}};
  indices.data.resize(idx.size() * 8);
  std::memcpy(indices.data.data(), idx.data(), indices.data.size());
  std::vector<float> tw;
  for (float v : nz.inputs[0].data) tw.push_back(v + v);
  OutputBytes twice{"twice", kiln::DataType::kFLOAT, kiln::Dims2{2, 6}, {}};
  twice.data.resize(tw.size() * 4);
  std::memcpy(twice.data.data(), tw.data(), twice.data.size());
  nz.expected = {indices, twice};
  ms.push_back(std::move(nz));
  return ms;
}

// A user allocator (cudaMalloc) that can fail its k-th allocate, and checks that Kiln frees memory only once the
// work queued with it has finished (`pending`: an event the test records after its last enqueue).
class TestGpuAllocator : public kiln::IGpuAllocator {
 public:
  void* allocate(uint64_t size, uint64_t, kiln::AllocatorFlags) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    if (++count_ == failAt_) return nullptr;
    void* p = nullptr;
    if (cudaMalloc(&p, std::max<uint64_t>(size, 1)) != cudaSuccess) return nullptr;
    live_[p] = size;
    return p;
  }
  bool deallocate(void* memory) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!memory) return true;
    auto it = live_.find(memory);
    if (it == live_.end()) {
      ++unknownFrees_;
      return false;
    }
    if (pending_ && cudaEventQuery(pending_) == cudaErrorNotReady) ++earlyFrees_;
    live_.erase(it);
    cudaFree(memory);
    return true;
  }
  void reset(int64_t failAt) {
    std::lock_guard<std::mutex> lock(mu_);
    failAt_ = failAt;
    count_ = 0;
  }
  void setPending(cudaEvent_t e) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = e;
  }
  int64_t count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return count_;
  }
  size_t live() const {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.size();
  }
  int earlyFrees() const {
    std::lock_guard<std::mutex> lock(mu_);
    return earlyFrees_;
  }
  int unknownFrees() const {
    std::lock_guard<std::mutex> lock(mu_);
    return unknownFrees_;
  }

 private:
  mutable std::mutex mu_;
  int64_t failAt_ = 0;
  int64_t count_ = 0;
  std::map<void*, uint64_t> live_;
  cudaEvent_t pending_ = nullptr;
  int earlyFrees_ = 0;
  int unknownFrees_ = 0;
};

// Loads `plan`, makes a context, runs it once on a test stream and fetches the outputs.
bool loadAndRun(kiln::ILogger& logger, std::vector<uint8_t> const& plan, std::vector<HostTensor> const& inputs,
                std::vector<OutputBytes>& out, kiln::IGpuAllocator* allocator = nullptr) {
  cudaStream_t s = nullptr;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return false;
  bool ok = false;
  {
    std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
    if (runtime && allocator) runtime->setGpuAllocator(allocator);
    std::unique_ptr<kiln::ICudaEngine> engine(runtime ? runtime->deserializeCudaEngine(plan.data(), plan.size())
                                                      : nullptr);
    std::unique_ptr<kiln::IExecutionContext> ctx(engine ? engine->createExecutionContext() : nullptr);
    DeviceIO io;
    ok = ctx && io.bind(*ctx, inputs) && ctx->enqueueV3(s) && io.download(s) && cudaStreamSynchronize(s) == cudaSuccess;
    if (ok) out = io.outputs();
  }
  cudaStreamDestroy(s);
  return ok;
}

struct Tally {
  int64_t points = 0;
  int tried = 0;
  int survived = 0;
  int failedCleanly = 0;
  int succeeded = 0;
  std::vector<std::string> failures;
};

int64_t stride() {
  char const* s = std::getenv("KILN_GPU_FAULT_STRIDE");
  long v = s ? std::strtol(s, nullptr, 10) : 1;
  return v < 1 ? 1 : v;
}

// Fails fault point k = 1..total of `step` (run on a fresh thread each time; counted after one warm run that
// fills process-wide caches), then checks the outcome, the CUDA error state, Kiln's outstanding device
// resources, and (`check`, faults off) what a step that reported success produced; then a clean step.
void walk(kiln::backends::DeviceBackend& dev, std::string const& what,
          std::function<bool(CapturingLogger&)> const& step, std::function<std::string()> const& check, Tally& t) {
  {
    CapturingLogger warm;
    bool ok = false;
    onFreshThread([&] { ok = step(warm); });
    ASSERT_TRUE(ok) << what << ": " << warm.lastError();
    ASSERT_EQ(check(), "") << what;
  }
  kiln::backends::DeviceResourceCounts const baseline = dev.outstanding();
  CapturingLogger counting(false);
  dev.setAllocFailAt(int64_t{1} << 40);  // count without failing
  bool counted = false;
  onFreshThread([&] { counted = step(counting); });
  int64_t const total = dev.allocCount();
  dev.setAllocFailAt(0);
  ASSERT_TRUE(counted) << what << ": " << counting.lastError();
  std::printf("[reliability] gpu_fault_injection %s: %lld device fault points\n", what.c_str(),
              static_cast<long long>(total));
  t.points += total;
  for (int64_t k = 1; k <= total; k += stride()) {
    ++t.tried;
    std::string const where = what + ", fault point " + std::to_string(k) + " of " + std::to_string(total);
    CapturingLogger logger(false);
    dev.setAllocFailAt(k);
    bool ok = false;
    bool const clean = onFreshThread([&] { ok = step(logger); });
    dev.setAllocFailAt(0);
    if (!clean) {
      t.failures.push_back(where + ": a CUDA error was left as the thread's last error");
      continue;
    }
    if (!ok && logger.lastError().find("injected") == std::string::npos) {
      t.failures.push_back(where + ": the error does not name the injected failure: '" + logger.lastError() + "'");
      continue;
    }
    if (logger.internalErrorCount() != 0) {
      t.failures.push_back(where + ": internal error: " + logger.lastError());
      continue;
    }
    kiln::backends::DeviceResourceCounts const after = dev.outstanding();
    if (!(after == baseline)) {
      t.failures.push_back(where + ": Kiln holds " + describe(after) + " after the objects are gone, " +
                           describe(baseline) + " before");
      continue;
    }
    if (ok) {
      std::string const wrong = check();
      if (!wrong.empty()) {
        t.failures.push_back(where + ": succeeded but " + wrong);
        continue;
      }
    }
    CapturingLogger next(false);
    bool again = false;
    onFreshThread([&] { again = step(next); });
    std::string const wrong = again ? check() : "";
    if (!again || !wrong.empty()) {
      t.failures.push_back(where + " (" + (ok ? "it succeeded" : "it failed: " + logger.lastError()) +
                           "): the next attempt, without a fault, " + (again ? wrong : "failed: " + next.lastError()));
      continue;
    }
    ++(ok ? t.succeeded : t.failedCleanly);
    ++t.survived;
  }
}

void report(char const* path, Tally const& t) {
  std::printf(
      "[reliability] gpu_fault_injection %s: fault points %lld, tried %d, survived %d (failed cleanly %d, "
      "succeeded with the right results %d), stride %lld\n",
      path, static_cast<long long>(t.points), t.tried, t.survived, t.failedCleanly, t.succeeded,
      static_cast<long long>(stride()));
  EXPECT_EQ(t.survived, t.tried) << path;
  EXPECT_TRUE(t.failures.empty()) << path << ": " << t.failures.size() << " failures, first: " << t.failures.front();
  for (size_t i = 1; i < std::min<size_t>(t.failures.size(), 5); ++i) ADD_FAILURE() << t.failures[i];
}

constexpr double kTolerance = 1e-4;  // fp32, TF32 off; a dropped candidate may change the tactic

TEST(GpuFaultInjection, EveryDeviceAllocationFailureOnBuildAndRunIsClean) {
  KILN_REQUIRE_GPU();
  std::string why;
  kiln::backends::DeviceBackend* dev = cudaBackend(&why);
  ASSERT_NE(dev, nullptr) << why;
  Tally build;
  Tally run;
  for (Model m : models()) {
    if (m.expected.empty()) {
      CapturingLogger ref;
      std::vector<uint8_t> const cpuPlan = buildPlan(ref, m.define);
      ASSERT_FALSE(cpuPlan.empty()) << m.name;
      std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(ref));
      auto engine = loadEngine(*rt, cpuPlan);
      ASSERT_NE(engine, nullptr) << m.name << ": " << ref.lastError();
      std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
      std::vector<HostTensor> outs;
      ASSERT_TRUE(kiln_samples::runContext(*ctx, m.inputs, outs)) << m.name << ": " << ref.lastError();
      m.expected = toBytes(outs);
    }
    for (int32_t level : {0, 3}) {
      std::string const name = m.name + " level " + std::to_string(level);
      GpuBuild const options{level, false, 1};  // one timed run per candidate: the walk builds hundreds of times
      auto rightResults = [&](std::vector<OutputBytes> const& out) -> std::string {
        double const e = difference(out, m.expected);
        return e <= kTolerance ? "" : "its outputs differ from the reference (error " + std::to_string(e) + ")";
      };
      // Build path: a build that survives its fault must still give a plan computing the right outputs.
      std::vector<uint8_t> built;
      walk(
          *dev, name + " build",
          [&](CapturingLogger& logger) {
            built = tryBuildGpu(logger, m.define, options);
            return !built.empty();
          },
          [&]() -> std::string {
            std::vector<OutputBytes> out;
            CapturingLogger runLogger(false);
            bool ok = false;
            onFreshThread([&] { ok = loadAndRun(runLogger, built, m.inputs, out); });
            if (!ok) return "its plan does not run: " + runLogger.lastError();
            return rightResults(out);
          },
          build);
      // Load + context + enqueue + sync, on a clean plan.
      CapturingLogger clean;
      std::vector<uint8_t> const plan = tryBuildGpu(clean, m.define, options);
      ASSERT_FALSE(plan.empty()) << name << ": " << clean.lastError();
      std::vector<OutputBytes> out;
      walk(
          *dev, name + " load+run", [&](CapturingLogger& logger) { return loadAndRun(logger, plan, m.inputs, out); },
          [&]() -> std::string { return rightResults(out); }, run);
      // The same with the activation memory from a user IGpuAllocator (libkiln's fault point for it).
      if (level == 0) {
        TestGpuAllocator allocator;
        walk(
            *dev, name + " load+run with an IGpuAllocator",
            [&](CapturingLogger& logger) { return loadAndRun(logger, plan, m.inputs, out, &allocator); },
            [&]() -> std::string {
              if (allocator.live() != 0) return std::to_string(allocator.live()) + " allocator blocks are still live";
              return rightResults(out);
            },
            run);
        EXPECT_EQ(allocator.live(), 0U) << name;
        EXPECT_EQ(allocator.unknownFrees(), 0) << name;
      }
    }
  }
  report("build", build);
  report("load+run", run);
  RecordProperty("build_tried", build.tried);
  RecordProperty("build_survived", build.survived);
  RecordProperty("run_tried", run.tried);
  RecordProperty("run_survived", run.survived);
}

// A user IGpuAllocator failing its k-th allocate: contexts made with kSTATIC get their memory at creation (the
// k-th creation fails), kON_PROFILE_CHANGE at the first enqueue (the k-th run fails); the others run correctly,
// Kiln frees every block, and only once the work queued with it has finished.
TEST(GpuFaultInjection, UserAllocatorFailingItsKthAllocateIsClean) {
  KILN_REQUIRE_GPU();
  Model const m = models()[0];
  CapturingLogger ref;
  std::vector<uint8_t> const cpuPlan = buildPlan(ref, m.define);
  std::unique_ptr<kiln::IRuntime> cpuRt(kiln::createInferRuntime(ref));
  auto cpuEngine = loadEngine(*cpuRt, cpuPlan);
  ASSERT_NE(cpuEngine, nullptr);
  std::unique_ptr<kiln::IExecutionContext> cpuCtx(cpuEngine->createExecutionContext());
  std::vector<HostTensor> refOut;
  ASSERT_TRUE(kiln_samples::runContext(*cpuCtx, m.inputs, refOut));
  std::vector<OutputBytes> const expected = toBytes(refOut);
  CapturingLogger buildLog;
  std::vector<uint8_t> const plan = tryBuildGpu(buildLog, m.define, {0, false});
  ASSERT_FALSE(plan.empty()) << buildLog.lastError();

  constexpr int kContexts = 3;
  int tried = 0;
  int survived = 0;
  int early = 0;
  for (auto strategy : {kiln::ExecutionContextAllocationStrategy::kSTATIC,
                        kiln::ExecutionContextAllocationStrategy::kON_PROFILE_CHANGE}) {
    for (int64_t k = 1; k <= kContexts; ++k) {
      ++tried;
      SCOPED_TRACE("strategy " + std::to_string(static_cast<int>(strategy)) + ", allocation " + std::to_string(k));
      TestGpuAllocator allocator;
      allocator.reset(k);
      CapturingLogger logger(false);
      cudaStream_t s = nullptr;
      ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
      // lastRun[c]: recorded just before context c's last run (so before its completion, race-free).
      std::vector<cudaEvent_t> lastRun(kContexts, nullptr);
      for (auto& e : lastRun) ASSERT_EQ(cudaEventCreate(&e), cudaSuccess);
      int failures = 0;
      int wrong = 0;
      {
        std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
        rt->setGpuAllocator(&allocator);
        auto engine = loadEngine(*rt, plan);
        ASSERT_NE(engine, nullptr) << logger.lastError();
        std::vector<std::unique_ptr<DeviceIO>> ios;  // declared first: outlives the contexts
        std::vector<std::unique_ptr<kiln::IExecutionContext>> contexts;
        for (int c = 0; c < kContexts; ++c) {
          contexts.emplace_back(engine->createExecutionContext(strategy));
          ios.push_back(std::make_unique<DeviceIO>());
          if (!contexts.back()) {
            ++failures;
            EXPECT_NE(logger.lastError().find("IGpuAllocator"), std::string::npos) << logger.lastError();
            continue;
          }
          ASSERT_TRUE(ios.back()->bind(*contexts.back(), m.inputs));
        }
        for (int c = 0; c < kContexts; ++c) {
          if (!contexts[c]) continue;
          if (!contexts[c]->enqueueV3(s)) {
            ++failures;
            EXPECT_NE(logger.lastError().find("IGpuAllocator"), std::string::npos) << logger.lastError();
            contexts[c].reset();
            continue;
          }
          ASSERT_TRUE(ios[c]->download(s));
        }
        ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
        for (int c = 0; c < kContexts; ++c)
          if (contexts[c] && !(difference(ios[c]->outputs(), expected) <= kTolerance)) ++wrong;
        // Queue more work, then destroy the contexts while it runs: each must wait for its own work before its
        // memory goes back to the allocator.
        for (int c = 0; c < kContexts; ++c) {
          if (!contexts[c]) continue;
          for (int r = 0; r < 8; ++r) {
            if (r == 7) {
              ASSERT_EQ(cudaEventRecord(lastRun[c], s), cudaSuccess);
            }
            EXPECT_TRUE(contexts[c]->enqueueV3(s)) << logger.lastError();
          }
        }
        for (int c = 0; c < kContexts; ++c) {
          allocator.setPending(lastRun[c]);
          contexts[c].reset();
        }
        allocator.setPending(nullptr);
        EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      }
      early += allocator.earlyFrees();
      EXPECT_EQ(failures, 1) << logger.lastError();
      EXPECT_EQ(wrong, 0);
      EXPECT_EQ(allocator.live(), 0U);
      EXPECT_EQ(allocator.earlyFrees(), 0) << "memory went back to the allocator while work queued with it ran";
      EXPECT_EQ(logger.internalErrorCount(), 0);
      EXPECT_EQ(cudaGetLastError(), cudaSuccess);
      if (failures == 1 && wrong == 0 && allocator.live() == 0 && allocator.earlyFrees() == 0) ++survived;
      for (auto& e : lastRun) cudaEventDestroy(e);
      cudaStreamDestroy(s);
    }
  }
  std::printf("[reliability] gpu_fault_injection user IGpuAllocator: survived %d / tried %d, early frees %d\n",
              survived, tried, early);
  EXPECT_EQ(survived, tried);
}

}  // namespace
}  // namespace kiln_e2e::gpu
