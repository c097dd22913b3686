// Timing a kernel on the GPU with events, as the builder does for tactics (build_engine.cc) and plugin tactics
// (plugins.cc): one loop, so both measure alike.
#pragma once

#include <functional>

#include "backends/device.h"
#include "core/status.h"

namespace kiln::builder {

/// Median milliseconds of `run` (which enqueues work on `stream`), each run between two events on `stream`. Run 0
/// is a warm-up (first-use costs: descriptor caches, lazy module loading) and is neither counted nor judged. Then
/// up to max(1, `iterations`) timed runs, stopping once 100 ms were spent; when `best` > 0 and the first timed
/// run took over twice `best`, its time is returned at once (a candidate that slow is not timed further). The stream is synchronized before
/// returning whatever happened, so no run still uses the caller's buffers when they are freed.
Result<double> medianDeviceMs(backends::DeviceBackend* dev, void* stream, int iterations, double best,
                              std::function<Status()> const& run);

}  // namespace kiln::builder
