// Timing a kernel on the GPU with events, as the builder does for tactics (build_engine.cc) and plugin tactics
// (plugins.cc): one loop, so both measure alike.
#pragma once

#include <functional>

#include "backends/device.h"
#include "core/status.h"

namespace kiln::builder {

/// Runs whose median event time is below this are timed again from a CUDA graph (kGraphTimedRuns captured runs per
/// replay): between two events around one enqueue the GPU also waits for the host's launch, a few microseconds that
/// are most of a small kernel's time and that graphs do not pay.
inline constexpr double kGraphTimedBelowMs = 0.05;
inline constexpr int kGraphTimedRuns = 16;

/// Median milliseconds of `run` (which enqueues work on `stream`), each run between two events on `stream`. Run 0
/// is a warm-up (first-use costs: descriptor caches, lazy module loading) and is neither counted nor judged. Then
/// up to max(1, `iterations`) timed runs, stopping once 100 ms were spent; when `best` > 0 and the first timed
/// run took over twice `best`, its time is returned at once (a candidate that slow is not timed further). The stream is
/// synchronized before returning whatever happened, so no run still uses the caller's buffers when they are freed. A
/// median below kGraphTimedBelowMs is replaced by the median per run of graph replays when `run` can be captured (a
/// first timed run below it never cuts the candidate).
Result<double> medianDeviceMs(backends::DeviceBackend* dev, void* stream, int iterations, double best,
                              std::function<Status()> const& run);

}  // namespace kiln::builder
