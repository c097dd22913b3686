// gpu + reliability: memory the CUDA backend hands out (stream-ordered, cudaMallocAsync) and gets back without a
// stream is returned only once the device has finished the work queued on it: cudaFree alone does not wait for
// such memory, and a trimmed pool unmaps it under the work still writing there (a sticky launch failure).
#include "gpu_reliability/gpu_reliability_util.h"

namespace kiln_e2e::gpu {
namespace {

TEST(GpuDeviceMemory, ReleaseWithoutAStreamWaitsForTheWorkStillUsingIt) {
  KILN_REQUIRE_GPU();
  std::string why;
  kiln::backends::DeviceBackend* dev = cudaBackend(&why);
  ASSERT_NE(dev, nullptr) << why;
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  cudaMemPool_t pool = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool, device), cudaSuccess);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  constexpr size_t kBytes = size_t{1} << 30;
  for (int round = 0; round < 3; ++round) {
    auto p = dev->allocate(kBytes, nullptr);
    ASSERT_TRUE(p.isOk()) << p.status().message();
    // Tens of milliseconds of writes into the buffer, queued on a stream the release is not told about.
    for (int i = 0; i < 64; ++i) ASSERT_EQ(cudaMemsetAsync(*p, i, kBytes, s), cudaSuccess);
    dev->release(*p, nullptr);
    // Whatever the pool kept goes back to the system now: had the release not waited, the memsets above would
    // still be writing into memory that is no longer mapped.
    ASSERT_EQ(cudaMemPoolTrimTo(pool, 0), cudaSuccess);
    EXPECT_EQ(cudaStreamQuery(s), cudaSuccess) << "the release returned before the work using the memory finished";
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

}  // namespace
}  // namespace kiln_e2e::gpu
