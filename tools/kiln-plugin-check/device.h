// The device side of kiln-plugin-check --backend=cuda: memory, copies, a stream and CUDA-graph capture.
// device_cuda.cc implements it with the CUDA runtime; device_none.cc, in builds without CUDA, says so.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "kiln/kiln_base.h"

namespace kiln::plugincheck::device {

/// True when a CUDA device can be used; otherwise `why` says why not.
bool available(std::string& why);
/// `bytes` of device memory (at least 1), or nullptr with `error` set.
void* alloc(size_t bytes, std::string& error);
/// Frees alloc()'s memory (nullptr is fine).
void release(void* p);
/// Host to device copy (synchronous).
bool toDevice(void* dst, void const* src, size_t bytes, std::string& error);
/// Device to host copy (synchronous).
bool toHost(void* dst, void const* src, size_t bytes, std::string& error);
/// Sets `bytes` of device memory at `p` to `value`.
bool fill(void* p, int value, size_t bytes, std::string& error);
/// Runs `launch` on a fresh stream and waits for it; `launch` returns the plugin's enqueue status.
bool run(std::function<int32_t(cudaStream_t)> const& launch, std::string& error);
/// Captures `launch` into a CUDA graph on a fresh stream, instantiates it, replays it once and waits.
bool runCaptured(std::function<int32_t(cudaStream_t)> const& launch, std::string& error);

}  // namespace kiln::plugincheck::device
