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
#include <cooperative_groups.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/vector_io.cuh"

namespace kiln::cuda {
namespace {

constexpr int kBlockM = 64;       // query rows per CTA of the grid-filling instantiation (4 warps)
constexpr int kSmallBlockM = 16;  // ... of the small-grid one (1 warp)
constexpr int kBlockN = 64;       // keys per tile
static_assert(kBlockM == kAttentionRowsPerTile && kSmallBlockM == kAttentionSmallRowsPerTile, "rows per tile");

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

// 16 bytes to shared dst: the first `bytes` (0..16) from global src (16-byte aligned), zeros after them (src is
// not read when bytes is 0).
__device__ __forceinline__ void cpAsync16(void* dst, void const* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smemAddr(dst)), "l"(src), "r"(bytes) : "memory");
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

// p[0] and p[1] (p 4-byte aligned, in shared memory) as floats, in one 32-bit load.
template <typename T>
__device__ __forceinline__ float2 pairToFloat2(T const* p) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half22float2(*reinterpret_cast<__half2 const*>(p));
  } else {
    return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162 const*>(p));
  }
}

// How the kernel reads the additive mask (launchMma picks it from the strides): none; one row of keys shared by
// every query row (row stride 0: key-padding masks such as BERT's [B, 1, 1, S]), staged as kBlockN values per key
// tile; any other strides, staged as the [kBM x kBlockN] tile of the CTA's query rows.
constexpr int kMaskNone = 0, kMaskRow = 1, kMaskTile = 2;
// Mask tile rows kBlockN + 8 elements (36 words) apart: the 8 rows g of one 32-bit read land in banks 4 g + t,
// all distinct (64 would put all 8 in one bank).
constexpr int kMaskLd = kBlockN + 8;

// Shared-memory layout of a CTA of kBM query rows (kBM / 16 warps): q [kBM][kLd], two k and two v buffers
// [kBlockN][kLd] (kLd: a 16-byte row pad, so the 8 rows one ldmatrix phase reads are in 8 different bank quads),
// then the mask's two buffers (kBlockN values each for kMaskRow, [kBM][kMaskLd] for kMaskTile). Every part is a
// multiple of 16 bytes (kLd and kMaskLd are multiples of 8 elements), so every buffer stays 16-byte aligned.
template <typename T, int kDP, int kBM>
struct MmaLayout {
  static constexpr int kWarps = kBM / 16;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kLd = kDP + 8;
  static constexpr int kQElems = kBM * kLd;
  static constexpr int kKvElems = kBlockN * kLd;
  static constexpr int kMaskTileElems = kBM * kMaskLd;
  static_assert(kBM % 16 == 0 && kBM <= kBlockM, "whole warps of 16 rows, at most kBlockM rows");
  static constexpr int maskElems(int maskMode) {
    return maskMode == kMaskTile ? kMaskTileElems : maskMode == kMaskRow ? kBlockN : 0;  // per buffer
  }
  static constexpr size_t bytes(int maskMode) {
    return static_cast<size_t>(kQElems + 4 * kKvElems + 2 * maskElems(maskMode)) * sizeof(T);
  }
};

// Rows [0, rows) x columns [0, cols) of the matrix at g (rows rowStride apart, unit column stride) into the
// kRows-row tile s (rows kDP + 8 apart), zeros elsewhere, by kThreads threads. cols is a multiple of 8, so
// 8-element chunks lie wholly inside or outside. vec: 16-byte cp.async (g and rowStride 16-byte aligned; complete at
// the next cpAsyncWait), else plain loads.
template <typename T, int kDP, int kRows, int kThreads>
__device__ __forceinline__ void loadTile(T* s, T const* g, int64_t rowStride, int64_t rows, int64_t cols, bool vec) {
  constexpr int kLd = kDP + 8;
  constexpr int kChunks = kDP / 8;
  static_assert(kRows * kChunks % kThreads == 0, "whole chunks per thread");
  if (vec) {
    // Thread i copies chunk i % kChunks of rows i / kChunks + kRowsPerPass * pass: one column per thread, so one
    // source pointer advanced by a fixed step (fewer live registers than an address per pass).
    constexpr int kRowsPerPass = kThreads / kChunks;
    static_assert(kThreads % kChunks == 0 && kRows % kRowsPerPass == 0, "whole rows per pass");
    int const r0 = static_cast<int>(threadIdx.x) / kChunks, c = static_cast<int>(threadIdx.x) % kChunks * 8;
    T const* src = g + r0 * rowStride + c;
    T* dst = s + r0 * kLd + c;
#pragma unroll
    for (int pass = 0; pass < kRows / kRowsPerPass; ++pass) {
      bool const ok = r0 + pass * kRowsPerPass < rows && c < cols;
      cpAsync16(dst + pass * kRowsPerPass * kLd, ok ? src : g, ok ? 16 : 0);
      src += kRowsPerPass * rowStride;
    }
  } else {
    // The slow path stays rolled up: unrolled, its loads would all be in flight at once and claim registers the
    // fast path needs.
#pragma unroll 1
    for (int i = static_cast<int>(threadIdx.x); i < kRows * kDP; i += kThreads) {
      int const r = i / kDP, c = i % kDP;
      s[r * kLd + c] = r < rows && c < cols ? g[r * rowStride + c] : dev::fromFloat<T>(0.f);
    }
  }
}

// Keys [0, keys) of k^T (element (c, key) at g[c * rowStride + key]) into tile s as rows [key][c], zero outside.
template <typename T, int kDP, int kThreads>
__device__ void loadKeysTransposed(T* s, T const* g, int64_t rowStride, int64_t keys, int64_t d) {
  constexpr int kLd = kDP + 8;
#pragma unroll 1
  for (int i = static_cast<int>(threadIdx.x); i < kBlockN * kDP; i += kThreads) {
    int const c = i / kBlockN, n = i % kBlockN;  // consecutive threads read consecutive keys
    s[n * kLd + c] = c < d && n < keys ? g[c * rowStride + n] : dev::fromFloat<T>(0.f);
  }
}

// One key tile of a kMaskRow mask: keys [0, keys) at g[c * colStride] into s[0, kBlockN), zeros past them. vec:
// colStride 1 and g 16-byte aligned, 8 threads each cp.async one 16-byte chunk (the last one partly); else plain
// loads, with 32-bit offsets when off32 (launchMma checked that they fit).
template <typename T, int kThreads>
__device__ __forceinline__ void loadMaskRow(T* s, T const* g, int64_t colStride, int keys, bool vec, bool off32) {
  constexpr int kChunks = kBlockN * static_cast<int>(sizeof(T)) / 16;
  static_assert(kThreads >= kChunks, "one chunk per thread");
  int const i = static_cast<int>(threadIdx.x);
  if (vec) {
    if (i < kChunks) {
      int const c = i * 16 / static_cast<int>(sizeof(T));
      int const n = keys - c < 0 ? 0 : (keys - c > 8 ? 8 : keys - c);
      cpAsync16(s + c, n > 0 ? g + c : g, n * static_cast<int>(sizeof(T)));
    }
  } else {
    auto const cs = static_cast<int32_t>(colStride);
#pragma unroll 1
    for (int c = i; c < kBlockN; c += kThreads)
      s[c] = c < keys ? (off32 ? g[c * cs] : g[c * colStride]) : dev::fromFloat<T>(0.f);
  }
}

// One key tile of a kMaskTile mask: rows [0, rows) x keys [0, keys) of the mask at g (element (r, c) at
// g[r * rowStride + c * colStride]) into s [kBM][kMaskLd], zeros elsewhere. vec: colStride 1, g and rowStride
// 16-byte aligned, 16-byte cp.async per 8 keys (the chunk across `keys` partly, zero-filled); else plain loads, with
// 32-bit offsets when off32.
template <typename T, int kBM, int kThreads>
__device__ __forceinline__ void loadMaskTile(T* s, T const* g, int64_t rowStride, int64_t colStride, int64_t rows,
                                             int keys, bool vec, bool off32) {
  static_assert(sizeof(T) == 2, "8 elements per 16-byte chunk");
  if (vec) {
    constexpr int kChunks = kBlockN / 8;  // per row
    constexpr int kRowsPerPass = kThreads / kChunks;
    static_assert(kThreads % kChunks == 0 && kBM % kRowsPerPass == 0, "whole rows per pass");
    int const r0 = static_cast<int>(threadIdx.x) / kChunks, c = static_cast<int>(threadIdx.x) % kChunks * 8;
    int const n = keys - c < 0 ? 0 : (keys - c > 8 ? 8 : keys - c);
    T const* src = g + r0 * rowStride + c;
    T* dst = s + r0 * kMaskLd + c;
#pragma unroll
    for (int pass = 0; pass < kBM / kRowsPerPass; ++pass) {
      bool const ok = r0 + pass * kRowsPerPass < rows && n > 0;
      cpAsync16(dst + pass * kRowsPerPass * kMaskLd, ok ? src : g, ok ? 2 * n : 0);
      src += kRowsPerPass * rowStride;
    }
  } else {
    auto const rs = static_cast<int32_t>(rowStride), cs = static_cast<int32_t>(colStride);
#pragma unroll 1
    for (int i = static_cast<int>(threadIdx.x); i < kBM * kBlockN; i += kThreads) {
      int const r = i / kBlockN, c = i % kBlockN;  // consecutive threads read consecutive keys
      T x = dev::fromFloat<T>(0.f);
      if (r < rows && c < keys) x = off32 ? g[r * rs + c * cs] : g[r * rowStride + c * colStride];
      s[r * kMaskLd + c] = x;
    }
  }
}

// What launchMma resolved besides the arguments: aligned operand rows (vec: q, v and k unless transposed; yVec: y),
// the mask's mode, whether its tiles load by cp.async (maskVec) and whether its in-tile offsets fit 32 bits; the
// key split: `splits` CTAs (one cluster) per query tile, each taking tilesPerSplit key tiles (1: no split).
struct MmaFlags {
  uint32_t rowTiles;
  bool vec, yVec;
  int maskMode;
  bool maskVec, mask32;
  uint32_t splits;
  int64_t tilesPerSplit;
};

// The key split's end (f.splits CTAs of one cluster, this one's partial rows in o, mRun, lRun (quad-reduced) and
// bad): each CTA writes its unnormalized o [kBM][kDP] and each row's max, sum and bad flag into its shared memory
// at part; after a cluster barrier, CTA c of the cluster combines the outputs i = c * kThreads + thread (step
// splits * kThreads) of the tile from every CTA's part: y = sum_s o_s e^(m_s - M) / sum_s l_s e^(m_s - M), M the
// largest m_s, in fp32 as the loop; a second barrier keeps every part alive until all reads are done.
template <typename T, int kDP, int kBM>
__device__ void combineSplits(AttentionArgs const& a, MmaFlags const& f, float* part, float const (&o)[kDP / 8][4],
                              float const (&mRun)[2], float const (&lRun)[2], bool const (&bad)[2], int64_t row0,
                              int64_t rowsHere, int64_t yOffset) {
  namespace cg = cooperative_groups;
  constexpr int kThreads = MmaLayout<T, kDP, kBM>::kThreads;
  static_assert(kBM * (kDP + 3) * sizeof(float) <= 4 * sizeof(T) * MmaLayout<T, kDP, kBM>::kKvElems,
                "the partial rows fit in the k/v buffers");
  float* pm = part + kBM * kDP;  // per row: running max, sum, bad (0 or 1)
  float* pl = pm + kBM;
  float* pb = pl + kBM;
  int const warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  int const g = lane / 4, t = lane % 4;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    int const row = warp * 16 + g + 8 * r;
#pragma unroll
    for (int c = 0; c < kDP / 8; ++c) {
      part[row * kDP + c * 8 + t * 2] = o[c][2 * r];
      part[row * kDP + c * 8 + t * 2 + 1] = o[c][2 * r + 1];
    }
    if (t == 0) {
      pm[row] = mRun[r];
      pl[row] = lRun[r];
      pb[row] = bad[r] ? 1.f : 0.f;
    }
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every CTA's part written (release/acquire across the cluster)
  auto const splits = static_cast<int>(f.splits);
  auto const rank = static_cast<int>(cluster.block_rank());
  T* y = static_cast<T*>(a.y) + yOffset;
  auto const dv = static_cast<int>(a.dv);
  for (int i = rank * kThreads + static_cast<int>(threadIdx.x); i < rowsHere * dv; i += splits * kThreads) {
    int const row = i / dv, col = i % dv;
    float m = -kInf;
    for (int sp = 0; sp < splits; ++sp) m = fmaxf(m, *cluster.map_shared_rank(pm + row, sp));
    float const mUse = m == -kInf ? 0.f : m;  // every split all -inf: weights e^(-inf) = 0, no NaN
    float l = 0.f, acc = 0.f;
    bool anyBad = false;
    for (int sp = 0; sp < splits; ++sp) {
      float const ms = *cluster.map_shared_rank(pm + row, sp);
      float const w = ms == -kInf ? 0.f : fastExp2((ms - mUse) * kLog2e);
      l += *cluster.map_shared_rank(pl + row, sp) * w;
      acc += *cluster.map_shared_rank(part + row * kDP + col, sp) * w;
      anyBad = anyBad || *cluster.map_shared_rank(pb + row, sp) != 0.f;
    }
    int const st = rowState(anyBad, l, a);
    float const out = st == kRowNormal ? acc / l : (st == kRowZero ? 0.f : NAN);
    y[(row0 + row) * a.yRowStride + col] = dev::fromFloat<T>(out);
  }
  cluster.sync();  // no CTA leaves (freeing its shared memory) while another reads it
}

// a: resolved by launchAttention (row strides and yStride set). blockIdx.x = (batch entry * f.rowTiles + row tile)
// * f.splits + key split. kBM query rows per CTA, one warp per 16. With f.splits > 1 the CTAs of one query tile are
// one cluster, each runs the online softmax over its run of key tiles, and the cluster combines their partial rows
// through distributed shared memory (combineSplits). ptxas is left to pick the registers (no minimum of CTAs per SM):
// ~165 at head dim 64 (3 CTAs of 4 warps per SM); capped at 128 it spills.
template <typename T, int kDP, int kBM>
__global__ void __launch_bounds__(MmaLayout<T, kDP, kBM>::kThreads)
    attentionMmaKernel(AttentionArgs const a, MmaFlags const f) {
  using L = MmaLayout<T, kDP, kBM>;
  constexpr int kLd = L::kLd;
  constexpr int kThreads = L::kThreads;
  constexpr int kNTiles = kBlockN / 8;  // n8 tiles of scores per key tile
  constexpr int kDTiles = kDP / 8;      // n8 tiles of the output
  extern __shared__ __align__(128) unsigned char mmaSmem[];
  T* qs = reinterpret_cast<T*>(mmaSmem);
  T* ks = qs + L::kQElems;       // two buffers
  T* vs = ks + 2 * L::kKvElems;  // two buffers
  T* ms = vs + 2 * L::kKvElems;  // two mask buffers of maskElems each (none without a mask)
  int const maskMode = f.maskMode;
  int const maskElems = L::maskElems(maskMode);

  int const warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  int const g = lane / 4, t = lane % 4;
  uint32_t const cta = blockIdx.x / f.splits;
  uint32_t const b = cta / f.rowTiles;
  int64_t const row0 = static_cast<int64_t>(cta % f.rowTiles) * kBM;
  int64_t const rowsHere = a.sq - row0 < kBM ? a.sq - row0 : kBM;
  BatchOffsets const off = batchOffsets(a, b);
  T const* q = static_cast<T const*>(a.q) + off.q + row0 * a.qRowStride;
  // This CTA's keys [kvBegin, kvBegin + skv): all of them, or its split's run of key tiles; k, v and the mask
  // below start at kvBegin, so that the loop runs over the run as over a whole key range.
  int64_t const kvBegin = static_cast<int64_t>(blockIdx.x % f.splits) * f.tilesPerSplit * kBlockN;
  int64_t const skvRest = a.skv - kvBegin < 0 ? 0 : a.skv - kvBegin;
  int64_t const skv = f.splits > 1 && skvRest > f.tilesPerSplit * kBlockN ? f.tilesPerSplit * kBlockN : skvRest;
  T const* k = static_cast<T const*>(a.k) + off.k + (a.kTransposed ? kvBegin : kvBegin * a.kRowStride);
  T const* v = static_cast<T const*>(a.v) + off.v + kvBegin * a.vRowStride;
  // The mask's element (row0, kvBegin) of this batch entry (row stride 0 in kMaskRow mode).
  T const* mask = maskMode != kMaskNone
                      ? static_cast<T const*>(a.mask) + off.m + row0 * a.maskRowStride + kvBegin * a.maskColStride
                      : nullptr;
  float const scale = a.scale;

  float o[kDTiles][4];
#pragma unroll
  for (int c = 0; c < kDTiles; ++c) o[c][0] = o[c][1] = o[c][2] = o[c][3] = 0.f;
  float mRun[2] = {-kInf, -kInf}, lRun[2] = {0.f, 0.f};  // lRun: this lane's partial sum of the row
  bool bad[2] = {false, false};
  uint32_t qf[kDP / 16][4];

  int64_t const tiles = (skv + kBlockN - 1) / kBlockN;
  // Key tile j's k, v and mask into buffer buf: one cp.async group with the caller's commit (plain loads for
  // unaligned operands and k^T, visible after the next __syncthreads like the rest).
  auto loadKeysValues = [&](int64_t j, int buf) {
    int64_t const kv0 = j * kBlockN;
    int64_t const n = skv - kv0 < kBlockN ? skv - kv0 : kBlockN;
    if (a.kTransposed) {
      loadKeysTransposed<T, kDP, kThreads>(ks + buf * L::kKvElems, k + kv0, a.kRowStride, n, a.d);
    } else {
      loadTile<T, kDP, kBlockN, kThreads>(ks + buf * L::kKvElems, k + kv0 * a.kRowStride, a.kRowStride, n, a.d, f.vec);
    }
    loadTile<T, kDP, kBlockN, kThreads>(vs + buf * L::kKvElems, v + kv0 * a.vRowStride, a.vRowStride, n, a.dv, f.vec);
    if (maskMode == kMaskRow) {
      loadMaskRow<T, kThreads>(ms + buf * maskElems, mask + kv0 * a.maskColStride, a.maskColStride, static_cast<int>(n),
                               f.maskVec, f.mask32);
    } else if (maskMode == kMaskTile) {
      loadMaskTile<T, kBM, kThreads>(ms + buf * maskElems, mask + kv0 * a.maskColStride, a.maskRowStride,
                                     a.maskColStride, rowsHere, static_cast<int>(n), f.maskVec, f.mask32);
    }
  };
  if (tiles > 0) {
    loadTile<T, kDP, kBM, kThreads>(qs, q, a.qRowStride, rowsHere, a.d, f.vec);
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
    __syncthreads();  // every thread's copies (async or plain) of tile j, its mask included, are visible
    if (j == 0) {
#pragma unroll
      for (int kk = 0; kk < kDP / 16; ++kk)
        ldmatrixX4(qf[kk], qs + (warp * 16 + lane % 16) * kLd + kk * 16 + (lane / 16) * 8);
    }
    T const* kt = ks + buf * L::kKvElems;
    T const* vt = vs + buf * L::kKvElems;

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

    // Scale, add the mask (maskAt(r, col): the mask of row g + 8 r, keys col and col + 1, from shared memory),
    // keys past skv to -inf; a NaN or +inf score makes the row's softmax NaN (as the reference's). Rows past sq
    // read zeros (kMaskTile) or the shared row and are never stored.
    int64_t const kv0 = j * kBlockN;
    int const nValid = static_cast<int>(skv - kv0 < kBlockN ? skv - kv0 : kBlockN);
    auto scoresWith = [&](auto maskAt) {
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          int const col = n * 8 + t * 2;
          float2 const m = maskAt(r, col);
          float const x0 = s[n][2 * r] * scale + m.x, x1 = s[n][2 * r + 1] * scale + m.y;
          bool const in0 = col < nValid, in1 = col + 1 < nValid;
          bad[r] = bad[r] || (in0 && !(x0 < kInf)) || (in1 && !(x1 < kInf));  // NaN or +inf
          s[n][2 * r] = in0 ? x0 : -kInf;
          s[n][2 * r + 1] = in1 ? x1 : -kInf;
        }
      }
    };
    if (maskMode == kMaskRow) {
      T const* mt = ms + buf * maskElems;
      scoresWith([&](int, int col) { return pairToFloat2(mt + col); });
    } else if (maskMode == kMaskTile) {
      T const* mt = ms + buf * maskElems + (warp * 16 + g) * kMaskLd;
      scoresWith([&](int r, int col) { return pairToFloat2(mt + r * 8 * kMaskLd + col); });
    } else {
      scoresWith([](int, int) { return make_float2(0.f, 0.f); });
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
    __syncthreads();  // every warp is done with buffer buf (k, v, mask) before iteration j + 1 refills it
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
    lRun[r] = l;
    bad[r] = anyBad != 0;
    state[r] = rowState(anyBad != 0, l, a);
    inv[r] = l > 0.f ? 1.f / l : 0.f;
  }
  // Only the 16-row form splits keys: this branch in the 64-row one costs it ~20-40 registers (ptxas).
  if constexpr (kBM == kSmallBlockM) {
    if (f.splits > 1) {
      // The k/v buffers are free (the loop ended on a __syncthreads with no copy in flight, or never started).
      combineSplits<T, kDP, kBM>(a, f, reinterpret_cast<float*>(ks), o, mRun, lRun, bad, row0, rowsHere, off.y);
      return;
    }
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
    if (f.yVec) {
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

// True when the mask's batch offsets and its rows keep 16-byte alignment and its keys are contiguous, so that its
// tiles load by cp.async (rows only matter for kMaskTile).
bool maskAligned16(AttentionArgs const& a, size_t elem, int maskMode) {
  if (a.maskColStride != 1) return false;
  return rowsAligned16(a.mask, elem, maskMode == kMaskTile ? a.maskRowStride : 0, a.maskStride, a.batchRank);
}

template <typename T, int kDP, int kBM>
void launchMma(AttentionArgs const& a, MmaFlags f, cudaStream_t stream) {
  using L = MmaLayout<T, kDP, kBM>;
  auto* kernel = attentionMmaKernel<T, kDP, kBM>;
  // Above 48 KB a kernel must opt in; the most any launch of it takes, so that launches from other threads with
  // other mask modes never lower it under this one. An error surfaces through cudaGetLastError like a launch error.
  (void)cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(L::bytes(kMaskTile)));
  f.rowTiles = static_cast<uint32_t>((a.sq + kBM - 1) / kBM);
  auto const blocks = static_cast<unsigned>(a.batchCount * f.rowTiles * f.splits);
  if (f.splits == 1) {
    kernel<<<blocks, L::kThreads, L::bytes(f.maskMode), stream>>>(a, f);
    return;
  }
  // The splits of one query tile are one cluster (consecutive CTAs), so that they combine through each other's
  // shared memory.
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(L::kThreads);
  cfg.dynamicSmemBytes = L::bytes(f.maskMode);
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = f.splits;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  // A failed launch is left in CUDA's last error, which the tactic's launchStatus reports.
  (void)cudaLaunchKernelEx(&cfg, kernel, a, f);
}

template <typename T, int kBM>
void launchMmaFor(AttentionArgs const& a, MmaFlags const& f, cudaStream_t stream) {
  int64_t const widest = a.d > a.dv ? a.d : a.dv;
  if (widest <= 32)
    launchMma<T, 32, kBM>(a, f, stream);
  else if (widest <= 64)
    launchMma<T, 64, kBM>(a, f, stream);
  else
    launchMma<T, 128, kBM>(a, f, stream);
}

std::atomic<int64_t> gRowsPerCta{0};  // setAttentionRowsPerCta's setting; 0: by grid size
std::atomic<int64_t> gKeySplits{0};   // setAttentionKeySplits' setting; 0: by grid size
constexpr int64_t kMaxKeySplits = 8;  // the portable cluster size

// Query rows per CTA of the fp16/bf16 kernel. A grid of fewer 64-row CTAs than SMs leaves SMs idle, but smaller
// CTAs alone do not pay: a warp's own work is the same, and the 4 warps of a 64-row CTA share each k/v tile load
// (a 32-row form, tried, was slower than 64 rows on every BERT and ViT shape benched). On the H200, BERT batch 1 (12
// heads x 2 tiles = 24 CTAs, 2 key tiles) took 6.7 us with 16 rows against 5.6 us with 64, and ViT-B/16 batch 1 (197
// tokens, 4 key tiles: 48 CTAs of 64 rows, 156 of 16) 9.3 us with 16 rows against 8.0 with 64. What fills idle SMs is
// the key split (chooseKeySplits), which only the 16-row form has: so 16 rows where the split will run -- at least 4
// key tiles and twice the 16-row CTAs at most the SMs (few queries over long keys: 16 queries over 4,096 keys took
// 0.116 ms unsplit, 0.021 ms in 8 runs) -- and 64 rows otherwise.
int64_t rowsPerCta(AttentionArgs const& a) {
  int64_t const forced = gRowsPerCta.load(std::memory_order_relaxed);
  int64_t const smallTiles = (a.sq + kSmallBlockM - 1) / kSmallBlockM;
  if (forced == kSmallBlockM && a.batchCount > 0x7fffffff / smallTiles) return kBlockM;  // one grid dimension
  if (forced != 0) return forced;
  int64_t const keyTiles = (a.skv + kBlockN - 1) / kBlockN;
  int64_t const sms = vec::multiprocessorCount();
  // chooseKeySplits' rule: at least 2 splits of at least 2 key tiles each, the SMs holding every split's CTA.
  return keyTiles >= 4 && 2 * a.batchCount * smallTiles <= sms ? kSmallBlockM : kBlockM;
}

// The key split of a launch of `ctas` CTAs (rows rows each): the CTAs of one query tile split its key tiles into
// f.splits runs of f.tilesPerSplit (none empty). By grid size: when even the CTAs of 16 rows are fewer than the SMs
// and there are at least 4 key tiles (long keys, few queries: BERT-style encoders at batch 1 fill the SMs by rows
// from ~1,000 tokens), as many splits as fill the SMs, at most 8 and at least 2 key tiles each.
void chooseKeySplits(AttentionArgs const& a, int64_t ctas, int64_t rows, MmaFlags& f) {
  int64_t const keyTiles = (a.skv + kBlockN - 1) / kBlockN;
  int64_t splits = rows == kSmallBlockM ? gKeySplits.load(std::memory_order_relaxed) : 1;
  if (splits == 0) {
    splits = 1;
    int64_t const sms = vec::multiprocessorCount();
    if (rows == kSmallBlockM && ctas < sms && keyTiles >= 4)
      splits = std::min({kMaxKeySplits, sms / ctas, keyTiles / 2});
  }
  splits = std::min({splits, kMaxKeySplits, keyTiles});
  if (splits < 2 || ctas > 0x7fffffff / splits) splits = 1;
  f.tilesPerSplit = (keyTiles + splits - 1) / splits;
  f.splits = static_cast<uint32_t>(splits > 1 ? (keyTiles + f.tilesPerSplit - 1) / f.tilesPerSplit : 1);
}

template <typename T>
void launchMmaTyped(AttentionArgs const& a, cudaStream_t stream) {
  size_t const e = sizeof(T);
  MmaFlags f{};
  f.vec = rowsAligned16(a.q, e, a.qRowStride, a.qStride, a.batchRank) &&
          rowsAligned16(a.v, e, a.vRowStride, a.vStride, a.batchRank) &&
          (a.kTransposed || rowsAligned16(a.k, e, a.kRowStride, a.kStride, a.batchRank));
  f.yVec = rowsAligned16(a.y, e, a.yRowStride, a.yStride, a.batchRank);
  f.maskMode = a.mask == nullptr ? kMaskNone : (a.maskRowStride == 0 ? kMaskRow : kMaskTile);
  f.maskVec = f.maskMode != kMaskNone && maskAligned16(a, e, f.maskMode);
  // The largest in-tile offset of the plain-load path, over the larger row tile (launchAttention refused negative
  // strides).
  f.mask32 = (kBlockM - 1) * a.maskRowStride + (kBlockN - 1) * a.maskColStride <= 0x7fffffff;
  int64_t const rows = rowsPerCta(a);
  chooseKeySplits(a, a.batchCount * ((a.sq + rows - 1) / rows), rows, f);
  if (rows == kSmallBlockM)
    launchMmaFor<T, kSmallBlockM>(a, f, stream);  // the one form that splits keys
  else
    launchMmaFor<T, kBlockM>(a, f, stream);
}

}  // namespace

bool launchAttention(int32_t dtype, AttentionArgs const& args, cudaStream_t stream) {
  if (!attentionHeadDimsOk(args.d, args.dv) || args.batchRank < 0 || args.batchRank > kAttentionMaxBatchDims)
    return false;
  if (dtype != dev::kFLOAT && dtype != dev::kHALF && dtype != dev::kBF16) return false;
  if (args.qRowStride < 0 || args.kRowStride < 0 || args.vRowStride < 0 || args.yRowStride < 0) return false;
  if (args.mask && (args.maskRowStride < 0 || args.maskColStride < 0)) return false;
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
  switch (dtype) {
    case dev::kHALF:
      launchMmaTyped<__half>(a, stream);
      break;
    case dev::kBF16:
      launchMmaTyped<__nv_bfloat16>(a, stream);
      break;
    default: {
      auto const blocks = static_cast<unsigned>(a.batchCount * tiles);
      auto const rowTiles = static_cast<uint32_t>(tiles);
      size_t const bytes = fp32SmemBytes(a.d, a.dv);
      (void)cudaFuncSetAttribute(attentionFp32Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(bytes));
      attentionFp32Kernel<<<blocks, kF32Rows, bytes, stream>>>(a, rowTiles);
      break;
    }
  }
  return true;
}

int64_t setAttentionRowsPerCta(int64_t rows) { return gRowsPerCta.exchange(rows); }

int64_t setAttentionKeySplits(int64_t splits) { return gKeySplits.exchange(splits); }

}  // namespace kiln::cuda
