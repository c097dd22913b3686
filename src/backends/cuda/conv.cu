// The convolution family's own CUDA kernels: direct (transposed) convolution for every geometry cuDNN refuses,
// the bias/residual/activation epilogue, and the zero-pad / crop copies around cuDNN. fp32 math throughout.
#include <cuda_runtime.h>

#include "backends/cuda/conv_kernels.h"
#include "backends/cuda/activation.cuh"
#include "backends/cuda/device_types.cuh"

namespace kiln::cuda {
namespace {

using dev::fromFloat;
using dev::toFloat;

using dev::activate;

template <typename T>
__device__ __forceinline__ float finish(float acc, int64_t i, int64_t oc, Epilogue const& ep) {
  if (ep.bias) acc += toFloat(static_cast<T const*>(ep.bias)[oc]);
  if (ep.residual) acc += toFloat(static_cast<T const*>(ep.residual)[i]);
  if (ep.activation >= 0) acc = activate<float>(ep.activation, acc, ep.alpha, ep.beta);
  return acc;
}

// One thread per output element; loops over the group's input channels and the kernel taps, skipping taps
// that fall into the padding (bounds hoisted per dim).
template <typename T>
__global__ void convDirectKernel(ConvGeom g, T const* __restrict__ x, T const* __restrict__ w, Epilogue ep, T* y,
                                 int64_t total) {  // y not restrict: the residual may share its memory
  int64_t const outVol = g.out[0] * g.out[1] * g.out[2];
  int64_t const inVol = g.in[0] * g.in[1] * g.in[2];
  int64_t const kVol = g.kernel[0] * g.kernel[1] * g.kernel[2];
  int64_t const cg = g.c / g.groups, kg = g.k / g.groups;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t os = i % outVol, nk = i / outVol;
    int64_t oc = nk % g.k, b = nk / g.k, grp = oc / kg;
    int64_t o2 = os % g.out[2], o1 = (os / g.out[2]) % g.out[1], o0 = os / (g.out[2] * g.out[1]);
    int64_t s0 = o0 * g.stride[0] - g.padBegin[0], s1 = o1 * g.stride[1] - g.padBegin[1],
            s2 = o2 * g.stride[2] - g.padBegin[2];
    T const* xb = x + (b * g.c + grp * cg) * inVol;
    T const* wb = w + oc * cg * kVol;
    float acc = 0.f;
    for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
      int64_t p0 = s0 + k0 * g.dil[0];
      if (p0 < 0 || p0 >= g.in[0]) continue;
      for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
        int64_t p1 = s1 + k1 * g.dil[1];
        if (p1 < 0 || p1 >= g.in[1]) continue;
        for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
          int64_t p2 = s2 + k2 * g.dil[2];
          if (p2 < 0 || p2 >= g.in[2]) continue;
          int64_t xo = (p0 * g.in[1] + p1) * g.in[2] + p2;
          int64_t t = (k0 * g.kernel[1] + k1) * g.kernel[2] + k2;
          for (int64_t ci = 0; ci < cg; ++ci) acc += toFloat(xb[ci * inVol + xo]) * toFloat(wb[ci * kVol + t]);
        }
      }
    }
    y[i] = fromFloat<T>(finish<T>(acc, i, oc, ep));
  }
}

// Transposed convolution as a gather: output o receives x[q / stride] * w[tap] for every tap with
// q = o + pad - tap * dilation a non-negative multiple of the stride inside the input (as the reference).
template <typename T>
__global__ void deconvDirectKernel(ConvGeom g, T const* __restrict__ x, T const* __restrict__ w,
                                   T const* __restrict__ bias, T* __restrict__ y, int64_t total) {
  int64_t const outVol = g.out[0] * g.out[1] * g.out[2];
  int64_t const inVol = g.in[0] * g.in[1] * g.in[2];
  int64_t const kVol = g.kernel[0] * g.kernel[1] * g.kernel[2];
  int64_t const cg = g.c / g.groups, kg = g.k / g.groups;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t os = i % outVol, nk = i / outVol;
    int64_t oc = nk % g.k, b = nk / g.k, grp = oc / kg, ocl = oc % kg;
    int64_t o[3] = {os / (g.out[2] * g.out[1]), (os / g.out[2]) % g.out[1], os % g.out[2]};
    float acc = bias ? toFloat(bias[oc]) : 0.f;
    for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
      int64_t q0 = o[0] + g.padBegin[0] - k0 * g.dil[0];
      if (q0 < 0 || q0 % g.stride[0] != 0 || q0 / g.stride[0] >= g.in[0]) continue;
      for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
        int64_t q1 = o[1] + g.padBegin[1] - k1 * g.dil[1];
        if (q1 < 0 || q1 % g.stride[1] != 0 || q1 / g.stride[1] >= g.in[1]) continue;
        for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
          int64_t q2 = o[2] + g.padBegin[2] - k2 * g.dil[2];
          if (q2 < 0 || q2 % g.stride[2] != 0 || q2 / g.stride[2] >= g.in[2]) continue;
          int64_t lin = (q0 / g.stride[0] * g.in[1] + q1 / g.stride[1]) * g.in[2] + q2 / g.stride[2];
          int64_t t = (k0 * g.kernel[1] + k1) * g.kernel[2] + k2;
          for (int64_t ci = 0; ci < cg; ++ci) {
            int64_t cin = grp * cg + ci;
            acc += toFloat(x[(b * g.c + cin) * inVol + lin]) * toFloat(w[(cin * kg + ocl) * kVol + t]);
          }
        }
      }
    }
    y[i] = fromFloat<T>(acc);
  }
}

template <typename T>
__global__ void epilogueKernel(int64_t k, int64_t spatial, Epilogue ep, T* __restrict__ y, int64_t total) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = fromFloat<T>(finish<T>(toFloat(y[i]), i, (i / spatial) % k, ep));
}

// The same below 2^31 elements, with 32-bit index math (a 64-bit division per element costs more than the
// element's memory traffic on large activations).
template <typename T>
__global__ void epilogueKernel32(uint32_t k, uint32_t spatial, Epilogue ep, T* __restrict__ y, uint32_t total) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x)
    y[i] = fromFloat<T>(finish<T>(toFloat(y[i]), i, (i / spatial) % k, ep));
}

// Channels-last depthwise 2-D convolution (groups == c == k): one thread per output element, the channel
// fastest, so neighbouring threads read neighbouring input channels; w is [c][kh][kw]. 32-bit index math (the
// launcher checks the sizes fit).
template <typename T>
__global__ void depthwiseHwcKernel(ConvGeom g, T const* __restrict__ x, T const* __restrict__ w, Epilogue ep, T* y,
                                   uint32_t total) {
  uint32_t const c = static_cast<uint32_t>(g.c), oh = static_cast<uint32_t>(g.out[1]), ow = static_cast<uint32_t>(g.out[2]);
  int const ih = static_cast<int>(g.in[1]), iw = static_cast<int>(g.in[2]);
  int const kh = static_cast<int>(g.kernel[1]), kw = static_cast<int>(g.kernel[2]);
  int const sh = static_cast<int>(g.stride[1]), sw = static_cast<int>(g.stride[2]);
  int const dh = static_cast<int>(g.dil[1]), dw = static_cast<int>(g.dil[2]);
  int const ph = static_cast<int>(g.padBegin[1]), pw = static_cast<int>(g.padBegin[2]);
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
    uint32_t ch = i % c, r = i / c;
    int ox = static_cast<int>(r % ow);
    r /= ow;
    int oy = static_cast<int>(r % oh);
    uint32_t b = r / oh;
    T const* xb = x + static_cast<size_t>(b) * ih * iw * c + ch;
    T const* wc = w + static_cast<size_t>(ch) * kh * kw;
    float acc = 0.f;
    for (int ky = 0; ky < kh; ++ky) {
      int y0 = oy * sh - ph + ky * dh;
      if (y0 < 0 || y0 >= ih) continue;
      for (int kx = 0; kx < kw; ++kx) {
        int x0 = ox * sw - pw + kx * dw;
        if (x0 < 0 || x0 >= iw) continue;
        acc += toFloat(xb[(static_cast<size_t>(y0) * iw + x0) * c]) * toFloat(wc[ky * kw + kx]);
      }
    }
    y[i] = fromFloat<T>(finish<T>(acc, i, ch, ep));
  }
}

struct Ext3 {
  int64_t v[3];
};

template <typename T>
__global__ void shiftCopyKernel(Ext3 src, Ext3 dst, Ext3 off, T const* __restrict__ s, T* __restrict__ d,
                                T const* __restrict__ bias, int64_t channels, int64_t total) {
  int64_t const dVol = dst.v[0] * dst.v[1] * dst.v[2];
  int64_t const sVol = src.v[0] * src.v[1] * src.v[2];
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t pl = i / dVol, r = i % dVol;
    int64_t j2 = r % dst.v[2] - off.v[2], j1 = (r / dst.v[2]) % dst.v[1] - off.v[1],
            j0 = r / (dst.v[2] * dst.v[1]) - off.v[0];
    bool inside = j0 >= 0 && j0 < src.v[0] && j1 >= 0 && j1 < src.v[1] && j2 >= 0 && j2 < src.v[2];
    float v = inside ? toFloat(s[pl * sVol + (j0 * src.v[1] + j1) * src.v[2] + j2]) : 0.f;
    if (bias) v += toFloat(bias[pl % channels]);
    d[i] = fromFloat<T>(v);
  }
}


constexpr int kThreads = 256;

}  // namespace

bool launchConvDirect(int32_t dtype, ConvGeom const& g, void const* x, void const* w, Epilogue const& ep, void* y,
                      cudaStream_t stream) {
  int64_t total = g.n * g.k * g.out[0] * g.out[1] * g.out[2];
  if (total <= 0) return dtype == dev::kFLOAT || dtype == dev::kHALF || dtype == dev::kBF16;
  return KILN_CUDA_DISPATCH_FLOAT(
      dtype, convDirectKernel<T><<<dev::blocksFor(total, kThreads), kThreads, 0, stream>>>(
                 g, static_cast<T const*>(x), static_cast<T const*>(w), ep, static_cast<T*>(y), total));
}

bool launchDepthwiseHwc(int32_t dtype, ConvGeom const& g, void const* x, void const* w, Epilogue const& ep, void* y,
                        cudaStream_t stream) {
  int64_t total = g.n * g.k * g.out[0] * g.out[1] * g.out[2];
  bool typeOk = dtype == dev::kFLOAT || dtype == dev::kHALF || dtype == dev::kBF16;
  int64_t inTotal = g.n * g.c * g.in[0] * g.in[1] * g.in[2];
  if (!typeOk || g.in[0] != 1 || g.groups != g.c || g.k != g.c || total >= (int64_t{1} << 31) ||
      inTotal >= (int64_t{1} << 31))
    return false;
  if (total == 0) return true;
  return KILN_CUDA_DISPATCH_FLOAT(
      dtype, depthwiseHwcKernel<T><<<dev::blocksFor(total, kThreads), kThreads, 0, stream>>>(
                 g, static_cast<T const*>(x), static_cast<T const*>(w), ep, static_cast<T*>(y),
                 static_cast<uint32_t>(total)));
}

bool launchDeconvDirect(int32_t dtype, ConvGeom const& g, void const* x, void const* w, void const* bias, void* y,
                        cudaStream_t stream) {
  int64_t total = g.n * g.k * g.out[0] * g.out[1] * g.out[2];
  if (total <= 0) return dtype == dev::kFLOAT || dtype == dev::kHALF || dtype == dev::kBF16;
  return KILN_CUDA_DISPATCH_FLOAT(
      dtype, deconvDirectKernel<T><<<dev::blocksFor(total, kThreads), kThreads, 0, stream>>>(
                 g, static_cast<T const*>(x), static_cast<T const*>(w), static_cast<T const*>(bias), static_cast<T*>(y),
                 total));
}

bool launchEpilogue(int32_t dtype, int64_t n, int64_t k, int64_t spatial, Epilogue const& ep, void* y,
                    cudaStream_t stream) {
  int64_t total = n * k * spatial;
  if (total <= 0) return dtype == dev::kFLOAT || dtype == dev::kHALF || dtype == dev::kBF16;
  if (total < (int64_t{1} << 31))
    return KILN_CUDA_DISPATCH_FLOAT(dtype, epilogueKernel32<T><<<dev::blocksFor(total, kThreads), kThreads, 0, stream>>>(
                                               static_cast<uint32_t>(k), static_cast<uint32_t>(spatial), ep,
                                               static_cast<T*>(y), static_cast<uint32_t>(total)));
  return KILN_CUDA_DISPATCH_FLOAT(dtype, epilogueKernel<T><<<dev::blocksFor(total, kThreads), kThreads, 0, stream>>>(
                                             k, spatial, ep, static_cast<T*>(y), total));
}

bool launchShiftCopy(int32_t dtype, int64_t planes, int64_t const srcExt[3], int64_t const dstExt[3],
                     int64_t const offset[3], void const* src, void* dst, void const* bias, int64_t channels,
                     cudaStream_t stream) {
  Ext3 s{{srcExt[0], srcExt[1], srcExt[2]}}, d{{dstExt[0], dstExt[1], dstExt[2]}}, o{{offset[0], offset[1], offset[2]}};
  int64_t total = planes * d.v[0] * d.v[1] * d.v[2];
  if (total <= 0) return dtype == dev::kFLOAT || dtype == dev::kHALF || dtype == dev::kBF16;
  return KILN_CUDA_DISPATCH_FLOAT(dtype, shiftCopyKernel<T><<<dev::blocksFor(total, kThreads), kThreads, 0, stream>>>(
                                             s, d, o, static_cast<T const*>(src), static_cast<T*>(dst),
                                             static_cast<T const*>(bias), channels < 1 ? 1 : channels, total));
}

}  // namespace kiln::cuda
