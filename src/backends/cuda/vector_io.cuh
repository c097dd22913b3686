// The CUDA backend's 16-byte vector helpers: how many elements of a float type one vector holds (device and host),
// alignment checks, one vector's conversion to and from fp32 lanes (pack/unpack), and V consecutive elements moved
// as whole 16-, 8- or 4-byte words (load/store). The caller guarantees the alignment (host-side checks). .cu only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backends/cuda/device_types.cuh"

namespace kiln::cuda::vec {

/// Elements of T in one 16-byte vector.
template <typename T>
constexpr int kWidth = static_cast<int>(16 / sizeof(T));

/// Elements of a dtype code in one 16-byte vector: 4 fp32, 8 fp16/bf16; 0 for the types the vector kernels do not
/// take (host side).
inline int width(int32_t dtype) {
  switch (dtype) {
    case dev::kFLOAT:
      return 4;
    case dev::kHALF:
    case dev::kBF16:
      return 8;
    default:
      return 0;
  }
}

/// Whether p is 16-byte aligned (host side). Null passes: an absent operand needs no alignment.
inline bool aligned16(void const* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

/// One 16-byte vector of T (fp32, fp16 or bf16) as fp32 lanes: exact.
template <typename T>
__device__ __forceinline__ void unpack(uint4 u, float (&f)[kWidth<T>]) {
  if constexpr (std::is_same_v<T, float>) {
    f[0] = __uint_as_float(u.x);
    f[1] = __uint_as_float(u.y);
    f[2] = __uint_as_float(u.z);
    f[3] = __uint_as_float(u.w);
  } else {
    static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>, "fp32, fp16 or bf16");
    uint32_t const w[4] = {u.x, u.y, u.z, u.w};
    // Two elements a word, converted as a pair (one instruction for both where the target has it).
    using Pair = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      Pair h;
      memcpy(&h, &w[i], 4);
      float2 v;
      if constexpr (std::is_same_v<T, __half>)
        v = __half22float2(h);
      else
        v = __bfloat1622float2(h);
      f[2 * i] = v.x;
      f[2 * i + 1] = v.y;
    }
  }
}

/// fp32 lanes as one 16-byte vector of T, rounded to nearest even (as dev::fromFloat<T>).
template <typename T>
__device__ __forceinline__ uint4 pack(float const (&f)[kWidth<T>]) {
  if constexpr (std::is_same_v<T, float>) {
    return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]), __float_as_uint(f[3]));
  } else {
    static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>, "fp32, fp16 or bf16");
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (std::is_same_v<T, __half>) {
        __half2 h = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
        memcpy(&w[i], &h, 4);
      } else {
        __nv_bfloat162 h = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
        memcpy(&w[i], &h, 4);
      }
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
}

/// A 16-byte vector of T whose every element is v (one value per vector, e.g. a per-row bias).
template <typename T>
__device__ __forceinline__ uint4 broadcast(T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 2, "4- or 2-byte elements");
  uint32_t w = 0;
  if constexpr (sizeof(T) == 4) {
    memcpy(&w, &v, 4);
  } else {
    uint16_t h = 0;
    memcpy(&h, &v, 2);
    w = static_cast<uint32_t>(h) | (static_cast<uint32_t>(h) << 16);
  }
  return make_uint4(w, w, w, w);
}

/// The widest word (16, 8 or 4 bytes) that divides `bytes`.
template <int kBytes>
using Word = std::conditional_t<kBytes % 16 == 0, uint4, std::conditional_t<kBytes % 8 == 0, uint2, uint32_t>>;

/// Loads p[0..V) (p aligned to the word that divides V * sizeof(S)) as floats.
template <typename S, int V>
__device__ __forceinline__ void load(S const* p, float (&out)[V]) {
  constexpr int kBytes = static_cast<int>(sizeof(S)) * V;
  using W = Word<kBytes>;
  constexpr int kWords = kBytes / static_cast<int>(sizeof(W));
  static_assert(kBytes % sizeof(W) == 0, "whole words only");
  W w[kWords];
#pragma unroll
  for (int i = 0; i < kWords; ++i) w[i] = reinterpret_cast<W const*>(p)[i];
  S const* s = reinterpret_cast<S const*>(w);
#pragma unroll
  for (int i = 0; i < V; ++i) out[i] = dev::toFloat(s[i]);
}

/// Stores v as p[0..V) (same alignment as load).
template <typename S, int V>
__device__ __forceinline__ void store(S* p, float const (&v)[V]) {
  constexpr int kBytes = static_cast<int>(sizeof(S)) * V;
  using W = Word<kBytes>;
  constexpr int kWords = kBytes / static_cast<int>(sizeof(W));
  W w[kWords];
  S* s = reinterpret_cast<S*>(w);
#pragma unroll
  for (int i = 0; i < V; ++i) s[i] = dev::fromFloat<S>(v[i]);
#pragma unroll
  for (int i = 0; i < kWords; ++i) reinterpret_cast<W*>(p)[i] = w[i];
}

/// load() of a float tensor whose dtype code is known only at run time (scale/bias of any float type); the
/// branch is uniform over the grid.
template <int V>
__device__ __forceinline__ void loadAny(void const* p, int32_t dtype, int64_t i, float (&out)[V]) {
  switch (dtype) {
    case dev::kHALF:
      load<__half, V>(static_cast<__half const*>(p) + i, out);
      return;
    case dev::kBF16:
      load<__nv_bfloat16, V>(static_cast<__nv_bfloat16 const*>(p) + i, out);
      return;
    default:
      load<float, V>(static_cast<float const*>(p) + i, out);
      return;
  }
}

/// Whether p is aligned for load/store of V elements of `elemBytes` bytes each (host side).
inline bool aligned(void const* p, int v, int elemBytes) {
  int bytes = v * elemBytes;
  int word = bytes % 16 == 0 ? 16 : (bytes % 8 == 0 ? 8 : 4);
  return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(word) == 0 && bytes % 4 == 0;
}

}  // namespace kiln::cuda::vec
