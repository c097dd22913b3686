// The two variants of each register-resident row kernel (normalization.cu, softmax.cu): engines run the default,
// the bandwidth benchmark runs both so that the faster can be chosen on the device.
#pragma once

#include <cstdint>

namespace kiln::cuda {

/// Which variant of the row kernels a launch runs.
enum class RowVariant : int32_t {
  /// Plain loads through the read-only path and plain stores (y stays in L2 for the next layer); the block/cluster
  /// normalization kernel one row per block or cluster, no prefetch (more blocks resident at fewer registers: on
  /// the H200, GroupNorm [8, 512, 64, 64] 0.043 ms against 0.052 persistent, InstanceNorm 0.028 against 0.031).
  kDefault = 0,
  /// The warp-per-row normalization and the softmax kernels load and store evict-first (ld/st.global.cs: x and y
  /// are touched once; faster alone, 3.14 against 2.80 TB/s on LayerNorm [16384, 768], but y leaves L2 before the
  /// next layer reads it); the block/cluster normalization kernel persistent, each block prefetching its next row.
  kAlternative = 1,
};

}  // namespace kiln::cuda
