// What the PointwiseFused CUDA tactic (pointwise_fused.cc) exposes to its tests: the NVRTC step alone (it needs no
// device) and the process-wide module cache's compile count.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace kiln::cuda {

/// Compiles generated CUDA C with NVRTC for `arch` ("sm_90") and returns the CUBIN; an error carries NVRTC's log
/// and `what` (the layer).
Result<std::string> compilePointwiseSource(std::string const& source, std::string const& arch, std::string const& what);

/// How many modules the process-wide cache has compiled and loaded so far (one per device and distinct source).
int64_t pointwiseModulesCompiled();

}  // namespace kiln::cuda
