// The two variants of each register-resident row kernel (normalization.cu, softmax.cu): engines run the default,
// the bandwidth benchmark runs both so that the faster can be chosen on the device.
#pragma once

#include <cstdint>

namespace kiln::cuda {

/// Which variant of the row kernels a launch runs.
enum class RowVariant : int32_t {
  /// The best guess: plain loads through the read-only path and plain stores (y stays in L2 for the next layer);
  /// the block/cluster normalization kernel persistent, each block prefetching its next row while reducing one.
  kDefault = 0,
  /// The warp-per-row normalization and the softmax kernels load and store evict-first (ld/st.global.cs: x and y
  /// are touched once); the block/cluster normalization kernel one row per block or cluster, no prefetch (more
  /// blocks resident at fewer registers).
  kAlternative = 1,
};

}  // namespace kiln::cuda
