// Device helpers of the register-resident row kernels (normalization.cu, softmax.cu): V consecutive elements of
// a float type moved as whole 16-, 8- or 4-byte words, converted to and from fp32. The caller guarantees the
// alignment (host-side checks: the pointer and the element offset are multiples of the moved bytes).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "backends/cuda/device_types.cuh"

namespace kiln::cuda::vec {

/// Elements of T in one 16-byte vector.
template <typename T>
constexpr int kWidth = static_cast<int>(16 / sizeof(T));

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
