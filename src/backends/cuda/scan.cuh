// A one-block exclusive prefix sum of int64 counts on the device (for ops that compact data-dependent outputs,
// e.g. NonZero and NMS). .cu files only.
#pragma once

#include <cstdint>

namespace kiln::cuda::dev {

/// Launch with one block of kThreads threads: counts[0, m) become their exclusive prefix sums and counts[m] the
/// total. Each thread owns a contiguous run of entries; the runs' sums are scanned within warps, then across them.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) exclusiveScanOneBlock(int64_t* counts, int64_t m) {
  __shared__ int64_t warpSums[kThreads / 32];
  int64_t per = (m + kThreads - 1) / kThreads;
  int64_t lo = threadIdx.x * per, hi = lo + per < m ? lo + per : m;
  int64_t sum = 0;
  for (int64_t i = lo; i < hi; ++i) sum += counts[i];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int64_t incl = sum;
  for (int d = 1; d < 32; d <<= 1) {
    int64_t v = __shfl_up_sync(0xffffffffu, incl, d);
    if (lane >= d) incl += v;
  }
  if (lane == 31) warpSums[warp] = incl;
  __syncthreads();
  int64_t before = 0, total = 0;
  for (int w = 0; w < kThreads / 32; ++w) {
    if (w < warp) before += warpSums[w];
    total += warpSums[w];
  }
  int64_t run = before + incl - sum;  // exclusive prefix of this thread's run
  for (int64_t i = lo; i < hi; ++i) {
    int64_t c = counts[i];
    counts[i] = run;
    run += c;
  }
  if (threadIdx.x == 0) counts[m] = total;
}

}  // namespace kiln::cuda::dev
