// The CPU backend's own swish (y = x * sigmoid(x)) over a buffer in place: the convolution tactics' cpu_swish runs
// it after the primitive where the CPU has AVX-512, faster than oneDNN 2.6's swish post-op.
#pragma once

#include <cstdint>

namespace kiln::backends::cpu {

/// True when swishInPlace runs its AVX-512 loop on this CPU (the convolutions use it only then, and keep oneDNN's
/// swish post-op elsewhere).
bool ownSwishFast();

/// True when a convolution writing `elements` outputs applies cpu_swish with swishInPlace after its primitive
/// rather than as oneDNN's post-op: ownSwishFast() and at least 4096 outputs (on the squeeze-excitation blocks' few
/// outputs the extra step cost more than the post-op: 0.017 against 0.009 ms in EfficientNet-B0).
bool ownSwishFor(int64_t elements);

/// x[i] = x[i] * sigmoid(x[i]) for i < n, on up to `threads` OpenMP threads (from OmpThreads::kSmallWork
/// elements). Relative error below 1e-6 against the exact formula; NaN stays NaN, +inf stays +inf, -inf gives NaN
/// (as -inf * 0 does in the reference).
void swishInPlace(float* x, int64_t n, int threads);

}  // namespace kiln::backends::cpu
