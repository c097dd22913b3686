// Tests of the builder's event-timed GPU loop (device_timing.cc) on a scripted device: which runs are counted,
// which one decides the early cut, and that the warm-up (lazy module loading on a real GPU) never does.
#include "builder/device_timing.h"

#include <gtest/gtest.h>

#include <vector>

namespace kiln::builder {
namespace {

// Elapsed times come from a script, one per run (warm-up first); everything else succeeds and does nothing.
class ScriptedDevice final : public backends::DeviceBackend {
 public:
  explicit ScriptedDevice(std::vector<float> times, float graphMs = 0) : times_(std::move(times)), graphMs_(graphMs) {}
  int runs = 0;
  int capturedRuns = 0;  // runs enqueued while capturing
  int graphLaunches = 0;
  bool capturing = false;
  bool captureRefused = false;  // beginCapture fails

  int32_t abiVersion() const override { return backends::kDeviceBackendAbiVersion; }
  std::string name() const override { return "scripted"; }
  std::string target() const override { return "sm_test"; }
  std::string deviceDescription() const override { return "scripted timing device"; }
  std::vector<backends::Tactic> tactics() override { return {}; }
  Result<void*> allocate(size_t, void*) override { return nullptr; }
  void release(void*, void*) override {}
  Status copy(void*, void const*, size_t, backends::CopyKind, void*) override { return Status::ok(); }
  Status fill(void*, int32_t, size_t, void*) override { return Status::ok(); }
  Status synchronize(void*) override { return Status::ok(); }
  Result<void*> createStream() override { return nullptr; }
  void destroyStream(void*) override {}
  Result<void*> createEvent() override { return static_cast<void*>(this); }
  void destroyEvent(void*) override {}
  Status recordEvent(void*, void*) override { return Status::ok(); }
  Result<float> elapsedMs(void*, void*) override {
    if (graphLaunches > 0) return graphMs_;  // a replay of the captured runs
    size_t i = static_cast<size_t>(runs - 1);
    return i < times_.size() ? times_[i] : times_.back();
  }
  Status streamWaitEvent(void*, void*) override { return Status::ok(); }
  bool isCapturing(void*) override { return capturing; }
  Status beginCapture(void*) override {
    if (captureRefused) return unsupported("scripted device: no capture");
    capturing = true;
    return Status::ok();
  }
  Result<void*> endCapture(void*) override {
    capturing = false;
    return static_cast<void*>(this);
  }
  Status launchGraph(void*, void*) override {
    ++graphLaunches;
    return Status::ok();
  }
  void destroyGraph(void*) override {}
  void rangePush(char const*) override {}
  void rangePop() override {}
  Status synchronizeEvent(void*) override { return Status::ok(); }
  Status prefetchToL2(backends::DeviceRange const*, size_t, void*) override { return Status::ok(); }
  Status admitAllocation(size_t, char const*) override { return Status::ok(); }
  int64_t setAllocFailAt(int64_t) override { return 0; }
  int64_t allocCount() const override { return 0; }
  backends::DeviceResourceCounts outstanding() const override { return {}; }

 private:
  std::vector<float> times_;
  float graphMs_;
};

Result<double> timeOn(ScriptedDevice& dev, int iterations, double best, bool failWhenCaptured = false) {
  return medianDeviceMs(&dev, nullptr, iterations, best, [&] {
    if (dev.capturing) {
      if (failWhenCaptured) return internalError("cannot run in a capture");
      ++dev.capturedRuns;
      return Status::ok();
    }
    ++dev.runs;
    return Status::ok();
  });
}

TEST(DeviceTiming, ASlowWarmUpDoesNotCutAFastCandidate) {
  // 4 ms of lazy module loading in the warm-up, then 0.1 ms runs: against a best of 0.2 ms this is the winner.
  ScriptedDevice dev({4.0f, 0.1f, 0.1f, 0.12f, 0.1f, 0.1f});
  auto ms = timeOn(dev, 5, 0.2);
  ASSERT_TRUE(ms.isOk()) << ms.status().message();
  EXPECT_NEAR(*ms, 0.1, 1e-6);
  EXPECT_EQ(dev.runs, 6);  // the warm-up and five timed runs
}

TEST(DeviceTiming, ASlowFirstTimedRunCutsTheCandidate) {
  ScriptedDevice dev({4.0f, 1.0f, 1.0f, 1.0f});
  auto ms = timeOn(dev, 5, 0.2);
  ASSERT_TRUE(ms.isOk()) << ms.status().message();
  EXPECT_NEAR(*ms, 1.0, 1e-6);
  EXPECT_EQ(dev.runs, 2);  // the warm-up and one timed run
}

TEST(DeviceTiming, MedianOfTheTimedRunsWithoutABest) {
  ScriptedDevice dev({9.0f, 0.3f, 0.1f, 0.2f});
  auto ms = timeOn(dev, 3, 0);
  ASSERT_TRUE(ms.isOk()) << ms.status().message();
  EXPECT_NEAR(*ms, 0.2, 1e-6);
  EXPECT_EQ(dev.runs, 4);
}

TEST(DeviceTiming, StopsOnceAHundredMillisecondsWereSpent) {
  ScriptedDevice dev({1.0f, 60.0f, 60.0f, 60.0f});
  auto ms = timeOn(dev, 10, 0);
  ASSERT_TRUE(ms.isOk()) << ms.status().message();
  EXPECT_EQ(dev.runs, 3);  // the warm-up does not count toward the 100 ms
}

TEST(DeviceTiming, ShortRunsAreTimedFromACapturedGraph) {
  // 0.02 ms between the events of one enqueue (launch latency included); 16 captured runs replay in 0.08 ms.
  ScriptedDevice dev({1.0f, 0.02f, 0.02f, 0.02f}, 0.08f);
  auto ms = timeOn(dev, 3, 0);
  ASSERT_TRUE(ms.isOk()) << ms.status().message();
  EXPECT_NEAR(*ms, 0.08 / kGraphTimedRuns, 1e-6);
  EXPECT_EQ(dev.runs, 4);
  EXPECT_EQ(dev.capturedRuns, kGraphTimedRuns);
  EXPECT_EQ(dev.graphLaunches, 4);  // one untimed, three timed
  EXPECT_FALSE(dev.capturing);
}

TEST(DeviceTiming, LongRunsKeepTheirEventTimes) {
  ScriptedDevice dev({1.0f, 0.2f, 0.2f}, 0.08f);
  auto ms = timeOn(dev, 2, 0);
  ASSERT_TRUE(ms.isOk()) << ms.status().message();
  EXPECT_NEAR(*ms, 0.2, 1e-6);
  EXPECT_EQ(dev.graphLaunches, 0);
}

TEST(DeviceTiming, AShortFirstRunDoesNotCutTheCandidate) {
  // Event time 0.03 ms against a best of 0.01 (itself graph-timed): the graph time, 0.005 ms, decides.
  ScriptedDevice dev({1.0f, 0.03f, 0.03f}, 0.08f);
  auto ms = timeOn(dev, 2, 0.01);
  ASSERT_TRUE(ms.isOk()) << ms.status().message();
  EXPECT_NEAR(*ms, 0.005, 1e-6);
  EXPECT_EQ(dev.runs, 3);
}

TEST(DeviceTiming, WithoutACaptureTheEventTimesStand) {
  ScriptedDevice refused({1.0f, 0.02f, 0.02f}, 0.08f);
  refused.captureRefused = true;
  auto ms = timeOn(refused, 2, 0);
  ASSERT_TRUE(ms.isOk()) << ms.status().message();
  EXPECT_NEAR(*ms, 0.02, 1e-6);
  // A run that fails while captured: the capture is ended, nothing is replayed, the event times stand.
  ScriptedDevice failing({1.0f, 0.02f, 0.02f}, 0.08f);
  ms = timeOn(failing, 2, 0, /*failWhenCaptured=*/true);
  ASSERT_TRUE(ms.isOk()) << ms.status().message();
  EXPECT_NEAR(*ms, 0.02, 1e-6);
  EXPECT_FALSE(failing.capturing);
  EXPECT_EQ(failing.graphLaunches, 0);
}

}  // namespace
}  // namespace kiln::builder
