// The tensor-core GEMM of MatrixMultiply for fp16/bf16 (mma.sync m16n8k16, fp32 accumulation): multi-stage
// cp.async tiles in shared memory, ldmatrix fragments, and the whole epilogue (bias, residual, activation: the erf
// GELU among them) applied to the accumulators before the one store. cuBLASLt has no erf-GELU epilogue, so after
// its GEMM the activation costs a pass over y; at small M (batch-1 transformers) that pass and its launch are a
// large part of the layer, and this kernel leaves them out.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "backends/cuda/activation.cuh"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/matmul_kernels.h"

namespace kiln::cuda {
namespace {

template <typename T>
struct Mma;
template <>
struct Mma<__half> {
  static __device__ __forceinline__ void run(float (&c)[4], uint32_t const (&a)[4], uint32_t const (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
template <>
struct Mma<__nv_bfloat16> {
  static __device__ __forceinline__ void run(float (&c)[4], uint32_t const (&a)[4], uint32_t const (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

__device__ __forceinline__ uint32_t sharedAddress(void const* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes from global to shared memory, zero-filled where `bytes` is 0 (src is then not read).
__device__ __forceinline__ void copy16(void* dst, void const* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sharedAddress(dst)), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void commitCopies() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void waitCopies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

__device__ __forceinline__ void loadMatrices(uint32_t (&r)[4], void const* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(sharedAddress(p)));
}
__device__ __forceinline__ void loadMatricesTransposed(uint32_t (&r)[4], void const* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(sharedAddress(p)));
}

template <typename T>
struct Pair;
template <>
struct Pair<__half> {
  using type = __half2;
  static __device__ __forceinline__ type make(float a, float b) { return __floats2half2_rn(a, b); }
  static __device__ __forceinline__ float2 split(type v) { return __half22float2(v); }
};
template <>
struct Pair<__nv_bfloat16> {
  using type = __nv_bfloat162;
  static __device__ __forceinline__ type make(float a, float b) { return __floats2bfloat162_rn(a, b); }
  static __device__ __forceinline__ float2 split(type v) { return __bfloat1622float2(v); }
};

// The bias element of output (row-major linear) index i under ep's map.
__device__ __forceinline__ int64_t biasIndex(MatmulEpilogue const& ep, int64_t i) {
  int64_t off = 0;
  for (int32_t d = ep.rank - 1; d >= 0; --d) {
    int64_t c = i % ep.dims[d];
    i /= ep.dims[d];
    off += c * ep.biasStrides[d];
  }
  return off;
}

// See the note in gemm_epilogue.cu: erff's short polynomial instead of erfcf's division and exp.
__device__ __forceinline__ float activation(MatmulEpilogue const& ep, float v) {
  if (ep.activation == 12) return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  return dev::activate<float>(ep.activation, v, static_cast<float>(ep.alpha), static_cast<float>(ep.beta));
}

// Tile shape: kWm x kWn warps, each computing 32 x 32 of the output; kBk deep stages, kStages of them in flight.
template <int kWm, int kWn, int kBk, int kStages>
struct Tile {
  static constexpr int kBm = 32 * kWm, kBn = 32 * kWn, kThreads = 32 * kWm * kWn;
  static constexpr int kLdA = kBk + 8;  // padded rows: the 8 rows an ldmatrix reads fall in distinct banks
  // b as [K, N] rows (b row-major) or [N, K] rows (b transposed)
  static constexpr int kLdB(bool transB) { return transB ? kBk + 8 : kBn + 8; }
  static constexpr int kRowsB(bool transB) { return transB ? kBn : kBk; }
  static constexpr int kElemsA = kBm * kLdA;
  static constexpr int elemsB(bool transB) { return kRowsB(transB) * kLdB(transB); }
  template <typename T>
  static constexpr size_t sharedBytes(bool transB) {
    return static_cast<size_t>(kStages) * (kElemsA + elemsB(transB)) * sizeof(T);
  }
};

// What epilogue the launcher resolved: biasAlongN means bias[j] for output column j.
struct MmaEpilogue {
  MatmulEpilogue ep;
  bool biasAlongN = false;
};

// y[b] (m x n, row-major) = a[b] (m x k, rows aRow apart) * b[b] (k x n: rows bRow apart, or transposed, [n, k]
// with rows bCol apart), then the epilogue. blockIdx.x: column tile; y and z loop over row tiles and batches.
template <typename T, int kWm, int kWn, int kBk, int kStages, bool kTransB>
__global__ void __launch_bounds__(Tile<kWm, kWn, kBk, kStages>::kThreads)
    matmulMmaKernel(T const* __restrict__ a, T const* __restrict__ b, T* __restrict__ y, MatmulProblem p,
                    MatmulBatch batch, int64_t batchCount, MmaEpilogue e) {
  using L = Tile<kWm, kWn, kBk, kStages>;
  constexpr int kBm = L::kBm, kBn = L::kBn, kThreads = L::kThreads;
  constexpr int kLdA = L::kLdA, kLdB = L::kLdB(kTransB);
  constexpr int kElemsB = L::elemsB(kTransB);
  extern __shared__ __align__(16) unsigned char smem[];
  T* const as = reinterpret_cast<T*>(smem);
  T* const bs = as + kStages * L::kElemsA;

  int const tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  int const wm = warp / kWn, wn = warp % kWn;
  int64_t const m = p.m, n = p.n, k = p.k;
  int64_t const lda = p.aRow, ldb = kTransB ? p.bCol : p.bRow;
  int64_t const tilesM = (m + kBm - 1) / kBm;
  int64_t const col0 = static_cast<int64_t>(blockIdx.x) * kBn;
  int const kTiles = static_cast<int>((k + kBk - 1) / kBk);
  T const* const bias = static_cast<T const*>(e.ep.bias);
  T const* const residual = static_cast<T const*>(e.ep.residual);

  for (int64_t bi = blockIdx.z; bi < batchCount; bi += gridDim.z) {
    int64_t offA = 0, offB = 0, rem = bi;
    for (int32_t d = batch.rank - 1; d >= 0; --d) {
      int64_t c = rem % batch.dims[d];
      rem /= batch.dims[d];
      offA += c * batch.strideA[d];
      offB += c * batch.strideB[d];
    }
    T const* const pa = a + offA;
    T const* const pb = b + offB;
    for (int64_t tm = blockIdx.y; tm < tilesM; tm += gridDim.y) {
      int64_t const row0 = tm * kBm;
      // One stage: a's kBm x kBk and b's kBk x kBn in 16-byte pieces (k and n are multiples of 8: a piece is
      // wholly inside or wholly outside the matrix; outside ones are zero-filled).
      auto load = [&](int slot, int kt) {
        int64_t const k0 = static_cast<int64_t>(kt) * kBk;
        T* sa = as + slot * L::kElemsA;
        T* sb = bs + slot * kElemsB;
#pragma unroll
        for (int c = tid; c < kBm * kBk / 8; c += kThreads) {
          int const r = c / (kBk / 8), kc = (c % (kBk / 8)) * 8;
          int64_t const gi = row0 + r, gk = k0 + kc;
          bool const ok = gi < m && gk < k;
          copy16(sa + r * kLdA + kc, ok ? pa + gi * lda + gk : pa, ok ? 16 : 0);
        }
        if constexpr (kTransB) {
#pragma unroll
          for (int c = tid; c < kBn * kBk / 8; c += kThreads) {
            int const r = c / (kBk / 8), kc = (c % (kBk / 8)) * 8;
            int64_t const gj = col0 + r, gk = k0 + kc;
            bool const ok = gj < n && gk < k;
            copy16(sb + r * kLdB + kc, ok ? pb + gj * ldb + gk : pb, ok ? 16 : 0);
          }
        } else {
#pragma unroll
          for (int c = tid; c < kBk * kBn / 8; c += kThreads) {
            int const r = c / (kBn / 8), nc = (c % (kBn / 8)) * 8;
            int64_t const gk = k0 + r, gj = col0 + nc;
            bool const ok = gj < n && gk < k;
            copy16(sb + r * kLdB + nc, ok ? pb + gk * ldb + gj : pb, ok ? 16 : 0);
          }
        }
      };

      float acc[2][4][4];
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;

#pragma unroll
      for (int s = 0; s < kStages - 1; ++s) {
        if (s < kTiles) load(s, s);
        commitCopies();
      }
      for (int kt = 0; kt < kTiles; ++kt) {
        waitCopies<kStages - 2>();
        __syncthreads();
        // The slot refilled here was read in the previous step, which every thread has finished (barrier above).
        int const next = kt + kStages - 1;
        if (next < kTiles) load(next % kStages, next);
        commitCopies();
        T const* sa = as + (kt % kStages) * L::kElemsA;
        T const* sb = bs + (kt % kStages) * kElemsB;
#pragma unroll
        for (int kk = 0; kk < kBk; kk += 16) {
          uint32_t af[2][4];
#pragma unroll
          for (int mi = 0; mi < 2; ++mi)
            loadMatrices(af[mi], sa + (wm * 32 + mi * 16 + (lane & 15)) * kLdA + kk + (lane >> 4) * 8);
          uint32_t bf[4][2];
#pragma unroll
          for (int nj = 0; nj < 2; ++nj) {
            uint32_t r[4];
            if constexpr (kTransB) {
              int const nr = wn * 32 + nj * 16 + (lane & 7) + (lane >> 4) * 8;
              loadMatrices(r, sb + nr * kLdB + kk + ((lane >> 3) & 1) * 8);
            } else {
              int const kr = kk + (lane & 7) + ((lane >> 3) & 1) * 8;
              loadMatricesTransposed(r, sb + kr * kLdB + wn * 32 + nj * 16 + (lane >> 4) * 8);
            }
            bf[nj * 2][0] = r[0];
            bf[nj * 2][1] = r[1];
            bf[nj * 2 + 1][0] = r[2];
            bf[nj * 2 + 1][1] = r[3];
          }
#pragma unroll
          for (int mi = 0; mi < 2; ++mi)
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) Mma<T>::run(acc[mi][ni], af[mi], bf[ni]);
        }
      }
      waitCopies<0>();
      __syncthreads();  // the next tile's first loads must not overwrite a slot another warp still reads

      // Epilogue on the accumulators: thread holds (row lane/4 [+8], columns 2 (lane%4) and +1) of each 16x8 tile.
      int64_t const yBase = bi * m * n;
#pragma unroll
      for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          int64_t const i = row0 + wm * 32 + mi * 16 + (lane >> 2) + h * 8;
          if (i >= m) continue;
#pragma unroll
          for (int ni = 0; ni < 4; ++ni) {
            int64_t const j = col0 + wn * 32 + ni * 8 + (lane & 3) * 2;
            if (j >= n) continue;  // n is a multiple of 8: j and j + 1 are both in or both out
            int64_t const yi = yBase + i * n + j;
            float v0 = acc[mi][ni][h * 2], v1 = acc[mi][ni][h * 2 + 1];
            if (bias) {
              if (e.biasAlongN) {
                float2 bv = Pair<T>::split(*reinterpret_cast<typename Pair<T>::type const*>(bias + j));
                v0 += bv.x;
                v1 += bv.y;
              } else {
                v0 += dev::toFloat(bias[biasIndex(e.ep, yi)]);
                v1 += dev::toFloat(bias[biasIndex(e.ep, yi + 1)]);
              }
            }
            if (residual) {
              float2 rv = Pair<T>::split(*reinterpret_cast<typename Pair<T>::type const*>(residual + yi));
              v0 += rv.x;
              v1 += rv.y;
            }
            if (e.ep.activation >= 0) {
              v0 = activation(e.ep, v0);
              v1 = activation(e.ep, v1);
            }
            *reinterpret_cast<typename Pair<T>::type*>(y + yi) = Pair<T>::make(v0, v1);
          }
        }
    }
  }
}

template <typename T, int kWm, int kWn, int kBk, int kStages, bool kTransB>
bool launchTyped(T const* a, T const* b, T* y, MatmulProblem const& p, MatmulBatch const& batch, int64_t batchCount,
                 MmaEpilogue const& e, cudaStream_t stream) {
  using L = Tile<kWm, kWn, kBk, kStages>;
  auto kernel = matmulMmaKernel<T, kWm, kWn, kBk, kStages, kTransB>;
  size_t const bytes = L::template sharedBytes<T>(kTransB);
  if (bytes > 48 * 1024) {
    // Above 48 KB a kernel must opt in, once per device (devices 0-63 remembered; others ask every time).
    static std::atomic<uint64_t> optedIn{0};
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return false;
    uint64_t const bit = device < 64 ? uint64_t{1} << device : 0;
    if (bit == 0 || (optedIn.load(std::memory_order_acquire) & bit) == 0) {
      if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)) !=
          cudaSuccess) {
        (void)cudaGetLastError();  // the caller runs another kernel instead
        return false;
      }
      optedIn.fetch_or(bit, std::memory_order_acq_rel);
    }
  }
  int64_t const tilesN = (p.n + L::kBn - 1) / L::kBn, tilesM = (p.m + L::kBm - 1) / L::kBm;
  dim3 grid(static_cast<unsigned>(tilesN), static_cast<unsigned>(tilesM < 65535 ? tilesM : 65535),
            static_cast<unsigned>(batchCount < 65535 ? batchCount : 65535));
  kernel<<<grid, L::kThreads, bytes, stream>>>(a, b, y, p, batch, batchCount, e);
  return true;
}

template <int kWm, int kWn, int kBk, int kStages>
bool launchShape(void const* a, void const* b, void* y, MatmulProblem const& p, bool transB, MatmulBatch const& batch,
                 int64_t batchCount, MmaEpilogue const& e, cudaStream_t stream) {
  auto go = [&](auto tag, auto trans) {
    using T = decltype(tag);
    return launchTyped<T, kWm, kWn, kBk, kStages, decltype(trans)::value>(
        static_cast<T const*>(a), static_cast<T const*>(b), static_cast<T*>(y), p, batch, batchCount, e, stream);
  };
  using No = std::false_type;
  using Yes = std::true_type;
  if (p.dtype == dev::kHALF) return transB ? go(__half{}, Yes{}) : go(__half{}, No{});
  if (p.dtype == dev::kBF16) return transB ? go(__nv_bfloat16{}, Yes{}) : go(__nv_bfloat16{}, No{});
  return false;
}

bool aligned16(void const* ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15) == 0; }

}  // namespace

char const* matmulMmaTileName(MatmulMmaTile tile) {
  switch (tile) {
    case MatmulMmaTile::k32x64:
      return "32x64";
    case MatmulMmaTile::k64x64:
      return "64x64";
    case MatmulMmaTile::k64x128:
      return "64x128";
  }
  return "?";
}

bool matmulMmaFits(void const* a, void const* b, void const* y, MatmulProblem const& p, MatmulBatch const& batch,
                   MatmulEpilogue const& ep) {
  if (p.dtype != dev::kHALF && p.dtype != dev::kBF16) return false;
  if (p.m <= 0 || p.n <= 0 || p.k <= 0 || p.n % 8 != 0 || p.k % 8 != 0) return false;
  if (p.m > (int64_t{1} << 31) - 1 || p.n > (int64_t{1} << 31) - 1 || p.k > (int64_t{1} << 31) - 1) return false;
  bool const transB = p.bRow == 1 && p.bCol != 1;
  // a row-major [m, k]; b row-major [k, n] or transposed [n, k]; every row and batch step whole 16-byte pieces.
  if (p.aCol != 1 || p.aRow % 8 != 0) return false;
  if (transB ? p.bCol % 8 != 0 : (p.bCol != 1 || p.bRow % 8 != 0)) return false;
  for (int32_t d = 0; d < batch.rank; ++d)
    if (batch.strideA[d] % 8 != 0 || batch.strideB[d] % 8 != 0) return false;
  if (!aligned16(a) || !aligned16(b) || !aligned16(y)) return false;
  // Pairs of the bias (along n) and the residual are read 4 bytes at a time.
  if (ep.residual && (reinterpret_cast<uintptr_t>(ep.residual) & 3) != 0) return false;
  return !ep.bias || (reinterpret_cast<uintptr_t>(ep.bias) & 3) == 0;
}

bool launchMatmulMma(MatmulMmaTile tile, void const* a, void const* b, void* y, MatmulProblem const& p,
                     MatmulBatch const& batch, int64_t batchCount, MatmulEpilogue const& ep, cudaStream_t stream) {
  if (!matmulMmaFits(a, b, y, p, batch, ep)) return false;
  bool const transB = p.bRow == 1 && p.bCol != 1;
  MmaEpilogue e;
  e.ep = ep;
  // The bias along y's rows: its last merged dim is n with stride 1, every other dim broadcast.
  if (ep.bias && ep.rank >= 1 && ep.dims[ep.rank - 1] == p.n && ep.biasStrides[ep.rank - 1] == 1) {
    e.biasAlongN = true;
    for (int32_t d = 0; d + 1 < ep.rank; ++d) e.biasAlongN = e.biasAlongN && ep.biasStrides[d] == 0;
  }
  switch (tile) {
    case MatmulMmaTile::k32x64:
      return launchShape<1, 2, 64, 3>(a, b, y, p, transB, batch, batchCount, e, stream);
    case MatmulMmaTile::k64x64:
      return launchShape<2, 2, 64, 3>(a, b, y, p, transB, batch, batchCount, e, stream);
    case MatmulMmaTile::k64x128:
      return launchShape<2, 4, 32, 4>(a, b, y, p, transB, batch, batchCount, e, stream);
  }
  return false;
}

}  // namespace kiln::cuda
