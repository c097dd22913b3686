// kiln-plugin-check's device side on the CUDA runtime.
#include <cuda_runtime.h>

#include "device.h"

namespace kiln::plugincheck::device {
namespace {

bool ok(cudaError_t e, char const* what, std::string& error) {
  if (e == cudaSuccess) return true;
  error = std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  return false;
}

}  // namespace

bool available(std::string& why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    why = std::string("no usable CUDA device: ") + cudaGetErrorString(e);
    return false;
  }
  if (n == 0) {
    why = "no CUDA device";
    return false;
  }
  return true;
}

void* alloc(size_t bytes, std::string& error) {
  void* p = nullptr;
  if (!ok(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc", error)) return nullptr;
  return p;
}

void release(void* p) {
  if (p) cudaFree(p);
}

// cudaMemcpy from pageable memory and cudaMemset may still be in flight on the legacy stream when they return, and
// the checks enqueue on a non-blocking stream, which does not wait for it: both synchronize the device before
// returning, so that a poisoned output is not overwritten after the plugin has written it.
bool toDevice(void* dst, void const* src, size_t bytes, std::string& error) {
  return bytes == 0 || (ok(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device", error) &&
                        ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the copy to the device", error));
}

bool toHost(void* dst, void const* src, size_t bytes, std::string& error) {
  return bytes == 0 || ok(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host", error);
}

bool fill(void* p, int value, size_t bytes, std::string& error) {
  return bytes == 0 || (ok(cudaMemset(p, value, bytes), "cudaMemset", error) &&
                        ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize after cudaMemset", error));
}

bool run(std::function<int32_t(cudaStream_t)> const& launch, std::string& error) {
  cudaStream_t s = nullptr;
  if (!ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate", error)) return false;
  int32_t status = launch(s);
  bool good = ok(cudaStreamSynchronize(s), "cudaStreamSynchronize after enqueue", error);
  cudaStreamDestroy(s);
  if (good && status != 0) {
    error = "enqueue returned " + std::to_string(status);
    good = false;
  }
  return good;
}

bool runCaptured(std::function<int32_t(cudaStream_t)> const& launch, std::string& error) {
  cudaStream_t s = nullptr;
  if (!ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate", error)) return false;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool good = ok(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture", error);
  int32_t status = good ? launch(s) : 0;
  if (good) {
    cudaError_t e = cudaStreamEndCapture(s, &graph);
    good = ok(e, "cudaStreamEndCapture (the enqueue did something a graph cannot capture)", error);
  }
  if (good && status != 0) {
    error = "enqueue returned " + std::to_string(status) + " while being captured";
    good = false;
  }
  if (good) good = ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate", error);
  if (good) good = ok(cudaGraphLaunch(exec, s), "cudaGraphLaunch", error);
  if (good) good = ok(cudaStreamSynchronize(s), "cudaStreamSynchronize after graph launch", error);
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  cudaGetLastError();  // clear a capture error so later checks start clean
  cudaStreamDestroy(s);
  return good;
}

}  // namespace kiln::plugincheck::device
