// The strided description of one fused attention call, softmax(scale * q k^T + mask) v per batch entry, that the
// CPU loop (cpu/attention_cpu.h) and the CUDA kernels (cuda/attention_kernels.h) both take. Plain C++17 with no
// Kiln include: the CUDA sources (nvcc, C++17) include it. attention_head_args.h fills it for layouts 1 and 2.
#pragma once

#include <cstdint>

namespace kiln::backends {

/// Most batch dims an attention call indexes (Dims::MAX_DIMS: every leading dim of the scores).
inline constexpr int32_t kAttentionArgsMaxBatchDims = 8;

/// One call on elements of type T (void where the type is chosen at run time). Per batch entry, q is a [sq, d]
/// matrix, k a [skv, d] one (stored [d, skv] with kTransposed), v [skv, dv] and y [sq, dv], their rows qRowStride,
/// kRowStride, vRowStride and yRowStride elements apart, columns contiguous, so that [.., S, D] and [B, S, H, D]
/// tensors (or packed q/k/v) are only different strides. Batch entry (i_0, .., i_{batchRank-1}) (row-major over
/// `batch`) of each operand starts at sum_j i_j * stride[j] elements (a 0 stride broadcasts). The additive mask's
/// element (entry, r, c) is at its entry offset + r * maskRowStride + c * maskColStride (0 strides broadcast); mask
/// may be null. Nothing is owned.
template <typename T>
struct StridedAttentionArgs {
  T const* q = nullptr;
  T const* k = nullptr;
  T const* v = nullptr;
  T const* mask = nullptr;
  T* y = nullptr;
  int64_t sq = 0, skv = 0, d = 0, dv = 0;
  int32_t batchRank = 0;
  int64_t batch[kAttentionArgsMaxBatchDims] = {};
  int64_t qStride[kAttentionArgsMaxBatchDims] = {};
  int64_t kStride[kAttentionArgsMaxBatchDims] = {};
  int64_t vStride[kAttentionArgsMaxBatchDims] = {};
  int64_t yStride[kAttentionArgsMaxBatchDims] = {};
  int64_t maskStride[kAttentionArgsMaxBatchDims] = {};
  int64_t qRowStride = 0, kRowStride = 0, vRowStride = 0, yRowStride = 0;
  int64_t maskRowStride = 0, maskColStride = 0;
  float scale = 1.f;
  bool kTransposed = false;
  bool nanToZero = false;
};

}  // namespace kiln::backends
