// gpu tests of the L2 prefetch (DeviceBackend::prefetchToL2, l2_prefetch.cu): any spans (ragged, empty, null, more
// than one launch takes), plainly enqueued and captured into a CUDA graph, leave no error and change no byte.
// Whether the data reaches L2 is a matter of speed, measured by the benchmarks (benchmarks/RESULTS.md).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/l2_prefetch_kernels.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

TEST(CudaL2Prefetch, AnySpansLeaveMemoryAndErrorStateAlone) {
  KILN_REQUIRE_GPU();
  size_t const bytes = size_t{3} << 20;
  std::vector<uint8_t> host(bytes);
  for (size_t i = 0; i < bytes; ++i) host[i] = static_cast<uint8_t>(i * 131 + 7);
  void* mem = nullptr;
  ASSERT_EQ(cudaMalloc(&mem, bytes), cudaSuccess);
  char* buf = static_cast<char*>(mem);
  ASSERT_EQ(cudaMemcpy(buf, host.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  std::vector<backends::DeviceRange> ranges = {
      {buf, bytes},               // whole, aligned
      {buf + 3, 1000},            // ragged at both ends
      {buf + 5, 9},               // no whole 16-byte granule inside
      {buf + 64, 0},              // empty
      {nullptr, 4096},            // no memory: skipped
      {buf + 17, (1 << 20) + 5},  // larger than one bulk request, ragged
  };
  // More spans than one launch carries (kL2PrefetchMaxSpans), so the backend splits them.
  for (int i = 0; i < 2 * cuda::kL2PrefetchMaxSpans + 3; ++i)
    ranges.push_back({buf + (i * 4099) % (bytes - 8192), 8192 - static_cast<size_t>(i)});
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  backends::DeviceBackend* dev = device();
  ASSERT_TRUE(dev->prefetchToL2(ranges.data(), ranges.size(), stream).isOk());
  ASSERT_TRUE(dev->prefetchToL2(ranges.data(), 0, stream).isOk());  // nothing to do
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  Status s = dev->prefetchToL2(ranges.data(), ranges.size(), stream);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_TRUE(s.isOk()) << s.toString();
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess);
  EXPECT_EQ(nodes, 4u);  // 25 spans, 8 a launch
  for (int i = 0; i < 3; ++i) ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);

  std::vector<uint8_t> back(bytes);
  ASSERT_EQ(cudaMemcpy(back.data(), buf, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, host);
  cudaStreamDestroy(stream);
  cudaFree(buf);
}

}  // namespace
}  // namespace kiln
