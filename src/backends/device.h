// Device backends: a GPU backend lives in its own shared library (libkiln_cuda.so), loaded at run time when a
// GPU target is asked for, so libkiln.so never links CUDA. The library hands libkiln a DeviceBackend: memory,
// copies, streams, events, graphs, NVTX ranges, and its tactics, which join the process's TacticRegistry.
// Ops without a device kernel run through host-fallback tactics made here (copy in, reference kernel, copy
// out; synchronous, named "<op>_hostfallback_reference").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace kiln::backends {

/// Bumped whenever DeviceBackend, Tactic, Kernel, LaunchContext or the IR structs change layout: a library
/// built against another version is refused at load time.
// 2: Tactic::formatAware; 3: Node::plugin, Kernel::createContextState, LaunchContext::state; 4: the device fault hook
// (admitAllocation, setAllocFailAt, allocCount, outstanding) and synchronizeEvent.
// 5: DeviceBackend's host evaluator.
constexpr int32_t kDeviceBackendAbiVersion = 6;

enum class CopyKind : int32_t { kHostToDevice, kDeviceToHost, kDeviceToDevice };

/// Device resources Kiln holds through a backend right now (what a leak check compares with a baseline).
/// Library handles (cuBLASLt, cuDNN) are per host thread and live as long as the thread: not counted here.
struct DeviceResourceCounts {
  int64_t allocations = 0;  // live device allocations (pool, cudaMalloc, scratch)
  int64_t bytes = 0;        // their bytes
  int64_t streams = 0;
  int64_t events = 0;
  int64_t graphs = 0;  // instantiated CUDA graphs
};

/// A span of device memory (prefetchToL2's argument).
struct DeviceRange {
  void const* data = nullptr;
  size_t bytes = 0;
};

/// What a device library provides. Every method is thread-safe. Streams, events and graphs are the native
/// handles (cudaStream_t, cudaEvent_t, cudaGraphExec_t) as void*.
class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual int32_t abiVersion() const = 0;
  /// "cuda".
  virtual std::string name() const = 0;
  /// Plan target of the current device, e.g. "sm_90".
  virtual std::string target() const = 0;
  /// Human-readable device description (name, memory, clocks).
  virtual std::string deviceDescription() const = 0;
  /// The library's tactics (device == kGPU).
  virtual std::vector<Tactic> tactics() = 0;

  /// Device memory from a stream-ordered pool (cudaMallocAsync on `stream`; null stream: synchronous).
  virtual Result<void*> allocate(size_t bytes, void* stream) = 0;
  /// Returns memory from allocate(): ordered after the work queued on `stream`. Without a stream, the caller has
  /// waited for every stream that used the memory; work queued without a stream (the legacy default stream:
  /// uploads, fills) is waited for here. Never a device-wide wait: that would break a graph capture running in
  /// another thread.
  virtual void release(void* ptr, void* stream) = 0;
  /// Asynchronous copy on `stream` (host memory may be pageable: then the copy is synchronous for the host).
  virtual Status copy(void* dst, void const* src, size_t bytes, CopyKind kind, void* stream) = 0;
  virtual Status fill(void* dst, int32_t byteValue, size_t bytes, void* stream) = 0;
  virtual Status synchronize(void* stream) = 0;
  virtual Result<void*> createStream() = 0;
  virtual void destroyStream(void* stream) = 0;
  virtual Result<void*> createEvent() = 0;
  virtual void destroyEvent(void* event) = 0;
  virtual Status recordEvent(void* event, void* stream) = 0;
  /// Milliseconds between two recorded events (waits for `end`).
  virtual Result<float> elapsedMs(void* start, void* end) = 0;
  virtual Status streamWaitEvent(void* stream, void* event) = 0;
  /// True while `stream` is capturing a CUDA graph (synchronous work must not happen then).
  virtual bool isCapturing(void* stream) = 0;
  virtual Status beginCapture(void* stream) = 0;
  /// Ends the capture and instantiates the graph.
  virtual Result<void*> endCapture(void* stream) = 0;
  virtual Status launchGraph(void* graphExec, void* stream) = 0;
  virtual void destroyGraph(void* graphExec) = 0;
  /// NVTX ranges (no-ops when NVTX is absent).
  virtual void rangePush(char const* name) = 0;
  virtual void rangePop() = 0;
  /// Waits on the host until the work before the last recordEvent() of `event` has finished.
  virtual Status synchronizeEvent(void* event) = 0;
  /// Enqueues on `stream` a hint that the device's L2 cache load `ranges` (read-only; nothing waits for the data
  /// and nothing is written). A device or build without such a prefetch enqueues nothing and returns ok.
  virtual Status prefetchToL2(DeviceRange const* ranges, size_t count, void* stream) = 0;

  // The device fault hook. Every device allocation and resource creation Kiln makes on this device is one "fault
  // point": the backend's own (allocate, createStream, createEvent, endCapture, the tactics' scratch memory and
  // library handles) and, through admitAllocation(), libkiln's allocations from the user's IGpuAllocator.

  /// Counts one device allocation made outside the backend (`what` names it in the error): the injected failure
  /// when it is the one setAllocFailAt() chose, else ok.
  virtual Status admitAllocation(size_t bytes, char const* what) = 0;
  /// Test hook: the k-th fault point from now (1-based) fails with an error naming it and "injected"; 0 turns it
  /// off. Resets the count; returns the old setting.
  virtual int64_t setAllocFailAt(int64_t k) = 0;
  /// Fault points passed since the last setAllocFailAt().
  virtual int64_t allocCount() const = 0;
  /// What Kiln holds on the device now.
  virtual DeviceResourceCounts outstanding() const = 0;

  /// libkiln's host evaluator (the reference kernels), handed over by the loader before it registers the
  /// library's tactics: device kernels that infer shapes while running (If/Loop subgraphs) evaluate shape
  /// tensors with it, since the library carries no copy of the reference backend. Empty until set.
  void setHostEvaluator(ir::HostEvaluator evaluator) { hostEvaluator_ = std::move(evaluator); }
  ir::HostEvaluator const& hostEvaluator() const { return hostEvaluator_; }

 private:
  ir::HostEvaluator hostEvaluator_;
};

/// The stream of a device backend: wraps the user's native stream.
class DeviceStream final : public Stream {
 public:
  DeviceStream(DeviceBackend* backend, void* native) : backend_(backend), native_(native) {}
  DeviceType device() const override { return DeviceType::kGPU; }
  void* native() const override { return native_; }
  Status synchronize() override { return backend_->synchronize(native_); }
  DeviceBackend* backend() const { return backend_; }

 private:
  DeviceBackend* backend_;
  void* native_;
};

/// The GPU backend of this process, loaded on first use (libkiln_cuda.so.0: $KILN_CUDA_LIBRARY, then next to
/// libkiln.so, then the build tree, then the loader's search path) and its tactics registered, plus a
/// host-fallback tactic for every op without one. Errors say which library was tried and why it failed.
Result<DeviceBackend*> gpuBackend();

/// Installs a backend directly (tests that link the CUDA objects into their binary); registers its tactics
/// and the host fallbacks as gpuBackend() would. Later gpuBackend() calls return it.
Status installGpuBackend(std::unique_ptr<DeviceBackend> backend);

/// Device memory owned by one holder, released on `stream` order when destroyed.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      backend_ = o.backend_;
      data_ = o.data_;
      size_ = o.size_;
      o.data_ = nullptr;
      o.size_ = 0;
    }
    return *this;
  }
  DeviceBuffer(DeviceBuffer const&) = delete;
  DeviceBuffer& operator=(DeviceBuffer const&) = delete;

  static Result<DeviceBuffer> allocate(DeviceBackend* backend, size_t bytes, char const* what, void* stream = nullptr);
  void* data() const { return data_; }
  size_t size() const { return size_; }
  void reset() {
    if (data_ && backend_) backend_->release(data_, nullptr);
    data_ = nullptr;
    size_ = 0;
  }

 private:
  DeviceBackend* backend_ = nullptr;
  void* data_ = nullptr;
  size_t size_ = 0;
};

/// True for the host-fallback tactics (they synchronize the stream, so CUDA graphs cannot capture them).
bool isHostFallback(Tactic const& t);

}  // namespace kiln::backends
