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
  explicit ScriptedDevice(std::vector<float> times) : times_(std::move(times)) {}
  int runs = 0;

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
    size_t i = static_cast<size_t>(runs - 1);
    return i < times_.size() ? times_[i] : times_.back();
  }
  Status streamWaitEvent(void*, void*) override { return Status::ok(); }
  bool isCapturing(void*) override { return false; }
  Status beginCapture(void*) override { return Status::ok(); }
  Result<void*> endCapture(void*) override { return nullptr; }
  Status launchGraph(void*, void*) override { return Status::ok(); }
  void destroyGraph(void*) override {}
  void rangePush(char const*) override {}
  void rangePop() override {}
  Status synchronizeEvent(void*) override { return Status::ok(); }
  Status admitAllocation(size_t, char const*) override { return Status::ok(); }
  int64_t setAllocFailAt(int64_t) override { return 0; }
  int64_t allocCount() const override { return 0; }
  backends::DeviceResourceCounts outstanding() const override { return {}; }

 private:
  std::vector<float> times_;
};

Result<double> timeOn(ScriptedDevice& dev, int iterations, double best) {
  return medianDeviceMs(&dev, nullptr, iterations, best, [&] {
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

}  // namespace
}  // namespace kiln::builder
