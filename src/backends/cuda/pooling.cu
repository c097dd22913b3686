// The direct pooling kernel: one thread per output element, the reference's semantics (padding never wins a max,
// NaN propagates, a window holding no input element gives 0, average counts padding unless excluded).
#include <cuda_runtime.h>

#include <type_traits>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/pooling_kernels.h"
#include "backends/cuda/vector_io.cuh"

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

// Channels-last 2-D pooling (x [N, H, W, C], y [N, Ho, Wo, C]): one thread per V adjacent channels of one output
// pixel, so each window tap is one coalesced vector load across the warp; the same semantics as the kernel above.
// g.in/out/window/stride/pad hold the two spatial dims in [1] and [2] ([0] is the extent-1 leading dim).
template <typename T, int V>
__global__ void poolHwcKernel(PoolGeom g, int64_t channels, T const* __restrict__ x, T* __restrict__ y, int64_t total) {
  int64_t const groups = channels / V;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t const cg = i % groups, pix = i / groups;
    int64_t const ow = pix % g.out[2], oh = (pix / g.out[2]) % g.out[1], n = pix / (g.out[2] * g.out[1]);
    int64_t lo[2], hi[2], padded = 1;
    int64_t const o[2] = {oh, ow};
    for (int d = 0; d < 2; ++d) {
      int64_t const k = g.window[d + 1], in = g.in[d + 1], pb = g.padBegin[d + 1];
      int64_t start = o[d] * g.stride[d + 1] - pb;
      lo[d] = start < 0 ? -start : 0;
      int64_t b = in - start;
      hi[d] = b < k ? b : k;
      int64_t pa = start < -pb ? -pb - start : 0;
      int64_t pe = in + g.padEnd[d + 1] - start;
      if (pe > k) pe = k;
      padded *= pe > pa ? pe - pa : 0;
    }
    float mx[V], sum[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      mx[v] = -INFINITY;
      sum[v] = 0.f;
    }
    int64_t valid = 0;
    for (int64_t k0 = lo[0]; k0 < hi[0]; ++k0) {
      int64_t const ih = oh * g.stride[1] - g.padBegin[1] + k0;
      for (int64_t k1 = lo[1]; k1 < hi[1]; ++k1) {
        int64_t const iw = ow * g.stride[2] - g.padBegin[2] + k1;
        float xv[V];
        T const* src = x + ((n * g.in[1] + ih) * g.in[2] + iw) * channels + cg * V;
        if constexpr (V == 1)
          xv[0] = toFloat(*src);
        else
          vec::load<T, V>(src, xv);
        ++valid;
#pragma unroll
        for (int v = 0; v < V; ++v) {
          sum[v] += xv[v];
          if ((xv[v] > mx[v] || isnan(xv[v])) && !isnan(mx[v])) mx[v] = xv[v];
        }
      }
    }
    int64_t const count = g.excludePadding ? valid : padded;
    float r[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      float maxV = valid > 0 ? mx[v] : 0.f;
      float avgV = count > 0 ? sum[v] / static_cast<float>(count) : 0.f;
      r[v] = g.type == 0 ? maxV : g.type == 1 ? avgV : (1.f - g.blend) * maxV + g.blend * avgV;
    }
    if constexpr (V == 1)
      y[pix * channels + cg] = fromFloat<T>(r[0]);
    else
      vec::store<T, V>(y + pix * channels + cg * V, r);
  }
}

// Max pooling of fp16/bf16 channels-last 2-D data, the common case (ResNet's 3x3/2 pooling after the stem): one
// thread per 8 channels of one output pixel, held as four packed pairs and reduced with the NaN-propagating pair
// max (padding never enters: only taps inside the input are read; a window without one writes 0, as above); 32-bit
// index arithmetic, which the launcher checks fits. The generic kernel's 64-bit index decoding and per-channel
// float sum/max/NaN tests made it slower than cuDNN on that layer (0.31 ms for 514 MB).
struct PoolHwc32 {
  int32_t h, w, ho, wo, groups, kh, kw, sh, sw, ph, pw;
};

template <typename T2>
__device__ __forceinline__ uint32_t maxPairs(uint32_t a, uint32_t b) {
  T2 r = __hmax2_nan(*reinterpret_cast<T2 const*>(&a), *reinterpret_cast<T2 const*>(&b));
  return *reinterpret_cast<uint32_t const*>(&r);
}

template <typename T2>
__global__ void poolMaxHwcPairsKernel(PoolHwc32 g, uint4 const* __restrict__ x, uint4* __restrict__ y, int32_t total) {
  int32_t const i =
      static_cast<int32_t>(blockIdx.x) * static_cast<int32_t>(blockDim.x) + static_cast<int32_t>(threadIdx.x);
  if (i >= total) return;
  int32_t const cg = i % g.groups, pix = i / g.groups;
  int32_t const ow = pix % g.wo, t = pix / g.wo;
  int32_t const oh = t % g.ho, n = t / g.ho;
  int32_t const h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
  int32_t const hs = max(h0, 0), he = min(h0 + g.kh, g.h), ws = max(w0, 0), we = min(w0 + g.kw, g.w);
  uint4 m = make_uint4(0u, 0u, 0u, 0u);
  bool first = true;
  for (int32_t ih = hs; ih < he; ++ih) {
    uint4 const* row = x + (static_cast<int32_t>(n * g.h + ih) * g.w) * g.groups + cg;
    for (int32_t iw = ws; iw < we; ++iw) {
      uint4 v = __ldg(row + iw * g.groups);
      if (first) {
        m = v;
        first = false;
      } else {
        m.x = maxPairs<T2>(m.x, v.x);
        m.y = maxPairs<T2>(m.y, v.y);
        m.z = maxPairs<T2>(m.z, v.z);
        m.w = maxPairs<T2>(m.w, v.w);
      }
    }
  }
  y[i] = m;  // all-zero bits are +0 in both types: the empty window's 0
}

// The pair kernel takes the call: max pooling, 2-byte type, 8-channel vectors, 16-byte aligned, 32-bit extents.
template <typename T>
bool launchMaxPairs(PoolGeom const& g, int64_t channels, void const* x, void* y, cudaStream_t stream) {
  if constexpr (sizeof(T) != 2) {
    return false;
  } else {
    using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
    if (g.type != 0 || channels % 8 != 0 || reinterpret_cast<uintptr_t>(x) % 16 != 0 ||
        reinterpret_cast<uintptr_t>(y) % 16 != 0)
      return false;
    int64_t const n = g.planes / channels, groups = channels / 8;
    int64_t const total = n * g.out[1] * g.out[2] * groups, inVectors = n * g.in[1] * g.in[2] * groups;
    constexpr int kThreads = 256;
    int64_t const lim = INT32_MAX / 2;
    // One thread an output vector, no grid-stride loop: the grid must cover them (blocksFor's cap).
    if (total > lim || dev::blocksFor(total, kThreads) * int64_t{kThreads} < total || inVectors > lim ||
        g.window[1] > lim || g.window[2] > lim || g.stride[1] > lim || g.stride[2] > lim || g.padBegin[1] > lim ||
        g.padBegin[2] > lim || g.out[1] * g.stride[1] + g.window[1] > lim || g.out[2] * g.stride[2] + g.window[2] > lim)
      return false;
    PoolHwc32 p{
        static_cast<int32_t>(g.in[1]),       static_cast<int32_t>(g.in[2]),      static_cast<int32_t>(g.out[1]),
        static_cast<int32_t>(g.out[2]),      static_cast<int32_t>(groups),       static_cast<int32_t>(g.window[1]),
        static_cast<int32_t>(g.window[2]),   static_cast<int32_t>(g.stride[1]),  static_cast<int32_t>(g.stride[2]),
        static_cast<int32_t>(g.padBegin[1]), static_cast<int32_t>(g.padBegin[2])};
    poolMaxHwcPairsKernel<T2><<<dev::blocksFor(total, kThreads), kThreads, 0, stream>>>(
        p, static_cast<uint4 const*>(x), static_cast<uint4*>(y), static_cast<int32_t>(total));
    return true;
  }
}

template <typename T>
void launchHwcAs(PoolGeom const& g, int64_t channels, void const* x, void* y, cudaStream_t stream) {
  constexpr int kThreads = 256;
  constexpr int kVec = 16 / static_cast<int>(sizeof(T));
  int64_t const pixels = g.planes / channels * g.out[1] * g.out[2];
  bool const vectors =
      channels % kVec == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(y) % 16 == 0;
  if (launchMaxPairs<T>(g, channels, x, y, stream)) return;
  if (vectors) {
    int64_t total = pixels * (channels / kVec);
    poolHwcKernel<T, kVec><<<dev::blocksFor(total, kThreads), kThreads, 0, stream>>>(
        g, channels, static_cast<T const*>(x), static_cast<T*>(y), total);
  } else {
    int64_t total = pixels * channels;
    poolHwcKernel<T, 1><<<dev::blocksFor(total, kThreads), kThreads, 0, stream>>>(g, channels, static_cast<T const*>(x),
                                                                                  static_cast<T*>(y), total);
  }
}

}  // namespace

bool launchPoolHwc(int32_t dtype, PoolGeom const& g, int64_t channels, void const* x, void* y, cudaStream_t stream) {
  if (channels <= 0 || g.planes <= 0 || g.out[1] * g.out[2] == 0)
    return dtype == dev::kFLOAT || dtype == dev::kHALF || dtype == dev::kBF16;
  switch (dtype) {
    case dev::kFLOAT:
      launchHwcAs<float>(g, channels, x, y, stream);
      return true;
    case dev::kHALF:
      launchHwcAs<__half>(g, channels, x, y, stream);
      return true;
    case dev::kBF16:
      launchHwcAs<__nv_bfloat16>(g, channels, x, y, stream);
      return true;
    default:
      return false;
  }
}

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
