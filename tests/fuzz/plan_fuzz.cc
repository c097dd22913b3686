// libFuzzer target: plan bytes -> IRuntime::deserializeCudaEngine (memory-capped) -> run once on zero inputs.
// Each input is tried twice: as it is (the container checks: magic, version, checksums, layout), then with
// its checksums recomputed, so that mutations get past the XXH3 checks to the flatbuffer verifier and the
// graph consistency checks behind them.
#include <kiln/kiln.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "fuzz_util.h"
#include "plan/plan_format.h"

namespace {

void loadAndRun(kiln::IRuntime& runtime, void const* data, size_t size) {
  std::unique_ptr<kiln::ICudaEngine> engine(runtime.deserializeCudaEngine(data, size));
  if (engine) kiln_fuzz::runOnce(*engine);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kiln_fuzz::initEnvironment();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(uint8_t const* data, size_t size) {
  static kiln_fuzz::QuietLogger logger;
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  if (!runtime || !runtime->setMemoryLimit(kiln_fuzz::kMemoryLimit)) return 0;
  loadAndRun(*runtime, data, size);
  std::vector<uint8_t> sealed(data, data + size);
  if (kiln::plan::detail::resealPlan(sealed.data(), sealed.size()) &&
      !std::equal(sealed.begin(), sealed.end(), data)) {
    loadAndRun(*runtime, sealed.data(), sealed.size());
  }
  return 0;
}
