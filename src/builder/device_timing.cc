// The builder's event-timed loop on the GPU (see device_timing.h).
#include "builder/device_timing.h"

#include <algorithm>
#include <vector>

namespace kiln::builder {

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
    if (i == 1 && best > 0 && *ms > 2 * best) break;
    if (total > 100) break;
  }
  Status sy = dev->synchronize(stream);
  dev->destroyEvent(e0);
  dev->destroyEvent(e1);
  KILN_RETURN_IF_ERROR(s);
  KILN_RETURN_IF_ERROR(sy);
  if (times.empty()) return internalError("GPU timing: no run was timed");
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace kiln::builder
