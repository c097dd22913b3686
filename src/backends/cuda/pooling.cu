// The direct pooling kernel: one thread per output element, the reference's semantics (padding never wins a max,
// NaN propagates, a window holding no input element gives 0, average counts padding unless excluded).
#include <cuda_runtime.h>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/pooling_kernels.h"

namespace kiln::cuda {
namespace {

using dev::fromFloat;
using dev::toFloat;

template <typename T>
__global__ void poolDirectKernel(PoolGeom g, T const* __restrict__ x, T* __restrict__ y, int64_t total) {
  int64_t const outVol = g.out[0] * g.out[1] * g.out[2];
  int64_t const inVol = g.in[0] * g.in[1] * g.in[2];
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t pl = i / outVol, os = i % outVol;
    int64_t o[3] = {os / (g.out[2] * g.out[1]), (os / g.out[2]) % g.out[1], os % g.out[2]};
    // Per dim: taps inside the input [lo, hi) and taps inside the padded extent (for the counting average).
    int64_t lo[3], hi[3], padded = 1;
    for (int d = 0; d < 3; ++d) {
      int64_t start = o[d] * g.stride[d] - g.padBegin[d];
      int64_t a = start < 0 ? -start : 0;
      int64_t b = g.in[d] - start;
      lo[d] = a;
      hi[d] = b < g.window[d] ? b : g.window[d];
      int64_t pa = start < -g.padBegin[d] ? -g.padBegin[d] - start : 0;
      int64_t pb = g.in[d] + g.padEnd[d] - start;
      if (pb > g.window[d]) pb = g.window[d];
      padded *= pb > pa ? pb - pa : 0;
    }
    float mx = -INFINITY, sum = 0.f;
    int64_t valid = 0;
    T const* xp = x + pl * inVol;
    for (int64_t k0 = lo[0]; k0 < hi[0]; ++k0) {
      int64_t p0 = o[0] * g.stride[0] - g.padBegin[0] + k0;
      for (int64_t k1 = lo[1]; k1 < hi[1]; ++k1) {
        int64_t p1 = o[1] * g.stride[1] - g.padBegin[1] + k1;
        for (int64_t k2 = lo[2]; k2 < hi[2]; ++k2) {
          int64_t p2 = o[2] * g.stride[2] - g.padBegin[2] + k2;
          float v = toFloat(xp[(p0 * g.in[1] + p1) * g.in[2] + p2]);
          ++valid;
          sum += v;
          if ((v > mx || isnan(v)) && !isnan(mx)) mx = v;
        }
      }
    }
    float maxV = valid > 0 ? mx : 0.f;
    int64_t count = g.excludePadding ? valid : padded;
    float avgV = count > 0 ? sum / static_cast<float>(count) : 0.f;
    float r = g.type == 0 ? maxV : g.type == 1 ? avgV : (1.f - g.blend) * maxV + g.blend * avgV;
    y[i] = fromFloat<T>(r);
  }
}

}  // namespace

bool launchPoolDirect(int32_t dtype, PoolGeom const& g, void const* x, void* y, cudaStream_t stream) {
  int64_t total = g.planes * g.out[0] * g.out[1] * g.out[2];
  constexpr int kThreads = 256;
  switch (dtype) {
    case dev::kFLOAT:
      if (total > 0)
        poolDirectKernel<float><<<dev::blocksFor(total, kThreads), kThreads, 0, stream>>>(
            g, static_cast<float const*>(x), static_cast<float*>(y), total);
      return true;
    case dev::kHALF:
      if (total > 0)
        poolDirectKernel<__half><<<dev::blocksFor(total, kThreads), kThreads, 0, stream>>>(
            g, static_cast<__half const*>(x), static_cast<__half*>(y), total);
      return true;
    case dev::kBF16:
      if (total > 0)
        poolDirectKernel<__nv_bfloat16><<<dev::blocksFor(total, kThreads), kThreads, 0, stream>>>(
            g, static_cast<__nv_bfloat16 const*>(x), static_cast<__nv_bfloat16*>(y), total);
      return true;
    default:
      return false;
  }
}

}  // namespace kiln::cuda
