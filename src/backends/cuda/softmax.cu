// SoftMax kernels. Rows along the innermost axis in whole 16-byte vectors are held in registers, read once and
// written once: persistent warps with a team of 1 to 32 lanes per row (several short rows a warp) up to 2,048
// elements (1,024 fp32), a block per row up to 32,768 (16,384 fp32); other rows go element by element, a warp per row
// (up to 1,024) or a block per row; one thread per column when the axis is not innermost. fp32 math, max-subtracted; a
// NaN anywhere in a row, or an infinite maximum, makes the row NaN exactly as the reference's formula does.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/reduce_device.cuh"
#include "backends/cuda/softmax_kernels.h"
#include "backends/cuda/vector_io.cuh"

namespace kiln::cuda {
namespace {

constexpr int kRowsPerWarpBlock = 8;
constexpr int kBlockThreads = 256;

// The length of row r to normalize over (its bound when ragged), or -1 when the bound is out of range.
__device__ __forceinline__ int64_t rowLength(int32_t const* bounds, int64_t r, int64_t len) {
  if (!bounds) return len;
  int64_t b = bounds[r];
  return (b < 0 || b > len) ? -1 : b;
}

template <typename T>
__global__ void softmaxWarpKernel(T const* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t len,
                                  int32_t const* __restrict__ bounds) {
  int lane = threadIdx.x & 31;
  int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerWarpBlock + (threadIdx.x >> 5);
  if (r >= rows) return;  // whole warps leave together: the shuffles below stay full-warp
  T const* xr = x + r * len;
  T* yr = y + r * len;
  int64_t n = rowLength(bounds, r, len);
  if (n < 0) {
    for (int64_t i = lane; i < len; i += 32) yr[i] = dev::fromFloat<T>(NAN);
    return;
  }
  float mx = -INFINITY;
  for (int64_t i = lane; i < n; i += 32) mx = red::nanMax(mx, dev::toFloat(xr[i]));
  mx = red::warpReduce(mx, red::MaxOp{});
  float sum = 0.f;
  for (int64_t i = lane; i < n; i += 32) sum += expf(dev::toFloat(xr[i]) - mx);
  sum = red::warpReduce(sum, red::SumOp{});
  float inv = 1.f / sum;
  for (int64_t i = lane; i < len; i += 32)
    yr[i] = dev::fromFloat<T>(i < n ? expf(dev::toFloat(xr[i]) - mx) * inv : 0.f);
}

template <typename T>
__global__ void softmaxBlockKernel(T const* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t len,
                                   int32_t const* __restrict__ bounds) {
  __shared__ float scratch[33];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    T const* xr = x + r * len;
    T* yr = y + r * len;
    int64_t n = rowLength(bounds, r, len);
    if (n < 0) {
      for (int64_t i = threadIdx.x; i < len; i += blockDim.x) yr[i] = dev::fromFloat<T>(NAN);
      continue;  // uniform over the block
    }
    float mx = -INFINITY;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) mx = red::nanMax(mx, dev::toFloat(xr[i]));
    mx = red::blockReduce(mx, red::MaxOp{}, -INFINITY, scratch);
    float sum = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += expf(dev::toFloat(xr[i]) - mx);
    sum = red::blockReduce(sum, red::SumOp{}, 0.f, scratch);
    float inv = 1.f / sum;
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
      yr[i] = dev::fromFloat<T>(i < n ? expf(dev::toFloat(xr[i]) - mx) * inv : 0.f);
  }
}

template <typename T>
__global__ void softmaxColumnKernel(T const* __restrict__ x, T* __restrict__ y, int64_t outer, int64_t len,
                                    int64_t inner) {
  int64_t cols = outer * inner, step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols; c += step) {
    int64_t o = c / inner, in = c - o * inner;
    T const* xc = x + o * len * inner + in;
    T* yc = y + o * len * inner + in;
    float mx = -INFINITY;
    for (int64_t i = 0; i < len; ++i) mx = red::nanMax(mx, dev::toFloat(xc[i * inner]));
    float sum = 0.f;
    for (int64_t i = 0; i < len; ++i) sum += expf(dev::toFloat(xc[i * inner]) - mx);
    float inv = 1.f / sum;
    for (int64_t i = 0; i < len; ++i) yc[i * inner] = dev::fromFloat<T>(expf(dev::toFloat(xc[i * inner]) - mx) * inv);
  }
}

// Reduces v over aligned teams of `team` lanes (a power of two up to 32); every lane of a team gets its result.
// All 32 lanes must call it.
template <typename F>
__device__ __forceinline__ float teamReduce(float v, F f, int team) {
  for (int o = team >> 1; o > 0; o >>= 1) v = f(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// exp(x - mx). fp32 outputs take expf; 2-byte outputs one ex2.approx (exp2f, ~2 ulp of fp32, far below their own
// rounding), which keeps the SFU and ALU work per element under the memory time at 2 bytes.
template <typename T>
__device__ __forceinline__ float expShifted(float x, float mx) {
  if constexpr (std::is_same_v<T, float>) {
    return expf(x - mx);
  } else {
    constexpr float kLog2e = 1.4426950408889634f;
    return exp2f((x - mx) * kLog2e);
  }
}

// Register-resident rows of nvec 16-byte vectors: a team of `team` lanes per row (32 / team rows a warp), vector k
// of team lane l at l + team * k (nvec <= team * kVecs). The warps of a persistent grid loop over the rows; with
// kPrefetch a warp issues its next rows' loads before it reduces the current ones.
constexpr int kVecBlock = 128;

template <typename T, int kVecs, bool kPrefetch>
__global__ void __launch_bounds__(kVecBlock)
    softmaxTeamVecKernel(T const* __restrict__ x, T* __restrict__ y, int64_t rows, int32_t nvec, int team,
                         bool streaming) {
  constexpr int V = vec::kWidth<T>;
  int const lane = threadIdx.x & 31;
  int const tl = lane & (team - 1);
  int const rowsPerWarp = 32 / team;
  int64_t const warps = static_cast<int64_t>(gridDim.x) * (blockDim.x >> 5);
  int64_t const step = warps * rowsPerWarp;
  int64_t const len = static_cast<int64_t>(nvec) * V;
  auto load = [&](int64_t r, uint4(&raw)[kVecs]) {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      int vi = tl + team * k;
      if (r < rows && vi < nvec) raw[k] = vec::loadRaw(x + r * len + static_cast<int64_t>(vi) * V, streaming);
    }
  };
  int64_t base = (static_cast<int64_t>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5)) * rowsPerWarp;
  uint4 cur[kVecs];
  if (kPrefetch) load(base + lane / team, cur);
  // Whole warps run the loop together (the shuffles are full-warp); a team past the last row only lends its lanes.
  for (; base < rows; base += step) {
    int64_t const r = base + lane / team;
    bool const live = r < rows;
    if constexpr (!kPrefetch) load(r, cur);
    uint4 next[kVecs];
    if constexpr (kPrefetch) load(r + step, next);
    float v[kVecs][V];
    float mx = -INFINITY;
#pragma unroll
    for (int k = 0; k < kVecs; ++k)
      if (live && tl + team * k < nvec) {
        vec::unpack<T>(cur[k], v[k]);
#pragma unroll
        for (int i = 0; i < V; ++i) mx = red::nanMax(mx, v[k][i]);
      }
    mx = teamReduce(mx, red::MaxOp{}, team);
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < kVecs; ++k)
      if (live && tl + team * k < nvec)
#pragma unroll
        for (int i = 0; i < V; ++i) {
          v[k][i] = expShifted<T>(v[k][i], mx);
          sum += v[k][i];
        }
    sum = teamReduce(sum, red::SumOp{}, team);
    float const inv = 1.f / sum;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      int vi = tl + team * k;
      if (live && vi < nvec) {
#pragma unroll
        for (int i = 0; i < V; ++i) v[k][i] *= inv;
        vec::storeRaw(y + r * len + static_cast<int64_t>(vi) * V, vec::pack<T>(v[k]), streaming);
      }
    }
    if constexpr (kPrefetch) {
#pragma unroll
      for (int k = 0; k < kVecs; ++k) cur[k] = next[k];
    }
  }
}

// Register-resident rows of nvec 16-byte vectors, a block per row (nvec <= blockDim * kVecs), thread t holding
// vectors t + blockDim * k.
template <typename T, int kVecs>
__global__ void __launch_bounds__(1024)
    softmaxBlockVecKernel(T const* __restrict__ x, T* __restrict__ y, int64_t rows, int32_t nvec) {
  constexpr int V = vec::kWidth<T>;
  __shared__ float scratch[33];
  int64_t const len = static_cast<int64_t>(nvec) * V;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    float v[kVecs][V];
    float mx = -INFINITY;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      int vi = threadIdx.x + blockDim.x * k;
      if (vi < nvec) {
        vec::load<T, V>(x + r * len + static_cast<int64_t>(vi) * V, v[k]);
#pragma unroll
        for (int i = 0; i < V; ++i) mx = red::nanMax(mx, v[k][i]);
      }
    }
    mx = red::blockReduce(mx, red::MaxOp{}, -INFINITY, scratch);
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < kVecs; ++k)
      if (threadIdx.x + blockDim.x * k < nvec)
#pragma unroll
        for (int i = 0; i < V; ++i) {
          v[k][i] = expf(v[k][i] - mx);
          sum += v[k][i];
        }
    sum = red::blockReduce(sum, red::SumOp{}, 0.f, scratch);
    float const inv = 1.f / sum;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      int vi = threadIdx.x + blockDim.x * k;
      if (vi < nvec) {
#pragma unroll
        for (int i = 0; i < V; ++i) v[k][i] *= inv;
        vec::store<T, V>(y + r * len + static_cast<int64_t>(vi) * V, v[k]);
      }
    }
  }
}

template <typename T, int kVecs>
void launchTeams(T const* x, T* y, int64_t rows, int32_t nvec, int team, bool streaming, cudaStream_t stream) {
  constexpr bool kPrefetch = kVecs <= 4;
  auto kernel = softmaxTeamVecKernel<T, kVecs, kPrefetch>;
  int64_t const rowsPerBlock = kVecBlock / team;
  unsigned const blocks = vec::persistentBlocks(kernel, kVecBlock, 0, (rows + rowsPerBlock - 1) / rowsPerBlock);
  kernel<<<blocks, kVecBlock, 0, stream>>>(x, y, rows, nvec, team, streaming);
}

// The register-resident launch for contiguous rows of `len`, or false (nothing launched) where it does not apply.
template <typename T>
bool launchVec(T const* x, T* y, int64_t rows, int64_t len, RowVariant variant, cudaStream_t stream) {
  constexpr int V = vec::kWidth<T>;
  constexpr int kBytes = static_cast<int>(sizeof(T));
  if (len % V != 0 || !vec::aligned(x, V, kBytes) || !vec::aligned(y, V, kBytes)) return false;
  int64_t const nvec = len / V;
  bool const streaming = variant == RowVariant::kAlternative;
  if (nvec <= 32 * 8) {
    // Up to 64 vectors, 2 a lane (BERT's 128-element fp16 rows: 8 lanes a row, 4 rows a warp); beyond, whole warps
    // of 4 or 8 vectors a lane (2,048 elements at 2 bytes, 1,024 at 4).
    auto const n = static_cast<int32_t>(nvec);
    if (nvec <= 64) {
      int team = 1;
      while (team < 32 && 2 * team < nvec) team *= 2;
      if (nvec <= team)
        launchTeams<T, 1>(x, y, rows, n, team, streaming, stream);
      else
        launchTeams<T, 2>(x, y, rows, n, team, streaming, stream);
    } else if (nvec <= 32 * 4) {
      launchTeams<T, 4>(x, y, rows, n, 32, streaming, stream);
    } else {
      launchTeams<T, 8>(x, y, rows, n, 32, streaming, stream);
    }
    return true;
  }
  auto cap = [](int64_t n) { return static_cast<unsigned>(n < (1 << 20) ? n : (1 << 20)); };
  for (int k = 2; k <= 4; k *= 2) {
    int64_t threads = ((nvec + k - 1) / k + 31) / 32 * 32;
    if (threads > 1024) continue;
    auto n = static_cast<int32_t>(nvec);
    auto t = static_cast<unsigned>(threads);
    if (k == 2)
      softmaxBlockVecKernel<T, 2><<<cap(rows), t, 0, stream>>>(x, y, rows, n);
    else
      softmaxBlockVecKernel<T, 4><<<cap(rows), t, 0, stream>>>(x, y, rows, n);
    return true;
  }
  return false;
}

template <typename T>
void launch(void const* xv, void* yv, int64_t outer, int64_t len, int64_t inner, int32_t const* bounds,
            cudaStream_t stream, bool forceGeneric, RowVariant variant) {
  auto const* x = static_cast<T const*>(xv);
  auto* y = static_cast<T*>(yv);
  if (inner == 1 && !bounds && !forceGeneric && launchVec<T>(x, y, outer, len, variant, stream)) return;
  if (inner == 1) {
    if (len <= 1024) {
      auto blocks = static_cast<unsigned>((outer + kRowsPerWarpBlock - 1) / kRowsPerWarpBlock);
      softmaxWarpKernel<T><<<blocks, 32 * kRowsPerWarpBlock, 0, stream>>>(x, y, outer, len, bounds);
    } else {
      auto blocks = static_cast<unsigned>(outer < (1 << 20) ? outer : (1 << 20));
      softmaxBlockKernel<T><<<blocks, kBlockThreads, 0, stream>>>(x, y, outer, len, bounds);
    }
  } else {
    softmaxColumnKernel<T><<<dev::blocksFor(outer * inner), kBlockThreads, 0, stream>>>(x, y, outer, len, inner);
  }
}

}  // namespace

bool launchSoftmax(int32_t dtype, void const* x, void* y, int64_t outer, int64_t len, int64_t inner,
                   int32_t const* bounds, cudaStream_t stream, bool forceGeneric, RowVariant variant) {
  return KILN_CUDA_DISPATCH_FLOAT(dtype, launch<T>(x, y, outer, len, inner, bounds, stream, forceGeneric, variant));
}

}  // namespace kiln::cuda
