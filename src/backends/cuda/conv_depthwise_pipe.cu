// The pipelined channels-last depthwise 3x3 convolution (stride 1 or 2): persistent blocks loop over 8x16 output
// tiles while the next tile's input window streams into shared memory by cp.async (double buffered), so a block
// always has bytes in flight; each thread computes two neighbouring output pixels of one channel vector.
#include <cuda_runtime.h>

#include <atomic>

#include "backends/cuda/conv_depthwise.cuh"
#include "backends/cuda/conv_kernels.h"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/vector_io.cuh"

namespace kiln::cuda {
namespace {

using dev::toFloat;

constexpr int kTileH = 8;                           // output rows per tile
constexpr int kPairs = 8;                           // pixel pairs per tile row: 16 output columns
constexpr int kTileW = 2 * kPairs;                  // output columns per tile
constexpr int kThreadsPerVector = kTileH * kPairs;  // 64: one per pixel pair
constexpr int kMaxVectorsPerBlock = 4;
constexpr int kStages = 2;
constexpr int kMaxSmem = 100 * 1024;  // two blocks an SM at stride 2 with four vectors; opted in above 48 KiB

std::atomic<int> gPipeBlocksForTesting{0};  // > 0: at most this many blocks per channel chunk

// The geometry as the kernel reads it, 32-bit (the launcher checks that everything fits).
struct PipeParams {
  int n, ih, iw, oh, ow, c;
  int kh, kw, sh, sw, dh, dw, ph, pw;  // depthwise::setGeometry (3x3, sh == sw, dilation 1 here)
  int cvb;                             // channel vectors per block (1, 2 or 4; divides c / V)
  int tilesW, tilesH;                  // tiles per output row band, row bands per image
  int items;                           // n * tilesH * tilesW: one chunk's tiles
  int haloH, haloW;                    // the input window of one tile
};

__device__ __forceinline__ uint32_t smemAddr(void const* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes to shared dst from global src, or zeros where `inside` is false (src is then not read).
__device__ __forceinline__ void cpAsync16(void* dst, void const* src, bool inside) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smemAddr(dst)), "l"(src), "r"(inside ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void cpAsyncWaitOlder() { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }

// Starts the copy of item's input window (zeros in the padding) into `halo` [haloH][haloW][cvb] vectors.
template <typename T>
__device__ __forceinline__ void issueWindow(PipeParams const& d, T const* x, int cv0, int item, uint4* halo, int tid,
                                            int nth) {
  constexpr int V = vec::kWidth<T>;
  int const tx = item % d.tilesW, rest = item / d.tilesW;
  int const ty = rest % d.tilesH, b = rest / d.tilesH;
  int const iy0 = ty * kTileH * d.sh - d.ph, ix0 = tx * kTileW * d.sw - d.pw;
  T const* const xb = x + static_cast<int64_t>(b) * d.ih * d.iw * d.c + cv0 * V;
  int const vectors = d.haloH * d.haloW * d.cvb;
  for (int e = tid; e < vectors; e += nth) {
    int const v = e % d.cvb, hp = e / d.cvb;
    int const iy = iy0 + hp / d.haloW, ix = ix0 + hp % d.haloW;
    bool const inside = static_cast<unsigned>(iy) < static_cast<unsigned>(d.ih) &&
                        static_cast<unsigned>(ix) < static_cast<unsigned>(d.iw);
    T const* src = inside ? xb + (static_cast<int64_t>(iy) * d.iw + ix) * d.c + v * V : x;
    cpAsync16(halo + e, src, inside);
  }
}

// Block: threadIdx.x = pixel pair * cvb + channel vector (a warp's neighbouring lanes read neighbouring vectors of
// the window). Grid: x = persistent blocks of one chunk, y = channel chunks.
template <typename T, int S>
__global__ void __launch_bounds__(kThreadsPerVector* kMaxVectorsPerBlock)
    depthwisePipeKernel(PipeParams d, T const* __restrict__ x, T const* __restrict__ w, Epilogue ep, T* y) {
  constexpr int V = vec::kWidth<T>;
  constexpr int kIn = S + 3;  // input columns of one kernel row that the pair's two outputs read
  extern __shared__ uint4 pipeSmem[];
  int const cvb = d.cvb;
  int const stageVectors = d.haloH * d.haloW * cvb;
  float* const sw = reinterpret_cast<float*>(pipeSmem + kStages * stageVectors);  // [tap][cvb][V] fp32
  int const cv0 = static_cast<int>(blockIdx.y) * cvb;
  int const tid = static_cast<int>(threadIdx.x), nth = static_cast<int>(blockDim.x);

  {
    T const* wc = w + static_cast<int64_t>(cv0) * V * 9;  // w is [c][3][3]: the chunk is one run
    for (int e = tid; e < cvb * V * 9; e += nth) {
      int const cl = e / 9, t = e - cl * 9;
      sw[(t * cvb + cl / V) * V + cl % V] = toFloat(wc[e]);
    }
  }
  int const cvl = tid % cvb, pair = tid / cvb;
  int const pr = pair / kPairs, pc = pair % kPairs;  // output row and pair within the tile
  int const c0 = (cv0 + cvl) * V;
  float bias[V];
  depthwise::loadBias<T>(ep.bias, c0, bias);

  int item = static_cast<int>(blockIdx.x);
  int const step = static_cast<int>(gridDim.x);
  if (item < d.items) issueWindow(d, x, cv0, item, pipeSmem, tid, nth);
  cpAsyncCommit();
  for (int k = 0; item < d.items; item += step, ++k) {
    // The next window into the other buffer (read in the previous iteration, which ended with a barrier).
    int const next = item + step;
    if (next < d.items) issueWindow(d, x, cv0, next, pipeSmem + ((k + 1) % kStages) * stageVectors, tid, nth);
    cpAsyncCommit();
    cpAsyncWaitOlder();  // this thread's copies of `item`'s window have landed
    __syncthreads();     // and every thread's; the weights too (first iteration)
    uint4 const* const halo = pipeSmem + (k % kStages) * stageVectors;

    int const tx = item % d.tilesW, rest = item / d.tilesW;
    int const ty = rest % d.tilesH, b = rest / d.tilesH;
    int const oy = ty * kTileH + pr, ox = tx * kTileW + 2 * pc;
    if (oy < d.oh && ox < d.ow) {
      float acc0[V], acc1[V];
#pragma unroll
      for (int j = 0; j < V; ++j) acc0[j] = acc1[j] = 0.f;
#pragma unroll
      for (int ky = 0; ky < 3; ++ky) {
        uint4 const* const hrow = halo + ((pr * S + ky) * d.haloW + 2 * pc * S) * cvb + cvl;
#pragma unroll
        for (int i = 0; i < kIn; ++i) {
          float xv[V];
          vec::unpack<T>(hrow[i * cvb], xv);
          // Column i serves tap i of the first output and tap i - S of the second.
          if (i < 3) {
            float const* const wt = sw + ((ky * 3 + i) * cvb + cvl) * V;
#pragma unroll
            for (int j = 0; j < V; j += 4) {
              float4 const q = *reinterpret_cast<float4 const*>(wt + j);
              acc0[j] = fmaf(xv[j], q.x, acc0[j]);
              acc0[j + 1] = fmaf(xv[j + 1], q.y, acc0[j + 1]);
              acc0[j + 2] = fmaf(xv[j + 2], q.z, acc0[j + 2]);
              acc0[j + 3] = fmaf(xv[j + 3], q.w, acc0[j + 3]);
            }
          }
          if (i >= S && i - S < 3) {
            float const* const wt = sw + ((ky * 3 + i - S) * cvb + cvl) * V;
#pragma unroll
            for (int j = 0; j < V; j += 4) {
              float4 const q = *reinterpret_cast<float4 const*>(wt + j);
              acc1[j] = fmaf(xv[j], q.x, acc1[j]);
              acc1[j + 1] = fmaf(xv[j + 1], q.y, acc1[j + 1]);
              acc1[j + 2] = fmaf(xv[j + 2], q.z, acc1[j + 2]);
              acc1[j + 3] = fmaf(xv[j + 3], q.w, acc1[j + 3]);
            }
          }
        }
      }
      int64_t const o = ((static_cast<int64_t>(b) * d.oh + oy) * d.ow + ox) * d.c + c0;
      depthwise::finishVector<T>(acc0, bias, ep, y, o);
      if (ox + 1 < d.ow) depthwise::finishVector<T>(acc1, bias, ep, y, o + d.c);
    }
    __syncthreads();  // the window is read before the next iteration's copies overwrite its buffer
  }
}

// The window of one tile (kernel 3, dilation 1) and the shared memory of the stages and the weights.
int64_t pipeSmemBytes(int64_t stride, int v, int cvb, int64_t* haloH, int64_t* haloW) {
  *haloH = (kTileH - 1) * stride + 3;
  *haloW = (kTileW - 1) * stride + 3;
  return kStages * *haloH * *haloW * cvb * 16 + 9 * cvb * v * 4;
}

// 3x3, equal strides 1 or 2, no dilation, the window within 32-bit math.
bool pipeGeometry(ConvGeom const& g) {
  return g.kernel[1] == 3 && g.kernel[2] == 3 && g.stride[1] == g.stride[2] && (g.stride[1] == 1 || g.stride[1] == 2) &&
         g.dil[1] == 1 && g.dil[2] == 1 && depthwise::windowFits(g);
}

template <typename T>
bool launchPipe(ConvGeom const& g, T const* x, T const* w, Epilogue const& ep, T* y, cudaStream_t stream) {
  constexpr int V = vec::kWidth<T>;
  if (g.c % V != 0 || !pipeGeometry(g)) return false;
  int64_t const outTotal = g.n * g.out[1] * g.out[2] * g.c, inTotal = g.n * g.c * g.in[1] * g.in[2];
  if (outTotal >= (int64_t{1} << 31) || inTotal >= (int64_t{1} << 31) || inTotal == 0) return false;
  if (!vec::aligned16(x) || !vec::aligned16(y) || !vec::aligned16(ep.bias) || !vec::aligned16(ep.residual))
    return false;
  int const cv = static_cast<int>(g.c / V);
  int const cvb = cv % 4 == 0 ? 4 : cv % 2 == 0 ? 2 : 1;  // whole chunks: no idle channel lanes
  int64_t haloH = 0, haloW = 0;
  int64_t const smem = pipeSmemBytes(g.stride[1], V, cvb, &haloH, &haloW);
  if (smem > kMaxSmem) return false;
  int const chunks = cv / cvb;
  if (chunks > 65535) return false;

  PipeParams d{};
  d.n = static_cast<int>(g.n);
  depthwise::setGeometry(g, d);
  d.cvb = cvb;
  d.tilesW = (d.ow + kTileW - 1) / kTileW;
  d.tilesH = (d.oh + kTileH - 1) / kTileH;
  int64_t const items = g.n * d.tilesW * d.tilesH;
  if (items >= (int64_t{1} << 31) - 65536) return false;
  d.items = static_cast<int>(items);
  d.haloH = static_cast<int>(haloH);
  d.haloW = static_cast<int>(haloW);

  auto kernel = g.stride[1] == 1 ? depthwisePipeKernel<T, 1> : depthwisePipeKernel<T, 2>;
  int const threads = kThreadsPerVector * cvb;
  if (smem > 48 * 1024 && cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(smem)) != cudaSuccess) {
    (void)cudaGetLastError();  // not the fallback's error: the vectorized kernel runs instead
    return false;
  }
  // Resident blocks split between the chunks (at least one block per chunk); each loops over its chunk's tiles.
  unsigned const resident = vec::persistentBlocks(kernel, threads, static_cast<size_t>(smem), items * chunks);
  int64_t perChunk = (static_cast<int64_t>(resident) + chunks - 1) / chunks;
  if (perChunk > items) perChunk = items;
  int const forced = gPipeBlocksForTesting.load(std::memory_order_relaxed);
  if (forced > 0 && perChunk > forced) perChunk = forced;
  if (perChunk < 1) perChunk = 1;
  kernel<<<dim3(static_cast<unsigned>(perChunk), static_cast<unsigned>(chunks)), threads, static_cast<size_t>(smem),
           stream>>>(d, x, w, ep, y);
  return true;
}

}  // namespace

void setDepthwiseHwcPipeBlocksForTesting(int blocks) { gPipeBlocksForTesting.store(blocks, std::memory_order_relaxed); }

bool depthwiseHwcPipeFits(int32_t dtype, ConvGeom const& g) {
  int const v = vec::width(dtype);
  if (v == 0 || !pipeGeometry(g)) return false;
  int64_t haloH = 0, haloW = 0;
  return pipeSmemBytes(g.stride[1], v, 1, &haloH, &haloW) <= kMaxSmem;
}

bool launchDepthwiseHwcPipe(int32_t dtype, ConvGeom const& g, void const* x, void const* w, Epilogue const& ep, void* y,
                            cudaStream_t stream) {
  if (!depthwise::callOk(dtype, g)) return false;
  if (g.n * g.out[1] * g.out[2] == 0) return true;
  bool launched = false;
  bool const known = KILN_CUDA_DISPATCH_FLOAT(
      dtype,
      launched = launchPipe<T>(g, static_cast<T const*>(x), static_cast<T const*>(w), ep, static_cast<T*>(y), stream));
  return known && launched;
}

}  // namespace kiln::cuda
