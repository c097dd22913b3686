// The builder's event-timed loop on the GPU (see device_timing.h).
#include "builder/device_timing.h"

#include <algorithm>
#include <vector>

namespace kiln::builder {
namespace {

// Median milliseconds per run of `run` replayed kGraphTimedRuns at a time from one captured CUDA graph: up to
// max(1, iterations) replays after one untimed, stopping once 100 ms were spent. An error where the capture, the
// graph or a run fails (the capture is always ended first).
Result<double> graphMedianMs(backends::DeviceBackend* dev, void* stream, int iterations, void* e0, void* e1,
                             std::function<Status()> const& run) {
  KILN_RETURN_IF_ERROR(dev->beginCapture(stream));
  Status s = Status::ok();
  for (int r = 0; s.isOk() && r < kGraphTimedRuns; ++r) s = run();
  auto graph = dev->endCapture(stream);
  if (!s.isOk() || !graph) {
    if (graph) dev->destroyGraph(*graph);
    return s.isOk() ? graph.status() : s;
  }
  void* exec = *graph;
  std::vector<double> times;
  double total = 0;
  s = dev->launchGraph(exec, stream);  // untimed: uploads the graph
  for (int i = 0; s.isOk() && i < std::max(1, iterations); ++i) {
    s = dev->recordEvent(e0, stream);
    if (s.isOk()) s = dev->launchGraph(exec, stream);
    if (s.isOk()) s = dev->recordEvent(e1, stream);
    if (!s.isOk()) break;
    auto ms = dev->elapsedMs(e0, e1);
    if (!ms) {
      s = ms.status();
      break;
    }
    total += *ms;
    times.push_back(*ms / kGraphTimedRuns);
    if (total > 100) break;
  }
  Status sy = dev->synchronize(stream);
  dev->destroyGraph(exec);
  KILN_RETURN_IF_ERROR(s);
  KILN_RETURN_IF_ERROR(sy);
  if (times.empty()) return internalError("GPU timing: no graph replay was timed");
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

Result<double> medianDeviceMs(backends::DeviceBackend* dev, void* stream, int iterations, double best,
                              std::function<Status()> const& run) {
  KILN_ASSIGN_OR_RETURN(void* e0, dev->createEvent());
  auto e1r = dev->createEvent();
  if (!e1r) {
    dev->destroyEvent(e0);
    return e1r.status();
  }
  void* e1 = *e1r;
  std::vector<double> times;
  double total = 0;
  Status s = Status::ok();
  for (int i = 0; s.isOk() && i <= std::max(1, iterations); ++i) {
    s = dev->recordEvent(e0, stream);
    if (s.isOk()) s = run();
    if (s.isOk()) s = dev->recordEvent(e1, stream);
    if (!s.isOk()) break;
    auto ms = dev->elapsedMs(e0, e1);
    if (!ms) {
      s = ms.status();
      break;
    }
    // The warm-up run is never judged: it pays one-time costs that say nothing of the kernel's speed, above all
    // the lazy loading of its module (CUDA_MODULE_LOADING=LAZY, the default): 2-5 ms for a cuBLASLt or cuDNN
    // kernel first used here, against 0.01-0.5 ms for the run itself. A candidate is cut on its first timed run.
    if (i == 0) continue;
    total += *ms;
    times.push_back(*ms);
    // Below kGraphTimedBelowMs the event pair also holds the launch (the GPU waits for the host between them), so
    // such a run is no ground for a cut: its graph time decides below.
    if (i == 1 && best > 0 && *ms > 2 * best && *ms >= kGraphTimedBelowMs) break;
    if (total > 100) break;
  }
  Status sy = dev->synchronize(stream);
  if (!s.isOk() || !sy.isOk() || times.empty()) {
    dev->destroyEvent(e0);
    dev->destroyEvent(e1);
    KILN_RETURN_IF_ERROR(s);
    KILN_RETURN_IF_ERROR(sy);
    return internalError("GPU timing: no run was timed");
  }
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];
  // A short kernel is timed again as it runs in a CUDA graph, back to back with no host in between: what the
  // runtime's graphs (and a busy stream) see. Where it cannot be captured, the event times stand.
  if (median < kGraphTimedBelowMs && !dev->isCapturing(stream)) {
    auto g = graphMedianMs(dev, stream, iterations, e0, e1, run);
    if (g) median = *g;
    (void)dev->synchronize(stream);
  }
  dev->destroyEvent(e0);
  dev->destroyEvent(e1);
  return median;
}

}  // namespace kiln::builder
