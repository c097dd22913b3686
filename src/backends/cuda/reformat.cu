// Device side of the vectorized Reformat (reformat_kernels.h): each thread decodes an output position into the
// logical coordinate it holds (or padding) and gathers that element from the input layout. Elements move as
// unsigned integers of their byte width, so every storage type is exact.
#include <cstdint>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/reformat_kernels.h"

namespace kiln::cuda {
namespace {

__device__ __forceinline__ int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Logical coordinate of memory position `i` of layout `s`; false for a padding channel.
__device__ __forceinline__ bool decodePosition(ReformatPlan const& p, ReformatSide const& s, int64_t i, int64_t* c) {
  int32_t k = s.vecDim;
  int64_t v = s.components;
  if (k < 0) {
#pragma unroll
    for (int32_t d = kReformatMaxRank - 1; d >= 0; --d)
      if (d < p.rank) {
        c[d] = i % p.dims[d];
        i /= p.dims[d];
      }
    return true;
  }
  if (s.minor) {
    int64_t cp = ceilDiv(p.dims[k], v) * v;
    c[k] = i % cp;
    i /= cp;
#pragma unroll
    for (int32_t d = kReformatMaxRank - 1; d >= 0; --d)
      if (d < p.rank && d != k) {
        c[d] = i % p.dims[d];
        i /= p.dims[d];
      }
    return c[k] < p.dims[k];
  }
  int64_t lane = i % v;
  i /= v;
#pragma unroll
  for (int32_t d = kReformatMaxRank - 1; d >= 0; --d)
    if (d < p.rank) {
      int64_t ext = d == k ? ceilDiv(p.dims[d], v) : p.dims[d];
      c[d] = i % ext;
      i /= ext;
    }
  c[k] = c[k] * v + lane;
  return c[k] < p.dims[k];
}

// Memory position of logical coordinate `c` in layout `s`.
__device__ __forceinline__ int64_t encodePosition(ReformatPlan const& p, ReformatSide const& s, int64_t const* c) {
  int32_t k = s.vecDim;
  int64_t v = s.components;
  int64_t idx = 0;
  if (k >= 0 && s.minor) {
#pragma unroll
    for (int32_t d = 0; d < kReformatMaxRank; ++d)
      if (d < p.rank && d != k) idx = idx * p.dims[d] + c[d];
    return idx * (ceilDiv(p.dims[k], v) * v) + c[k];
  }
#pragma unroll
  for (int32_t d = 0; d < kReformatMaxRank; ++d)
    if (d < p.rank) idx = d == k ? idx * ceilDiv(p.dims[d], v) + c[d] / v : idx * p.dims[d] + c[d];
  return k >= 0 ? idx * v + c[k] % v : idx;
}

template <typename E>
__global__ void reformatKernel(E const* __restrict__ in, E* __restrict__ out, ReformatPlan p) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.outCount;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t c[kReformatMaxRank] = {};
    out[i] = decodePosition(p, p.out, i, c) ? in[encodePosition(p, p.in, c)] : E{0};
  }
}

template <typename E>
cudaError_t reformatAs(void const* in, void* out, ReformatPlan const& p, cudaStream_t stream) {
  reformatKernel<E><<<dev::blocksFor(p.outCount), 256, 0, stream>>>(static_cast<E const*>(in), static_cast<E*>(out), p);
  return cudaGetLastError();
}

// Batched transpose [N][R][S] -> [N][S][R] with one side at most kSmallSide long: one thread per element of the
// long side loops over the short one. Its reads (or writes) along the short side are strided, but neighbouring
// threads touch neighbouring addresses on every step, so each warp access is coalesced (an NCHW image of 3
// channels to NHWC: 3 plane reads, 3 interleaved writes into the same 32 x 3 x 2 bytes).
constexpr int64_t kSmallSide = 8;

template <typename E>
__global__ void transposeSmallKernel(E const* __restrict__ in, E* __restrict__ out, int64_t n, int64_t r, int64_t s) {
  bool const shortR = r <= kSmallSide;
  int64_t const along = shortR ? s : r;  // the long side
  int64_t const total = n * along;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t const b = i / along, j = i % along;
    E const* src = in + b * r * s;
    E* dst = out + b * r * s;
    if (shortR) {
      for (int64_t k = 0; k < r; ++k) dst[j * r + k] = src[k * s + j];  // column j of [R][S] -> row j of [S][R]
    } else {
      for (int64_t k = 0; k < s; ++k) dst[k * r + j] = src[j * s + k];  // row j of [R][S] -> column j of [S][R]
    }
  }
}

// Batched transpose through 32 x 32 tiles in shared memory (padded against bank conflicts): reads along S and
// writes along R are both coalesced. blockIdx.x: tile of S; blockIdx.y: tile of R plus image * tiles of R.
constexpr int kTile = 32;

template <typename E>
__global__ void transposeTiledKernel(E const* __restrict__ in, E* __restrict__ out, int64_t r, int64_t s,
                                     int64_t rTiles) {
  __shared__ E tile[kTile][kTile + 1];
  int64_t const b = blockIdx.y / rTiles;
  int64_t const r0 = (blockIdx.y % rTiles) * kTile, s0 = static_cast<int64_t>(blockIdx.x) * kTile;
  E const* src = in + b * r * s;
  E* dst = out + b * r * s;
  for (int y = threadIdx.y; y < kTile; y += blockDim.y) {
    int64_t const ri = r0 + y, si = s0 + threadIdx.x;
    if (ri < r && si < s) tile[y][threadIdx.x] = src[ri * s + si];
  }
  __syncthreads();
  for (int y = threadIdx.y; y < kTile; y += blockDim.y) {
    int64_t const si = s0 + y, ri = r0 + threadIdx.x;
    if (ri < r && si < s) dst[si * r + ri] = tile[threadIdx.x][y];
  }
}

template <typename E>
cudaError_t transposeAs(void const* in, void* out, int64_t n, int64_t r, int64_t s, cudaStream_t stream) {
  auto const* x = static_cast<E const*>(in);
  auto* y = static_cast<E*>(out);
  if (r <= kSmallSide || s <= kSmallSide) {
    int64_t along = r <= kSmallSide ? s : r;
    transposeSmallKernel<E><<<dev::blocksFor(n * along), 256, 0, stream>>>(x, y, n, r, s);
  } else {
    int64_t const rTiles = (r + kTile - 1) / kTile, sTiles = (s + kTile - 1) / kTile;
    dim3 grid(static_cast<unsigned>(sTiles), static_cast<unsigned>(rTiles * n));
    transposeTiledKernel<E><<<grid, dim3(kTile, 8), 0, stream>>>(x, y, r, s, rTiles);
  }
  return cudaGetLastError();
}

}  // namespace

bool batchedTransposeFits(int64_t n, int64_t r, int64_t s) {
  if (n <= 0 || r <= 0 || s <= 0) return false;
  if (r <= kSmallSide || s <= kSmallSide) return true;
  int64_t const rTiles = (r + kTile - 1) / kTile, sTiles = (s + kTile - 1) / kTile;
  return sTiles <= 0x7fffffff && rTiles * n <= 65535;
}

cudaError_t launchBatchedTranspose(void const* in, void* out, int32_t elemSize, int64_t n, int64_t r, int64_t s,
                                   cudaStream_t stream) {
  if (n * r * s == 0) return cudaSuccess;
  switch (elemSize) {
    case 1:
      return transposeAs<uint8_t>(in, out, n, r, s, stream);
    case 2:
      return transposeAs<uint16_t>(in, out, n, r, s, stream);
    case 4:
      return transposeAs<uint32_t>(in, out, n, r, s, stream);
    case 8:
      return transposeAs<uint64_t>(in, out, n, r, s, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launchReformat(void const* in, void* out, int32_t elemSize, ReformatPlan const& plan, cudaStream_t stream) {
  if (plan.outCount <= 0) return cudaSuccess;
  switch (elemSize) {
    case 1:
      return reformatAs<uint8_t>(in, out, plan, stream);
    case 2:
      return reformatAs<uint16_t>(in, out, plan, stream);
    case 4:
      return reformatAs<uint32_t>(in, out, plan, stream);
    case 8:
      return reformatAs<uint64_t>(in, out, plan, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace kiln::cuda
