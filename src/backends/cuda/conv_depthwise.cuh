// What the two vectorized channels-last depthwise kernels share (conv_depthwise.cu, conv_depthwise_tiled.cu): the
// launchers' common checks, the copy of the geometry into their parameters, the bias load and the finish of one
// output vector.
// .cu files only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/activation.cuh"
#include "backends/cuda/conv_kernels.h"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/vector_io.cuh"

namespace kiln::cuda::depthwise {

/// Whether g is a depthwise 2-D call of a vector kernel's type: fp32, fp16 or bf16, groups == c == k, the depth
/// dim of extent 1, c > 0.
inline bool callOk(int32_t dtype, ConvGeom const& g) {
  return vec::width(dtype) > 0 && g.in[0] == 1 && g.out[0] == 1 && g.kernel[0] == 1 && g.groups == g.c && g.k == g.c &&
         g.n >= 0 && g.c > 0;
}

/// Whether a value fits the kernels' 32-bit geometry with room for the index sums built from it.
inline bool fitsInt(int64_t v) { return v >= 0 && v < (int64_t{1} << 30); }

/// Whether the window (kernel, stride, dilation, padding of both spatial dims) fits 32 bits and is well formed.
inline bool windowFits(ConvGeom const& g) {
  for (int i = 1; i < 3; ++i)
    if (!fitsInt(g.kernel[i]) || !fitsInt(g.stride[i]) || !fitsInt(g.dil[i]) || !fitsInt(g.padBegin[i]) ||
        g.kernel[i] < 1 || g.stride[i] < 1 || g.dil[i] < 1)
      return false;
  return true;
}

/// Copies g's 2-D geometry into a kernel's parameters P (fields ih, iw, oh, ow, c, kh, kw, sh, sw, dh, dw, ph, pw),
/// 32-bit; the caller has checked windowFits and that x and y hold fewer than 2^31 elements. Each kernel keeps its
/// own parameter struct, laid out as before they shared this: ptxas's register allocation follows the layout (one
/// field moved cost the tiled kernel 11 registers a thread, the unrolled one up to 15).
template <typename P>
inline void setGeometry(ConvGeom const& g, P& d) {
  d.ih = static_cast<int>(g.in[1]);
  d.iw = static_cast<int>(g.in[2]);
  d.oh = static_cast<int>(g.out[1]);
  d.ow = static_cast<int>(g.out[2]);
  d.c = static_cast<int>(g.c);
  d.kh = static_cast<int>(g.kernel[1]);
  d.kw = static_cast<int>(g.kernel[2]);
  d.sh = static_cast<int>(g.stride[1]);
  d.sw = static_cast<int>(g.stride[2]);
  d.dh = static_cast<int>(g.dil[1]);
  d.dw = static_cast<int>(g.dil[2]);
  d.ph = static_cast<int>(g.padBegin[1]);
  d.pw = static_cast<int>(g.padBegin[2]);
}

/// y[o .. o + W) = act(acc + bias + residual[o ..]) (finish<T>'s order in conv.cu), one 16-byte store; acc is
/// overwritten. The residual may be y's own memory: each element is read by the thread that then writes it,
/// through the coherent path.
template <typename T>
__device__ __forceinline__ void finishVector(float (&acc)[vec::kWidth<T>], float const (&bias)[vec::kWidth<T>],
                                             Epilogue const& ep, T* y, int64_t o) {
  constexpr int W = vec::kWidth<T>;
  float r[W];
  if (ep.residual) {
    vec::unpack<T>(*reinterpret_cast<uint4 const*>(static_cast<T const*>(ep.residual) + o), r);
  } else {
#pragma unroll
    for (int j = 0; j < W; ++j) r[j] = 0.f;
  }
#pragma unroll
  for (int j = 0; j < W; ++j) {
    float v = acc[j] + bias[j];
    if (ep.residual) v += r[j];
    if (ep.activation >= 0) v = dev::activate<float>(ep.activation, v, ep.alpha, ep.beta);
    acc[j] = v;
  }
  *reinterpret_cast<uint4*>(y + o) = vec::pack<T>(acc);
}

/// The bias vector of channels [c0, c0 + W) (16-byte aligned), or zeros where `bias` is null.
template <typename T>
__device__ __forceinline__ void loadBias(void const* bias, int c0, float (&out)[vec::kWidth<T>]) {
  if (bias) {
    vec::unpack<T>(__ldg(reinterpret_cast<uint4 const*>(static_cast<T const*>(bias) + c0)), out);
  } else {
#pragma unroll
    for (int j = 0; j < vec::kWidth<T>; ++j) out[j] = 0.f;
  }
}

}  // namespace kiln::cuda::depthwise
