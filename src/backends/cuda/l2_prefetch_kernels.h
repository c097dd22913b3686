// Device launcher of the L2 prefetch (DeviceBackend::prefetchToL2): spans of device memory are asked into the L2
// cache ahead of the kernels that read them; nothing is written and nothing waits for the data.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

inline constexpr int kL2PrefetchMaxSpans = 8;

struct L2PrefetchSpans {
  char const* data[kL2PrefetchMaxSpans] = {};
  uint64_t bytes[kL2PrefetchMaxSpans] = {};
  int32_t count = 0;
};

/// One launch for up to kL2PrefetchMaxSpans spans (any alignment: the whole 16-byte granules inside each span are
/// fetched, the ragged ends are left to the reader); nothing runs when every span is empty.
cudaError_t launchL2Prefetch(L2PrefetchSpans const& spans, cudaStream_t stream);

}  // namespace kiln::cuda
