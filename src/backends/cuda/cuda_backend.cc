// The CUDA DeviceBackend: device memory from a stream-ordered pool, copies, streams, events, graphs, NVTX, and
// the tactic list; the device fault hook and resource accounting every device allocation of this library goes
// through; `kilnCreateCudaBackend` is the library's one exported entry point.
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "backends/cuda/cuda_libs.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/l2_prefetch_kernels.h"

namespace kiln::cuda {

Status cudaStatus(cudaError_t e, std::string const& what) {
  StatusCode code = e == cudaErrorMemoryAllocation ? StatusCode::kOutOfMemory : StatusCode::kInternal;
  return errorStatus(code, what, ": CUDA error ", cudaGetErrorName(e), " (", cudaGetErrorString(e), ")");
}

Status launchStatus(std::string const& what) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return Status::ok();
  return cudaStatus(e, what + ": kernel launch");
}

CudaTactics& CudaTactics::instance() {
  static CudaTactics t;
  return t;
}

bool CudaTactics::add(backends::Tactic t) {
  t.device = DeviceType::kGPU;
  tactics_.push_back(std::move(t));
  return true;
}

namespace {

// Live allocations by address (their bytes), resource counts, and the fault hook.
struct Tracker {
  std::atomic<int64_t> failAt{0};
  std::atomic<int64_t> count{0};
  std::mutex mu;
  std::unordered_map<void*, size_t> live;  // guarded by mu
  int64_t bytes = 0;                       // guarded by mu
  std::atomic<int64_t> streams{0};
  std::atomic<int64_t> events{0};
  std::atomic<int64_t> graphs{0};
};

Tracker& tracker() {
  static Tracker* t = new Tracker;  // never destroyed: memory may be released during static destruction
  return *t;
}

void track(void* p, size_t bytes) {
  Tracker& t = tracker();
  std::lock_guard<std::mutex> lock(t.mu);
  t.live[p] = bytes;
  t.bytes += static_cast<int64_t>(bytes);
}

void untrack(void* p) {
  Tracker& t = tracker();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.live.find(p);
  if (it == t.live.end()) return;
  t.bytes -= static_cast<int64_t>(it->second);
  t.live.erase(it);
}

std::string bytesWhat(size_t bytes, std::string const& what) {
  return strCat("allocating ", bytes, " bytes of device memory", what.empty() ? "" : " for ", what);
}

}  // namespace

Status deviceFaultPoint(std::string const& what) {
  Tracker& t = tracker();
  int64_t n = t.count.fetch_add(1) + 1;
  int64_t k = t.failAt.load();
  if (k > 0 && n == k) return errorStatus(StatusCode::kOutOfMemory, what, " failed (injected device failure #", n, ")");
  return Status::ok();
}

Result<void*> trackedMallocAsync(size_t bytes, cudaStream_t stream, bool wait, std::string const& what) {
  void* p = nullptr;
  if (bytes == 0) return p;
  KILN_RETURN_IF_ERROR(deviceFaultPoint(bytesWhat(bytes, what)));
  cudaError_t e = cudaMallocAsync(&p, bytes, stream);
  if (e == cudaSuccess && wait) {
    e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) {
      (void)cudaFreeAsync(p, stream);
      p = nullptr;
    }
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // an out-of-memory error must not stay as the thread's last error
    return cudaStatus(e, bytesWhat(bytes, what));
  }
  track(p, bytes);
  return p;
}

Result<void*> trackedMalloc(size_t bytes, std::string const& what) {
  void* p = nullptr;
  if (bytes == 0) return p;
  KILN_RETURN_IF_ERROR(deviceFaultPoint(bytesWhat(bytes, what)));
  cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return cudaStatus(e, bytesWhat(bytes, what));
  }
  track(p, bytes);
  return p;
}

void trackedFree(void* p) {
  if (!p) return;
  untrack(p);
  (void)cudaFree(p);
}

void trackedFreeAsync(void* p, cudaStream_t stream) {
  if (!p) return;
  untrack(p);
  (void)cudaFreeAsync(p, stream);
}

void noteResource(TrackedResource r, int32_t delta) {
  Tracker& t = tracker();
  switch (r) {
    case TrackedResource::kStream:
      t.streams.fetch_add(delta);
      break;
    case TrackedResource::kEvent:
      t.events.fetch_add(delta);
      break;
    case TrackedResource::kGraph:
      t.graphs.fetch_add(delta);
      break;
  }
}

backends::DeviceResourceCounts trackedResources() {
  Tracker& t = tracker();
  backends::DeviceResourceCounts c;
  {
    std::lock_guard<std::mutex> lock(t.mu);
    c.allocations = static_cast<int64_t>(t.live.size());
    c.bytes = t.bytes;
  }
  c.streams = t.streams.load();
  c.events = t.events.load();
  c.graphs = t.graphs.load();
  return c;
}

int64_t setDeviceFailAt(int64_t k) {
  Tracker& t = tracker();
  t.count.store(0);
  return t.failAt.exchange(k);
}

int64_t deviceFaultPoints() { return tracker().count.load(); }

DeviceMemory::~DeviceMemory() { trackedFree(ptr_); }

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& o) noexcept {
  if (this != &o) {
    trackedFree(ptr_);
    ptr_ = o.ptr_;
    size_ = o.size_;
    o.ptr_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

Result<DeviceMemory> DeviceMemory::upload(void const* host, size_t bytes, char const* what) {
  DeviceMemory m;
  if (bytes == 0) return m;
  KILN_ASSIGN_OR_RETURN(m.ptr_, trackedMalloc(bytes, what));
  m.size_ = bytes;
  if (host)
    KILN_CUDA_RETURN_IF_ERROR(cudaMemcpy(m.ptr_, host, bytes, cudaMemcpyHostToDevice), strCat("uploading ", what));
  return m;
}

HostTensor const* constantInput(ir::Node const& n, size_t i) {
  ir::Value const* v = n.input(i);
  if (!v || !v->producer || v->producer->op != ir::OpType::kConstant || !v->producer->constant) return nullptr;
  return &*v->producer->constant;
}

Status cublasStatus(cublasStatus_t s, std::string const& what) {
  char const* name = s == CUBLAS_STATUS_NOT_INITIALIZED    ? "CUBLAS_STATUS_NOT_INITIALIZED"
                     : s == CUBLAS_STATUS_ALLOC_FAILED     ? "CUBLAS_STATUS_ALLOC_FAILED"
                     : s == CUBLAS_STATUS_INVALID_VALUE    ? "CUBLAS_STATUS_INVALID_VALUE"
                     : s == CUBLAS_STATUS_ARCH_MISMATCH    ? "CUBLAS_STATUS_ARCH_MISMATCH"
                     : s == CUBLAS_STATUS_EXECUTION_FAILED ? "CUBLAS_STATUS_EXECUTION_FAILED"
                     : s == CUBLAS_STATUS_NOT_SUPPORTED    ? "CUBLAS_STATUS_NOT_SUPPORTED"
                     : s == CUBLAS_STATUS_INTERNAL_ERROR   ? "CUBLAS_STATUS_INTERNAL_ERROR"
                                                           : "cublasStatus_t";
  return errorStatus(s == CUBLAS_STATUS_ALLOC_FAILED ? StatusCode::kOutOfMemory : StatusCode::kInternal, what,
                     ": cuBLASLt error ", name, " (", static_cast<int>(s), ")");
}

Status cudnnStatusOf(cudnnStatus_t s, std::string const& what) {
  return errorStatus(s == CUDNN_STATUS_ALLOC_FAILED ? StatusCode::kOutOfMemory : StatusCode::kInternal, what,
                     ": cuDNN error ", cudnnGetErrorString(s));
}

namespace {

// Per-thread handles, one per device, destroyed with the thread.
struct ThreadHandles {
  std::unordered_map<int, cublasLtHandle_t> lt;
  std::unordered_map<int, cudnnHandle_t> dnn;
  ~ThreadHandles() {
    for (auto& [d, h] : lt) cublasLtDestroy(h);
    for (auto& [d, h] : dnn) cudnnDestroy(h);
  }
};
thread_local ThreadHandles tHandles;

}  // namespace

Result<cublasLtHandle_t> cublasLt() {
  int dev = 0;
  KILN_CUDA_RETURN_IF_ERROR(cudaGetDevice(&dev), "cudaGetDevice");
  auto it = tHandles.lt.find(dev);
  if (it != tHandles.lt.end()) return it->second;
  KILN_RETURN_IF_ERROR(deviceFaultPoint("creating a cuBLASLt handle"));
  cublasLtHandle_t h = nullptr;
  KILN_CUBLAS_RETURN_IF_ERROR(cublasLtCreate(&h), "creating a cuBLASLt handle");
  tHandles.lt[dev] = h;
  return h;
}

Result<cudnnHandle_t> cudnn() {
  int dev = 0;
  KILN_CUDA_RETURN_IF_ERROR(cudaGetDevice(&dev), "cudaGetDevice");
  auto it = tHandles.dnn.find(dev);
  if (it != tHandles.dnn.end()) return it->second;
  KILN_RETURN_IF_ERROR(deviceFaultPoint("creating a cuDNN handle"));
  cudnnHandle_t h = nullptr;
  KILN_CUDNN_RETURN_IF_ERROR(cudnnCreate(&h), "creating a cuDNN handle");
  tHandles.dnn[dev] = h;
  return h;
}

namespace {

class CudaBackend final : public backends::DeviceBackend {
 public:
  explicit CudaBackend(int device) : device_(device) {
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, device);
    target_ = strCat("sm_", p.major, p.minor);
    description_ = strCat(p.name, ", ", target_, ", ", p.multiProcessorCount, " SMs, ",
                          p.totalGlobalMem / (1024.0 * 1024 * 1024), " GiB");
  }

  int32_t abiVersion() const override { return backends::kDeviceBackendAbiVersion; }
  std::string name() const override { return "cuda"; }
  std::string target() const override { return target_; }
  std::string deviceDescription() const override { return description_; }
  std::vector<backends::Tactic> tactics() override { return CudaTactics::instance().all(); }

  Result<void*> allocate(size_t bytes, void* stream) override {
    // The device's default memory pool, stream-ordered; without a stream, ordered on the legacy default stream
    // and waited for, so the memory is usable on any stream when this returns.
    return trackedMallocAsync(bytes, static_cast<cudaStream_t>(stream), stream == nullptr, "");
  }
  void release(void* ptr, void* stream) override {
    if (!ptr) return;
    if (stream) {
      trackedFreeAsync(ptr, static_cast<cudaStream_t>(stream));
      return;
    }
    // cudaFree does not wait for work on memory from cudaMallocAsync (which allocate() returns), and the pool may
    // unmap it at once. Callers wait for their own streams first (contexts for their queued runs, the builder for
    // its timing stream); what was queued without a stream (constant uploads, fills) is waited for here. Not
    // cudaDeviceSynchronize: it would wait on a stream another thread is capturing and invalidate that capture.
    if (cudaStreamSynchronize(cudaStreamLegacy) != cudaSuccess) (void)cudaGetLastError();
    trackedFree(ptr);
  }
  Status copy(void* dst, void const* src, size_t bytes, backends::CopyKind kind, void* stream) override {
    if (bytes == 0) return Status::ok();
    cudaMemcpyKind k = kind == backends::CopyKind::kHostToDevice   ? cudaMemcpyHostToDevice
                       : kind == backends::CopyKind::kDeviceToHost ? cudaMemcpyDeviceToHost
                                                                   : cudaMemcpyDeviceToDevice;
    KILN_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, bytes, k, static_cast<cudaStream_t>(stream)),
                              strCat("copying ", bytes, " bytes"));
    return Status::ok();
  }
  Status fill(void* dst, int32_t byteValue, size_t bytes, void* stream) override {
    if (bytes == 0) return Status::ok();
    KILN_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(dst, byteValue, bytes, static_cast<cudaStream_t>(stream)),
                              "cudaMemsetAsync");
    return Status::ok();
  }
  Status synchronize(void* stream) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "synchronizing the stream");
    return Status::ok();
  }
  Result<void*> createStream() override {
    KILN_RETURN_IF_ERROR(deviceFaultPoint("creating a CUDA stream"));
    cudaStream_t s = nullptr;
    KILN_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    noteResource(TrackedResource::kStream, 1);
    return static_cast<void*>(s);
  }
  void destroyStream(void* stream) override {
    if (!stream) return;
    cudaStreamDestroy(static_cast<cudaStream_t>(stream));
    noteResource(TrackedResource::kStream, -1);
  }
  Result<void*> createEvent() override {
    KILN_RETURN_IF_ERROR(deviceFaultPoint("creating a CUDA event"));
    cudaEvent_t e = nullptr;
    KILN_CUDA_RETURN_IF_ERROR(cudaEventCreate(&e), "cudaEventCreate");
    noteResource(TrackedResource::kEvent, 1);
    return static_cast<void*>(e);
  }
  void destroyEvent(void* event) override {
    if (!event) return;
    cudaEventDestroy(static_cast<cudaEvent_t>(event));
    noteResource(TrackedResource::kEvent, -1);
  }
  Status synchronizeEvent(void* event) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize");
    return Status::ok();
  }
  Status prefetchToL2(backends::DeviceRange const* ranges, size_t count, void* stream) override {
    for (size_t first = 0; first < count; first += kL2PrefetchMaxSpans) {
      L2PrefetchSpans spans;
      for (size_t i = first; i < count && spans.count < kL2PrefetchMaxSpans; ++i, ++spans.count) {
        spans.data[spans.count] = static_cast<char const*>(ranges[i].data);
        spans.bytes[spans.count] = ranges[i].data ? ranges[i].bytes : 0;
      }
      KILN_CUDA_RETURN_IF_ERROR(launchL2Prefetch(spans, static_cast<cudaStream_t>(stream)), "L2 prefetch launch");
    }
    return Status::ok();
  }
  Status recordEvent(void* event, void* stream) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)),
                              "cudaEventRecord");
    return Status::ok();
  }
  Result<float> elapsedMs(void* start, void* end) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(static_cast<cudaEvent_t>(end)), "cudaEventSynchronize");
    float ms = 0;
    KILN_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)),
                              "cudaEventElapsedTime");
    return ms;
  }
  Status streamWaitEvent(void* stream, void* event) override {
    KILN_CUDA_RETURN_IF_ERROR(
        cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0),
        "cudaStreamWaitEvent");
    return Status::ok();
  }
  bool isCapturing(void* stream) override {
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &st) != cudaSuccess) return false;
    return st != cudaStreamCaptureStatusNone;
  }
  // A failed capture call also sets the thread's last CUDA error, which the next kernel's launchStatus would report
  // as its own (the builder's timing falls back from a capture that fails and goes on launching): cleared here.
  Status beginCapture(void* stream) override {
    cudaError_t e = cudaStreamBeginCapture(static_cast<cudaStream_t>(stream), cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return cudaStatus(e, "cudaStreamBeginCapture");
    }
    return Status::ok();
  }
  Result<void*> endCapture(void* stream) override {
    cudaGraph_t g = nullptr;
    cudaError_t ended = cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &g);
    if (ended != cudaSuccess) {
      (void)cudaGetLastError();
      if (g) cudaGraphDestroy(g);
      return cudaStatus(ended, "cudaStreamEndCapture");
    }
    // The fault point comes after the capture has ended, so that a failure leaves the stream usable.
    Status admitted = deviceFaultPoint("instantiating a CUDA graph");
    if (!admitted.isOk()) {
      cudaGraphDestroy(g);
      return admitted;
    }
    cudaGraphExec_t exec = nullptr;
    cudaError_t e = cudaGraphInstantiate(&exec, g, 0);
    cudaGraphDestroy(g);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return cudaStatus(e, "cudaGraphInstantiate");
    }
    noteResource(TrackedResource::kGraph, 1);
    return static_cast<void*>(exec);
  }
  Status launchGraph(void* graphExec, void* stream) override {
    KILN_CUDA_RETURN_IF_ERROR(
        cudaGraphLaunch(static_cast<cudaGraphExec_t>(graphExec), static_cast<cudaStream_t>(stream)), "cudaGraphLaunch");
    return Status::ok();
  }
  void destroyGraph(void* graphExec) override {
    if (!graphExec) return;
    cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graphExec));
    noteResource(TrackedResource::kGraph, -1);
  }
  void rangePush(char const* name) override { nvtxRangePushA(name); }
  void rangePop() override { nvtxRangePop(); }
  Status admitAllocation(size_t bytes, char const* what) override {
    return deviceFaultPoint(bytesWhat(bytes, what ? what : ""));
  }
  int64_t setAllocFailAt(int64_t k) override { return setDeviceFailAt(k); }
  int64_t allocCount() const override { return deviceFaultPoints(); }
  backends::DeviceResourceCounts outstanding() const override { return trackedResources(); }

 private:
  int device_;
  std::string target_;
  std::string description_;
};

}  // namespace

std::unique_ptr<backends::DeviceBackend> makeCudaBackend(std::string* error) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    if (error)
      *error = e != cudaSuccess
                   ? strCat("no usable CUDA device (", cudaGetErrorName(e), ": ", cudaGetErrorString(e), ")")
                   : std::string("no CUDA device is present");
    cudaGetLastError();
    return nullptr;
  }
  int dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, dev) != cudaSuccess || p.major < 9) {
    if (error)
      *error = strCat("device ", dev, " (", p.name, ", sm_", p.major, p.minor,
                      ") is older than sm_90, which this build targets");
    return nullptr;
  }
  return std::make_unique<CudaBackend>(dev);
}

}  // namespace kiln::cuda

extern "C" __attribute__((visibility("default"))) kiln::backends::DeviceBackend* kilnCreateCudaBackend(
    int32_t abiVersion, char* error, size_t errorSize) {
  auto fail = [&](std::string const& m) -> kiln::backends::DeviceBackend* {
    if (error && errorSize) {
      std::strncpy(error, m.c_str(), errorSize - 1);
      error[errorSize - 1] = 0;
    }
    return nullptr;
  };
  if (abiVersion != kiln::backends::kDeviceBackendAbiVersion)
    return fail(kiln::strCat("libkiln asks for backend interface ", abiVersion, ", this library has ",
                             kiln::backends::kDeviceBackendAbiVersion));
  std::string why;
  auto b = kiln::cuda::makeCudaBackend(&why);
  if (!b) return fail(why);
  return b.release();
}
