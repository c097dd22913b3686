// MatrixMultiply's tensor-core GEMM for fp16 / bf16 (the matrixmultiply_cuda_mma_* tactics, matmul_mma.cc): one
// row-major a [M, K] against b [K, N] or [N, K], fp32 accumulation in mma.sync m16n8k16, with the bias along N, a
// residual and any activation applied to the fp32 sums before the one rounding to the output's type. It exists
// for the small-M GEMMs of batch-1 transformers, where cuBLASLt's kernels are bound by their fixed cost and an
// activation it has no epilogue for (GELU-erf) costs a pass of its own: here the whole node is one kernel.
//
// A block of 4 warps (2 x 2) computes a BM x BN tile of y; its K loop streams BK = 32 deep slices of a and b into a
// ring of shared-memory stages with cp.async (16-byte pieces, zero-filled past M, N or K), ldmatrix feeds the mma
// fragments (with .trans for b [K, N]), and each shared row is padded by 16 bytes so that the eight row addresses of
// an ldmatrix fall in distinct banks.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/cuda/activation.cuh"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/matmul_kernels.h"

namespace kiln::cuda {
namespace {

constexpr int kMmaThreads = 128;
constexpr int kPad = 8;  // elements of padding per shared row (16 bytes)

__device__ __forceinline__ void cpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// c += a (16 x 16, row) * b (16 x 8, col), fp32 accumulators.
template <typename T>
__device__ __forceinline__ void mma16816(float (&c)[4], uint32_t const (&a)[4], uint32_t b0, uint32_t b1);
template <>
__device__ __forceinline__ void mma16816<__half>(float (&c)[4], uint32_t const (&a)[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma16816<__nv_bfloat16>(float (&c)[4], uint32_t const (&a)[4], uint32_t b0,
                                                        uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two neighbouring elements of y's row (4-byte aligned: n is even and so is the column).
template <typename T>
struct alignas(4) Pair {
  T x, y;
};

// cp.async of 16 bytes to a shared address (zero-filled where !valid), and ldmatrix x4 from one (.trans: each 8 x 8
// piece transposed), the shared addresses as 32-bit offsets computed once per thread.
__device__ __forceinline__ void cpAsync16(uint32_t smem, void const* gmem, bool valid) {
  int const bytes = valid ? 16 : 0;  // 0: the 16 bytes are zero-filled, nothing is read
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem), "l"(gmem), "r"(bytes));
}
__device__ __forceinline__ void ldmatrixX4(uint32_t (&r)[4], uint32_t smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem));
}
__device__ __forceinline__ void ldmatrixX4Trans(uint32_t (&r)[4], uint32_t smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem));
}

template <typename T, int BM, int BN, int BK, int STAGES, bool TRANS_B>
__global__ void __launch_bounds__(kMmaThreads)
    mmaGemmKernel(T const* __restrict__ a, T const* __restrict__ b, T* __restrict__ y, int m, int n, int k,
                  T const* __restrict__ bias, T const* __restrict__ residual, int act, float alpha, float beta) {
  constexpr int WM = BM / 2, WN = BN / 2;  // warp tile (2 x 2 warps)
  constexpr int MI = WM / 16, NI = WN / 8;
  static_assert(MI >= 1 && NI >= 2 && NI % 2 == 0, "tile too small for the warp layout");
  constexpr int A_STRIDE = BK + kPad;
  constexpr int B_ROWS = TRANS_B ? BN : BK;
  constexpr int B_STRIDE = TRANS_B ? BK + kPad : BN + kPad;
  constexpr int A_ELEMS = BM * A_STRIDE, B_ELEMS = B_ROWS * B_STRIDE;
  constexpr int STAGE_BYTES = (A_ELEMS + B_ELEMS) * 2;
  // 16-byte pieces of a stage each thread copies (compile-time counts: no loop over the block's threads).
  constexpr int A_PIECES = BM * BK / 8 / kMmaThreads, B_PIECES = BN * BK / 8 / kMmaThreads;
  static_assert(A_PIECES * kMmaThreads * 8 == BM * BK && B_PIECES * kMmaThreads * 8 == BN * BK, "tile split");
  __shared__ __align__(16) uint16_t smem[STAGES * (A_ELEMS + B_ELEMS)];

  int const tid = static_cast<int>(threadIdx.x);
  int const row0 = static_cast<int>(blockIdx.y) * BM, col0 = static_cast<int>(blockIdx.x) * BN;
  int const ktiles = (k + BK - 1) / BK;
  uint32_t const smem0 = static_cast<uint32_t>(__cvta_generic_to_shared(smem));

  // Each piece's source (advanced by one stage's depth per load), shared offset within a stage, the validity of
  // its row / column (fixed) and its offset along K within the stage (checked against k per load: k % 8 == 0, so
  // a piece is wholly in or out).
  T const* aSrc[A_PIECES];
  uint32_t aDst[A_PIECES];
  bool aOk[A_PIECES];
  int aK[A_PIECES];
#pragma unroll
  for (int i = 0; i < A_PIECES; ++i) {
    int const c = tid + i * kMmaThreads, r = c / (BK / 8), kc = (c % (BK / 8)) * 8;
    aOk[i] = row0 + r < m;
    aK[i] = kc;
    aSrc[i] = a + (aOk[i] ? static_cast<int64_t>(row0 + r) * k + kc : 0);
    aDst[i] = static_cast<uint32_t>((r * A_STRIDE + kc) * 2);
  }
  T const* bSrc[B_PIECES];
  uint32_t bDst[B_PIECES];
  bool bOk[B_PIECES];
  int bK[B_PIECES];
#pragma unroll
  for (int i = 0; i < B_PIECES; ++i) {
    int const c = tid + i * kMmaThreads;
    if (TRANS_B) {  // b [N, K]: rows of n, k contiguous
      int const r = c / (BK / 8), kc = (c % (BK / 8)) * 8;
      bOk[i] = col0 + r < n;
      bK[i] = kc;
      bSrc[i] = b + (bOk[i] ? static_cast<int64_t>(col0 + r) * k + kc : 0);
      bDst[i] = static_cast<uint32_t>((A_ELEMS + r * B_STRIDE + kc) * 2);
    } else {  // b [K, N]: rows of k, n contiguous
      int const r = c / (BN / 8), nc = (c % (BN / 8)) * 8;
      bOk[i] = col0 + nc < n;
      bK[i] = r;
      bSrc[i] = b + (bOk[i] ? static_cast<int64_t>(r) * n + col0 + nc : 0);
      bDst[i] = static_cast<uint32_t>((A_ELEMS + r * B_STRIDE + nc) * 2);
    }
  }
  int64_t const bStep = TRANS_B ? BK : static_cast<int64_t>(BK) * n;  // elements one stage advances b

  // Loads the next stage (depth kLoad) into the ring's slot at byte offset `slot`, then advances the sources.
  int kLoad = 0;
  auto loadNext = [&](uint32_t slot) {
#pragma unroll
    for (int i = 0; i < A_PIECES; ++i) {
      bool const ok = aOk[i] && kLoad + aK[i] < k;
      cpAsync16(smem0 + slot + aDst[i], ok ? aSrc[i] : a, ok);
      aSrc[i] += BK;
    }
#pragma unroll
    for (int i = 0; i < B_PIECES; ++i) {
      bool const ok = bOk[i] && kLoad + bK[i] < k;
      cpAsync16(smem0 + slot + bDst[i], ok ? bSrc[i] : b, ok);
      bSrc[i] += bStep;
    }
    kLoad += BK;
  };

  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles) loadNext(static_cast<uint32_t>(s * STAGE_BYTES));
    cpAsyncCommit();
  }

  // This lane's ldmatrix addresses within a stage, for kk = 0 (kk = 16 adds 32 bytes along K).
  int const warp = tid / 32, lane = tid % 32;
  int const wm = warp / 2, wn = warp % 2;
  uint32_t aFrag[MI];
#pragma unroll
  for (int i = 0; i < MI; ++i)
    aFrag[i] = static_cast<uint32_t>(((wm * WM + i * 16 + (lane % 16)) * A_STRIDE + (lane / 16) * 8) * 2);
  uint32_t bFrag[NI / 2];
#pragma unroll
  for (int j = 0; j < NI; j += 2) {
    if (TRANS_B) {
      int const nr = wn * WN + j * 8 + (lane % 8) + (lane / 16) * 8, c = ((lane / 8) % 2) * 8;
      bFrag[j / 2] = static_cast<uint32_t>((A_ELEMS + nr * B_STRIDE + c) * 2);
    } else {
      int const kr = (lane % 8) + ((lane / 8) % 2) * 8, c = wn * WN + j * 8 + (lane / 16) * 8;
      bFrag[j / 2] = static_cast<uint32_t>((A_ELEMS + kr * B_STRIDE + c) * 2);
    }
  }
  constexpr uint32_t B_KK_STEP = TRANS_B ? 16 * 2 : 16 * B_STRIDE * 2;  // bytes from kk = 0 to kk = 16

  uint32_t readSlot = 0, writeSlot = static_cast<uint32_t>((STAGES - 1) * STAGE_BYTES);
  for (int kt = 0; kt < ktiles; ++kt) {
    cpAsyncWait<STAGES - 2>();  // stage kt has landed (for this thread) ...
    __syncthreads();            // ... for every thread, and the slot refilled next is no longer read
    if (kt + STAGES - 1 < ktiles) loadNext(writeSlot);
    cpAsyncCommit();
    writeSlot = writeSlot + STAGE_BYTES == STAGES * STAGE_BYTES ? 0 : writeSlot + STAGE_BYTES;
    uint32_t const base = smem0 + readSlot;
    readSlot = readSlot + STAGE_BYTES == STAGES * STAGE_BYTES ? 0 : readSlot + STAGE_BYTES;
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      uint32_t af[MI][4];
#pragma unroll
      for (int i = 0; i < MI; ++i) ldmatrixX4(af[i], base + aFrag[i] + kk * 32);
      uint32_t bf[NI][2];
#pragma unroll
      for (int j = 0; j < NI; j += 2) {
        uint32_t r4[4];
        if (TRANS_B)
          ldmatrixX4(r4, base + bFrag[j / 2] + kk * B_KK_STEP);
        else
          ldmatrixX4Trans(r4, base + bFrag[j / 2] + kk * B_KK_STEP);
        bf[j][0] = r4[0];
        bf[j][1] = r4[1];
        bf[j + 1][0] = r4[2];
        bf[j + 1][1] = r4[3];
      }
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) mma16816<T>(acc[i][j], af[i], bf[j][0], bf[j][1]);
    }
  }
  cpAsyncWait<0>();

  // Accumulator (i, j) holds rows g and g + 8 of its 16 x 8 piece, columns 2t and 2t + 1 (g = lane / 4, t = lane % 4).
#pragma unroll
  for (int j = 0; j < NI; ++j) {
    int const c = col0 + wn * WN + j * 8 + (lane % 4) * 2;
    if (c >= n) continue;  // n is even: c + 1 < n as well
    float b0 = 0.f, b1 = 0.f;
    if (bias) {
      Pair<T> const bv = *reinterpret_cast<Pair<T> const*>(bias + c);
      b0 = dev::toFloat(bv.x);
      b1 = dev::toFloat(bv.y);
    }
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        int const r = row0 + wm * WM + i * 16 + lane / 4 + h * 8;
        if (r >= m) continue;
        int64_t const at = static_cast<int64_t>(r) * n + c;
        float v0 = acc[i][j][2 * h] + b0, v1 = acc[i][j][2 * h + 1] + b1;
        if (residual) {
          Pair<T> const rv = *reinterpret_cast<Pair<T> const*>(residual + at);
          v0 += dev::toFloat(rv.x);
          v1 += dev::toFloat(rv.y);
        }
        if (act >= 0) {
          v0 = dev::activate<float>(act, v0, alpha, beta);
          v1 = dev::activate<float>(act, v1, alpha, beta);
        }
        Pair<T> out;
        out.x = dev::fromFloat<T>(v0);
        out.y = dev::fromFloat<T>(v1);
        *reinterpret_cast<Pair<T>*>(y + at) = out;
      }
    }
  }
}

template <typename T, int BM, int BN, int BK, int STAGES>
void launchTile(MatmulMmaCall const& c, cudaStream_t stream) {
  dim3 grid(static_cast<unsigned>((c.n + BN - 1) / BN), static_cast<unsigned>((c.m + BM - 1) / BM));
  auto const* a = static_cast<T const*>(c.a);
  auto const* b = static_cast<T const*>(c.b);
  auto* y = static_cast<T*>(c.y);
  auto const* bias = static_cast<T const*>(c.bias);
  auto const* residual = static_cast<T const*>(c.residual);
  int const m = static_cast<int>(c.m), n = static_cast<int>(c.n), k = static_cast<int>(c.k);
  if (c.transB)
    mmaGemmKernel<T, BM, BN, BK, STAGES, true>
        <<<grid, kMmaThreads, 0, stream>>>(a, b, y, m, n, k, bias, residual, c.activation, c.alpha, c.beta);
  else
    mmaGemmKernel<T, BM, BN, BK, STAGES, false>
        <<<grid, kMmaThreads, 0, stream>>>(a, b, y, m, n, k, bias, residual, c.activation, c.alpha, c.beta);
}

template <typename T>
void launchTyped(MatmulMmaCall const& c, cudaStream_t stream) {
  switch (c.tile) {
    case MatmulMmaTile::k32x32x64:
      launchTile<T, 32, 32, 64, 4>(c, stream);
      break;
    case MatmulMmaTile::k32x64x32:
      launchTile<T, 32, 64, 32, 4>(c, stream);
      break;
    case MatmulMmaTile::k32x64x64:
      launchTile<T, 32, 64, 64, 3>(c, stream);
      break;
    case MatmulMmaTile::k64x64x32:
      launchTile<T, 64, 64, 32, 4>(c, stream);
      break;
  }
}

bool aligned(void const* p, uintptr_t bytes) { return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0; }

}  // namespace

int64_t matmulMmaTileRows(MatmulMmaTile tile) { return tile == MatmulMmaTile::k64x64x32 ? 64 : 32; }
int64_t matmulMmaTileCols(MatmulMmaTile tile) { return tile == MatmulMmaTile::k32x32x64 ? 32 : 64; }

bool matmulMmaShapeFits(MatmulMmaCall const& c) {
  if (c.dtype != dev::kHALF && c.dtype != dev::kBF16) return false;
  if (c.m <= 0 || c.n <= 0 || c.k <= 0 || c.k % 8 != 0 || c.n % 8 != 0) return false;
  // 32-bit indices inside the kernel for rows and columns; the grid's y holds the row tiles.
  int64_t const lim = int64_t{1} << 31;
  if (c.m >= lim || c.n >= lim || c.k >= lim) return false;
  return (c.m + matmulMmaTileRows(c.tile) - 1) / matmulMmaTileRows(c.tile) <= 65535;
}

bool matmulMmaFits(MatmulMmaCall const& c) {
  return matmulMmaShapeFits(c) && aligned(c.a, 16) && aligned(c.b, 16) && aligned(c.y, 4) && aligned(c.bias, 4) &&
         aligned(c.residual, 4);
}

bool launchMatmulMma(MatmulMmaCall const& c, cudaStream_t stream) {
  if (!matmulMmaFits(c)) return false;
  if (c.dtype == dev::kHALF)
    launchTyped<__half>(c, stream);
  else
    launchTyped<__nv_bfloat16>(c, stream);
  return true;
}

}  // namespace kiln::cuda
