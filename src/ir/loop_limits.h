// The iteration cap of Loop nodes, one definition for every backend that runs them (the reference interpreter and
// the CUDA subgraph runner, which carries its own copy of the IR).
#pragma once

#include <cstdint>

namespace kiln::ir {

/// The most iterations one Loop may run: 2^24 unless the environment variable KILN_MAX_LOOP_ITERATIONS (a positive
/// integer) says otherwise, read once. A safety net against loops whose condition never turns false; the fuzz
/// targets lower it so that such an input ends in an error quickly instead of running for minutes.
int64_t maxLoopIterations();

}  // namespace kiln::ir
