// Launcher of the direct pooling kernel (pooling.cu): max, average and max-average blend over up to 3 spatial
// dims, with the reference's padding semantics. Plain signatures: no Kiln headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// Pooling geometry; fewer than 3 spatial dims are given as leading dims of extent 1 (window 1, stride 1, pad 0).
struct PoolGeom {
  int64_t planes = 0;  // n * c
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  int64_t window[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t padBegin[3] = {0, 0, 0};  // effective (resolved for the SAME modes)
  int64_t padEnd[3] = {0, 0, 0};
  int32_t type = 0;  // PoolingType: 0 max, 1 average, 2 (1 - blend) * max + blend * average
  float blend = 0.f;
  bool excludePadding = true;
};

/// y [planes, out...] from x [planes, in...]; fp32 math; `dtype` a float type code (float, half, bf16).
/// Returns false for another dtype; launch errors are left for launchStatus.
bool launchPoolDirect(int32_t dtype, PoolGeom const& g, void const* x, void* y, cudaStream_t stream);

/// Channels-last 2-D pooling: y [N, out[1], out[2], C] from x [N, in[1], in[2], C] (g.planes = N * C; the spatial
/// dims in [1] and [2], [0] of extent 1), 16-byte vectors of channels where C and the pointers allow. Same
/// semantics and dtypes as launchPoolDirect.
bool launchPoolHwc(int32_t dtype, PoolGeom const& g, int64_t channels, void const* x, void* y, cudaStream_t stream);

}  // namespace kiln::cuda
