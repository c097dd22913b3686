// Fused attention kernels (attention_kernels.h): fp16/bf16 FlashAttention-2 style on mma.sync tensor cores, fp32 with
// FMA. Both make one pass over key tiles with an online softmax and read q, k, v, y through row and batch strides.
//
// fp16/bf16 mapping. One CTA of 4 warps per (batch entry, 64 query rows); warp w owns rows [16w, 16w + 16) of the
// tile. mma.sync.m16n8k16 (fp32 accumulation; PTX ISA "matrix fragments for mma.m16n8k16"), lane = 4 g + t:
//  - A (16x16, row major): a0 = (row g, cols 2t, 2t+1), a1 = (g+8, 2t..), a2 = (g, 2t+8..), a3 = (g+8, 2t+8..).
//    q's fragments come once from shared memory by ldmatrix.x4 (lane l addresses row l%16, column 8 (l/16) of the
//    16x16 block) and stay in registers: qf[kk] covers head columns [16 kk, 16 kk + 16).
//  - B (16x8, "col"): b0 = (k 2t, 2t+1; n g), b1 = (k 2t+8, 2t+9; n g). For s = q k^T, B(k = c, n = key) =
//    K[key][c] with K tiles stored [key][c], so a plain ldmatrix.x4 gives b0, b1 of two n8 tiles: lane l addresses
//    key 8 (l/16) + l%8, column 8 ((l/8)%2). For o += p v, B(k = key, n = c) = V[key][c] with V stored [key][c],
//    so ldmatrix.x4.trans: lane l addresses key l%8 + 8 ((l/8)%2), column 8 (l/16).
//  - C (16x8 fp32): c0, c1 = (row g, cols 2t, 2t+1), c2, c3 = (row g+8, same cols). A thread holds 2 rows (g, g+8)
//    x 2 adjacent keys of each n8 tile, so row max and row sum reduce over the quad (shfl xor 1, 2; the sum only at
//    the end, as every lane of a quad rescales by the same factor). The s fragments of n8 tiles 2j and 2j+1,
//    rounded to T and paired, are p's A fragment for keys [16j, 16j + 16) (a0 = s[2j] c0c1, a1 = s[2j] c2c3,
//    a2 = s[2j+1] c0c1, a3 = s[2j+1] c2c3): p never leaves registers.
// Shared memory: q [64][kDP + 8] and two buffers each of k and v [64][kDP + 8]; the 16-byte row pad puts the 8 rows
// one ldmatrix phase reads in 8 different bank quads. Tiles come by 16-byte cp.async, zero-filled outside the
// matrices (which pads d and dv up to kDP with zero columns and the last key tile with zero rows), tile j + 1 in
// flight while tile j is computed. Operands whose rows are not 16-byte aligned, and k stored transposed, load with
// plain loads into the same buffers (the same pipeline, then synchronous). The softmax runs in the natural-log
// domain (max and differences before the multiplication by log2 e for ex2), so that a finite but huge mask
// (-3.4e38) does not overflow to -inf. The output goes through the warp's own rows of the q buffer for 16-byte
// stores.
//
// fp32: one thread per query row, FMA, the same tile structure.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/device_types.cuh"

namespace kiln::cuda {
namespace {

constexpr int kBlockM = 64;  // query rows per CTA
constexpr int kBlockN = 64;  // keys per tile
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
static_assert(kBlockM == kAttentionRowsPerTile, "rows per tile");
static_assert(kBlockM == kWarps * 16, "each warp owns 16 rows");
static_assert(kBlockN == kBlockM, "loadTile fills kBlockM rows of q, k and v tiles alike");

constexpr float kInf = INFINITY;
constexpr float kLog2e = 1.4426950408889634f;

// Where batch entry b starts in q, k, v, the mask and y (launchAttention resolved y's strides).
struct BatchOffsets {
  int64_t q, k, v, m, y;
};

// b < 2^31 and every batch dim <= 2^31 - 1 (launchAttention caps the grid at 2^31 - 1 CTAs), so the index
// arithmetic runs in 32 bits (a 64-bit division is a long software sequence).
__device__ BatchOffsets batchOffsets(AttentionArgs const& a, uint32_t b) {
  BatchOffsets o{0, 0, 0, 0, 0};
  for (int i = a.batchRank - 1; i >= 0; --i) {
    auto const n = static_cast<uint32_t>(a.batch[i]);
    int64_t const idx = b % n;
    b /= n;
    o.q += idx * a.qStride[i];
    o.k += idx * a.kStride[i];
    o.v += idx * a.vStride[i];
    o.m += idx * a.maskStride[i];
    o.y += idx * a.yStride[i];
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

// ---- fp16 / bf16: mma.sync ----

__device__ __forceinline__ uint32_t smemAddr(void const* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes from global src to shared dst, or 16 zero bytes when !valid (src is then not read).
__device__ __forceinline__ void cpAsync16(void* dst, void const* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smemAddr(dst)), "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void cpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

__device__ __forceinline__ void ldmatrixX4(uint32_t (&r)[4], void const* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smemAddr(p)));
}
__device__ __forceinline__ void ldmatrixX4Trans(uint32_t (&r)[4], void const* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smemAddr(p)));
}

// 2^x by the SFU (ex2.approx: relative error ~2^-22; -inf -> 0, NaN -> NaN), without exp2f's denormal scaling.
__device__ __forceinline__ float fastExp2(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
  return r;
}

// c += a b for one m16n8k16 tile, fp32 accumulation.
template <typename T>
__device__ __forceinline__ void mma16816(float (&c)[4], uint32_t const (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    static_assert(std::is_same_v<T, __nv_bfloat16>, "fp16 or bf16");
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// lo and hi rounded to T in one register, lo in the low half (the lower column of a fragment pair).
template <typename T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  uint32_t r;
  if constexpr (std::is_same_v<T, __half>) {
    __half2 const h = __floats2half2_rn(lo, hi);
    memcpy(&r, &h, sizeof r);
  } else {
    __nv_bfloat162 const h = __floats2bfloat162_rn(lo, hi);
    memcpy(&r, &h, sizeof r);
  }
  return r;
}

// Shared-memory tile: kBlockN rows of kDP columns plus a 16-byte pad.
template <int kDP>
struct Tile {
  static constexpr int kLd = kDP + 8;
  static constexpr int kElems = kBlockN * kLd;
};

template <typename T, int kDP>
constexpr size_t mmaSmemBytes() {
  return size_t{5} * Tile<kDP>::kElems * sizeof(T);  // q, two k and two v buffers
}

// Rows [0, rows) x columns [0, cols) of the matrix at g (rows rowStride apart, unit column stride) into tile s,
// zeros elsewhere. cols is a multiple of 8, so 8-element chunks lie wholly inside or outside. vec: 16-byte cp.async
// (g and rowStride 16-byte aligned; complete at the next cpAsyncWait), else plain loads.
template <typename T, int kDP>
__device__ __forceinline__ void loadTile(T* s, T const* g, int64_t rowStride, int64_t rows, int64_t cols, bool vec) {
  constexpr int kChunks = kDP / 8;
  static_assert(kBlockN * kChunks % kThreads == 0, "whole chunks per thread");
  if (vec) {
    // Thread i copies chunk i % kChunks of rows i / kChunks + kRowsPerPass * pass: one column per thread, so one
    // source pointer advanced by a fixed step (fewer live registers than an address per pass).
    constexpr int kRowsPerPass = kThreads / kChunks;
    static_assert(kThreads % kChunks == 0, "whole rows per pass");
    int const r0 = static_cast<int>(threadIdx.x) / kChunks, c = static_cast<int>(threadIdx.x) % kChunks * 8;
    T const* src = g + r0 * rowStride + c;
    T* dst = s + r0 * Tile<kDP>::kLd + c;
#pragma unroll
    for (int pass = 0; pass < kBlockN / kRowsPerPass; ++pass) {
      bool const ok = r0 + pass * kRowsPerPass < rows && c < cols;
      cpAsync16(dst + pass * kRowsPerPass * Tile<kDP>::kLd, ok ? src : g, ok);
      src += kRowsPerPass * rowStride;
    }
  } else {
    // The slow path stays rolled up: unrolled, its loads would all be in flight at once and claim registers the
    // fast path needs.
#pragma unroll 1
    for (int i = static_cast<int>(threadIdx.x); i < kBlockN * kDP; i += kThreads) {
      int const r = i / kDP, c = i % kDP;
      s[r * Tile<kDP>::kLd + c] = r < rows && c < cols ? g[r * rowStride + c] : dev::fromFloat<T>(0.f);
    }
  }
}

// Keys [0, keys) of k^T (element (c, key) at g[c * rowStride + key]) into tile s as rows [key][c], zero outside.
template <typename T, int kDP>
__device__ void loadKeysTransposed(T* s, T const* g, int64_t rowStride, int64_t keys, int64_t d) {
#pragma unroll 1
  for (int i = static_cast<int>(threadIdx.x); i < kBlockN * kDP; i += kThreads) {
    int const c = i / kBlockN, n = i % kBlockN;  // consecutive threads read consecutive keys
    s[n * Tile<kDP>::kLd + c] = c < d && n < keys ? g[c * rowStride + n] : dev::fromFloat<T>(0.f);
  }
}

// a: resolved by launchAttention (row strides and yStride set). blockIdx.x = batch entry * rowTiles + row tile.
// vec: q, v (and k unless transposed) rows 16-byte aligned; yVec: y rows 16-byte aligned. ptxas is left to pick
// the registers (no minimum of CTAs per SM): ~165 at head dim 64 (3 CTAs per SM); capped at 128 it spills.
template <typename T, int kDP>
__global__ void __launch_bounds__(kThreads)
    attentionMmaKernel(AttentionArgs const a, uint32_t rowTiles, bool vec, bool yVec) {
  using L = Tile<kDP>;
  constexpr int kLd = L::kLd;
  constexpr int kNTiles = kBlockN / 8;  // n8 tiles of scores per key tile
  constexpr int kDTiles = kDP / 8;      // n8 tiles of the output
  extern __shared__ __align__(128) unsigned char mmaSmem[];
  T* qs = reinterpret_cast<T*>(mmaSmem);
  T* ks = qs + L::kElems;      // two buffers
  T* vs = ks + 2 * L::kElems;  // two buffers

  int const warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  int const g = lane / 4, t = lane % 4;
  uint32_t const b = blockIdx.x / rowTiles;
  int64_t const row0 = static_cast<int64_t>(blockIdx.x % rowTiles) * kBlockM;
  int64_t const rowsHere = a.sq - row0 < kBlockM ? a.sq - row0 : kBlockM;
  BatchOffsets const off = batchOffsets(a, b);
  T const* q = static_cast<T const*>(a.q) + off.q + row0 * a.qRowStride;
  T const* k = static_cast<T const*>(a.k) + off.k;
  T const* v = static_cast<T const*>(a.v) + off.v;
  T const* mask = a.mask ? static_cast<T const*>(a.mask) + off.m : nullptr;

  // This thread's query rows: g and g + 8 of the warp's 16 (index r = 0, 1 below).
  int64_t const rows[2] = {row0 + warp * 16 + g, row0 + warp * 16 + g + 8};
  bool const valid[2] = {rows[0] < a.sq, rows[1] < a.sq};
  // The mask's rows of this thread (row 0 for rows past sq, whose mask is never read).
  T const* maskRows[2] = {mask ? mask + (valid[0] ? rows[0] : 0) * a.maskRowStride : nullptr,
                          mask ? mask + (valid[1] ? rows[1] : 0) * a.maskRowStride : nullptr};
  float const scale = a.scale;

  float o[kDTiles][4];
#pragma unroll
  for (int c = 0; c < kDTiles; ++c) o[c][0] = o[c][1] = o[c][2] = o[c][3] = 0.f;
  float mRun[2] = {-kInf, -kInf}, lRun[2] = {0.f, 0.f};  // lRun: this lane's partial sum of the row
  bool bad[2] = {false, false};
  uint32_t qf[kDP / 16][4];

  int64_t const tiles = (a.skv + kBlockN - 1) / kBlockN;
  auto loadKeysValues = [&](int64_t j, int buf) {
    int64_t const kv0 = j * kBlockN;
    int64_t const n = a.skv - kv0 < kBlockN ? a.skv - kv0 : kBlockN;
    if (a.kTransposed) {
      loadKeysTransposed<T, kDP>(ks + buf * L::kElems, k + kv0, a.kRowStride, n, a.d);
    } else {
      loadTile<T, kDP>(ks + buf * L::kElems, k + kv0 * a.kRowStride, a.kRowStride, n, a.d, vec);
    }
    loadTile<T, kDP>(vs + buf * L::kElems, v + kv0 * a.vRowStride, a.vRowStride, n, a.dv, vec);
  };
  if (tiles > 0) {
    loadTile<T, kDP>(qs, q, a.qRowStride, rowsHere, a.d, vec);
    loadKeysValues(0, 0);
    cpAsyncCommit();
  }

  for (int64_t j = 0; j < tiles; ++j) {
    int const buf = static_cast<int>(j & 1);
    if (j + 1 < tiles) {
      loadKeysValues(j + 1, buf ^ 1);  // buffer buf ^ 1 was released by the __syncthreads ending iteration j - 1
      cpAsyncCommit();
      cpAsyncWait<1>();  // tile j (and q) landed; tile j + 1 may still be in flight
    } else {
      cpAsyncWait<0>();
    }
    __syncthreads();  // every thread's copies (async or plain) of tile j are visible
    if (j == 0) {
#pragma unroll
      for (int kk = 0; kk < kDP / 16; ++kk)
        ldmatrixX4(qf[kk], qs + (warp * 16 + lane % 16) * kLd + kk * 16 + (lane / 16) * 8);
    }
    T const* kt = ks + buf * L::kElems;
    T const* vt = vs + buf * L::kElems;

    // s = q k^T for the warp's 16 rows x 64 keys.
    float s[kNTiles][4];
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < kDP / 16; ++kk) {
#pragma unroll
      for (int np = 0; np < kNTiles / 2; ++np) {
        uint32_t bk[4];
        ldmatrixX4(bk, kt + (np * 16 + lane % 8 + (lane / 16) * 8) * kLd + kk * 16 + ((lane / 8) % 2) * 8);
        mma16816<T>(s[2 * np], qf[kk], bk[0], bk[1]);
        mma16816<T>(s[2 * np + 1], qf[kk], bk[2], bk[3]);
      }
    }

    // Scale, mask, keys past skv to -inf; a NaN or +inf score makes the row's softmax NaN (as the reference's).
    int64_t const kv0 = j * kBlockN;
    int const nValid = static_cast<int>(a.skv - kv0 < kBlockN ? a.skv - kv0 : kBlockN);
    if (mask) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        T const* mr = maskRows[r] + kv0 * a.maskColStride;
#pragma unroll
        for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            int const col = n * 8 + t * 2 + e;
            float x = -kInf;
            if (col < nValid) {
              x = s[n][2 * r + e] * scale;
              if (valid[r]) x += dev::toFloat(mr[col * a.maskColStride]);
              bad[r] = bad[r] || !(x < kInf);  // NaN or +inf
            }
            s[n][2 * r + e] = x;
          }
        }
      }
    } else {
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float x = s[n][e] * scale;
          bad[e / 2] = bad[e / 2] || !(x < kInf);  // NaN or +inf
          s[n][e] = n * 8 + t * 2 + (e & 1) < nValid ? x : -kInf;
        }
      }
    }

    // Online softmax of both rows; s becomes p.
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mt = -kInf;
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) mt = fmaxf(mt, fmaxf(s[n][2 * r], s[n][2 * r + 1]));
      mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 1));
      mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 2));
      float const mNew = fmaxf(mRun[r], mt);
      float const mUse = mNew == -kInf ? 0.f : mNew;  // all -inf so far: exp(-inf - 0) = 0, no NaN
      float const alpha = mRun[r] == -kInf ? 0.f : fastExp2((mRun[r] - mUse) * kLog2e);
      float sum = 0.f;
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
        for (int e = 2 * r; e < 2 * r + 2; ++e) {
          float const p = fastExp2((s[n][e] - mUse) * kLog2e);
          s[n][e] = p;
          sum += p;
        }
      }
      lRun[r] = lRun[r] * alpha + sum;
      mRun[r] = mNew;
#pragma unroll
      for (int c = 0; c < kDTiles; ++c) {
        o[c][2 * r] *= alpha;
        o[c][2 * r + 1] *= alpha;
      }
    }

    // o += p v: p's A fragments straight from s (see the top of the file).
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      uint32_t const pa[4] = {pack2<T>(s[2 * kk][0], s[2 * kk][1]), pack2<T>(s[2 * kk][2], s[2 * kk][3]),
                              pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int np = 0; np < kDP / 16; ++np) {
        uint32_t bv[4];
        ldmatrixX4Trans(bv, vt + (kk * 16 + lane % 8 + ((lane / 8) % 2) * 8) * kLd + np * 16 + (lane / 16) * 8);
        mma16816<T>(o[2 * np], pa, bv[0], bv[1]);
        mma16816<T>(o[2 * np + 1], pa, bv[2], bv[3]);
      }
    }
    __syncthreads();  // every warp is done with buffer buf before iteration j + 1 refills it with tile j + 2
  }

  // Row sums and bad flags over the quad; then the rows, normalized, into this warp's 16 rows of the q buffer
  // (read by nobody else: each warp's ldmatrix of q took only its own rows) and out with 16-byte stores.
  float inv[2];
  int state[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float l = lRun[r];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    int anyBad = bad[r] ? 1 : 0;
    anyBad |= __shfl_xor_sync(0xffffffffu, anyBad, 1);
    anyBad |= __shfl_xor_sync(0xffffffffu, anyBad, 2);
    state[r] = rowState(anyBad != 0, l, a);
    inv[r] = l > 0.f ? 1.f / l : 0.f;
  }
  T* ow = qs + warp * 16 * kLd;
  __syncwarp();
#pragma unroll
  for (int c = 0; c < kDTiles; ++c) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float v0 = 0.f, v1 = 0.f;
      if (state[r] == kRowNormal) {
        v0 = o[c][2 * r] * inv[r];
        v1 = o[c][2 * r + 1] * inv[r];
      } else if (state[r] == kRowNaN) {
        v0 = v1 = NAN;
      }
      *reinterpret_cast<uint32_t*>(ow + (g + 8 * r) * kLd + c * 8 + t * 2) = pack2<T>(v0, v1);
    }
  }
  __syncwarp();
  T* y = static_cast<T*>(a.y) + off.y;
  constexpr int kChunks = kDP / 8;
  for (int i = lane; i < 16 * kChunks; i += 32) {
    int const r = i / kChunks, c = (i % kChunks) * 8;
    int64_t const row = row0 + warp * 16 + r;
    if (row >= a.sq || c >= a.dv) continue;
    T const* src = ow + r * kLd + c;
    T* dst = y + row * a.yRowStride + c;
    if (yVec) {
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<uint4 const*>(src);
    } else {
#pragma unroll
      for (int e = 0; e < 8; ++e) dst[e] = src[e];
    }
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

// a: resolved by launchAttention. blockIdx.x = batch entry * rowTiles + row tile.
__global__ void __launch_bounds__(kF32Rows) attentionFp32Kernel(AttentionArgs const a, uint32_t rowTiles) {
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
  uint32_t const b = blockIdx.x / rowTiles;
  int64_t const row0 = static_cast<int64_t>(blockIdx.x % rowTiles) * kF32Rows;
  int64_t const rowsHere = a.sq - row0 < kF32Rows ? a.sq - row0 : kF32Rows;
  BatchOffsets const off = batchOffsets(a, b);
  float const* q = static_cast<float const*>(a.q) + off.q;
  float const* k = static_cast<float const*>(a.k) + off.k;
  float const* v = static_cast<float const*>(a.v) + off.v;
  float const* mask = a.mask ? static_cast<float const*>(a.mask) + off.m : nullptr;

  for (int i = t; i < kF32Rows * d; i += kF32Rows) {
    int const r = i / d, c = i % d;
    qs[r * ldq + c] = r < rowsHere ? q[(row0 + r) * a.qRowStride + c] : 0.f;
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
        ks[n * d + c] = n < nValid ? k[c * a.kRowStride + kv0 + n] : 0.f;
      }
    } else {
      for (int i = t; i < kF32Keys * d; i += kF32Rows) {
        int const n = i / d, c = i % d;
        ks[n * d + c] = n < nValid ? k[(kv0 + n) * a.kRowStride + c] : 0.f;
      }
    }
    for (int i = t; i < kF32Keys * dv; i += kF32Rows) {
      int const n = i / dv, c = i % dv;
      vs[n * dv + c] = n < nValid ? v[(kv0 + n) * a.vRowStride + c] : 0.f;
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
  float* y = static_cast<float*>(a.y) + off.y;
  for (int64_t i = t; i < rowsHere * dv; i += kF32Rows) {
    int const r = static_cast<int>(i / dv), c = static_cast<int>(i % dv);
    int const st = rowStates[r];
    y[(row0 + r) * a.yRowStride + c] = st == kRowNormal ? os[r * ldo + c] * rowScale[r] : (st == kRowZero ? 0.f : NAN);
  }
}

// True when p and every listed stride (elements of `elem` bytes) keep 16-byte alignment.
bool rowsAligned16(void const* p, size_t elem, int64_t rowStride, int64_t const* batchStrides, int32_t rank) {
  if (reinterpret_cast<uintptr_t>(p) % 16 != 0 || rowStride * static_cast<int64_t>(elem) % 16 != 0) return false;
  for (int32_t i = 0; i < rank; ++i)
    if (batchStrides[i] * static_cast<int64_t>(elem) % 16 != 0) return false;
  return true;
}

template <typename T, int kDP>
void launchMma(AttentionArgs const& a, uint32_t rowTiles, unsigned blocks, cudaStream_t stream) {
  size_t const bytes = mmaSmemBytes<T, kDP>();
  auto* kernel = attentionMmaKernel<T, kDP>;
  // Above 48 KB a kernel must opt in; an error here surfaces through cudaGetLastError like a launch error.
  (void)cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
  size_t const e = sizeof(T);
  bool const vec = rowsAligned16(a.q, e, a.qRowStride, a.qStride, a.batchRank) &&
                   rowsAligned16(a.v, e, a.vRowStride, a.vStride, a.batchRank) &&
                   (a.kTransposed || rowsAligned16(a.k, e, a.kRowStride, a.kStride, a.batchRank));
  bool const yVec = rowsAligned16(a.y, e, a.yRowStride, a.yStride, a.batchRank);
  kernel<<<blocks, kThreads, bytes, stream>>>(a, rowTiles, vec, yVec);
}

template <typename T>
void launchMmaFor(AttentionArgs const& a, uint32_t rowTiles, unsigned blocks, cudaStream_t stream) {
  int64_t const widest = a.d > a.dv ? a.d : a.dv;
  if (widest <= 32)
    launchMma<T, 32>(a, rowTiles, blocks, stream);
  else if (widest <= 64)
    launchMma<T, 64>(a, rowTiles, blocks, stream);
  else
    launchMma<T, 128>(a, rowTiles, blocks, stream);
}

}  // namespace

bool launchAttention(int32_t dtype, AttentionArgs const& args, cudaStream_t stream) {
  if (!attentionHeadDimsOk(args.d, args.dv) || args.batchRank < 0 || args.batchRank > kAttentionMaxBatchDims)
    return false;
  if (dtype != dev::kFLOAT && dtype != dev::kHALF && dtype != dev::kBF16) return false;
  if (args.qRowStride < 0 || args.kRowStride < 0 || args.vRowStride < 0 || args.yRowStride < 0) return false;
  int64_t const tiles = (args.sq + kBlockM - 1) / kBlockM;
  if (tiles > kAttentionMaxRowTiles || args.batchCount > 0x7fffffff) return false;
  if (args.batchCount <= 0 || args.sq <= 0) return true;   // an empty output
  if (args.batchCount > 0x7fffffff / tiles) return false;  // one grid dimension holds every CTA
  // Resolve the defaults so that the kernels read one form: row strides of packed rows, y's batch strides.
  AttentionArgs a = args;
  if (a.qRowStride == 0) a.qRowStride = a.d;
  if (a.kRowStride == 0) a.kRowStride = a.kTransposed ? a.skv : a.d;
  if (a.vRowStride == 0) a.vRowStride = a.dv;
  if (a.yRowStride == 0) a.yRowStride = a.dv;
  if (!a.yStrided) {
    int64_t stride = a.sq * a.yRowStride;
    for (int32_t i = a.batchRank - 1; i >= 0; --i) {
      a.yStride[i] = stride;
      stride *= a.batch[i];
    }
    a.yStrided = true;
  }
  // Row tiles of one batch entry are neighbours in launch order, so they share its keys and values in L2.
  auto const blocks = static_cast<unsigned>(a.batchCount * tiles);
  auto const rowTiles = static_cast<uint32_t>(tiles);
  switch (dtype) {
    case dev::kHALF:
      launchMmaFor<__half>(a, rowTiles, blocks, stream);
      break;
    case dev::kBF16:
      launchMmaFor<__nv_bfloat16>(a, rowTiles, blocks, stream);
      break;
    default: {
      size_t const bytes = fp32SmemBytes(a.d, a.dv);
      (void)cudaFuncSetAttribute(attentionFp32Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(bytes));
      attentionFp32Kernel<<<blocks, kF32Rows, bytes, stream>>>(a, rowTiles);
      break;
    }
  }
  return true;
}

}  // namespace kiln::cuda
