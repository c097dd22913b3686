// gpu micro-benchmark of the vectorized GEMM epilogue (issue 8) on the pass Kiln runs after the FFN-in GEMM of BERT
// and ViT (bias along N, erf GELU; cuBLASLt's GELU epilogue is the tanh form): fp16 y [M, 3072] at batch 1 (M 128 and
// 197) and BERT's batch 128 (M 16384), at 4 and 1 vectors per thread. Each figure is the median over 30 replays of a
// CUDA graph of 16 back-to-back launches, per launch, as the passes run inside a plan's graph (timeEnqueues). It
// asserts only that the launches succeed, never a time.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <vector>

#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/gemm_epilogue_kernels.h"
#include "backends/cuda/tactic_timing_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

constexpr int kReplays = 30;

TEST(CudaGemmEpilogueBench, FfnInGeluErfPass) {
  KILN_REQUIRE_GPU();
  constexpr int64_t kN = 3072;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
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
      std::vector<float> const ms = timeEnqueues(
          stream, [&] { return cuda::launchGemmEpilogue(y, static_cast<int32_t>(DataType::kHALF), count, e, stream); },
          kReplays);
      double const us = ms.empty() ? -1.0 : 1000.0 * ms[ms.size() / 2];
      EXPECT_GT(us, 0) << sh.name << ": a launch failed";
      EXPECT_EQ(cudaGetLastError(), cudaSuccess) << sh.name;
      std::printf(
          "[ bench    ] gemm epilogue fp16 bias + GELU erf %-9s [%5lld, %lld] %d vector(s)/thread %8.2f us "
          "%6.3f TB/s\n",
          sh.name, static_cast<long long>(sh.m), static_cast<long long>(kN), vectors, us,
          us > 0 ? 2.0 * 2 * static_cast<double>(count) / (us * 1e6) : 0.0);
    }
  }
  (void)cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace kiln
