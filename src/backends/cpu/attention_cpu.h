// Kiln's fused fp32 attention loop for the CPU (attention.cc): softmax(scale * q k^T + mask) v per block of query
// rows, the scores of a block kept in a cache-resident tile, on strided operands (so [.., S, D] and [B, S, H, D]
// tensors, or any other layout whose rows have unit column stride, are only different strides).
#pragma once

#include <cstdint>

#include "kiln/kiln.h"

namespace kiln::backends::cpu {

/// Most batch dims the loop indexes (every leading dim of the scores).
inline constexpr int32_t kCpuAttentionMaxBatchDims = Dims::MAX_DIMS;

/// One call. Per batch entry, q is a [sq, d] matrix, k a [skv, d] one (stored [d, skv] with kTransposed), v
/// [skv, dv] and y [sq, dv], their rows qRowStride, kRowStride, vRowStride and yRowStride elements apart, columns
/// contiguous. Batch entry (i_0, .., i_{batchRank-1}) (row-major over `batch`) of each operand starts at
/// sum_j i_j * stride[j] (a 0 stride broadcasts). The additive mask's element (entry, r, c) is at its entry offset
/// + r * maskRowStride + c * maskColStride (0 strides broadcast); mask may be null.
struct CpuAttentionArgs {
  float const* q = nullptr;
  float const* k = nullptr;
  float const* v = nullptr;
  float const* mask = nullptr;
  float* y = nullptr;
  int64_t sq = 0, skv = 0, d = 0, dv = 0;
  int32_t batchRank = 0;
  int64_t batch[kCpuAttentionMaxBatchDims] = {};
  int64_t qStride[kCpuAttentionMaxBatchDims] = {};
  int64_t kStride[kCpuAttentionMaxBatchDims] = {};
  int64_t vStride[kCpuAttentionMaxBatchDims] = {};
  int64_t yStride[kCpuAttentionMaxBatchDims] = {};
  int64_t maskStride[kCpuAttentionMaxBatchDims] = {};
  int64_t qRowStride = 0, kRowStride = 0, vRowStride = 0, yRowStride = 0;
  int64_t maskRowStride = 0, maskColStride = 0;
  float scale = 1.f;
  bool kTransposed = false;
  bool nanToZero = false;
};

/// Which loops run: the AVX-512 ones where the CPU has AVX-512F (kAuto), or the portable ones (kPortable, which
/// the tests also run on AVX-512 machines).
enum class CpuAttentionIsa : int32_t { kAuto = 0, kPortable = 1 };

/// True when kAuto runs the AVX-512 loops on this CPU.
bool cpuAttentionUsesAvx512();

/// Sets which loops later calls run (process-wide; kAuto unless a test changes it) and returns the previous choice.
CpuAttentionIsa setCpuAttentionIsa(CpuAttentionIsa isa);

/// Computes y on `threads` OpenMP threads (the work split over batch entries x blocks of query rows). Rows whose
/// softmax is NaN (every score -inf, or a NaN or +inf score) are 0 with nanToZero, else NaN, as the unfused
/// layers give them; skv == 0 gives 0.
void runCpuAttention(CpuAttentionArgs const& args, int threads);

}  // namespace kiln::backends::cpu
