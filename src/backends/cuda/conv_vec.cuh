// 16-byte channel vectors for the channels-last convolution kernels (conv_depthwise.cu, conv_depthwise_tiled.cu):
// how many elements one holds, and its conversion to and from fp32 lanes (round to nearest even, as fromFloat<T>).
// .cu files only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>

namespace kiln::cuda {

template <typename T>
struct Lanes {
  static constexpr int kV = 16 / static_cast<int>(sizeof(T));  // elements per 16-byte vector
};

template <typename T>
__device__ __forceinline__ void unpack(uint4 u, float (&f)[Lanes<T>::kV]);
template <>
__device__ __forceinline__ void unpack<float>(uint4 u, float (&f)[4]) {
  f[0] = __uint_as_float(u.x);
  f[1] = __uint_as_float(u.y);
  f[2] = __uint_as_float(u.z);
  f[3] = __uint_as_float(u.w);
}
template <>
__device__ __forceinline__ void unpack<__half>(uint4 u, float (&f)[8]) {
  uint32_t const w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __half2 h;
    memcpy(&h, &w[i], 4);
    float2 v = __half22float2(h);
    f[2 * i] = v.x;
    f[2 * i + 1] = v.y;
  }
}
template <>
__device__ __forceinline__ void unpack<__nv_bfloat16>(uint4 u, float (&f)[8]) {
  uint32_t const w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __nv_bfloat162 h;
    memcpy(&h, &w[i], 4);
    float2 v = __bfloat1622float2(h);
    f[2 * i] = v.x;
    f[2 * i + 1] = v.y;
  }
}

template <typename T>
__device__ __forceinline__ uint4 pack(float const (&f)[Lanes<T>::kV]);
template <>
__device__ __forceinline__ uint4 pack<float>(float const (&f)[4]) {
  return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]), __float_as_uint(f[3]));
}
template <>
__device__ __forceinline__ uint4 pack<__half>(float const (&f)[8]) {
  uint32_t w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __half2 h = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
    memcpy(&w[i], &h, 4);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}
template <>
__device__ __forceinline__ uint4 pack<__nv_bfloat16>(float const (&f)[8]) {
  uint32_t w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __nv_bfloat162 h = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
    memcpy(&w[i], &h, 4);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

}  // namespace kiln::cuda
