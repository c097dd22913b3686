// Device side of the L2 prefetch (l2_prefetch_kernels.h). On sm_90 and later each thread hands the copy engine of its
// SM bulk prefetches of up to kChunk bytes (cp.async.bulk.prefetch.L2: fire and forget, the kernel ends long before
// the data is in). The line-by-line path is for a build that adds an architecture before sm_90 (the library is built
// for sm_90a and compute_90 PTX only, so it is not compiled today).
#include <algorithm>
#include <cstdint>

#include "backends/cuda/l2_prefetch_kernels.h"

namespace kiln::cuda {
namespace {

constexpr uint64_t kChunk = 16 << 10;  // bytes per bulk prefetch
// One warp a block, at most 32 registers a thread: the prefetch runs beside the layers' kernels, and a block that
// small still fits on an SM that a GEMM's block fills (a 384-thread cuBLASLt block at 168 registers leaves 1024
// registers), where a larger one would take SMs from the GEMM's grid and push its last blocks into a second wave.
// Blocks spread the bulk requests over the SMs' copy engines.
constexpr int kThreads = 32;
constexpr int kMaxBlocks = 32;

__global__ void __maxnreg__(32) l2PrefetchKernel(L2PrefetchSpans spans) {
  uint64_t const thread = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  uint64_t const threads = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (int s = 0; s < spans.count; ++s) {
    // Whole 16-byte granules only: the bulk prefetch wants 16-byte aligned addresses and sizes.
    uintptr_t const begin = (reinterpret_cast<uintptr_t>(spans.data[s]) + 15) & ~uintptr_t{15};
    uintptr_t const end = (reinterpret_cast<uintptr_t>(spans.data[s]) + spans.bytes[s]) & ~uintptr_t{15};
    if (end <= begin) continue;
    uint64_t const bytes = end - begin;
    for (uint64_t off = thread * kChunk; off < bytes; off += threads * kChunk) {
      uint32_t const n = static_cast<uint32_t>(bytes - off < kChunk ? bytes - off : kChunk);
      char const* p = reinterpret_cast<char const*>(begin + off);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(n) : "memory");
#else
      for (uint32_t line = 0; line < n; line += 128) asm volatile("prefetch.global.L2 [%0];" ::"l"(p + line));
#endif
    }
  }
}

}  // namespace

cudaError_t launchL2Prefetch(L2PrefetchSpans const& spans, cudaStream_t stream) {
  if (spans.count < 0 || spans.count > kL2PrefetchMaxSpans) return cudaErrorInvalidValue;
  uint64_t chunks = 0;
  for (int s = 0; s < spans.count; ++s) chunks += (spans.bytes[s] + kChunk - 1) / kChunk;
  if (chunks == 0) return cudaSuccess;
  int blocks = static_cast<int>(std::min<uint64_t>(kMaxBlocks, (chunks + kThreads - 1) / kThreads));
  l2PrefetchKernel<<<blocks, kThreads, 0, stream>>>(spans);
  return cudaGetLastError();
}

}  // namespace kiln::cuda
