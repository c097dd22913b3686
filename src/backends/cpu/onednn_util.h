// Shared pieces of the oneDNN CPU tactics: the process-wide engine, Kiln's fused activations as oneDNN eltwise
// post-ops, the OpenMP thread count of a launch, and the per-thread scratchpad.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <dnnl.hpp>

#include "backends/backend.h"
#include "kiln/kiln.h"

namespace kiln::backends::cpu {

/// The one CPU engine of the process (oneDNN's engine kind cpu, index 0).
dnnl::engine& engine();

/// Appends `activation` (an ActivationType value, -1 none) with TensorRT's alpha/beta meanings to `ops` as
/// oneDNN eltwise post-ops computing the same formula (see reference/activation_math.h); false when oneDNN 2.6
/// has no exact equivalent (softsign, thresholded ReLU, clip with alpha > beta), `ops` then unspecified.
bool appendActivation(dnnl::post_ops& ops, int64_t activation, float alpha, float beta);

/// True when the node's activation attributes map onto oneDNN post-ops.
bool activationSupported(ir::Node const& node);

/// The OpenMP threads a launch may use: the runtime's thread pool size (IRuntime::setMaxThreads reaches the
/// kernels as LaunchContext::pool, null for one thread). Sets the calling thread's OpenMP thread count to it
/// and returns it; oneDNN sizes its parallel regions from that count when a primitive is created and run.
int useThreads(LaunchContext const& ctx);

/// A 64-byte aligned scratch buffer of at least `bytes`, private to the calling thread (kept between calls, so
/// steady-state runs do not allocate). oneDNN's primitives run with a user scratchpad so one primitive may run
/// from many threads at once.
void* threadScratch(size_t bytes);

/// oneDNN dims of a Kiln shape.
dnnl::memory::dims toDnnl(Dims const& d);

}  // namespace kiln::backends::cpu
