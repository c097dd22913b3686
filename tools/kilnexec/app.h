// kilnexec's driver: from parsed options to the exit code, printing trtexec-style lines to `out` (results)
// and `err` (problems). main.cc only parses the command line and calls it.
#pragma once

#include <cstdio>
#include <string>

#include "options.h"

namespace kilnexec {

/// Whether this machine has an NVIDIA GPU (/dev/nvidiactl or /proc/driver/nvidia/gpus/*).
bool gpuPresent();

/// Runs everything `options` asks for. `commandLine` is echoed in the RUNNING/PASSED lines. `interactive`
/// draws the build progress bar. Returns kExitOk, kExitFailure (model, plan, run or check failed) or
/// kExitUsage (a combination only found wrong once the model is known, e.g. a shape for a missing input).
int runKilnexec(Options options, std::string const& commandLine, std::FILE* out, std::FILE* err, bool interactive);

/// parseCommandLine + runKilnexec, as main() does; the exit code.
int kilnexecMain(int argc, char const* const* argv, std::FILE* out, std::FILE* err, bool interactive);

}  // namespace kilnexec
