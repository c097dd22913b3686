// The builder's event-timed loop on the GPU (see device_timing.h).
#include "builder/device_timing.h"

#include <algorithm>
#include <vector>

namespace kiln::builder {
namespace {

// The two events every timed step records around its work, destroyed with this object.
struct EventPair {
  backends::DeviceBackend* dev;
  void* e0 = nullptr;
  void* e1 = nullptr;
  ~EventPair() {
    if (e0) dev->destroyEvent(e0);
    if (e1) dev->destroyEvent(e1);
  }
};

// Milliseconds between the two events recorded on `stream` around `work`.
Result<double> timedMs(backends::DeviceBackend* dev, void* stream, EventPair const& ev,
                       std::function<Status()> const& work) {
  KILN_RETURN_IF_ERROR(dev->recordEvent(ev.e0, stream));
  KILN_RETURN_IF_ERROR(work());
  KILN_RETURN_IF_ERROR(dev->recordEvent(ev.e1, stream));
  KILN_ASSIGN_OR_RETURN(float ms, dev->elapsedMs(ev.e0, ev.e1));
  return static_cast<double>(ms);
}

// The median of `times` (not empty).
double medianOf(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Median milliseconds per run of `run` replayed kGraphTimedRuns at a time from one captured CUDA graph: up to
// max(1, iterations) replays after one untimed, stopping once 100 ms were spent. An error where the capture, the
// graph or a run fails (the capture is always ended first).
Result<double> graphMedianMs(backends::DeviceBackend* dev, void* stream, int iterations, EventPair const& ev,
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
  auto replay = [&] { return dev->launchGraph(exec, stream); };
  std::vector<double> times;
  double total = 0;
  s = replay();  // untimed: uploads the graph
  for (int i = 0; s.isOk() && i < std::max(1, iterations); ++i) {
    auto ms = timedMs(dev, stream, ev, replay);
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
  return medianOf(std::move(times));
}

}  // namespace

Result<double> medianDeviceMs(backends::DeviceBackend* dev, void* stream, int iterations, double best,
                              std::function<Status()> const& run) {
  EventPair ev{dev};
  KILN_ASSIGN_OR_RETURN(ev.e0, dev->createEvent());
  KILN_ASSIGN_OR_RETURN(ev.e1, dev->createEvent());
  std::vector<double> times;
  double total = 0;
  Status s = Status::ok();
  for (int i = 0; s.isOk() && i <= std::max(1, iterations); ++i) {
    auto ms = timedMs(dev, stream, ev, run);
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
  KILN_RETURN_IF_ERROR(s);
  KILN_RETURN_IF_ERROR(sy);
  if (times.empty()) return internalError("GPU timing: no run was timed");
  double median = medianOf(std::move(times));
  // A short kernel is timed again as it runs in a CUDA graph, back to back with no host in between: what the
  // runtime's graphs (and a busy stream) see. Where it cannot be captured, the event times stand.
  if (median < kGraphTimedBelowMs && !dev->isCapturing(stream)) {
    auto g = graphMedianMs(dev, stream, iterations, ev, run);
    if (g) median = *g;
    (void)dev->synchronize(stream);
  }
  return median;
}

}  // namespace kiln::builder
