// The shared-memory-tiled channels-last depthwise 2-D convolution: a block computes an 8x8 tile of output pixels
// for 1, 2 or 4 16-byte channel vectors of one image at a time; the tile's input window (the halo included) is
// staged once in shared memory with 16-byte loads, so each input vector leaves global memory once per tile instead
// of once per tap, and the block's weights once as fp32.
#include <cuda_runtime.h>

#include "backends/cuda/conv_depthwise.cuh"
#include "backends/cuda/conv_kernels.h"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/vector_io.cuh"

namespace kiln::cuda {
namespace {

using dev::toFloat;

constexpr int kTileH = 8;  // output rows per tile
constexpr int kTileW = 8;  // output columns per tile
constexpr int kTilePixels = kTileH * kTileW;
constexpr int kMaxVectorsPerBlock = 4;
constexpr int kSmemBytes = 48 * 1024;  // no opt-in needed

// The geometry as the kernel reads it, 32-bit (the launcher checks that everything fits).
struct TileParams {
  int n, ih, iw, oh, ow, c;
  int kh, kw, sh, sw, dh, dw, ph, pw;  // depthwise::setGeometry (and n)
  int cv;                              // channel vectors: c / V
  int cvb;                             // channel vectors per block (1, 2 or 4; divides cv)
  int tilesW;                          // tiles per output row band: ceil(ow / kTileW)
  int haloH, haloW;                    // the input window of one tile
};

// Block: threadIdx.x = pixel * cvb + channel vector, so a warp reads neighbouring 16-byte words of the staged window.
// Grid: x = output tile of the image, y = channel chunk, z = images (a loop past 65535).
template <typename T>
__global__ void __launch_bounds__(kTilePixels* kMaxVectorsPerBlock)
    depthwiseHwcTiledKernel(TileParams d, T const* __restrict__ x, T const* __restrict__ w, Epilogue ep, T* y) {
  constexpr int V = vec::kWidth<T>;
  extern __shared__ uint4 tiledSmem[];
  uint4* const halo = tiledSmem;  // [haloH][haloW][cvb] raw input vectors (zeros in the padding)
  // [tap][cvb][V] fp32, 16-byte aligned: it follows whole uint4 words.
  float* const sw = reinterpret_cast<float*>(tiledSmem + d.haloH * d.haloW * d.cvb);
  int const cvb = d.cvb;
  int const cv0 = static_cast<int>(blockIdx.y) * cvb;
  int const taps = d.kh * d.kw;
  int const tid = static_cast<int>(threadIdx.x), nth = static_cast<int>(blockDim.x);

  // This chunk's weights: w is [c][kh][kw], so the chunk's channels are one contiguous run.
  {
    T const* wc = w + static_cast<int64_t>(cv0) * V * taps;
    int const elems = cvb * V * taps;
    for (int e = tid; e < elems; e += nth) {
      int const cl = e / taps, t = e - cl * taps;  // channel within the chunk, tap
      sw[(t * cvb + cl / V) * V + cl % V] = toFloat(wc[e]);
    }
  }

  int const tileY = static_cast<int>(blockIdx.x) / d.tilesW, tileX = static_cast<int>(blockIdx.x) % d.tilesW;
  int const oy0 = tileY * kTileH, ox0 = tileX * kTileW;
  int const iy0 = oy0 * d.sh - d.ph, ix0 = ox0 * d.sw - d.pw;  // the window's origin in the input
  int const cvl = tid % cvb, pix = tid / cvb;
  int const oy = oy0 + pix / kTileW, ox = ox0 + pix % kTileW;
  bool const active = pix < kTilePixels && oy < d.oh && ox < d.ow;
  int const c0 = (cv0 + cvl) * V;

  float bias[V];
  depthwise::loadBias<T>(active ? ep.bias : nullptr, c0, bias);

  int const haloVectors = d.haloH * d.haloW * cvb;
  int64_t const imageIn = static_cast<int64_t>(d.ih) * d.iw * d.c;
  for (int b = static_cast<int>(blockIdx.z); b < d.n; b += static_cast<int>(gridDim.z)) {
    __syncthreads();  // the weights are staged; the previous image's window is no longer read
    T const* const xb = x + b * imageIn + cv0 * V;
    for (int e = tid; e < haloVectors; e += nth) {
      int const v = e % cvb, hp = e / cvb;
      int const iy = iy0 + hp / d.haloW, ix = ix0 + hp % d.haloW;
      uint4 u = make_uint4(0u, 0u, 0u, 0u);
      if (static_cast<unsigned>(iy) < static_cast<unsigned>(d.ih) &&
          static_cast<unsigned>(ix) < static_cast<unsigned>(d.iw))
        u = __ldg(reinterpret_cast<uint4 const*>(xb + (static_cast<int64_t>(iy) * d.iw + ix) * d.c + v * V));
      halo[e] = u;
    }
    __syncthreads();
    if (!active) continue;  // no barrier before the loop's next iteration begins with one that all reach

    float acc[V];
#pragma unroll
    for (int j = 0; j < V; ++j) acc[j] = 0.f;
    int const ly = (oy - oy0) * d.sh, lx = (ox - ox0) * d.sw;  // tap (0, 0) in the window
    for (int ky = 0; ky < d.kh; ++ky) {
      uint4 const* const hrow = halo + ((ly + ky * d.dh) * d.haloW + lx) * cvb + cvl;
      float const* const wrow = sw + (ky * d.kw * cvb + cvl) * V;
#pragma unroll 3
      for (int kx = 0; kx < d.kw; ++kx) {
        float xv[V];
        vec::unpack<T>(hrow[kx * d.dw * cvb], xv);
        float const* const wt = wrow + kx * cvb * V;
#pragma unroll
        for (int j = 0; j < V; j += 4) {
          float4 const q = *reinterpret_cast<float4 const*>(wt + j);
          acc[j] = fmaf(xv[j], q.x, acc[j]);
          acc[j + 1] = fmaf(xv[j + 1], q.y, acc[j + 1]);
          acc[j + 2] = fmaf(xv[j + 2], q.z, acc[j + 2]);
          acc[j + 3] = fmaf(xv[j + 3], q.w, acc[j + 3]);
        }
      }
    }

    int64_t const o = ((static_cast<int64_t>(b) * d.oh + oy) * d.ow + ox) * d.c + c0;
    depthwise::finishVector<T>(acc, bias, ep, y, o);
  }
}

// The window of one tile and the shared memory it and the weights take, for V-element vectors and cvb of them.
int64_t smemBytes(ConvGeom const& g, int v, int cvb, int64_t* haloH, int64_t* haloW) {
  *haloH = (kTileH - 1) * g.stride[1] + (g.kernel[1] - 1) * g.dil[1] + 1;
  *haloW = (kTileW - 1) * g.stride[2] + (g.kernel[2] - 1) * g.dil[2] + 1;
  return *haloH * *haloW * cvb * 16 + g.kernel[1] * g.kernel[2] * cvb * v * 4;
}

template <typename T>
bool launchTiled(ConvGeom const& g, T const* x, T const* w, Epilogue const& ep, T* y, cudaStream_t stream) {
  constexpr int V = vec::kWidth<T>;
  if (g.c % V != 0) return false;
  int64_t const outTotal = g.n * g.out[1] * g.out[2] * g.c, inTotal = g.n * g.c * g.in[1] * g.in[2];
  if (outTotal >= (int64_t{1} << 31) || inTotal >= (int64_t{1} << 31) || inTotal == 0) return false;
  if (!vec::aligned16(x) || !vec::aligned16(y) || !vec::aligned16(ep.bias) || !vec::aligned16(ep.residual))
    return false;
  if (!depthwise::windowFits(g)) return false;
  int const cv = static_cast<int>(g.c / V);
  int cvb = cv % 4 == 0 ? 4 : cv % 2 == 0 ? 2 : 1;  // whole chunks: no idle channel lanes
  int64_t haloH = 0, haloW = 0;
  int64_t smem = smemBytes(g, V, cvb, &haloH, &haloW);
  while (smem > kSmemBytes && cvb > 1) {
    cvb /= 2;
    smem = smemBytes(g, V, cvb, &haloH, &haloW);
  }
  if (smem > kSmemBytes) return false;
  int const chunks = cv / cvb;
  if (chunks > 65535) return false;

  TileParams d{};
  d.n = static_cast<int>(g.n);
  depthwise::setGeometry(g, d);
  d.cv = cv;
  d.cvb = cvb;
  d.tilesW = (d.ow + kTileW - 1) / kTileW;
  d.haloH = static_cast<int>(haloH);
  d.haloW = static_cast<int>(haloW);
  int64_t const tiles = static_cast<int64_t>(d.tilesW) * ((d.oh + kTileH - 1) / kTileH);
  int64_t const images = g.n < 65535 ? g.n : 65535;
  depthwiseHwcTiledKernel<T>
      <<<dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(chunks), static_cast<unsigned>(images)),
         kTilePixels * cvb, static_cast<size_t>(smem), stream>>>(d, x, w, ep, y);
  return true;
}

}  // namespace

bool depthwiseHwcTiledFits(int32_t dtype, ConvGeom const& g) {
  int const v = vec::width(dtype);
  for (int i = 1; i < 3; ++i)
    if (!depthwise::fitsInt(g.kernel[i]) || !depthwise::fitsInt(g.stride[i]) || !depthwise::fitsInt(g.dil[i]))
      return false;
  int64_t haloH = 0, haloW = 0;
  return v > 0 && smemBytes(g, v, 1, &haloH, &haloW) <= kSmemBytes;
}

bool launchDepthwiseHwcTiled(int32_t dtype, ConvGeom const& g, void const* x, void const* w, Epilogue const& ep,
                             void* y, cudaStream_t stream) {
  if (!depthwise::callOk(dtype, g)) return false;
  if (g.n * g.out[1] * g.out[2] == 0) return true;
  bool launched = false;
  bool const known = KILN_CUDA_DISPATCH_FLOAT(
      dtype,
      launched = launchTiled<T>(g, static_cast<T const*>(x), static_cast<T const*>(w), ep, static_cast<T*>(y), stream));
  return known && launched;
}

}  // namespace kiln::cuda
