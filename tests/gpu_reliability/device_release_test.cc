// gpu + reliability: memory the CUDA backend hands out (stream-ordered, cudaMallocAsync) and gets back without a
// stream is returned only once the work queued on it without a stream has finished: cudaFree alone does not wait
// for such memory, and a trimmed pool unmaps it under the work still writing there (a sticky launch failure). Work
// on other streams is the caller's to wait for (contexts wait for their runs): the release never waits for the
// whole device, which would break another thread's graph capture.
#include <atomic>
#include <thread>
#include "gpu_reliability/gpu_reliability_util.h"

namespace kiln_e2e::gpu {
namespace {

TEST(GpuDeviceMemory, ReleaseWithoutAStreamWaitsForTheWorkQueuedWithoutAStream) {
  KILN_REQUIRE_GPU();
  std::string why;
  kiln::backends::DeviceBackend* dev = cudaBackend(&why);
  ASSERT_NE(dev, nullptr) << why;
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  cudaMemPool_t pool = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool, device), cudaSuccess);
  constexpr size_t kBytes = size_t{1} << 30;
  for (int round = 0; round < 3; ++round) {
    auto p = dev->allocate(kBytes, nullptr);
    ASSERT_TRUE(p.isOk()) << p.status().message();
    // Tens of milliseconds of writes into the buffer queued without a stream, as the engine's constant uploads are.
    for (int i = 0; i < 64; ++i) ASSERT_TRUE(dev->fill(*p, i, kBytes, nullptr).isOk());
    dev->release(*p, nullptr);
    // Whatever the pool kept goes back to the system now: had the release not waited, the fills above would
    // still be writing into memory that is no longer mapped.
    ASSERT_EQ(cudaMemPoolTrimTo(pool, 0), cudaSuccess);
    EXPECT_EQ(cudaStreamQuery(cudaStreamLegacy), cudaSuccess) << "the release returned before the work using the memory finished";
    ASSERT_EQ(cudaStreamSynchronize(cudaStreamLegacy), cudaSuccess);
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// The release without a stream must not wait for the whole device: another thread's graph capture (thread-local
// mode, as CUDA graphs of a context are made) would be invalidated by a wait on its capturing stream.
TEST(GpuDeviceMemory, ReleaseWithoutAStreamLeavesAnotherThreadsCaptureIntact) {
  KILN_REQUIRE_GPU();
  std::string why;
  kiln::backends::DeviceBackend* dev = cudaBackend(&why);
  ASSERT_NE(dev, nullptr) << why;
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  void* scratch = nullptr;
  ASSERT_EQ(cudaMalloc(&scratch, 1 << 20), cudaSuccess);
  std::atomic<int> phase{0};
  cudaError_t captureEnd = cudaErrorUnknown;
  cudaGraph_t graph = nullptr;
  std::thread capturer([&] {
    (void)cudaSetDevice(0);
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
      phase = 3;
      return;
    }
    (void)cudaMemsetAsync(scratch, 1, 1 << 20, s);
    phase = 1;
    while (phase.load() != 2) std::this_thread::yield();
    (void)cudaMemsetAsync(scratch, 2, 1 << 20, s);
    captureEnd = cudaStreamEndCapture(s, &graph);
  });
  while (phase.load() == 0) std::this_thread::yield();
  ASSERT_EQ(phase.load(), 1) << "the capture did not begin";
  for (int i = 0; i < 4; ++i) {
    auto p = dev->allocate(1 << 20, nullptr);
    ASSERT_TRUE(p.isOk()) << p.status().message();
    dev->release(*p, nullptr);
  }
  phase = 2;
  capturer.join();
  EXPECT_EQ(captureEnd, cudaSuccess) << cudaGetErrorString(captureEnd);
  if (graph) cudaGraphDestroy(graph);
  (void)cudaGetLastError();
  cudaFree(scratch);
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

}  // namespace
}  // namespace kiln_e2e::gpu
