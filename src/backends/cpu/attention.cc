// CPU Attention tactic (attention_cpu_tiled): fp32 softmax(scale * q k^T + mask) v without materializing the
// scores tensor. Each work item is one batch entry's block of query rows: k^T is packed into a zero-padded panel,
// the block's scores go into a tile that stays in L2, softmax runs row by row in place, and P * V writes y scaled by
// 1 / row sum. AVX-512 register-blocked loops where the CPU has them, portable loops elsewhere.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "backends/attention_head_args.h"
#include "backends/cpu/attention_cpu.h"
#include "backends/cpu/onednn_util.h"
#include "backends/cpu_format.h"
#include "backends/reference/reference_util.h"
#include "core/broadcast.h"
#include "ir/attention_layout.h"

namespace kiln::backends::cpu {
namespace {

// Query rows per work item at most (the tile is rows x skv floats: 64 x 4096 x 4 B = 1 MiB at the most common
// large size, within a core's L2 on the machines this runs on).
constexpr int64_t kMaxBlockRows = 64;
// Scores tile and k^T panel rows padded to whole 16-column vectors.
constexpr int64_t kColStep = 16;

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Offsets of batch entry `e` (row-major over args.batch) in each operand.
struct EntryOffsets {
  int64_t q = 0, k = 0, v = 0, y = 0, mask = 0;
};
EntryOffsets entryOffsets(CpuAttentionArgs const& a, int64_t e) {
  EntryOffsets o;
  for (int32_t i = a.batchRank - 1; i >= 0; --i) {
    int64_t const idx = e % a.batch[i];
    e /= a.batch[i];
    o.q += idx * a.qStride[i];
    o.k += idx * a.kStride[i];
    o.v += idx * a.vStride[i];
    o.y += idx * a.yStride[i];
    o.mask += idx * a.maskStride[i];
  }
  return o;
}

// One work item's view: `rows` query rows from `row0` of one entry, and the thread's scratch.
struct Block {
  float const* q;     // first row of the block
  float const* v;     // the entry's v
  float const* mask;  // the block's first mask row (null: none)
  float* y;           // first output row
  float* kt;          // packed k^T: d rows of ld floats (columns skv..ld-1 zero)
  float* s;           // scores / probabilities: rows x ld
  float* rowScale;    // per row: 1 / sum, or 0 / NaN for rows whose softmax is NaN
  int64_t rows, ld;
};

// scale * k^T of one entry into the panel (d rows of ld floats), the padding columns zero: the scale is applied
// once per key element here instead of once per score.
void packKt(CpuAttentionArgs const& a, float const* k, float* kt, int64_t ld) {
  float const sc = a.scale;
  for (int64_t t = 0; t < a.d; ++t) {
    float* dst = kt + t * ld;
    if (a.kTransposed) {
      float const* src = k + t * a.kRowStride;
      for (int64_t j = 0; j < a.skv; ++j) dst[j] = src[j] * sc;
    } else {
      for (int64_t j = 0; j < a.skv; ++j) dst[j] = k[j * a.kRowStride + t] * sc;
    }
    std::fill(dst + a.skv, dst + ld, 0.f);
  }
}

// ---- Portable loops ------------------------------------------------------------------------------------------

void maskPortable(CpuAttentionArgs const& a, float* s, float const* m) {
  if (!m) return;
  for (int64_t j = 0; j < a.skv; ++j) s[j] += m[j * a.maskColStride];
}

// Max with NaN winning (the reference's rule).
float maxPortable(float const* s, int64_t n) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < n; ++j) {
    if (std::isnan(s[j])) return s[j];
    mx = std::max(mx, s[j]);
  }
  return mx;
}

float expSumPortable(float* s, int64_t n, float mx) {
  float sum = 0.f;
  for (int64_t j = 0; j < n; ++j) {
    s[j] = std::exp(s[j] - mx);
    sum += s[j];
  }
  return sum;
}

void blockPortable(CpuAttentionArgs const& a, Block const& b) {
  for (int64_t r = 0; r < b.rows; ++r) {
    float* s = b.s + r * b.ld;
    std::fill(s, s + b.ld, 0.f);
    float const* qr = b.q + r * a.qRowStride;
    for (int64_t t = 0; t < a.d; ++t) {
      float const qv = qr[t];
      float const* kr = b.kt + t * b.ld;
      for (int64_t j = 0; j < b.ld; ++j) s[j] += qv * kr[j];
    }
    maskPortable(a, s, b.mask ? b.mask + r * a.maskRowStride : nullptr);
    // A row whose max is not finite (a NaN or +inf score, or every score -inf) is NaN in the unfused layers.
    float const mx = maxPortable(s, a.skv);
    if (std::isfinite(mx)) {
      b.rowScale[r] = 1.f / expSumPortable(s, a.skv, mx);
    } else {
      std::fill(s, s + a.skv, 0.f);
      b.rowScale[r] = a.nanToZero ? 0.f : std::numeric_limits<float>::quiet_NaN();
    }
    float* yr = b.y + r * a.yRowStride;
    std::fill(yr, yr + a.dv, 0.f);
    for (int64_t j = 0; j < a.skv; ++j) {
      float const p = s[j];
      float const* vr = b.v + j * a.vRowStride;
      for (int64_t c = 0; c < a.dv; ++c) yr[c] += p * vr[c];
    }
    float const f = b.rowScale[r];
    for (int64_t c = 0; c < a.dv; ++c) yr[c] *= f;
  }
}

// ---- AVX-512 loops -------------------------------------------------------------------------------------------

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define KILN_ATTENTION_AVX512 1
#define KILN_AVX512 __attribute__((target("avx512f")))

// exp(x) for x <= 0 (NaN not expected: rows with NaN never get here): 2^n * p(r), r = x - n ln2 in
// [-ln2/2, ln2/2], p the degree-6 Taylor polynomial (relative error < 2e-7); below -87.3 (float's normal range)
// it is 0.
KILN_AVX512 inline __m512 exp512(__m512 x) {
  __mmask16 const live = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.3f), _CMP_GE_OQ);
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.3f));
  __m512 const n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145752f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.42860677e-6f), r);
  __m512 p = _mm512_set1_ps(1.f / 720);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
  return _mm512_maskz_mov_ps(live, _mm512_scalef_ps(p, n));
}

KILN_AVX512 inline __mmask16 tailMask(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << n) - 1u);
}

// Scores of MR rows x 16 NV columns: s[r][0..16 NV) = q_r . kt[:, 0..16 NV) (kt's rows ld apart).
template <int MR, int NV>
KILN_AVX512 void scoreTile(float const* q, int64_t qRow, float const* kt, int64_t ld, int64_t d, float* s) {
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int u = 0; u < NV; ++u) acc[r][u] = _mm512_setzero_ps();
  for (int64_t t = 0; t < d; ++t) {
    __m512 kv[NV];
#pragma GCC unroll 4
    for (int u = 0; u < NV; ++u) kv[u] = _mm512_load_ps(kt + t * ld + 16 * u);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      __m512 const qv = _mm512_set1_ps(q[r * qRow + t]);
#pragma GCC unroll 4
      for (int u = 0; u < NV; ++u) acc[r][u] = _mm512_fmadd_ps(qv, kv[u], acc[r][u]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int u = 0; u < NV; ++u) _mm512_store_ps(s + r * ld + 16 * u, acc[r][u]);
}

// Scores of `rows` rows over the 16 NV columns of one k^T stripe, 8 rows at a time (16 accumulators at NV 2).
template <int NV>
KILN_AVX512 void scoreStripe(float const* q, int64_t qRow, float const* kt, int64_t ld, int64_t d, float* s,
                             int64_t rows) {
  int64_t r = 0;
  for (; r + 8 <= rows; r += 8) scoreTile<8, NV>(q + r * qRow, qRow, kt, ld, d, s + r * ld);
  q += r * qRow;
  s += r * ld;
  switch (rows - r) {
    case 7:
      scoreTile<7, NV>(q, qRow, kt, ld, d, s);
      break;
    case 6:
      scoreTile<6, NV>(q, qRow, kt, ld, d, s);
      break;
    case 5:
      scoreTile<5, NV>(q, qRow, kt, ld, d, s);
      break;
    case 4:
      scoreTile<4, NV>(q, qRow, kt, ld, d, s);
      break;
    case 3:
      scoreTile<3, NV>(q, qRow, kt, ld, d, s);
      break;
    case 2:
      scoreTile<2, NV>(q, qRow, kt, ld, d, s);
      break;
    case 1:
      scoreTile<1, NV>(q, qRow, kt, ld, d, s);
      break;
    default:
      break;
  }
}

// y rows r < MR, columns c0 .. c0 + 16 NV (the last vector masked by `last`) = rowScale_r * sum_j p[r][j] v[j].
template <int MR, int NV>
KILN_AVX512 void pvTile(float const* p, int64_t ld, float const* v, int64_t vRow, int64_t skv, float const* rowScale,
                        float* y, int64_t yRow, __mmask16 last) {
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int u = 0; u < NV; ++u) acc[r][u] = _mm512_setzero_ps();
  for (int64_t j = 0; j < skv; ++j) {
    __m512 vv[NV];
#pragma GCC unroll 16
    for (int u = 0; u < NV; ++u)
      vv[u] = u + 1 < NV ? _mm512_loadu_ps(v + j * vRow + 16 * u) : _mm512_maskz_loadu_ps(last, v + j * vRow + 16 * u);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      __m512 const pr = _mm512_set1_ps(p[r * ld + j]);
#pragma GCC unroll 16
      for (int u = 0; u < NV; ++u) acc[r][u] = _mm512_fmadd_ps(pr, vv[u], acc[r][u]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    __m512 const f = _mm512_set1_ps(rowScale[r]);
#pragma GCC unroll 16
    for (int u = 0; u < NV; ++u) {
      __m512 const out = _mm512_mul_ps(acc[r][u], f);
      if (u + 1 < NV)
        _mm512_storeu_ps(y + r * yRow + 16 * u, out);
      else
        _mm512_mask_storeu_ps(y + r * yRow + 16 * u, last, out);
    }
  }
}

template <int MR>
KILN_AVX512 void pvRows(CpuAttentionArgs const& a, float const* p, int64_t ld, float const* v, float const* rowScale,
                        float* y) {
  for (int64_t c0 = 0; c0 < a.dv; c0 += 64) {
    int64_t const left = std::min<int64_t>(64, a.dv - c0);
    int const nv = static_cast<int>((left + 15) / 16);
    __mmask16 const last = tailMask(left - 16 * (nv - 1));
    float const* vc = v + c0;
    float* yc = y + c0;
    switch (nv) {
      case 1:
        pvTile<MR, 1>(p, ld, vc, a.vRowStride, a.skv, rowScale, yc, a.yRowStride, last);
        break;
      case 2:
        pvTile<MR, 2>(p, ld, vc, a.vRowStride, a.skv, rowScale, yc, a.yRowStride, last);
        break;
      case 3:
        pvTile<MR, 3>(p, ld, vc, a.vRowStride, a.skv, rowScale, yc, a.yRowStride, last);
        break;
      default:
        pvTile<MR, 4>(p, ld, vc, a.vRowStride, a.skv, rowScale, yc, a.yRowStride, last);
        break;
    }
  }
}

// Adds the mask row (if any) to the scores and returns their max, NaN when any is NaN (the reference's rule), in one
// pass.
KILN_AVX512 float maskMax512(CpuAttentionArgs const& a, float* s, float const* m) {
  int64_t const n = a.skv;
  __m512 mx = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __mmask16 nan = 0;
  bool const vecMask = m && a.maskColStride == 1;
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    __m512 x = _mm512_load_ps(s + j);
    if (vecMask) {
      x = _mm512_add_ps(x, _mm512_loadu_ps(m + j));
      _mm512_store_ps(s + j, x);
    } else if (m) {
      for (int64_t i = 0; i < 16; ++i) s[j + i] += m[(j + i) * a.maskColStride];
      x = _mm512_load_ps(s + j);
    }
    nan |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    mx = _mm512_max_ps(mx, x);
  }
  if (j < n) {
    if (m)
      for (int64_t i = j; i < n; ++i) s[i] += m[i * a.maskColStride];
    __mmask16 const t = tailMask(n - j);
    __m512 const x = _mm512_maskz_load_ps(t, s + j);
    nan |= _mm512_mask_cmp_ps_mask(t, x, x, _CMP_UNORD_Q);
    mx = _mm512_mask_max_ps(mx, t, mx, x);
  }
  if (nan) return std::numeric_limits<float>::quiet_NaN();
  return _mm512_reduce_max_ps(mx);
}

KILN_AVX512 float expSum512(float* s, int64_t n, float mxs) {
  __m512 const mx = _mm512_set1_ps(mxs);
  __m512 sum = _mm512_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    __m512 const e = exp512(_mm512_sub_ps(_mm512_load_ps(s + j), mx));
    _mm512_store_ps(s + j, e);
    sum = _mm512_add_ps(sum, e);
  }
  if (j < n) {
    __mmask16 const t = tailMask(n - j);
    __m512 const e = exp512(_mm512_sub_ps(_mm512_maskz_load_ps(t, s + j), mx));
    _mm512_mask_store_ps(s + j, t, e);
    sum = _mm512_mask_add_ps(sum, t, sum, e);
  }
  return _mm512_reduce_add_ps(sum);
}

KILN_AVX512 void block512(CpuAttentionArgs const& a, Block const& b) {
  // Scores stripe by stripe of k^T (32 columns: 8 KiB at d = 64, kept in L1 while every row of the block uses it).
  int64_t j = 0;
  for (; j + 32 <= b.ld; j += 32) scoreStripe<2>(b.q, a.qRowStride, b.kt + j, b.ld, a.d, b.s + j, b.rows);
  if (j < b.ld) scoreStripe<1>(b.q, a.qRowStride, b.kt + j, b.ld, a.d, b.s + j, b.rows);
  for (int64_t i = 0; i < b.rows; ++i) {
    float const* m = b.mask ? b.mask + i * a.maskRowStride : nullptr;
    float* s = b.s + i * b.ld;
    float const mx = maskMax512(a, s, m);
    if (!std::isfinite(mx)) {
      std::fill(s, s + a.skv, 0.f);
      b.rowScale[i] = a.nanToZero ? 0.f : std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    b.rowScale[i] = 1.f / expSum512(s, a.skv, mx);
  }
  // P * V, 6 rows x up to 64 columns at a time (24 accumulators: v streams through once per 6 rows).
  int64_t r = 0;
  for (; r + 6 <= b.rows; r += 6) pvRows<6>(a, b.s + r * b.ld, b.ld, b.v, b.rowScale + r, b.y + r * a.yRowStride);
  float const* pr = b.s + r * b.ld;
  float* yr = b.y + r * a.yRowStride;
  switch (b.rows - r) {
    case 5:
      pvRows<5>(a, pr, b.ld, b.v, b.rowScale + r, yr);
      break;
    case 4:
      pvRows<4>(a, pr, b.ld, b.v, b.rowScale + r, yr);
      break;
    case 3:
      pvRows<3>(a, pr, b.ld, b.v, b.rowScale + r, yr);
      break;
    case 2:
      pvRows<2>(a, pr, b.ld, b.v, b.rowScale + r, yr);
      break;
    case 1:
      pvRows<1>(a, pr, b.ld, b.v, b.rowScale + r, yr);
      break;
    default:
      break;
  }
}
#endif

bool hasAvx512() {
#ifdef KILN_ATTENTION_AVX512
  static bool const has = __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

std::atomic<CpuAttentionIsa> gIsa{CpuAttentionIsa::kAuto};

}  // namespace

bool cpuAttentionUsesAvx512() { return hasAvx512(); }

CpuAttentionIsa setCpuAttentionIsa(CpuAttentionIsa isa) { return gIsa.exchange(isa); }

void runCpuAttention(CpuAttentionArgs const& a, int threads) {
  CpuAttentionIsa const isa = gIsa.load();
  int64_t entries = 1;
  for (int32_t i = 0; i < a.batchRank; ++i) entries *= a.batch[i];
  if (entries == 0 || a.sq == 0 || a.dv == 0) return;
  if (a.skv == 0) {  // no keys: the sums are empty
    for (int64_t e = 0; e < entries; ++e) {
      float* y = a.y + entryOffsets(a, e).y;
      for (int64_t r = 0; r < a.sq; ++r) std::fill(y + r * a.yRowStride, y + r * a.yRowStride + a.dv, 0.f);
    }
    return;
  }
  // Blocks of equal size (197 rows: 4 x ~50, not 3 x 64 + 5), so the items weigh the same.
  int64_t const nBlocks = (a.sq + kMaxBlockRows - 1) / kMaxBlockRows;
  int64_t const blockRows = (a.sq + nBlocks - 1) / nBlocks;
  // Whole entries per item where there are enough to share out (k^T packed once per entry), else single blocks.
  bool const perEntry = entries >= 3 * static_cast<int64_t>(std::max(threads, 1));
  int64_t const items = perEntry ? entries : entries * nBlocks;
  int64_t const ld = roundUp(a.skv, kColStep);
  bool const wide = isa == CpuAttentionIsa::kAuto && hasAvx512();
  size_t const floats = static_cast<size_t>(a.d * ld + blockRows * ld + roundUp(blockRows, 16));
  // Dynamic: a thread that lost its core for a while (busy machines) leaves its share to the others; each item is
  // computed by one thread alone, so the result does not depend on which.
#ifdef _OPENMP  // -fopenmp (GCC builds); elsewhere the loop runs on the calling thread
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1 && items > 1)
#endif
  for (int64_t it = 0; it < items; ++it) {
    int64_t const e = perEntry ? it : it / nBlocks;
    int64_t const firstBlock = perEntry ? 0 : it % nBlocks, endBlock = perEntry ? nBlocks : firstBlock + 1;
    EntryOffsets const o = entryOffsets(a, e);
    // Slot 2: the oneDNN tactics use 0 (scratchpad) and 1 (reordered activations).
    auto* scratch = static_cast<float*>(threadScratch(floats * sizeof(float), 2));
    Block b;
    b.ld = ld;
    b.v = a.v + o.v;
    b.kt = scratch;
    b.s = b.kt + a.d * ld;
    b.rowScale = b.s + blockRows * ld;
    packKt(a, a.k + o.k, b.kt, ld);
    for (int64_t blk = firstBlock; blk < endBlock; ++blk) {
      int64_t const row0 = blk * blockRows;
      b.rows = std::min(blockRows, a.sq - row0);
      b.q = a.q + o.q + row0 * a.qRowStride;
      b.mask = a.mask ? a.mask + o.mask + row0 * a.maskRowStride : nullptr;
      b.y = a.y + o.y + row0 * a.yRowStride;
#ifdef KILN_ATTENTION_AVX512
      if (wide) {
        block512(a, b);
        continue;
      }
#endif
      blockPortable(a, b);
    }
  }
  (void)wide;
}

namespace {

struct AttentionConfig {
  std::string who;
  float scale = 1.f;
  bool kTransposed = false, nanToZero = false;
  int64_t layout = 0;
  bool packed = false;  // packed_qkv: q, k and v in input 0 (layouts 1 and 2)
};

class CpuAttentionKernel final : public Kernel {
 public:
  explicit CpuAttentionKernel(AttentionConfig cfg) : cfg_(std::move(cfg)) {}

  Status enqueue(LaunchContext const& ctx) const override {
    if (ctx.inputs.size() < (cfg_.packed ? 1u : 3u) || ctx.outputs.size() != 1)
      return invalidArgument(cfg_.who, ": needs q, k, v (or the packed q/k/v), an optional mask and one output");
    KILN_ASSIGN_OR_RETURN(CpuAttentionArgs args,
                          ir::isHeadMajorAttentionLayout(cfg_.layout) ? headMajorArgs(ctx) : batchedArgs(ctx));
    if (ctx.outputs[0].count() == 0) return Status::ok();
    args.scale = cfg_.scale;
    args.kTransposed = cfg_.kTransposed;
    args.nanToZero = cfg_.nanToZero;
    // Enough work to be worth waking the workers: the scores alone are entries x sq x skv values.
    OmpThreads threads(ctx, ctx.outputs[0].count() * std::max<int64_t>(args.skv, 1));
    runCpuAttention(args, threads.count());
    return Status::ok();
  }

 private:
  // Layout 0: q [.., sq, d], k [.., skv, d] (or [.., d, skv]), v [.., skv, dv], y [batch.., sq, dv], the leading
  // dims of q, k, v broadcast to y's; the mask broadcasts to the scores [batch.., sq, skv].
  Result<CpuAttentionArgs> batchedArgs(LaunchContext const& ctx) const {
    TensorView const& q = ctx.inputs[0];
    TensorView const& k = ctx.inputs[1];
    TensorView const& v = ctx.inputs[2];
    TensorView const* mask = ctx.inputs.size() > 3 && ctx.inputs[3].data ? &ctx.inputs[3] : nullptr;
    TensorView const& y = ctx.outputs[0];
    int32_t const rq = q.shape.nbDims, rk = k.shape.nbDims, rv = v.shape.nbDims, ry = y.shape.nbDims;
    if (rq < 2 || rk < 2 || rv < 2 || ry < 2 || ry - 2 > kCpuAttentionMaxBatchDims)
      return invalidArgument(cfg_.who, ": q, k, v and y need rank >= 2");
    CpuAttentionArgs a;
    a.sq = q.shape.d[rq - 2];
    a.d = q.shape.d[rq - 1];
    a.skv = cfg_.kTransposed ? k.shape.d[rk - 1] : k.shape.d[rk - 2];
    a.dv = v.shape.d[rv - 1];
    int64_t const dk = cfg_.kTransposed ? k.shape.d[rk - 2] : k.shape.d[rk - 1];
    Dims const batch = leadingDims(y.shape, ry - 2);
    if (dk != a.d || v.shape.d[rv - 2] != a.skv || y.shape.d[ry - 2] != a.sq || y.shape.d[ry - 1] != a.dv ||
        !broadcastsTo(leadingDims(q.shape, rq - 2), batch) || !broadcastsTo(leadingDims(k.shape, rk - 2), batch) ||
        !broadcastsTo(leadingDims(v.shape, rv - 2), batch))
      return invalidArgument(cfg_.who, ": q ", dimsToString(q.shape), ", k ", dimsToString(k.shape), ", v ",
                             dimsToString(v.shape), (cfg_.kTransposed ? " (k transposed)" : ""), " do not give y ",
                             dimsToString(y.shape));
    Dims scores = batch;
    scores.d[scores.nbDims++] = a.sq;
    scores.d[scores.nbDims++] = a.skv;
    if (mask && !broadcastsTo(mask->shape, scores))
      return invalidArgument(cfg_.who, ": mask ", dimsToString(mask->shape), " does not broadcast to the scores ",
                             dimsToString(scores));
    using reference::broadcastStrides;
    std::vector<int64_t> const qs = broadcastStrides(leadingDims(q.shape, rq - 2), batch);
    std::vector<int64_t> const ks = broadcastStrides(leadingDims(k.shape, rk - 2), batch);
    std::vector<int64_t> const vs = broadcastStrides(leadingDims(v.shape, rv - 2), batch);
    std::vector<int64_t> const ms =
        mask ? broadcastStrides(mask->shape, scores) : std::vector<int64_t>(static_cast<size_t>(scores.nbDims), 0);
    a.batchRank = batch.nbDims;
    int64_t yEntry = a.sq * a.dv;
    for (int32_t i = batch.nbDims - 1; i >= 0; --i) {
      auto const u = static_cast<size_t>(i);
      a.batch[i] = batch.d[i];
      a.qStride[i] = qs[u] * a.sq * a.d;
      a.kStride[i] = ks[u] * a.skv * a.d;
      a.vStride[i] = vs[u] * a.skv * a.dv;
      a.maskStride[i] = ms[u];
      a.yStride[i] = yEntry;
      yEntry *= batch.d[i];
    }
    a.qRowStride = a.d;
    a.kRowStride = cfg_.kTransposed ? a.skv : a.d;
    a.vRowStride = a.dv;
    a.yRowStride = a.dv;
    a.maskRowStride = ms[static_cast<size_t>(scores.nbDims - 2)];
    a.maskColStride = ms[static_cast<size_t>(scores.nbDims - 1)];
    setPointers(ctx, mask, a);
    return a;
  }

  // Layouts 1 and 2 ([B, S, H, D] / [S, B, H, D]), q, k and v separate or packed in input 0 ([B, S, 3, H, D] /
  // [S, B, 3, H, D]): entries (b, h) with the offsets and strides ir::attentionHeadGeometry gives; the mask
  // broadcasts to the scores [B, H, sq, skv].
  Result<CpuAttentionArgs> headMajorArgs(LaunchContext const& ctx) const {
    std::string const name = ir::attentionLayoutName(cfg_.layout, cfg_.packed);
    if (cfg_.kTransposed) return invalidArgument(cfg_.who, ": ", name, " takes k untransposed");
    TensorView const& q = ctx.inputs[0];
    TensorView const& k = cfg_.packed ? q : ctx.inputs[1];
    TensorView const& v = cfg_.packed ? q : ctx.inputs[2];
    TensorView const* mask = ctx.inputs.size() > 3 && ctx.inputs[3].data ? &ctx.inputs[3] : nullptr;
    TensorView const& y = ctx.outputs[0];
    KILN_ASSIGN_OR_RETURN(
        ir::AttentionHeadGeometry const g,
        ir::attentionHeadGeometry(cfg_.who, cfg_.layout, cfg_.packed, q.shape, k.shape, v.shape, y.shape));
    CpuAttentionArgs a;
    KILN_RETURN_IF_ERROR(fillHeadMajorAttentionArgs<float>(
        cfg_.who, g, sizeof(float), static_cast<float const*>(q.data), static_cast<float const*>(k.data),
        static_cast<float const*>(v.data), mask ? static_cast<float const*>(mask->data) : nullptr,
        mask ? mask->shape : Dims{}, static_cast<float*>(y.data), a));
    return a;
  }

  static void setPointers(LaunchContext const& ctx, TensorView const* mask, CpuAttentionArgs& a) {
    a.q = static_cast<float const*>(ctx.inputs[0].data);
    a.k = static_cast<float const*>(ctx.inputs[1].data);
    a.v = static_cast<float const*>(ctx.inputs[2].data);
    a.mask = mask ? static_cast<float const*>(mask->data) : nullptr;
    a.y = static_cast<float*>(ctx.outputs[0].data);
  }

  AttentionConfig cfg_;
};

bool supportsAttention(ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
  if (in.size() < 1 || in.size() > 4 || out.size() != 1 || out[0].dtype != DataType::kFLOAT) return false;
  for (TensorInfo const& t : in)
    if (t.shape.nbDims >= 0 && t.dtype != DataType::kFLOAT) return false;
  int64_t const layout = node.attrs.getInt("layout", 0);
  bool const packed = node.attrs.getInt("packed_qkv", 0) != 0;
  if (layout != 0 && !ir::isHeadMajorAttentionLayout(layout)) return false;
  if (packed ? layout == 0 : in.size() < 3) return false;
  // Layout 0's batch dims are indexed up to kCpuAttentionMaxBatchDims (unknown ranks are checked at run time).
  return out[0].shape.nbDims < 0 || out[0].shape.nbDims - 2 <= kCpuAttentionMaxBatchDims;
}

Tactic attentionTactic() {
  Tactic t;
  t.name = "attention_cpu_tiled";
  t.op = ir::OpType::kAttention;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;  // the fast CPU backend's source (Kiln's own loops, as slice_cpu_strided)
  t.priority = 10;                   // ahead of the reference (0)
  t.supports = supportsAttention;
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
    AttentionConfig cfg;
    cfg.who = node.describe();
    cfg.scale = static_cast<float>(node.attrs.getFloat("scale", 1.0));
    cfg.kTransposed = node.attrs.getInt("k_transposed", 0) != 0;
    cfg.nanToZero = node.attrs.getInt("nan_to_zero", 0) != 0;
    cfg.layout = node.attrs.getInt("layout", 0);
    cfg.packed = node.attrs.getInt("packed_qkv", 0) != 0;
    if (cfg.layout != 0 && !ir::isHeadMajorAttentionLayout(cfg.layout))
      return invalidArgument(cfg.who, ": layout ", cfg.layout, " (the CPU loop takes 0, 1 and 2)");
    if (cfg.packed && cfg.layout == 0) return invalidArgument(cfg.who, ": packed_qkv needs layout 1 or 2");
    return std::unique_ptr<Kernel>(std::make_unique<CpuAttentionKernel>(std::move(cfg)));
  };
  return t;
}

KILN_REGISTER_TACTIC(attentionTactic);

}  // namespace
}  // namespace kiln::backends::cpu

namespace kiln::backends {
// The portable loops run at a tenth of the AVX-512 ones' speed: slower than oneDNN's unfused matmuls.
bool cpuFusedAttentionFast() { return cpu::cpuAttentionUsesAvx512(); }
}  // namespace kiln::backends
