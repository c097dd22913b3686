// gpu micro-benchmark of the normalization and softmax kernels (issue 8): prints the time and the achieved memory
// bandwidth (bytes read + written / time) of each launcher path, under both of its variants (RowVariant;
// KILN_NORM_VARIANT=0 or 1 runs only that one), and of the generic kernels on the shapes, as TB/s, as a share
// of a device-to-device copy of x's size and of the H200's 4.8 TB/s. It asserts only that the launches succeed, never a
// time. Group norm is NCHW only: the backend's group view takes the channels at dim 1, so there is no NHWC case.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/normalization_kernels.h"
#include "backends/cuda/softmax_kernels.h"
#include "backends/normalization_view.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

constexpr int kWarmup = 3;
constexpr int kIterations = 20;

// Mean milliseconds of one `launch()` over kIterations on `stream`, after kWarmup; -1 when a launch failed.
template <typename F>
double timeLaunches(cudaStream_t stream, F const& launch) {
  for (int i = 0; i < kWarmup; ++i) launch();
  cudaEvent_t start = nullptr, stop = nullptr;
  if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) return -1;
  cudaEventRecord(start, stream);
  for (int i = 0; i < kIterations; ++i) launch();
  cudaEventRecord(stop, stream);
  float ms = 0;
  bool ok = cudaEventSynchronize(stop) == cudaSuccess && cudaEventElapsedTime(&ms, start, stop) == cudaSuccess;
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (!ok || !cuda::launchStatus("benchmark").isOk()) return -1;
  return ms / kIterations;
}

constexpr double kPeakTBs = 4.8;  // the H200's HBM3e

// Copy bandwidth (TB/s) by bytes of x, measured once per size (benchCopy).
std::map<size_t, double>& copyTBs() {
  static std::map<size_t, double> m;
  return m;
}

// One result line: ms, TB/s, % of the same-size copy (xBytes; 0 for the copy itself) and % of 4.8 TB/s.
void report(char const* what, char const* path, double ms, double bytes, size_t xBytes) {
  double tbs = ms > 0 ? bytes / (ms * 1e9) : 0.0;
  auto it = copyTBs().find(xBytes);
  double ofCopy = it != copyTBs().end() && it->second > 0 ? 100.0 * tbs / it->second : 0.0;
  std::printf("[ bench    ] %-46s %-22s %8.4f ms %6.3f TB/s %5.1f %% of copy %5.1f %% of 4.8\n", what, path, ms, tbs,
              ofCopy, 100.0 * tbs / kPeakTBs);
}

// The row-kernel variants to run: both, or the one KILN_NORM_VARIANT names (0: default, 1: alternative).
std::vector<cuda::RowVariant> variants() {
  char const* v = std::getenv("KILN_NORM_VARIANT");
  if (v && std::string(v) == "0") return {cuda::RowVariant::kDefault};
  if (v && std::string(v) == "1") return {cuda::RowVariant::kAlternative};
  return {cuda::RowVariant::kDefault, cuda::RowVariant::kAlternative};
}

// What a variant is on a path: evict-first loads/stores on the warp kernels, no prefetch (one row per block or
// cluster) on the block/cluster kernel.
char const* variantName(char const* path, cuda::RowVariant v) {
  bool const slices = std::string(path) == "cluster-vec";
  if (v == cuda::RowVariant::kDefault) return slices ? "persistent-prefetch" : "cached";
  return slices ? "row-per-cluster" : "streaming";
}

// The bandwidth a device-to-device copy of `bytes` reaches (bytes read + written), as the ceiling the kernels'
// figures are read against at the same size (small tensors stay partly in the 50 MiB L2 between launches).
void benchCopy(size_t bytes, backends::DeviceBackend* dev, cudaStream_t stream) {
  if (copyTBs().count(bytes)) return;
  auto a = backends::DeviceBuffer::allocate(dev, bytes, "bench copy source");
  auto b = backends::DeviceBuffer::allocate(dev, bytes, "bench copy destination");
  ASSERT_TRUE(a.isOk() && b.isOk());
  double ms =
      timeLaunches(stream, [&] { cudaMemcpyAsync(b->data(), a->data(), bytes, cudaMemcpyDeviceToDevice, stream); });
  EXPECT_GT(ms, 0);
  copyTBs()[bytes] = ms > 0 ? 2.0 * static_cast<double>(bytes) / (ms * 1e9) : 0.0;
  std::string what = "Copy of " + std::to_string(bytes >> 20) + " MiB";
  report(what.c_str(), "memcpy", ms, 2.0 * static_cast<double>(bytes), 0);
}

char const* pathName(cuda::NormPath p) {
  switch (p) {
    case cuda::NormPath::kNone:
      return "none";
    case cuda::NormPath::kWarpVec:
      return "warp-vec";
    case cuda::NormPath::kClusterVec:
      return "cluster-vec";
    case cuda::NormPath::kWarpScalar:
      return "warp-scalar";
    case cuda::NormPath::kBlock:
      return "block";
  }
  return "?";
}

struct NormCase {
  char const* name;
  std::vector<int64_t> x, scale;
  std::vector<int64_t> axes;
  int64_t groups;
  bool v2, residual;
};

void benchNorm(NormCase const& c, backends::DeviceBackend* dev, cudaStream_t stream) {
  DataType const t = DataType::kHALF;
  Dims xd = makeDims(c.x), sd = makeDims(c.scale);
  auto view = backends::normalizationView("bench", xd, sd, sd, c.axes, c.groups, c.v2);
  ASSERT_TRUE(view.isOk()) << view.status().toString();
  int32_t n = static_cast<int32_t>(view->shape.size());
  int64_t const* strides[3] = {view->xStrides.data(), view->scaleStrides.data(), view->biasStrides.data()};
  bool mask[cuda::kSpaceMaxDims] = {};
  for (int32_t d = 0; d < n; ++d) mask[d] = view->reduced[static_cast<size_t>(d)];
  cuda::StridedSpace outer = cuda::makeSpace(n, view->shape.data(), mask, false, 3, strides);
  cuda::StridedSpace inner = cuda::makeSpace(n, view->shape.data(), mask, true, 3, strides);
  size_t bytes = static_cast<size_t>(volume(xd)) * 2, sBytes = static_cast<size_t>(volume(sd)) * 2;
  auto x = backends::DeviceBuffer::allocate(dev, bytes, "bench x");
  auto r = backends::DeviceBuffer::allocate(dev, bytes, "bench residual");
  auto y = backends::DeviceBuffer::allocate(dev, bytes, "bench y");
  auto s = backends::DeviceBuffer::allocate(dev, sBytes, "bench scale");
  ASSERT_TRUE(x.isOk() && r.isOk() && y.isOk() && s.isOk());
  // Finite data: 0x3c3c is about 1.06 in fp16 (the kernels' speed does not depend on the values).
  for (auto* b : {&*x, &*r, &*s}) ASSERT_TRUE(dev->fill(b->data(), 0x3c, b->size(), stream).isOk());
  auto dt = static_cast<int32_t>(t);
  double moved = static_cast<double>(bytes) * (c.residual ? 3 : 2) + 2.0 * static_cast<double>(sBytes);
  benchCopy(bytes, dev, stream);
  auto run = [&](bool generic, cuda::RowVariant variant) {
    cuda::NormPath path = cuda::NormPath::kNone;
    double ms = timeLaunches(stream, [&] {
      path = cuda::launchNormalization(dt, x->data(), c.residual ? r->data() : nullptr, volume(xd), y->data(),
                                       s->data(), dt, s->data(), dt, outer, inner, 1e-5f, stream, generic, variant);
    });
    EXPECT_GT(ms, 0) << c.name;
    std::string label =
        std::string(pathName(path)) + (generic ? "" : std::string(" ") + variantName(pathName(path), variant));
    report(c.name, label.c_str(), ms, moved, bytes);
  };
  for (cuda::RowVariant v : variants()) run(false, v);
  run(true, cuda::RowVariant::kDefault);
}

TEST(CudaNormSoftmaxBench, Bandwidth) {
  KILN_REQUIRE_GPU();
  backends::DeviceBackend* dev = device();
  void* streamHandle = *dev->createStream();
  auto stream = static_cast<cudaStream_t>(streamHandle);
  std::printf("[ bench    ] fp16; bytes = inputs read + outputs written; %d launches after %d warm-ups\n", kIterations,
              kWarmup);
  std::vector<NormCase> cases = {
      {"LayerNorm [16384, 768] (BERT-base b128 s128)", {16384, 768}, {768}, {1}, 1, false, false},
      {"LayerNorm [25216, 768] (ViT-B/16 b128)", {128 * 197, 768}, {768}, {1}, 1, false, false},
      {"Residual + LayerNorm [16384, 768]", {16384, 768}, {768}, {1}, 1, false, true},
      {"LayerNorm [131072, 768] (192 MiB, beyond L2)", {131072, 768}, {768}, {1}, 1, false, false},
      {"Residual + LayerNorm [131072, 768]", {131072, 768}, {768}, {1}, 1, false, true},
      {"LayerNorm [16384, 1024] (BERT-large)", {16384, 1024}, {1024}, {1}, 1, false, false},
      {"GroupNorm [8, 512, 64, 64] 32 groups, per group", {8, 512, 64, 64}, {1, 32, 1, 1}, {2, 3}, 32, false, false},
      {"GroupNorm [8, 512, 64, 64] 32 groups, per chan", {8, 512, 64, 64}, {1, 512, 1, 1}, {2, 3}, 32, true, false},
      {"InstanceNorm [8, 512, 64, 64]", {8, 512, 64, 64}, {1, 512, 1, 1}, {2, 3}, 1, false, false},
  };
  for (NormCase const& c : cases) benchNorm(c, dev, stream);

  struct SoftmaxCase {
    char const* name;
    int64_t rows, len;
  };
  for (SoftmaxCase const& c : {SoftmaxCase{"SoftMax [196608, 128] (BERT b128 h12 s128)", int64_t{128} * 12 * 128, 128},
                               SoftmaxCase{"SoftMax [24576, 1024]", 24576, 1024}}) {
    size_t bytes = static_cast<size_t>(c.rows * c.len) * 2;
    auto x = backends::DeviceBuffer::allocate(dev, bytes, "bench x");
    auto y = backends::DeviceBuffer::allocate(dev, bytes, "bench y");
    ASSERT_TRUE(x.isOk() && y.isOk());
    ASSERT_TRUE(dev->fill(x->data(), 0x3c, bytes, stream).isOk());
    benchCopy(bytes, dev, stream);
    auto run = [&](bool generic, cuda::RowVariant variant) {
      double ms = timeLaunches(stream, [&] {
        cuda::launchSoftmax(static_cast<int32_t>(DataType::kHALF), x->data(), y->data(), c.rows, c.len, 1, nullptr,
                            stream, generic, variant);
      });
      EXPECT_GT(ms, 0);
      std::string label =
          generic ? std::string("warp-scalar") : std::string("team-vec ") + variantName("team-vec", variant);
      report(c.name, label.c_str(), ms, 2.0 * static_cast<double>(bytes), bytes);
    };
    for (cuda::RowVariant v : variants()) run(false, v);
    run(true, cuda::RowVariant::kDefault);
  }
  ASSERT_TRUE(dev->synchronize(streamHandle).isOk());
  dev->destroyStream(streamHandle);
}

}  // namespace
}  // namespace kiln
