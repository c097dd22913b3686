// The vectorized channels-last depthwise 2-D convolution: each thread owns one 16-byte vector of channels (8 for
// fp16/bf16, 4 for fp32) and computes P consecutive output pixels along W (4 at stride 1, 2 at stride 2, 1 for
// small layers), so every input vector it loads serves up to P taps of a kernel row; the block's weights are
// staged once in shared memory as fp32 [tap][channel].
#include <cuda_runtime.h>

#include <atomic>
#include <cstring>

#include "backends/cuda/conv_depthwise.cuh"
#include "backends/cuda/conv_kernels.h"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/vector_io.cuh"

namespace kiln::cuda {
namespace {

using dev::toFloat;

constexpr int kDwThreads = 128;            // threads per block at most
constexpr int kDwMaxVectorsPerBlock = 32;  // channel vectors (threadIdx.x) per block at most
constexpr int kDwSmemBytes = 48 * 1024;    // staged weights per block at most (no opt-in needed)

// The geometry as the kernel reads it: 32-bit throughout (the launcher checks everything fits).
struct DwParams {
  int ih, iw, oh, ow, c;
  int kh, kw, sh, sw, dh, dw, ph, pw;  // depthwise::setGeometry
  int cv;                              // channel vectors: c / V
  int tilesW;                          // pixel tiles per output row: ceil(ow / P)
  int tiles;                           // n * oh * tilesW
};

// One input vector, or zeros where the tap falls into the padding. The load is unconditional (from `safe`, an
// address inside x, when outside) so that the compiler can issue a whole tile's loads before the first use.
template <typename T>
__device__ __forceinline__ void loadInput(T const* p, T const* safe, bool ok, float (&f)[vec::kWidth<T>]) {
  uint4 u = __ldg(reinterpret_cast<uint4 const*>(ok ? p : safe));
  if (!ok) u = make_uint4(0u, 0u, 0u, 0u);
  vec::unpack<T>(u, f);
}

// The staged weights of tap t for this thread's channel vector: sw is [tap][V / 4][cvb] float4.
template <int V>
__device__ __forceinline__ void tapWeights(float4 const* sw, int t, int cvb, int cvl, float (&f)[V]) {
#pragma unroll
  for (int h = 0; h < V / 4; ++h) {
    float4 q = sw[(t * (V / 4) + h) * cvb + cvl];
    f[4 * h] = q.x;
    f[4 * h + 1] = q.y;
    f[4 * h + 2] = q.z;
    f[4 * h + 3] = q.w;
  }
}

// Block: threadIdx.x = channel vector within the block's chunk (blockIdx.y), threadIdx.y = pixel tile lane; a
// grid-stride loop over tiles (n, oy, P columns of ox) keeps each thread on its channels, so the staged weights
// (and for small kernels the weights held in registers) serve every tile it computes.
// KH > 0: a KH x KW kernel, stride S in both dims, no dilation, fully unrolled: the thread loads each of the
// (P - 1) * S + KW input columns of a kernel row once. KH == 0: any geometry from `d` (strides, dilations), P == 1.
template <typename T, int KH, int KW, int S, int P>
__global__ void __launch_bounds__(kDwThreads)
    depthwiseHwcVecKernel(DwParams d, T const* __restrict__ x, T const* __restrict__ w, Epilogue ep, T* y) {
  constexpr int V = vec::kWidth<T>;
  extern __shared__ float4 dwStaged[];
  int const taps = KH > 0 ? KH * KW : d.kh * d.kw;
  int const cvb = static_cast<int>(blockDim.x);
  int const cv0 = static_cast<int>(blockIdx.y) * cvb;
  int const cvHere = min(cvb, d.cv - cv0);

  // Stage this chunk's weights (w is [c][kh][kw]: the chunk is one contiguous run) as fp32 [tap][V / 4][cvb][4].
  {
    float* s = reinterpret_cast<float*>(dwStaged);
    int const tid = static_cast<int>(threadIdx.y) * cvb + static_cast<int>(threadIdx.x);
    int const nth = cvb * static_cast<int>(blockDim.y);
    int const elems = cvHere * V * taps;
    T const* wc = w + static_cast<int64_t>(cv0) * V * taps;
    for (int e = tid; e < elems; e += nth) {
      int const cl = e / taps, t = e - cl * taps;  // channel within the chunk, tap
      int const v = cl / V, j = cl % V;
      s[((t * (V / 4) + j / 4) * cvb + v) * 4 + (j % 4)] = toFloat(wc[e]);
    }
  }
  __syncthreads();
  int const cvl = static_cast<int>(threadIdx.x);
  if (cvl >= cvHere) return;  // no barrier below
  int const c0 = (cv0 + cvl) * V;

  float bias[V];
  depthwise::loadBias<T>(ep.bias, c0, bias);

  // Small kernels keep every tap's weights in registers for the whole loop; larger ones read a row per use.
  constexpr bool kHoist = KH > 0 && KH * KW * V <= 36;
  float wr[kHoist ? KH * KW : 1][V];
  if constexpr (kHoist) {
#pragma unroll
    for (int t = 0; t < KH * KW; ++t) tapWeights<V>(dwStaged, t, cvb, cvl, wr[t]);
  }

  int64_t const rowStride = static_cast<int64_t>(d.iw) * d.c;
  T const* const safe = x + c0;
  int const step = static_cast<int>(gridDim.x * blockDim.y);
  for (int tile = static_cast<int>(blockIdx.x * blockDim.y + threadIdx.y); tile < d.tiles; tile += step) {
    int const tw = tile % d.tilesW, r = tile / d.tilesW;
    int const oy = r % d.oh, b = r / d.oh;
    int const ox0 = tw * P;
    T const* const xb = x + static_cast<int64_t>(b) * d.ih * rowStride + c0;
    float acc[P][V];
#pragma unroll
    for (int p = 0; p < P; ++p)
#pragma unroll
      for (int j = 0; j < V; ++j) acc[p][j] = 0.f;

    if constexpr (KH > 0) {
      int const iy0 = oy * S - d.ph, ix0 = ox0 * S - d.pw;
#pragma unroll
      for (int ky = 0; ky < KH; ++ky) {
        int const iy = iy0 + ky;
        bool const rowOk = static_cast<unsigned>(iy) < static_cast<unsigned>(d.ih);
        T const* const xr = xb + static_cast<int64_t>(iy) * rowStride;
        float wrow[kHoist ? 1 : KW][V];
        if constexpr (!kHoist) {
#pragma unroll
          for (int kx = 0; kx < KW; ++kx) tapWeights<V>(dwStaged, ky * KW + kx, cvb, cvl, wrow[kx]);
        }
        // Input column q of the row window feeds output p through tap kx = q - p * S.
#pragma unroll
        for (int q = 0; q < (P - 1) * S + KW; ++q) {
          int const ix = ix0 + q;
          bool const ok = rowOk && static_cast<unsigned>(ix) < static_cast<unsigned>(d.iw);
          float xv[V];
          loadInput<T>(xr + static_cast<int64_t>(ix) * d.c, safe, ok, xv);
#pragma unroll
          for (int p = 0; p < P; ++p) {
            int const kx = q - p * S;
            if (kx < 0 || kx >= KW) continue;
            float const* wv;
            if constexpr (kHoist)
              wv = wr[ky * KW + kx];
            else
              wv = wrow[kx];
#pragma unroll
            for (int j = 0; j < V; ++j) acc[p][j] = fmaf(xv[j], wv[j], acc[p][j]);
          }
        }
      }
    } else {
      int const iy0 = oy * d.sh - d.ph, ix0 = ox0 * d.sw - d.pw;
      for (int ky = 0; ky < d.kh; ++ky) {
        int const iy = iy0 + ky * d.dh;
        bool const rowOk = static_cast<unsigned>(iy) < static_cast<unsigned>(d.ih);
        T const* const xr = xb + static_cast<int64_t>(iy) * rowStride;
#pragma unroll 4
        for (int kx = 0; kx < d.kw; ++kx) {
          int const ix = ix0 + kx * d.dw;
          bool const ok = rowOk && static_cast<unsigned>(ix) < static_cast<unsigned>(d.iw);
          float xv[V], wv[V];
          loadInput<T>(xr + static_cast<int64_t>(ix) * d.c, safe, ok, xv);
          tapWeights<V>(dwStaged, ky * d.kw + kx, cvb, cvl, wv);
#pragma unroll
          for (int j = 0; j < V; ++j) acc[0][j] = fmaf(xv[j], wv[j], acc[0][j]);
        }
      }
    }

    int64_t const rowOut = (static_cast<int64_t>(b) * d.oh + oy) * d.ow;
#pragma unroll
    for (int p = 0; p < P; ++p) {
      int const ox = ox0 + p;
      if (ox >= d.ow) break;
      depthwise::finishVector<T>(acc[p], bias, ep, y, (rowOut + ox) * d.c + c0);
    }
  }
}

std::atomic<int> gDwTileForTesting{0};  // setDepthwiseHwcVecTileForTesting

template <typename T>
using DwKernel = void (*)(DwParams, T const*, T const*, Epilogue, T*);

// The specialised kernel for this geometry and pixel tile, or null (the generic one runs).
template <typename T>
DwKernel<T> specialised(ConvGeom const& g, int p) {
  bool square = g.kernel[1] == g.kernel[2] && g.stride[1] == g.stride[2] && g.dil[1] == 1 && g.dil[2] == 1;
  if (!square) return nullptr;
  int64_t k = g.kernel[1], s = g.stride[1];
#define KILN_DW_CASE(KS, SS, PS) \
  if (k == KS && s == SS && p == PS) return depthwiseHwcVecKernel<T, KS, KS, SS, PS>;
  KILN_DW_CASE(3, 1, 4)
  KILN_DW_CASE(3, 2, 2)
  KILN_DW_CASE(3, 1, 1)
  KILN_DW_CASE(3, 2, 1)
  KILN_DW_CASE(5, 1, 4)
  KILN_DW_CASE(5, 2, 2)
  KILN_DW_CASE(5, 1, 1)
  KILN_DW_CASE(5, 2, 1)
#undef KILN_DW_CASE
  return nullptr;
}

template <typename T>
bool launchVec(ConvGeom const& g, T const* x, T const* w, Epilogue const& ep, T* y, cudaStream_t stream) {
  constexpr int V = vec::kWidth<T>;
  int64_t const outPixels = g.n * g.out[1] * g.out[2], inTotal = g.n * g.c * g.in[1] * g.in[2];
  int64_t const taps = g.kernel[1] * g.kernel[2];
  if (g.c % V != 0 || outPixels * g.c >= (int64_t{1} << 31) || inTotal >= (int64_t{1} << 31) || inTotal == 0)
    return false;
  if (!vec::aligned16(x) || !vec::aligned16(y) || !vec::aligned16(ep.bias) || !vec::aligned16(ep.residual))
    return false;
  if (!depthwise::windowFits(g)) return false;
  if (taps * V * 4 > kDwSmemBytes) return false;

  int const sms = vec::multiprocessorCount();
  int const cv = static_cast<int>(g.c / V);
  // Several pixels per thread (4 at stride 1; 2 at stride 2, whose wider input window costs registers) where that
  // still leaves 16 warps per SM; else one (small layers, batch 1). The generic kernel computes one.
  int const wide = g.stride[1] == 1 ? 4 : 2;
  int const forced = gDwTileForTesting.load(std::memory_order_relaxed);
  int p = forced == 1 ? 1 : wide;
  DwKernel<T> kernel = forced == -1 ? nullptr : specialised<T>(g, p);
  if (forced == 0 && (!kernel || outPixels * cv / wide < int64_t{sms} * 512)) {
    p = 1;
    kernel = specialised<T>(g, 1);
  }
  if (!kernel) {
    p = 1;
    kernel = depthwiseHwcVecKernel<T, 0, 0, 1, 1>;
  }

  // Channel vectors per block: up to 32, in equal chunks, as many as the shared memory holds.
  int chunks = (cv + kDwMaxVectorsPerBlock - 1) / kDwMaxVectorsPerBlock;
  int cvb = (cv + chunks - 1) / chunks;
  while (static_cast<int64_t>(cvb) * taps * V * 4 > kDwSmemBytes) {
    ++chunks;
    cvb = (cv + chunks - 1) / chunks;
  }
  chunks = (cv + cvb - 1) / cvb;
  if (chunks > 65535) return false;

  DwParams d{};
  depthwise::setGeometry(g, d);
  d.cv = cv;
  d.tilesW = (d.ow + p - 1) / p;
  int64_t const tiles = g.n * g.out[1] * d.tilesW;
  d.tiles = static_cast<int>(tiles);

  // Pixel-tile lanes per block: fill 128 threads, fewer where that leaves SMs idle (small layers).
  int ty = kDwThreads / cvb;
  if (ty < 1) ty = 1;
  while (ty > 1 && ((tiles + ty - 1) / ty) * chunks < 2 * int64_t{sms}) ty /= 2;
  // Enough blocks for a few waves; the grid-stride loop covers the rest, each thread staying on its channels.
  int64_t blocksX = (tiles + ty - 1) / ty;
  int64_t const cap = (int64_t{sms} * 32 + chunks - 1) / chunks;
  if (blocksX > cap) blocksX = cap;
  if (blocksX < 1) blocksX = 1;

  size_t const smem = static_cast<size_t>(taps) * cvb * V * sizeof(float);
  kernel<<<dim3(static_cast<unsigned>(blocksX), static_cast<unsigned>(chunks)), dim3(cvb, ty), smem, stream>>>(d, x, w,
                                                                                                               ep, y);
  return true;
}

}  // namespace

bool launchDepthwiseHwcVec(int32_t dtype, ConvGeom const& g, void const* x, void const* w, Epilogue const& ep, void* y,
                           cudaStream_t stream) {
  if (!depthwise::callOk(dtype, g)) return false;
  if (g.n * g.out[1] * g.out[2] == 0) return true;
  bool launched = false;
  bool const known = KILN_CUDA_DISPATCH_FLOAT(
      dtype,
      launched = launchVec<T>(g, static_cast<T const*>(x), static_cast<T const*>(w), ep, static_cast<T*>(y), stream));
  return known && launched;
}

void setDepthwiseHwcVecTileForTesting(int mode) { gDwTileForTesting.store(mode, std::memory_order_relaxed); }

int depthwiseHwcVecWidth(int32_t dtype) { return vec::width(dtype); }

}  // namespace kiln::cuda
