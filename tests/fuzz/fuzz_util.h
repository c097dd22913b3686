// Shared pieces of the libFuzzer targets: a logger that drops messages, caps on what one input may make Kiln
// allocate, and running a loaded engine once on zero inputs with host buffers the harness owns.
#pragma once

#include <kiln/kiln.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace kiln_fuzz {

/// Memory a builder or runtime may allocate for one fuzz input (IBuilder/IRuntime::setMemoryLimit).
inline constexpr int64_t kMemoryLimit = int64_t{64} << 20;
/// Bytes of inputs and outputs the harness allocates itself for one run; an engine asking more is not run.
inline constexpr int64_t kMaxIoBytes = int64_t{16} << 20;

/// Iterations one Loop may run under the fuzzer (KILN_MAX_LOOP_ITERATIONS; Kiln's default is 2^24): a loop whose
/// condition never turns false then ends in an error within the per-input timeout instead of running for minutes.
inline constexpr char const* kMaxLoopIterations = "4096";

/// Called from each target's LLVMFuzzerInitialize: the environment Kiln reads, set before the first input.
inline void initEnvironment() { setenv("KILN_MAX_LOOP_ITERATIONS", kMaxLoopIterations, 0); }

/// Drops every message; KILN_FUZZ_VERBOSE=1 in the environment prints them (to see why an input is refused).
class QuietLogger : public kiln::ILogger {
 public:
  QuietLogger() : verbose_(std::getenv("KILN_FUZZ_VERBOSE") != nullptr) {}
  void log(Severity severity, kiln::AsciiChar const* msg) noexcept override {
    if (verbose_ && severity <= Severity::kWARNING) {
      std::fprintf(stderr, "[kiln %d] %s\n", static_cast<int>(severity), msg == nullptr ? "(null)" : msg);
    }
  }

 private:
  bool verbose_;
};

/// Element size of `t` in bytes (fp8/int8/uint8/bool: 1), or 0 for a type the harness does not know.
inline int64_t elementBytes(kiln::DataType t) {
  switch (static_cast<int32_t>(t)) {
    case static_cast<int32_t>(kiln::DataType::kFLOAT): return 4;
    case static_cast<int32_t>(kiln::DataType::kHALF): return 2;
    case static_cast<int32_t>(kiln::DataType::kBF16): return 2;
    case static_cast<int32_t>(kiln::DataType::kINT8): return 1;
    case static_cast<int32_t>(kiln::DataType::kUINT8): return 1;
    case static_cast<int32_t>(kiln::DataType::kBOOL): return 1;
    case static_cast<int32_t>(kiln::DataType::kFP8): return 1;
    case static_cast<int32_t>(kiln::DataType::kINT32): return 4;
    case static_cast<int32_t>(kiln::DataType::kINT64): return 8;
    case 100: return 8;  // Kiln's kFLOAT64
    case 101: return 2;  // kINT16
    case 102: return 2;  // kUINT16
    case 103: return 4;  // kUINT32
    case 104: return 8;  // kUINT64
    default: return 0;
  }
}

/// Bytes of a tensor of `dims` with elements of `esize` bytes; -1 if a dim is unknown or the size passes `cap`.
inline int64_t tensorBytes(kiln::Dims const& dims, int64_t esize, int64_t cap) {
  if (dims.nbDims < 0 || dims.nbDims > kiln::Dims::MAX_DIMS || esize <= 0) return -1;
  int64_t n = esize;
  for (int32_t i = 0; i < dims.nbDims; ++i) {
    if (dims.d[i] < 0) return -1;
    if (dims.d[i] > 0 && n > cap / dims.d[i]) return -1;
    n *= dims.d[i];
  }
  return n <= cap ? n : -1;
}

/// An output allocator for data-dependent outputs: plain host memory, at most kMaxIoBytes.
class HostOutputAllocator : public kiln::IOutputAllocator {
 public:
  void* reallocateOutputAsync(char const*, void* current, uint64_t size, uint64_t, cudaStream_t) override {
    if (size > static_cast<uint64_t>(kMaxIoBytes)) return nullptr;
    if (size <= buffer_.size() && current != nullptr) return current;
    buffer_.assign(static_cast<size_t>(size == 0 ? 1 : size), 0);
    return buffer_.data();
  }
  void notifyShape(char const*, kiln::Dims const&) noexcept override {}

 private:
  std::vector<uint8_t> buffer_;
};

/// Creates a context, gives every dynamic input its profile-0 minimum shape (shape-tensor inputs the value
/// 1 everywhere), binds zeroed host buffers and runs once. Failures are fine (the input was refused); what
/// the fuzzer looks for is a crash, a leak or a sanitizer report on the way.
inline void runOnce(kiln::ICudaEngine& engine) {
  std::unique_ptr<kiln::IExecutionContext> context(engine.createExecutionContext());
  if (!context) return;
  int32_t const n = engine.getNbIOTensors();
  if (n < 0 || n > 256) return;
  std::vector<std::vector<uint8_t>> buffers(static_cast<size_t>(n));
  std::vector<std::vector<int64_t>> shapeValues(static_cast<size_t>(n));
  std::vector<std::unique_ptr<HostOutputAllocator>> allocators;
  int64_t total = 0;
  for (int32_t i = 0; i < n; ++i) {
    char const* name = engine.getIOTensorName(i);
    if (name == nullptr || engine.getTensorIOMode(name) != kiln::TensorIOMode::kINPUT) continue;
    kiln::Dims dims = engine.getTensorShape(name);
    bool dynamic = false;
    for (int32_t d = 0; d < dims.nbDims && d < kiln::Dims::MAX_DIMS; ++d) dynamic = dynamic || dims.d[d] < 0;
    if (dynamic) {
      dims = engine.getProfileShape(name, 0, kiln::OptProfileSelector::kMIN);
      if (!context->setInputShape(name, dims)) return;
    }
    if (engine.isShapeInferenceIO(name)) {
      // A shape tensor: every value 1 (the smallest extent), which most shape arithmetic accepts.
      int64_t const count = tensorBytes(dims, 1, 1 << 16);
      if (count < 0) return;
      shapeValues[static_cast<size_t>(i)].assign(static_cast<size_t>(count), 1);
    }
  }
  for (int32_t i = 0; i < n; ++i) {
    char const* name = engine.getIOTensorName(i);
    if (name == nullptr) return;
    kiln::DataType const type = engine.getTensorDataType(name);
    kiln::Dims const dims = context->getTensorShape(name);
    int64_t const esize = elementBytes(type);
    if (esize == 0) return;
    bool const isInput = engine.getTensorIOMode(name) == kiln::TensorIOMode::kINPUT;
    int64_t const bytes = tensorBytes(dims, esize, kMaxIoBytes);
    if (bytes < 0) {
      if (isInput) return;
      // A data-dependent output (or one too large for the harness): give it an allocator that refuses past the cap.
      allocators.push_back(std::make_unique<HostOutputAllocator>());
      if (!context->setOutputAllocator(name, allocators.back().get())) return;
      continue;
    }
    total += bytes;
    if (total > kMaxIoBytes) return;
    std::vector<uint8_t>& buf = buffers[static_cast<size_t>(i)];
    buf.assign(static_cast<size_t>(bytes == 0 ? esize : bytes), 0);
    std::vector<int64_t> const& values = shapeValues[static_cast<size_t>(i)];
    if (isInput && !values.empty()) {
      for (size_t k = 0; k < values.size() && (k + 1) * static_cast<size_t>(esize) <= buf.size(); ++k) {
        if (esize == 8) {
          int64_t v = values[k];
          std::memcpy(buf.data() + k * 8, &v, 8);
        } else if (esize == 4) {
          auto v = static_cast<int32_t>(values[k]);
          std::memcpy(buf.data() + k * 4, &v, 4);
        }
      }
    }
    if (!context->setTensorAddress(name, buf.data())) return;
  }
  (void)context->enqueueV3(nullptr);
}

}  // namespace kiln_fuzz
