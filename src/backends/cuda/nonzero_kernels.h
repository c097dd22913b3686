// Launchers of the NonZero kernels (nonzero.cu): a per-block count of the non-zero elements, an exclusive scan
// of those counts (with the total after them), and a compaction writing each hit's coordinates in row-major order.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// The input's shape as the coordinate kernel needs it.
struct NonZeroShape {
  int32_t rank = 0;
  int64_t d[8] = {};
};

/// Blocks the count and write kernels use for n elements (n > 0); the scratch holds numBlocks + 1 int64.
int64_t nonZeroBlocks(int64_t n);

/// counts[b] = exclusive prefix of the non-zero elements before block b's chunk, counts[numBlocks] = the total.
/// dtype: any storage type of KILN_CUDA_DISPATCH (floats: NaN is non-zero, -0.0 is zero). n > 0. Returns false
/// for another dtype.
bool launchNonZeroCount(int32_t dtype, void const* x, int64_t n, int64_t* counts, cudaStream_t stream);

/// Writes the coordinates of the non-zero elements: y[d * count + j] = coordinate d of the j-th hit, as int64
/// (out64) or int32. counts from launchNonZeroCount; count = its total (> 0), shape.rank > 0.
bool launchNonZeroWrite(int32_t dtype, void const* x, int64_t n, NonZeroShape const& shape, int64_t const* counts,
                        void* y, bool out64, int64_t count, cudaStream_t stream);

}  // namespace kiln::cuda
