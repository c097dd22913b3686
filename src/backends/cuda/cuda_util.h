// Shared pieces of the CUDA backend's host code: CUDA errors as Status, the stream of a launch, the per-thread
// cuBLASLt / cuDNN handles, and the list the library's tactics register into (KILN_REGISTER_CUDA_TACTIC).
//
// Layout of this folder: each op family has `<family>.cu` (device kernels and thin launchers with plain C++
// signatures, declared in `<family>_kernels.h`; .cu files include no Kiln header but those) and `<family>.cc`
// (the tactics: supports / create / enqueue, compiled by the host compiler), plus `<family>_test.cc` (label gpu).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/device.h"

namespace kiln::cuda {

/// A CUDA runtime error as a Status naming what failed.
Status cudaStatus(cudaError_t e, std::string const& what);

#define KILN_CUDA_RETURN_IF_ERROR(expr, what)                         \
  do {                                                                \
    cudaError_t kiln_cuda_err_ = (expr);                              \
    if (kiln_cuda_err_ != cudaSuccess) return ::kiln::cuda::cudaStatus(kiln_cuda_err_, what); \
  } while (0)

/// The error of the last kernel launch on this thread (launch configuration, missing image), as a Status.
Status launchStatus(std::string const& what);

/// The native stream of a launch (the legacy default stream when none).
inline cudaStream_t streamOf(backends::LaunchContext const& ctx) {
  return ctx.stream ? static_cast<cudaStream_t>(ctx.stream->native()) : nullptr;
}

/// The registry of this library's tactics: each tactic file registers its makers at load time.
class CudaTactics {
 public:
  static CudaTactics& instance();
  bool add(backends::Tactic t);
  std::vector<backends::Tactic> const& all() const { return tactics_; }

 private:
  std::vector<backends::Tactic> tactics_;
};

#define KILN_REGISTER_CUDA_TACTIC(MAKE) \
  static bool const KILN_CONCAT(kiln_cuda_tactic_registered_, __LINE__) = ::kiln::cuda::CudaTactics::instance().add(MAKE())

/// Creates the CUDA backend on the current device, or null with the reason in *error.
std::unique_ptr<backends::DeviceBackend> makeCudaBackend(std::string* error);

/// Device memory owned by a kernel (packed weights, tables): freed with it.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  ~DeviceMemory();
  DeviceMemory(DeviceMemory&& o) noexcept : ptr_(o.ptr_), size_(o.size_) { o.ptr_ = nullptr; o.size_ = 0; }
  DeviceMemory& operator=(DeviceMemory&& o) noexcept;
  DeviceMemory(DeviceMemory const&) = delete;
  DeviceMemory& operator=(DeviceMemory const&) = delete;
  /// Allocates and (when `host` is given) uploads `bytes` synchronously.
  static Result<DeviceMemory> upload(void const* host, size_t bytes, char const* what);
  void* data() const { return ptr_; }
  size_t size() const { return size_; }

 private:
  void* ptr_ = nullptr;
  size_t size_ = 0;
};

// The device fault hook and resource accounting of this library (DeviceBackend::setAllocFailAt, outstanding):
// every device allocation and resource creation of the CUDA backend goes through these.

/// One fault point: the injected failure, naming `what` ("creating a cuDNN handle"), when it is the one a test
/// chose (DeviceBackend::setAllocFailAt), else ok.
Status deviceFaultPoint(std::string const& what);
/// cudaMallocAsync on `stream` (the legacy stream when null, then waited for when `wait`), counted and tracked.
Result<void*> trackedMallocAsync(size_t bytes, cudaStream_t stream, bool wait, std::string const& what);
/// cudaMalloc, counted and tracked.
Result<void*> trackedMalloc(size_t bytes, std::string const& what);
/// cudaFree (waits for the device) of tracked memory.
void trackedFree(void* p);
/// cudaFreeAsync on `stream` of tracked memory.
void trackedFreeAsync(void* p, cudaStream_t stream);
enum class TrackedResource : int32_t { kStream, kEvent, kGraph };
/// Notes a stream, event or graph created (+1) or destroyed (-1).
void noteResource(TrackedResource r, int32_t delta);
/// What the library holds now.
backends::DeviceResourceCounts trackedResources();
/// The fault hook's setting and count (DeviceBackend::setAllocFailAt / allocCount).
int64_t setDeviceFailAt(int64_t k);
int64_t deviceFaultPoints();

/// Stream-ordered scratch memory of one launch (cudaMallocAsync / cudaFreeAsync on its stream), for ops with
/// data-dependent outputs, which get no workspace from the runtime and synchronize anyway.
class StreamScratch {
 public:
  explicit StreamScratch(cudaStream_t s) : stream_(s) {}
  ~StreamScratch() {
    if (ptr_) trackedFreeAsync(ptr_, stream_);
  }
  StreamScratch(StreamScratch const&) = delete;
  StreamScratch& operator=(StreamScratch const&) = delete;
  Status allocate(size_t bytes, std::string const& what) {
    KILN_ASSIGN_OR_RETURN(ptr_, trackedMallocAsync(bytes, stream_, false, what + ": scratch allocation"));
    return Status::ok();
  }
  void* data() const { return ptr_; }

 private:
  cudaStream_t stream_;
  void* ptr_ = nullptr;
};

/// True for the float types the CUDA kernels compute in (fp32 math, fp16/bf16 storage).
inline bool isCudaFloat(DataType t) { return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16; }

/// The node's constant input `i` (its producer is a Constant node), or null.
HostTensor const* constantInput(ir::Node const& n, size_t i);

/// Whether a float32 Convolution/Deconvolution/MatrixMultiply may use TF32 math (the builder sets the node
/// attribute "allow_tf32" when BuilderFlag::kTF32 is on).
inline bool allowTf32(ir::Node const& n) { return n.attrs.getInt("allow_tf32", 0) != 0; }

}  // namespace kiln::cuda
