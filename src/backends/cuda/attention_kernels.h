// Launchers of the fused attention kernels (attention.cu): softmax(scale * q k^T + mask) v, flash-attention style
// (one pass over key tiles with an online softmax), tensor cores for fp16/bf16 and an FMA kernel for fp32.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/attention_args.h"

namespace kiln::cuda {

/// Most leading (batch) dims the kernels index; the largest head dim (d and dv, multiples of 8).
inline constexpr int32_t kAttentionMaxBatchDims = backends::kAttentionArgsMaxBatchDims;
inline constexpr int64_t kAttentionMaxHeadDim = 128;
/// Most query tiles of one batch entry and query rows per tile (the most rows per CTA: the grid is largest with
/// these, so the tactic's size checks use them).
inline constexpr int64_t kAttentionMaxRowTiles = 65535;
inline constexpr int64_t kAttentionRowsPerTile = 64;
/// Query rows per CTA of the fp16/bf16 kernel's small form, the one that splits keys: chosen where the split runs
/// (at least 4 key tiles of 64, and twice the 16-row CTAs at most the device's SMs).
inline constexpr int64_t kAttentionSmallRowsPerTile = 16;

/// One launch: the strided description the CPU loop takes too (attention_args.h; element type chosen at run time),
/// with two defaults of the GPU's callers: a row stride of 0 means packed rows (d, d (skv with kTransposed), dv,
/// dv), and y's batch strides are those of a contiguous [batch.., sq, dv] unless yStrided. batchCount is the
/// product of `batch`.
struct AttentionArgs : backends::StridedAttentionArgs<void> {
  int64_t batchCount = 1;
  bool yStrided = false;  // true: yStride is used
};

/// True when the kernels take these head dims (multiples of 8 in [8, 128]).
inline bool attentionHeadDimsOk(int64_t d, int64_t dv) {
  return d >= 8 && d % 8 == 0 && d <= kAttentionMaxHeadDim && dv >= 8 && dv % 8 == 0 && dv <= kAttentionMaxHeadDim;
}

/// Enqueues attention for dtype (float: FMA kernel; half, bf16: tensor cores with fp32 accumulation). Rows whose
/// softmax is NaN (every score -inf, or a NaN or +inf score) are 0 with nanToZero, else NaN; skv == 0 gives 0.
/// Returns false for another dtype, head dims attentionHeadDimsOk refuses, a negative row or mask stride or more than
/// 2^31 - 1 CTAs (batch entries x query tiles of kAttentionRowsPerTile); launch errors are left for
/// cudaGetLastError. fp16/bf16: when q's, k's and v's (y's) rows are not all 16-byte aligned, they are loaded
/// (stored) element by element, slower.
bool launchAttention(int32_t dtype, AttentionArgs const& args, cudaStream_t stream);

/// Tests: forces the fp16/bf16 kernel's query rows per CTA for every later launch in the process
/// (kAttentionRowsPerTile or kAttentionSmallRowsPerTile; 0 restores the choice by grid size: 16 rows where the key
/// split runs, else 64). Returns the previous setting. A forced 16 that would overflow the grid runs 64.
int64_t setAttentionRowsPerCta(int64_t rows);

/// Tests: forces the fp16/bf16 kernel's key split for every later launch in the process: each query tile's key
/// tiles in `splits` runs (at most 8, at most one per key tile; 1: none), one CTA each, combined by the CTAs'
/// cluster; 0 restores the choice by grid size (a split only when 16-row CTAs are fewer than the SMs and there are
/// at least 4 key tiles). Returns the previous setting.
int64_t setAttentionKeySplits(int64_t splits);

}  // namespace kiln::cuda
