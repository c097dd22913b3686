// Device side of the vectorized Reformat (reformat_kernels.h): each thread decodes an output position into the
// logical coordinate it holds (or padding) and gathers that element from the input layout. Elements move as
// unsigned integers of their byte width, so every storage type is exact.
#include <cstdint>
#include <type_traits>

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

// Element conversion of the converting transpose (a float Cast folded into the Reformat): identity for the same
// type, otherwise through float with round-to-nearest-even, as the Cast kernels do.
template <typename EO, typename EI>
__device__ __forceinline__ EO convertElem(EI v) {
  if constexpr (std::is_same_v<EI, EO>)
    return v;
  else
    return dev::fromFloat<EO>(dev::toFloat(v));
}

template <typename EI, typename EO>
__global__ void transposeSmallKernel(EI const* __restrict__ in, EO* __restrict__ out, int64_t n, int64_t r, int64_t s) {
  bool const shortR = r <= kSmallSide;
  int64_t const along = shortR ? s : r;  // the long side
  int64_t const total = n * along;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t const b = i / along, j = i % along;
    EI const* src = in + b * r * s;
    EO* dst = out + b * r * s;
    if (shortR) {
      for (int64_t k = 0; k < r; ++k) dst[j * r + k] = convertElem<EO>(src[k * s + j]);  // column j -> row j
    } else {
      for (int64_t k = 0; k < s; ++k) dst[k * r + j] = convertElem<EO>(src[j * s + k]);  // row j -> column j
    }
  }
}

// Batched transpose through 32 x 32 tiles in shared memory (padded against bank conflicts): reads along S and
// writes along R are both coalesced. blockIdx.x: tile of S; blockIdx.y: tile of R plus image * tiles of R.
constexpr int kTile = 32;

template <typename EI, typename EO>
__global__ void transposeTiledKernel(EI const* __restrict__ in, EO* __restrict__ out, int64_t r, int64_t s,
                                     int64_t rTiles) {
  __shared__ EO tile[kTile][kTile + 1];
  int64_t const b = blockIdx.y / rTiles;
  int64_t const r0 = (blockIdx.y % rTiles) * kTile, s0 = static_cast<int64_t>(blockIdx.x) * kTile;
  EI const* src = in + b * r * s;
  EO* dst = out + b * r * s;
  for (int y = threadIdx.y; y < kTile; y += blockDim.y) {
    int64_t const ri = r0 + y, si = s0 + threadIdx.x;
    if (ri < r && si < s) tile[y][threadIdx.x] = convertElem<EO>(src[ri * s + si]);
  }
  __syncthreads();
  for (int y = threadIdx.y; y < kTile; y += blockDim.y) {
    int64_t const si = s0 + y, ri = r0 + threadIdx.x;
    if (ri < r && si < s) dst[si * r + ri] = tile[threadIdx.x][y];
  }
}

// The tiled grid holds at most 65535 rows of blocks: images go in chunks that fit (a converting call may come
// with any batch; the byte-moving one is checked by batchedTransposeFits first).
template <typename EI, typename EO = EI>
cudaError_t transposeAs(void const* in, void* out, int64_t n, int64_t r, int64_t s, cudaStream_t stream) {
  auto const* x = static_cast<EI const*>(in);
  auto* y = static_cast<EO*>(out);
  if (r <= kSmallSide || s <= kSmallSide) {
    int64_t along = r <= kSmallSide ? s : r;
    transposeSmallKernel<EI, EO><<<dev::blocksFor(n * along), 256, 0, stream>>>(x, y, n, r, s);
    return cudaGetLastError();
  }
  int64_t const rTiles = (r + kTile - 1) / kTile, sTiles = (s + kTile - 1) / kTile;
  if (sTiles > 0x7fffffff || rTiles > 65535) return cudaErrorInvalidValue;
  int64_t const chunk = 65535 / rTiles;
  for (int64_t b0 = 0; b0 < n; b0 += chunk) {
    int64_t const nb = n - b0 < chunk ? n - b0 : chunk;
    dim3 grid(static_cast<unsigned>(sTiles), static_cast<unsigned>(rTiles * nb));
    transposeTiledKernel<EI, EO><<<grid, dim3(kTile, 8), 0, stream>>>(x + b0 * r * s, y + b0 * r * s, r, s, rTiles);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

template <typename EI>
cudaError_t transposeFrom(int32_t outType, void const* in, void* out, int64_t n, int64_t r, int64_t s,
                          cudaStream_t stream) {
  switch (outType) {
    case dev::kFLOAT:
      return transposeAs<EI, float>(in, out, n, r, s, stream);
    case dev::kHALF:
      return transposeAs<EI, __half>(in, out, n, r, s, stream);
    case dev::kBF16:
      return transposeAs<EI, __nv_bfloat16>(in, out, n, r, s, stream);
    default:
      return cudaErrorInvalidValue;
  }
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

cudaError_t launchBatchedTransposeConvert(void const* in, int32_t inType, void* out, int32_t outType, int64_t n,
                                          int64_t r, int64_t s, cudaStream_t stream) {
  if (n * r * s == 0) return cudaSuccess;
  switch (inType) {
    case dev::kFLOAT:
      return transposeFrom<float>(outType, in, out, n, r, s, stream);
    case dev::kHALF:
      return transposeFrom<__half>(outType, in, out, n, r, s, stream);
    case dev::kBF16:
      return transposeFrom<__nv_bfloat16>(outType, in, out, n, r, s, stream);
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
