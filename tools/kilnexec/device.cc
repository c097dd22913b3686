// kilnexec's CUDA runtime calls (the only file of kilnexec that calls CUDA); built only with KILN_BUILD_CUDA.
#include "device.h"

#include <cuda_runtime_api.h>

#include <utility>

namespace kilnexec::device {
namespace {

bool check(cudaError_t e, char const* what, std::string& error) {
  if (e == cudaSuccess) return true;
  error = std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  cudaGetLastError();  // clear a non-sticky error, so that the next call does not report it again
  return false;
}

}  // namespace

bool compiledIn() { return true; }

bool usable(std::string& why) {
  int n = 0;
  cudaError_t const e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return check(e, "the CUDA runtime finds no usable device", why);
  if (n <= 0) {
    why = "the CUDA runtime reports no device";
    return false;
  }
  return true;
}

bool setDevice(int index, std::string& error) {
  return check(cudaSetDevice(index), ("cudaSetDevice(" + std::to_string(index) + ")").c_str(), error);
}

std::string currentDeviceName() {
  int d = 0;
  cudaDeviceProp p{};
  if (cudaGetDevice(&d) != cudaSuccess || cudaGetDeviceProperties(&p, d) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  return "device " + std::to_string(d) + ": " + p.name + ", compute capability " + std::to_string(p.major) + "." +
         std::to_string(p.minor);
}

Buffer::~Buffer() {
  if (ptr_) cudaFree(ptr_);
}
Buffer::Buffer(Buffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}
Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

bool Buffer::reserve(size_t bytes, std::string& error) {
  bytes = bytes == 0 ? 1 : bytes;
  if (ptr_ && capacity_ >= bytes) return true;
  if (ptr_) cudaFree(ptr_);
  ptr_ = nullptr;
  capacity_ = 0;
  if (!check(cudaMalloc(&ptr_, bytes), ("cudaMalloc(" + std::to_string(bytes) + " bytes)").c_str(), error)) {
    ptr_ = nullptr;
    return false;
  }
  capacity_ = bytes;
  return true;
}

Stream::~Stream() {
  if (stream_) cudaStreamDestroy(stream_);
}
bool Stream::create(std::string& error) {
  return check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate", error);
}
bool Stream::synchronize(std::string& error) const {
  return check(cudaStreamSynchronize(stream_), "the inference stream failed", error);
}

Event::~Event() {
  if (event_) cudaEventDestroy(event_);
}
bool Event::create(std::string& error) { return check(cudaEventCreate(&event_), "cudaEventCreate", error); }
bool Event::record(cudaStream_t stream, std::string& error) {
  return check(cudaEventRecord(event_, stream), "cudaEventRecord", error);
}

bool elapsedMs(Event const& from, Event const& to, double& ms, std::string& error) {
  float f = 0;
  if (!check(cudaEventElapsedTime(&f, from.get(), to.get()), "cudaEventElapsedTime", error)) return false;
  ms = f;
  return true;
}

bool copyToDevice(void* dst, void const* src, size_t bytes, cudaStream_t stream, std::string& error) {
  if (bytes == 0) return true;
  return check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream), "host-to-device copy", error);
}

bool copyToHost(void* dst, void const* src, size_t bytes, cudaStream_t stream, std::string& error) {
  if (bytes == 0) return true;
  return check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream), "device-to-host copy", error);
}

Graph::~Graph() {
  if (exec_) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec_));
  if (graph_) cudaGraphDestroy(static_cast<cudaGraph_t>(graph_));
}

bool Graph::capture(cudaStream_t stream, std::function<bool()> const& enqueue, std::string& error) {
  if (!check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture", error))
    return false;
  bool const enqueued = enqueue();
  cudaGraph_t g = nullptr;
  // Always end the capture, so that the stream leaves capture mode even when the enqueue failed.
  cudaError_t const ended = cudaStreamEndCapture(stream, &g);
  if (!enqueued) {
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();
    error =
        "enqueueV3 failed while being captured (a layer that runs on the host, or a synchronizing call, cannot "
        "be captured)";
    return false;
  }
  if (!check(ended, "cudaStreamEndCapture", error)) {
    if (g) cudaGraphDestroy(g);
    return false;
  }
  cudaGraphExec_t exec = nullptr;
  if (!check(cudaGraphInstantiate(&exec, g, 0), "cudaGraphInstantiate", error)) {
    cudaGraphDestroy(g);
    return false;
  }
  graph_ = g;
  exec_ = exec;
  return true;
}

bool Graph::launch(cudaStream_t stream, std::string& error) {
  if (!exec_) {
    error = "no CUDA graph was captured";
    return false;
  }
  return check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec_), stream), "cudaGraphLaunch", error);
}

}  // namespace kilnexec::device
