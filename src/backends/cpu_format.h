// What the builder asks the CPU backend: activation memory formats between oneDNN layers, whether its fused
// attention loop is the fast choice on this machine, and an eviction of the cores' caches between timed runs.
#pragma once

#include <cstdint>

namespace kiln::backends {

/// The memory format (a cpu::ActFormat value) the oneDNN CPU convolutions prefer for activations on this machine,
/// for the builder to record between oneDNN layers; 0 (plain) in builds without oneDNN.
int64_t cpuPreferredActivationFormat();

/// True when the CPU backend's fused fp32 Attention loop (attention_cpu_tiled) is faster than the unfused layers
/// on this machine: where it runs its AVX-512 code; false in builds without oneDNN.
bool cpuFusedAttentionFast();

/// Writes a per-thread buffer of twice the core's L2 size on `threads` OpenMP threads (the workers the oneDNN
/// kernels run on), so that a tactic timed next finds its weights in L3 or memory, as in a network, where every
/// other layer ran in between; does nothing in builds without oneDNN.
void cpuEvictCaches(int threads);

}  // namespace kiln::backends
