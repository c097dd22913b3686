// Fused attention kernels (attention_kernels.h). fp16/bf16: one CTA of 4 warps per (batch entry, 64 query rows),
// each warp owning 16 rows; key/value tiles of 64 go through shared memory, q k^T and p v run on tensor cores
// (wmma 16x16x16, fp32 accumulation), and the online softmax reads the scores from shared memory (wmma's
// fragment element order is unspecified), two lanes per row. fp32: one thread per query row, FMA, same structure.
#include <mma.h>

#include <cmath>
#include <cstdint>

#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/device_types.cuh"

namespace kiln::cuda {
namespace {

using namespace nvcuda;  // NOLINT(google-build-using-namespace): wmma

constexpr int kBlockM = 64;  // query rows per CTA
constexpr int kBlockN = 64;  // keys per tile
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
static_assert(kBlockM == kAttentionRowsPerTile, "rows per tile");
static_assert(kBlockM == kWarps * 16, "each warp owns 16 rows");
static_assert(kBlockN == kBlockM, "loadRows fills kBlockM rows of q, k and v tiles alike");

constexpr float kInf = INFINITY;

// Where batch entry b starts in q, k, v and the mask.
struct BatchOffsets {
  int64_t q, k, v, m;
};

__device__ BatchOffsets batchOffsets(AttentionArgs const& a, int64_t b) {
  BatchOffsets o{0, 0, 0, 0};
  for (int i = a.batchRank - 1; i >= 0; --i) {
    int64_t const idx = b % a.batch[i];
    b /= a.batch[i];
    o.q += idx * a.qStride[i];
    o.k += idx * a.kStride[i];
    o.v += idx * a.vStride[i];
    o.m += idx * a.maskStride[i];
  }
  return o;
}

// A row's end state: 0 normal (scaled by 1 / l), 1 zeros, 2 NaN.
constexpr int kRowNormal = 0, kRowZero = 1, kRowNaN = 2;

__device__ __forceinline__ int rowState(bool bad, float l, AttentionArgs const& a) {
  if (a.skv == 0) return kRowZero;  // an empty softmax: p v sums nothing
  if (bad || l == 0.f) return a.nanToZero ? kRowZero : kRowNaN;
  return kRowNormal;
}

// ---- fp16 / bf16: tensor cores ----

// Shared-memory leading dims (elements): q/k/v tiles and probabilities in T (multiples of 8, as wmma needs, and
// padded against bank conflicts), scores and output accumulators in float (multiples of 4).
template <int kDP>
struct TcLayout {
  static constexpr int ldT = kDP + 8;
  static constexpr int ldS = kBlockN + 4;
  static constexpr int ldP = kBlockN + 8;
  static constexpr int ldO = kDP + 4;
};

template <typename T, int kDP>
constexpr size_t tcSmemBytes() {
  using L = TcLayout<kDP>;
  return (size_t{kBlockM} + 2 * kBlockN) * L::ldT * sizeof(T)  // q, k, v tiles
         + size_t{kBlockM} * L::ldS * sizeof(float)            // scores
         + size_t{kBlockM} * L::ldP * sizeof(T)                // probabilities
         + size_t{kBlockM} * L::ldO * sizeof(float)            // output accumulators
         + size_t{kBlockM} * (sizeof(float) + sizeof(int));    // per-row scale and state
}

// Rows [0, kBlockM) x columns [0, kDP) of the row-major [rows, cols] matrix g into s (leading dim ld), zero
// outside rows x cols. cols is a multiple of 8, so 8-element chunks lie wholly inside or outside; vec: g and its
// rows are 16-byte aligned.
template <typename T, int kDP>
__device__ void loadRows(T* s, int ld, T const* g, int64_t rows, int64_t cols, bool vec) {
  constexpr int kChunks = kDP / 8;
  for (int i = threadIdx.x; i < kBlockM * kChunks; i += kThreads) {
    int const r = i / kChunks, c = (i % kChunks) * 8;
    T* dst = s + r * ld + c;
    if (r < rows && c < cols) {
      T const* src = g + r * cols + c;
      if (vec) {
        *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<uint4 const*>(src);
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) dst[e] = src[e];
      }
    } else {
      *reinterpret_cast<uint4*>(dst) = make_uint4(0u, 0u, 0u, 0u);
    }
  }
}

// Keys kv0 .. kv0 + kBlockN of k^T ([d, skv] row-major) into s as rows [key][d], zero outside.
template <typename T, int kDP>
__device__ void loadKeysTransposed(T* s, int ld, T const* g, int64_t skv, int64_t kv0, int64_t d) {
  for (int i = threadIdx.x; i < kBlockN * kDP; i += kThreads) {
    int const c = i / kBlockN, n = i % kBlockN;  // consecutive threads read consecutive keys
    T val = dev::fromFloat<T>(0.f);
    if (c < d && kv0 + n < skv) val = g[c * skv + kv0 + n];
    s[n * ld + c] = val;
  }
}

template <typename T, int kDP>
__global__ void __launch_bounds__(kThreads) attentionTensorCoreKernel(AttentionArgs const a, bool vec) {
  using L = TcLayout<kDP>;
  extern __shared__ __align__(128) unsigned char tcSmem[];
  T* qs = reinterpret_cast<T*>(tcSmem);
  T* ks = qs + kBlockM * L::ldT;
  T* vs = ks + kBlockN * L::ldT;
  float* ss = reinterpret_cast<float*>(vs + kBlockN * L::ldT);
  T* ps = reinterpret_cast<T*>(ss + kBlockM * L::ldS);
  float* os = reinterpret_cast<float*>(ps + kBlockM * L::ldP);
  float* rowScale = os + kBlockM * L::ldO;
  int* rowStates = reinterpret_cast<int*>(rowScale + kBlockM);

  int const warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  int64_t const b = blockIdx.x;
  int64_t const row0 = static_cast<int64_t>(blockIdx.y) * kBlockM;
  int64_t const rowsHere = a.sq - row0 < kBlockM ? a.sq - row0 : kBlockM;
  BatchOffsets const off = batchOffsets(a, b);
  T const* q = static_cast<T const*>(a.q) + off.q;
  T const* k = static_cast<T const*>(a.k) + off.k;
  T const* v = static_cast<T const*>(a.v) + off.v;
  T const* mask = a.mask ? static_cast<T const*>(a.mask) + off.m : nullptr;

  loadRows<T, kDP>(qs, L::ldT, q + row0 * a.d, rowsHere, a.d, vec);
  for (int i = threadIdx.x; i < kBlockM * L::ldO; i += kThreads) os[i] = 0.f;
  __syncthreads();

  int const dSteps = static_cast<int>((a.d + 15) / 16), dvSteps = static_cast<int>((a.dv + 15) / 16);
  wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> qf[kDP / 16];
#pragma unroll
  for (int kk = 0; kk < kDP / 16; ++kk)
    if (kk < dSteps) wmma::load_matrix_sync(qf[kk], qs + warp * 16 * L::ldT + kk * 16, L::ldT);

  // Softmax roles: lanes 2r and 2r+1 hold row r of the warp's 16, columns [0, 32) and [32, 64) of each tile.
  int const rl = lane / 2, half = lane % 2;
  int const srow = warp * 16 + rl;
  int64_t const grow = row0 + srow;
  bool const rowValid = grow < a.sq;
  int64_t const maskRow = mask && rowValid ? grow * a.maskRowStride : 0;
  float mRun = -kInf, lRun = 0.f;
  bool bad = false;

  for (int64_t kv0 = 0; kv0 < a.skv; kv0 += kBlockN) {
    int64_t const nValid = a.skv - kv0 < kBlockN ? a.skv - kv0 : kBlockN;
    __syncthreads();  // every warp is done with the previous tile's keys and values
    if (a.kTransposed) {
      loadKeysTransposed<T, kDP>(ks, L::ldT, k, a.skv, kv0, a.d);
    } else {
      loadRows<T, kDP>(ks, L::ldT, k + kv0 * a.d, nValid, a.d, vec);
    }
    loadRows<T, kDP>(vs, L::ldT, v + kv0 * a.dv, nValid, a.dv, vec);
    __syncthreads();

    // Scores of the warp's 16 rows: q [16, d] x k^T [d, 64]; k rows [key][d] are k^T column-major.
    for (int n = 0; n < kBlockN / 16 && n * 16 < nValid; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.f);
#pragma unroll
      for (int kk = 0; kk < kDP / 16; ++kk) {
        if (kk < dSteps) {
          wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> kf;
          wmma::load_matrix_sync(kf, ks + n * 16 * L::ldT + kk * 16, L::ldT);
          wmma::mma_sync(acc, qf[kk], kf, acc);
        }
      }
      wmma::store_matrix_sync(ss + warp * 16 * L::ldS + n * 16, acc, L::ldS, wmma::mem_row_major);
    }
    __syncwarp();

    // Online softmax of row srow over this tile; probabilities to ps, the row's accumulators rescaled.
    {
      float const* srowPtr = ss + srow * L::ldS + half * 32;
      T* prow = ps + srow * L::ldP + half * 32;
      float x[32];
      float mt = -kInf;
#pragma unroll
      for (int i = 0; i < 32; ++i) {
        int const c = half * 32 + i;
        float s = -kInf;
        if (c < nValid) {
          s = srowPtr[i] * a.scale;
          if (mask && rowValid) s += dev::toFloat(mask[maskRow + (kv0 + c) * a.maskColStride]);
          if (isnan(s) || s == kInf) bad = true;
        }
        x[i] = s;
        mt = fmaxf(mt, s);
      }
      mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 1));
      float const mNew = fmaxf(mRun, mt);
      float const mUse = mNew == -kInf ? 0.f : mNew;  // all -inf so far: exp(-inf - 0) = 0, no NaN
      float sum = 0.f;
#pragma unroll
      for (int i = 0; i < 32; ++i) {
        float const p = __expf(x[i] - mUse);
        prow[i] = dev::fromFloat<T>(p);
        sum += p;
      }
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      float const alpha = mRun == -kInf ? 0.f : __expf(mRun - mUse);
      lRun = lRun * alpha + sum;
      mRun = mNew;
      float* orow = os + srow * L::ldO + half * (kDP / 2);
#pragma unroll 8
      for (int c = 0; c < kDP / 2; ++c) orow[c] *= alpha;
    }
    __syncwarp();

    // Accumulators of the warp's rows += p [16, 64] x v [64, dv].
    int const kSteps = static_cast<int>((nValid + 15) / 16);
    for (int nf = 0; nf < dvSteps; ++nf) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      float* optr = os + warp * 16 * L::ldO + nf * 16;
      wmma::load_matrix_sync(acc, optr, L::ldO, wmma::mem_row_major);
      for (int kk = 0; kk < kSteps; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> pf;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> vf;
        wmma::load_matrix_sync(pf, ps + warp * 16 * L::ldP + kk * 16, L::ldP);
        wmma::load_matrix_sync(vf, vs + kk * 16 * L::ldT + nf * 16, L::ldT);
        wmma::mma_sync(acc, pf, vf, acc);
      }
      wmma::store_matrix_sync(optr, acc, L::ldO, wmma::mem_row_major);
    }
    __syncwarp();
  }

  int const partnerBad = __shfl_xor_sync(0xffffffffu, bad ? 1 : 0, 1);  // every lane takes part
  bool const rowBad = bad || partnerBad != 0;
  if (half == 0) {
    rowStates[srow] = rowState(rowBad, lRun, a);
    rowScale[srow] = lRun > 0.f ? 1.f / lRun : 0.f;
  }
  __syncthreads();
  T* y = static_cast<T*>(a.y) + (b * a.sq + row0) * a.dv;
  for (int64_t i = threadIdx.x; i < rowsHere * a.dv; i += kThreads) {
    int const r = static_cast<int>(i / a.dv), c = static_cast<int>(i % a.dv);
    int const st = rowStates[r];
    float const val = st == kRowNormal ? os[r * L::ldO + c] * rowScale[r] : (st == kRowZero ? 0.f : NAN);
    y[i] = dev::fromFloat<T>(val);
  }
}

// ---- fp32: FMA ----

constexpr int kF32Rows = 64;  // threads per CTA, one query row each
constexpr int kF32Keys = 32;  // keys per tile
static_assert(kF32Rows == kBlockM, "launchAttention sizes the grid by kBlockM rows for both kernels");

size_t fp32SmemBytes(int64_t d, int64_t dv) {
  return static_cast<size_t>(kF32Rows * (d + 1) + kF32Rows * (dv + 1) + kF32Keys * d + kF32Keys * dv) * sizeof(float) +
         kF32Rows * (sizeof(float) + sizeof(int));
}

__global__ void __launch_bounds__(kF32Rows) attentionFp32Kernel(AttentionArgs const a) {
  extern __shared__ __align__(16) unsigned char f32Smem[];
  int const d = static_cast<int>(a.d), dv = static_cast<int>(a.dv);
  int const ldq = d + 1, ldo = dv + 1;  // odd: threads of consecutive rows hit different banks
  float* qs = reinterpret_cast<float*>(f32Smem);
  float* os = qs + kF32Rows * ldq;
  float* ks = os + kF32Rows * ldo;  // [key][d]
  float* vs = ks + kF32Keys * d;    // [key][dv]
  float* rowScale = vs + kF32Keys * dv;
  int* rowStates = reinterpret_cast<int*>(rowScale + kF32Rows);

  int const t = static_cast<int>(threadIdx.x);
  int64_t const b = blockIdx.x;
  int64_t const row0 = static_cast<int64_t>(blockIdx.y) * kF32Rows;
  int64_t const rowsHere = a.sq - row0 < kF32Rows ? a.sq - row0 : kF32Rows;
  BatchOffsets const off = batchOffsets(a, b);
  float const* q = static_cast<float const*>(a.q) + off.q;
  float const* k = static_cast<float const*>(a.k) + off.k;
  float const* v = static_cast<float const*>(a.v) + off.v;
  float const* mask = a.mask ? static_cast<float const*>(a.mask) + off.m : nullptr;

  for (int i = t; i < kF32Rows * d; i += kF32Rows) {
    int const r = i / d, c = i % d;
    qs[r * ldq + c] = r < rowsHere ? q[(row0 + r) * d + c] : 0.f;
  }
  for (int i = t; i < kF32Rows * ldo; i += kF32Rows) os[i] = 0.f;

  int64_t const grow = row0 + t;
  bool const rowValid = grow < a.sq;
  int64_t const maskRow = mask && rowValid ? grow * a.maskRowStride : 0;
  float mRun = -kInf, lRun = 0.f;
  bool bad = false;
  for (int64_t kv0 = 0; kv0 < a.skv; kv0 += kF32Keys) {
    int const nValid = static_cast<int>(a.skv - kv0 < kF32Keys ? a.skv - kv0 : kF32Keys);
    __syncthreads();  // the previous tile is used up (and, the first time, q and the accumulators are in place)
    if (a.kTransposed) {
      for (int i = t; i < kF32Keys * d; i += kF32Rows) {
        int const c = i / kF32Keys, n = i % kF32Keys;
        ks[n * d + c] = n < nValid ? k[c * a.skv + kv0 + n] : 0.f;
      }
    } else {
      for (int i = t; i < kF32Keys * d; i += kF32Rows) {
        int const n = i / d, c = i % d;
        ks[n * d + c] = n < nValid ? k[(kv0 + n) * d + c] : 0.f;
      }
    }
    for (int i = t; i < kF32Keys * dv; i += kF32Rows) {
      int const n = i / dv, c = i % dv;
      vs[n * dv + c] = n < nValid ? v[(kv0 + n) * dv + c] : 0.f;
    }
    __syncthreads();

    float s[kF32Keys];
#pragma unroll
    for (int j = 0; j < kF32Keys; ++j) s[j] = 0.f;
    for (int c = 0; c < d; ++c) {
      float const qv = qs[t * ldq + c];
#pragma unroll
      for (int j = 0; j < kF32Keys; ++j) s[j] = fmaf(qv, ks[j * d + c], s[j]);  // ks: one address per warp
    }
    float mt = -kInf;
#pragma unroll
    for (int j = 0; j < kF32Keys; ++j) {
      float x = -kInf;
      if (j < nValid) {
        x = s[j] * a.scale;
        if (mask && rowValid) x += mask[maskRow + (kv0 + j) * a.maskColStride];
        if (isnan(x) || x == kInf) bad = true;
      }
      s[j] = x;
      mt = fmaxf(mt, x);
    }
    float const mNew = fmaxf(mRun, mt);
    float const mUse = mNew == -kInf ? 0.f : mNew;
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < kF32Keys; ++j) {
      s[j] = expf(s[j] - mUse);
      sum += s[j];
    }
    float const alpha = mRun == -kInf ? 0.f : expf(mRun - mUse);
    lRun = lRun * alpha + sum;
    mRun = mNew;
    for (int c = 0; c < dv; ++c) {
      float o = os[t * ldo + c] * alpha;
#pragma unroll
      for (int j = 0; j < kF32Keys; ++j) o = fmaf(s[j], vs[j * dv + c], o);
      os[t * ldo + c] = o;
    }
  }
  rowStates[t] = rowState(bad, lRun, a);
  rowScale[t] = lRun > 0.f ? 1.f / lRun : 0.f;
  __syncthreads();
  float* y = static_cast<float*>(a.y) + (b * a.sq + row0) * a.dv;
  for (int64_t i = t; i < rowsHere * dv; i += kF32Rows) {
    int const r = static_cast<int>(i / dv), c = static_cast<int>(i % dv);
    int const st = rowStates[r];
    y[i] = st == kRowNormal ? os[r * ldo + c] * rowScale[r] : (st == kRowZero ? 0.f : NAN);
  }
}

bool aligned16(void const* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <typename T, int kDP>
void launchTensorCore(AttentionArgs const& a, dim3 grid, cudaStream_t stream) {
  size_t const bytes = tcSmemBytes<T, kDP>();
  // Above 48 KB a kernel must opt in; an error here surfaces through cudaGetLastError like a launch error.
  (void)cudaFuncSetAttribute(attentionTensorCoreKernel<T, kDP>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(bytes));
  bool const vec = aligned16(a.q) && aligned16(a.k) && aligned16(a.v);
  attentionTensorCoreKernel<T, kDP><<<grid, kThreads, bytes, stream>>>(a, vec);
}

template <typename T>
void launchTensorCoreFor(AttentionArgs const& a, dim3 grid, cudaStream_t stream) {
  int64_t const widest = a.d > a.dv ? a.d : a.dv;
  if (widest <= 32)
    launchTensorCore<T, 32>(a, grid, stream);
  else if (widest <= 64)
    launchTensorCore<T, 64>(a, grid, stream);
  else
    launchTensorCore<T, 128>(a, grid, stream);
}

}  // namespace

bool launchAttention(int32_t dtype, AttentionArgs const& a, cudaStream_t stream) {
  if (!attentionHeadDimsOk(a.d, a.dv) || a.batchRank < 0 || a.batchRank > kAttentionMaxBatchDims) return false;
  if (dtype != dev::kFLOAT && dtype != dev::kHALF && dtype != dev::kBF16) return false;
  int64_t const tiles = (a.sq + kBlockM - 1) / kBlockM;
  if (tiles > kAttentionMaxRowTiles || a.batchCount > 0x7fffffff) return false;
  if (a.batchCount <= 0 || a.sq <= 0) return true;  // an empty output
  dim3 const grid(static_cast<unsigned>(a.batchCount), static_cast<unsigned>(tiles));
  switch (dtype) {
    case dev::kHALF:
      launchTensorCoreFor<__half>(a, grid, stream);
      break;
    case dev::kBF16:
      launchTensorCoreFor<__nv_bfloat16>(a, grid, stream);
      break;
    default: {
      size_t const bytes = fp32SmemBytes(a.d, a.dv);
      (void)cudaFuncSetAttribute(attentionFp32Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(bytes));
      attentionFp32Kernel<<<grid, kF32Rows, bytes, stream>>>(a);
      break;
    }
  }
  return true;
}

}  // namespace kiln::cuda
