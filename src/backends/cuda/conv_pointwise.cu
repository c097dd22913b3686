// Pointwise (1x1) convolution kernels: the epilogue y = act(y + bias[channel] + residual) in place (gemm_epilogue.cu's
// vectorized pass), which follows a cuBLASLt GEMM where its epilogue cannot apply the activation (ReLU6 = clip, and
// every other non-ReLU one) or the bias of a row-major output; and a channels-last fp16/bf16 GEMM on tensor cores
// (wmma) with bias, residual and any activation fused, so that y is written once.
#include <mma.h>

#include "backends/cuda/activation.cuh"
#include "backends/cuda/conv_kernels.h"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/gemm_epilogue_kernels.h"
#include "backends/cuda/vector_io.cuh"

namespace kiln::cuda {
namespace {

// The tensor-core GEMM y [m, n] = x [m, k] * w [n, k]^T (x, w, y row-major: channels-last pixels by channels) with
// the epilogue fused. A block of 8 warps computes 128 rows x kBN columns, warps 4 (rows) x 2 (columns), each 32 x
// kBN / 2 as 2 x kBN / 32 wmma 16x16x16 tiles with fp32 accumulators; k goes in steps of 32 through shared memory
// (16-byte loads, zeros past m, n and k: k and n are multiples of 8, so a vector is wholly in or out). Each warp
// then moves one accumulator tile at a time through its own fp32 scratch, and each lane finishes 8 consecutive
// channels of one row: bias, residual, activation, one 16-byte store.
namespace wmma = nvcuda::wmma;

constexpr int kWmmaBM = 128;
constexpr int kWmmaBK = 32;
constexpr int kWmmaLd =
    kWmmaBK + 8;  // smem row of x / w tiles (elements): 80 bytes, rows 16 apart stay 32-byte aligned
constexpr int kWmmaThreads = 256;
constexpr int kScratchLd = 20;  // fp32 scratch row: a multiple of 4 (store_matrix_sync), 16-byte rows

template <typename T, int kBN>
__global__ void __launch_bounds__(kWmmaThreads)
    pointwiseWmmaKernel(int64_t m, int n, int k, T const* __restrict__ x, T const* __restrict__ w, Epilogue ep, T* y) {
  constexpr int FN = kBN / 32;  // accumulator tiles per warp along n
  constexpr int V = 8;          // elements per 16-byte vector
  __shared__ __align__(32) T xs[kWmmaBM * kWmmaLd];
  __shared__ __align__(32) T ws[kBN * kWmmaLd];
  __shared__ __align__(32) float scratch[8][16 * kScratchLd];
  int const tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
  int const warpM = warp / 2, warpN = warp % 2;
  // Neighbouring blocks take the column tiles of one row tile, so x's rows come from L2 after the first read.
  int const colTiles = (n + kBN - 1) / kBN;
  int64_t const row0 = static_cast<int64_t>(blockIdx.x / static_cast<unsigned>(colTiles)) * kWmmaBM;
  int const col0 = static_cast<int>(blockIdx.x % static_cast<unsigned>(colTiles)) * kBN;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][FN];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.f);

  for (int k0 = 0; k0 < k; k0 += kWmmaBK) {
    __syncthreads();  // the previous step's tiles are read
    for (int v = tid; v < kWmmaBM * (kWmmaBK / V); v += kWmmaThreads) {
      int const r = v / (kWmmaBK / V), kc = (v % (kWmmaBK / V)) * V;
      int64_t const gm = row0 + r;
      int const gk = k0 + kc;
      uint4 u = make_uint4(0u, 0u, 0u, 0u);
      if (gm < m && gk < k) u = __ldg(reinterpret_cast<uint4 const*>(x + gm * k + gk));
      *reinterpret_cast<uint4*>(xs + r * kWmmaLd + kc) = u;
    }
    for (int v = tid; v < kBN * (kWmmaBK / V); v += kWmmaThreads) {
      int const r = v / (kWmmaBK / V), kc = (v % (kWmmaBK / V)) * V;
      int const gn = col0 + r, gk = k0 + kc;
      uint4 u = make_uint4(0u, 0u, 0u, 0u);
      if (gn < n && gk < k) u = __ldg(reinterpret_cast<uint4 const*>(w + static_cast<int64_t>(gn) * k + gk));
      *reinterpret_cast<uint4*>(ws + r * kWmmaLd + kc) = u;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kWmmaBK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> b[FN];
#pragma unroll
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(a[i], xs + (warpM * 32 + i * 16) * kWmmaLd + kk, kWmmaLd);
        // w's tile is [n][k]: column-major k x n, element (kk, nn) at nn * ld + kk.
#pragma unroll
      for (int j = 0; j < FN; ++j)
        wmma::load_matrix_sync(b[j], ws + (warpN * (kBN / 2) + j * 16) * kWmmaLd + kk, kWmmaLd);
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
  }

  float* const sc = scratch[warp];
  T const* const bias = static_cast<T const*>(ep.bias);
  T const* const residual = static_cast<T const*>(ep.residual);
  int const lr = lane / 2, lc = (lane % 2) * V;  // this lane's row and first column within a 16x16 tile
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) {
      wmma::store_matrix_sync(sc, acc[i][j], kScratchLd, wmma::mem_row_major);
      __syncwarp();
      int64_t const gm = row0 + warpM * 32 + i * 16 + lr;
      int const gn = col0 + warpN * (kBN / 2) + j * 16 + lc;
      if (gm < m && gn < n) {
        float v[V];
#pragma unroll
        for (int e = 0; e < V; ++e) v[e] = sc[lr * kScratchLd + lc + e];
        if (bias) {
          float b[V];
          vec::unpack<T>(__ldg(reinterpret_cast<uint4 const*>(bias + gn)), b);
#pragma unroll
          for (int e = 0; e < V; ++e) v[e] += b[e];
        }
        int64_t const o = gm * n + gn;
        if (residual) {  // may be y's own memory: read by the lane that then writes it, through the coherent path
          float r[V];
          vec::unpack<T>(*reinterpret_cast<uint4 const*>(residual + o), r);
#pragma unroll
          for (int e = 0; e < V; ++e) v[e] += r[e];
        }
        if (ep.activation >= 0) {
#pragma unroll
          for (int e = 0; e < V; ++e) v[e] = dev::activate<float>(ep.activation, v[e], ep.alpha, ep.beta);
        }
        *reinterpret_cast<uint4*>(y + o) = vec::pack<T>(v);
      }
      __syncwarp();  // the scratch is read before the next tile overwrites it
    }
}

// 128 columns per block only where they divide n and are many (ResNet's 256 and up); else 64: less padding on
// counts such as 96 or 192 (MobileNetV2's), fewer registers per thread, more blocks per SM.
int wmmaColumns(int64_t n) { return n >= 256 && n % 128 == 0 ? 128 : 64; }

template <typename T>
void launchWmma(int64_t m, int n, int k, T const* x, T const* w, Epilogue const& ep, T* y, cudaStream_t stream) {
  int const bn = wmmaColumns(n);
  auto const blocks = static_cast<unsigned>((m + kWmmaBM - 1) / kWmmaBM * ((n + bn - 1) / bn));
  if (bn == 64)
    pointwiseWmmaKernel<T, 64><<<blocks, kWmmaThreads, 0, stream>>>(m, n, k, x, w, ep, y);
  else
    pointwiseWmmaKernel<T, 128><<<blocks, kWmmaThreads, 0, stream>>>(m, n, k, x, w, ep, y);
}

}  // namespace

bool launchPointwiseWmma(int32_t dtype, int64_t m, int64_t n, int64_t k, void const* x, void const* w,
                         Epilogue const& ep, void* y, cudaStream_t stream) {
  if (dtype != dev::kHALF && dtype != dev::kBF16) return false;
  if (m <= 0 || n <= 0 || k <= 0 || n % 8 != 0 || k % 8 != 0 || n > (int64_t{1} << 24) || k > (int64_t{1} << 24))
    return false;
  int const bn = wmmaColumns(n);
  if ((m + kWmmaBM - 1) / kWmmaBM * ((n + bn - 1) / bn) >= (int64_t{1} << 31)) return false;  // one grid dim
  if (!vec::aligned16(x) || !vec::aligned16(w) || !vec::aligned16(y) || !vec::aligned16(ep.bias) ||
      !vec::aligned16(ep.residual))
    return false;
  auto const ni = static_cast<int>(n), ki = static_cast<int>(k);
  if (dtype == dev::kHALF)
    launchWmma<__half>(m, ni, ki, static_cast<__half const*>(x), static_cast<__half const*>(w), ep,
                       static_cast<__half*>(y), stream);
  else
    launchWmma<__nv_bfloat16>(m, ni, ki, static_cast<__nv_bfloat16 const*>(x), static_cast<__nv_bfloat16 const*>(w), ep,
                              static_cast<__nv_bfloat16*>(y), stream);
  return true;
}

bool launchEpilogueVec(int32_t dtype, int64_t n, int64_t k, int64_t spatial, Epilogue const& ep, void* y,
                       cudaStream_t stream) {
  int const width = vec::width(dtype);
  int64_t const total = n * k * spatial;
  if (width == 0 || total <= 0 || total >= (int64_t{1} << 31) || k < 1 || spatial < 1) return false;
  // Channels-last is spatial == 1: a vector spans `width` channels, so k must hold whole vectors (and the bias
  // vectors are then 16-byte aligned). Row-major: a vector stays within one channel's plane.
  bool const channelsLast = spatial == 1;
  if (channelsLast ? k % width != 0 : spatial % width != 0) return false;
  GemmEpilogue e;
  e.bias = ep.bias;
  e.biasPeriod = k;
  e.biasRow = spatial;
  e.residual = ep.residual;
  e.activation = ep.activation;
  e.alpha = ep.alpha;
  e.beta = ep.beta;
  e.vectorsPerThread = 1;  // one vector per thread, as this pass has always been launched
  return launchGemmEpilogue(y, dtype, total, e, stream);
}

}  // namespace kiln::cuda
