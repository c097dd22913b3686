// Kiln's fused fp32 attention loop for the CPU (attention.cc): softmax(scale * q k^T + mask) v per block of query
// rows, the scores of a block kept in a cache-resident tile, on strided operands (so [.., S, D] and [B, S, H, D]
// tensors, or any other layout whose rows have unit column stride, are only different strides).
#pragma once

#include <cstdint>

#include "backends/attention_args.h"
#include "kiln/kiln.h"

namespace kiln::backends::cpu {

/// Most batch dims the loop indexes (every leading dim of the scores).
inline constexpr int32_t kCpuAttentionMaxBatchDims = kAttentionArgsMaxBatchDims;
static_assert(kCpuAttentionMaxBatchDims == Dims::MAX_DIMS, "every leading dim of the scores");

/// One call on fp32 operands (the strided description the CUDA kernels take too; see attention_args.h).
using CpuAttentionArgs = StridedAttentionArgs<float>;

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
