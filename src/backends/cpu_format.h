// What the builder asks the CPU backend about activation memory formats between oneDNN layers.
#pragma once

#include <cstdint>

namespace kiln::backends {

/// The memory format (a cpu::ActFormat value) the oneDNN CPU convolutions prefer for activations on this machine,
/// for the builder to record between oneDNN layers; 0 (plain) in builds without oneDNN.
int64_t cpuPreferredActivationFormat();

}  // namespace kiln::backends
