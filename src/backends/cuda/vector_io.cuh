// The CUDA backend's 16-byte vector helpers: how many elements of a float type one vector holds (device and host),
// alignment checks, one vector's conversion to and from fp32 lanes (pack/unpack), and V consecutive elements moved
// as whole 16-, 8- or 4-byte words (load/store), raw 16-byte loads/stores with a cache hint, and the persistent grid
// size of the row kernels. The caller guarantees the alignment (host-side checks). .cu only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
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

/// One 16-byte vector at p (16-byte aligned), through the read-only path or evict-first (`streaming`: data read
/// once); the branch is uniform over the grid.
__device__ __forceinline__ uint4 loadRaw(void const* p, bool streaming) {
  auto const* q = static_cast<uint4 const*>(p);
  return streaming ? __ldcs(q) : __ldg(q);
}

/// Stores one 16-byte vector at p (16-byte aligned), plainly or evict-first (`streaming`).
__device__ __forceinline__ void storeRaw(void* p, uint4 v, bool streaming) {
  auto* q = static_cast<uint4*>(p);
  if (streaming)
    __stcs(q, v);
  else
    *q = v;
}

/// Streaming multiprocessors of the current device (cached per device; 132, the H100/H200's, if it cannot be
/// asked). Host side.
inline int multiprocessorCount() {
  constexpr int kCached = 16;
  static std::atomic<int> cache[kCached];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 132;
  if (device >= 0 && device < kCached) {
    int v = cache[device].load(std::memory_order_relaxed);
    if (v > 0) return v;
  }
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0) sms = 132;
  if (device >= 0 && device < kCached) cache[device].store(sms, std::memory_order_relaxed);
  return sms;
}

/// Blocks of `kernel` resident on one SM at `threads` threads and `smem` bytes of dynamic shared memory (at least
/// 1), cached per (device, kernel, threads, smem): the occupancy query costs more than the launch. Host side.
inline int residentBlocksPerSm(void const* kernel, int threads, size_t smem,
                               cudaError_t (*query)(int*, void const*, int, size_t)) {
  struct Key {
    int device;
    void const* kernel;
    int threads;
    size_t smem;
    bool operator<(Key const& o) const {
      if (device != o.device) return device < o.device;
      if (kernel != o.kernel) return kernel < o.kernel;
      if (threads != o.threads) return threads < o.threads;
      return smem < o.smem;
    }
  };
  static std::mutex mutex;
  static std::map<Key, int> cache;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 1;
  }
  Key const key{device, kernel, threads, smem};
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  int perSm = 0;
  if (query(&perSm, kernel, threads, smem) != cudaSuccess || perSm < 1) {
    (void)cudaGetLastError();  // the query's failure is not the launch's: leave no sticky error behind
    return 1;
  }
  std::lock_guard<std::mutex> lock(mutex);
  cache[key] = perSm;
  return perSm;
}

/// The grid of a persistent kernel (blocks loop over the work): `wanted` blocks, at most as many as can be resident
/// at once (SMs x blocks per SM at `threads` and `smem` bytes of dynamic shared memory), at least 1. Host side.
template <typename K>
unsigned persistentBlocks(K kernel, int threads, size_t smem, int64_t wanted) {
  auto query = [](int* n, void const* f, int t, size_t m) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, reinterpret_cast<K>(const_cast<void*>(f)), t, m);
  };
  int const perSm = residentBlocksPerSm(reinterpret_cast<void const*>(kernel), threads, smem, query);
  int64_t resident = static_cast<int64_t>(multiprocessorCount()) * perSm;
  int64_t blocks = wanted < resident ? wanted : resident;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

/// Whether p is aligned for load/store of V elements of `elemBytes` bytes each (host side).
inline bool aligned(void const* p, int v, int elemBytes) {
  int bytes = v * elemBytes;
  int word = bytes % 16 == 0 ? 16 : (bytes % 8 == 0 ? 8 : 4);
  return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(word) == 0 && bytes % 4 == 0;
}

}  // namespace kiln::cuda::vec
