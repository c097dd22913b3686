// gpu micro-benchmark of the vectorized GEMM epilogue (issue 8) on the pass Kiln runs after the FFN-in GEMM of BERT
// and ViT (bias along N, erf GELU; cuBLASLt's GELU epilogue is the tanh form): fp16 y [M, 3072] at batch 1 (M 128 and
// 197) and BERT's batch 128 (M 16384), at 4 and 1 vectors per thread. Each figure is the median over 30 replays of a
// CUDA graph of 16 back-to-back launches, per launch, as the passes run inside a plan's graph. It asserts only that
// the launches succeed, never a time.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/gemm_epilogue_kernels.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

constexpr int kLaunchesPerGraph = 16;
constexpr int kReplays = 30;

// Median microseconds per launch of `launch` (which enqueues one pass on its stream argument) over kReplays replays
// of a graph of kLaunchesPerGraph launches; -1 when capturing, a launch or a replay failed.
template <typename F>
double graphMicroseconds(F const& launch) {
  cudaStream_t s = nullptr;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return -1;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  bool ok = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
  for (int i = 0; ok && i < kLaunchesPerGraph; ++i) ok = launch(s);
  ok = cudaStreamEndCapture(s, &graph) == cudaSuccess && ok;
  ok = ok && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
  ok = ok && cudaEventCreate(&start) == cudaSuccess && cudaEventCreate(&stop) == cudaSuccess;
  std::vector<float> us;
  for (int r = 0; ok && r < kReplays + 2; ++r) {  // the first 2 replays warm up
    float ms = 0;
    ok = cudaEventRecord(start, s) == cudaSuccess && cudaGraphLaunch(exec, s) == cudaSuccess &&
         cudaEventRecord(stop, s) == cudaSuccess && cudaEventSynchronize(stop) == cudaSuccess &&
         cudaEventElapsedTime(&ms, start, stop) == cudaSuccess;
    if (r >= 2) us.push_back(ms * 1000.f / kLaunchesPerGraph);
  }
  if (start) (void)cudaEventDestroy(start);
  if (stop) (void)cudaEventDestroy(stop);
  if (exec) (void)cudaGraphExecDestroy(exec);
  if (graph) (void)cudaGraphDestroy(graph);
  (void)cudaStreamDestroy(s);
  if (!ok || us.empty() || cudaGetLastError() != cudaSuccess) return -1;
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

TEST(CudaGemmEpilogueBench, FfnInGeluErfPass) {
  KILN_REQUIRE_GPU();
  constexpr int64_t kN = 3072;
  struct Shape {
    char const* name;
    int64_t m;
  };
  for (Shape const sh : {Shape{"BERT b1", 128}, Shape{"ViT b1", 197}, Shape{"BERT b128", 16384}}) {
    int64_t const count = sh.m * kN;
    DeviceMemory yMem(static_cast<size_t>(count) * 2), biasMem(static_cast<size_t>(kN) * 2);
    void* y = yMem.p;
    void* bias = biasMem.p;
    HostTensor const y0 = randomTensor(DataType::kHALF, {count}, 91, -3, 3);
    HostTensor const b0 = randomTensor(DataType::kHALF, {kN}, 92, -1, 1);
    ASSERT_EQ(cudaMemcpy(y, y0.data(), y0.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(bias, b0.data(), b0.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    for (int vectors : {4, 1}) {
      cuda::GemmEpilogue e;
      e.bias = bias;
      e.biasPeriod = kN;
      e.activation = static_cast<int32_t>(ActivationType::kGELU_ERF);
      e.vectorsPerThread = vectors;
      double const us = graphMicroseconds([&](cudaStream_t s) {
        return cuda::launchGemmEpilogue(y, static_cast<int32_t>(DataType::kHALF), count, e, s);
      });
      EXPECT_GT(us, 0) << sh.name << ": a launch failed";
      std::printf(
          "[ bench    ] gemm epilogue fp16 bias + GELU erf %-9s [%5lld, %lld] %d vector(s)/thread %8.2f us "
          "%6.3f TB/s\n",
          sh.name, static_cast<long long>(sh.m), static_cast<long long>(kN), vectors, us,
          us > 0 ? 2.0 * 2 * static_cast<double>(count) / (us * 1e6) : 0.0);
    }
  }
}

}  // namespace
}  // namespace kiln
