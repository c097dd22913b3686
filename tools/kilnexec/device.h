// kilnexec's CUDA runtime calls, all of them: device selection, device buffers, streams, events, copies and
// CUDA graph capture. device.cc implements them with the CUDA runtime; device_none.cc (builds without CUDA)
// answers "this build has no CUDA support" to everything, so no other module needs an #ifdef.
#pragma once

#include <kiln/kiln_base.h>  // cudaStream_t, cudaEvent_t (opaque)

#include <cstddef>
#include <functional>
#include <string>

namespace kilnexec::device {

/// Whether this kilnexec was built with the CUDA runtime (KILNEXEC_HAVE_CUDA).
bool compiledIn();

/// Whether a CUDA device can be used (the runtime loads and reports at least one device); false with the
/// reason in `why` otherwise.
bool usable(std::string& why);

/// cudaSetDevice(index); false with the reason (e.g. no such device) in `error`.
bool setDevice(int index, std::string& error);

/// A name for the current device ("NVIDIA H200, compute capability 9.0"), "" when unknown.
std::string currentDeviceName();

/// Device memory (cudaMalloc), freed by the destructor. Movable, not copyable.
class Buffer {
 public:
  Buffer() = default;
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(Buffer const&) = delete;
  Buffer& operator=(Buffer const&) = delete;
  /// Makes the buffer hold at least `bytes` (at least 1) bytes; keeps the memory when it is large enough
  /// (contents are then kept too), else frees it and allocates anew (contents lost). False with `error`.
  bool reserve(size_t bytes, std::string& error);
  void* data() const { return ptr_; }
  size_t capacity() const { return capacity_; }

 private:
  void* ptr_ = nullptr;
  size_t capacity_ = 0;
};

/// A CUDA stream (non-blocking with respect to the null stream), destroyed by the destructor.
class Stream {
 public:
  Stream() = default;
  ~Stream();
  Stream(Stream const&) = delete;
  Stream& operator=(Stream const&) = delete;
  bool create(std::string& error);
  cudaStream_t get() const { return stream_; }
  /// Waits for everything enqueued on the stream; false with the CUDA error (an asynchronous kernel
  /// failure shows up here).
  bool synchronize(std::string& error) const;

 private:
  cudaStream_t stream_ = nullptr;
};

/// A CUDA event with timing, destroyed by the destructor.
class Event {
 public:
  Event() = default;
  ~Event();
  Event(Event const&) = delete;
  Event& operator=(Event const&) = delete;
  bool create(std::string& error);
  bool record(cudaStream_t stream, std::string& error);
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

/// Milliseconds from `from` to `to` (both recorded and complete); false with `error` otherwise.
bool elapsedMs(Event const& from, Event const& to, double& ms, std::string& error);

/// Asynchronous copies on `stream` (pageable host memory: CUDA stages them). `bytes` == 0 does nothing.
bool copyToDevice(void* dst, void const* src, size_t bytes, cudaStream_t stream, std::string& error);
bool copyToHost(void* dst, void const* src, size_t bytes, cudaStream_t stream, std::string& error);

/// One captured piece of stream work (an enqueueV3) replayed as a CUDA graph.
class Graph {
 public:
  Graph() = default;
  ~Graph();
  Graph(Graph const&) = delete;
  Graph& operator=(Graph const&) = delete;
  /// Captures what `enqueue` puts on `stream` (cudaStreamCaptureModeThreadLocal) and instantiates it. False
  /// with `error` (saying why: `enqueue` failed inside the capture, e.g. a layer that runs on the host, or
  /// CUDA refused the capture); the stream is left usable either way.
  bool capture(cudaStream_t stream, std::function<bool()> const& enqueue, std::string& error);
  /// Launches the instantiated graph on `stream`.
  bool launch(cudaStream_t stream, std::string& error);

 private:
  // Unused in builds without CUDA (device_none.cc), which clang warns about.
  [[maybe_unused]] void* graph_ = nullptr;  // cudaGraph_t
  [[maybe_unused]] void* exec_ = nullptr;   // cudaGraphExec_t
};

}  // namespace kilnexec::device
