// gpu: network I/O formats on the GPU target through the public API: an fp16 input bound in kHWC8 (merged with
// the channels-last Reformat of an fp16 build) and an fp16 output in kCHW4, against the same network built for the
// CPU with kLINEAR I/O, data converted by the tests' own layout code. Skips where no CUDA device is present.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>

#include "e2e/io_formats_util.h"

namespace kiln_e2e {
namespace {

using namespace io_formats;  // NOLINT: the shared network and layout helpers

bool gpuPresent() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

float halfBitsToFloat(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v = exp == 0 ? std::ldexp(static_cast<float>(mant), -24)
                     : std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

std::vector<uint8_t> runOnDevice(kiln::ICudaEngine& engine, std::vector<uint8_t> const& in, size_t outBytes) {
  std::unique_ptr<kiln::IExecutionContext> ctx(engine.createExecutionContext());
  EXPECT_NE(ctx, nullptr);
  if (!ctx) return {};
  void *x = nullptr, *y = nullptr;
  EXPECT_EQ(cudaMalloc(&x, in.size()), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&y, outBytes), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(x, in.data(), in.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(y, 0xCD, outBytes), cudaSuccess);  // poison: the padding must come back as zeros
  cudaStream_t s = nullptr;
  EXPECT_EQ(cudaStreamCreate(&s), cudaSuccess);
  EXPECT_TRUE(ctx->setInputShape("x", Dims{4, {kN, kC, kH, kW}}));
  EXPECT_TRUE(ctx->setTensorAddress("x", x));
  EXPECT_TRUE(ctx->setTensorAddress("y", y));
  EXPECT_TRUE(ctx->enqueueV3(s));
  std::vector<uint8_t> out(outBytes);
  EXPECT_EQ(cudaMemcpyAsync(out.data(), y, outBytes, cudaMemcpyDeviceToHost, s), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  cudaStreamDestroy(s);
  cudaFree(x);
  cudaFree(y);
  return out;
}

TEST(GpuIOFormats, Hwc8InputAndChw4OutputMatchTheCpuEngine) {
  if (!gpuPresent()) GTEST_SKIP() << "no CUDA device";
  CapturingLogger logger;
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  auto cpuPlan = buildPlan(logger, convNet(DataType::kHALF, only(TensorFormat::kLINEAR), only(TensorFormat::kLINEAR)));
  auto cpu = loadEngine(*rt, cpuPlan);
  ASSERT_NE(cpu, nullptr);
  std::vector<uint8_t> in = inputBytes(DataType::kHALF);
  std::vector<uint8_t> want = run(*cpu, in, static_cast<size_t>(kN * kK * kH * kW) * 2);
  Layout const hwc8{8, true}, chw4{4, false};
  for (int32_t level : {0, 3})
    for (bool fp16 : {false, true}) {
      SCOPED_TRACE("level " + std::to_string(level) + (fp16 ? " kFP16" : ""));
      std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
      std::unique_ptr<kiln::INetworkDefinition> network(builder->createNetworkV2(0));
      std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
      config->setDefaultDeviceType(kiln::DeviceType::kGPU);
      config->clearFlag(kiln::BuilderFlag::kTF32);
      if (fp16) config->setFlag(kiln::BuilderFlag::kFP16);
      config->setBuilderOptimizationLevel(level);
      ASSERT_TRUE(
          convNet(DataType::kHALF, only(TensorFormat::kHWC8), only(TensorFormat::kCHW4))(*builder, *network, *config));
      std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*network, *config));
      ASSERT_NE(plan, nullptr) << logger.lastError();
      std::unique_ptr<kiln::ICudaEngine> gpu(rt->deserializeCudaEngine(plan->data(), plan->size()));
      ASSERT_NE(gpu, nullptr) << logger.lastError();
      EXPECT_EQ(gpu->getTensorFormat("x"), TensorFormat::kHWC8);
      EXPECT_EQ(gpu->getTensorFormat("y"), TensorFormat::kCHW4);
      EXPECT_EQ(gpu->getTensorComponentsPerElement("x"), 8);
      std::vector<uint8_t> got = runOnDevice(*gpu, pack(in, 2, hwc8, kC), static_cast<size_t>(kN * 4 * kH * kW) * 2);
      std::vector<uint8_t> lin = unpack(got, 2, chw4, kK);
      ASSERT_EQ(lin.size(), want.size());
      double num = 0, den = 0;
      for (size_t i = 0; i + 1 < lin.size(); i += 2) {
        float a = halfBitsToFloat(static_cast<uint16_t>(lin[i] | (lin[i + 1] << 8)));
        float b = halfBitsToFloat(static_cast<uint16_t>(want[i] | (want[i + 1] << 8)));
        num += (a - b) * (a - b);
        den += b * b;
      }
      EXPECT_LE(std::sqrt(num / den), fp16 ? 5e-3 : 1e-3);
      for (int64_t n = 0; n < kN; ++n)
        for (int64_t h = 0; h < kH; ++h)
          for (int64_t w = 0; w < kW; ++w) {
            size_t p = position(chw4, n, 3, h, w, 4) * 2;
            EXPECT_EQ(got[p] | got[p + 1], 0) << "padding at n " << n << " h " << h << " w " << w;
          }
    }
}

}  // namespace
}  // namespace kiln_e2e
