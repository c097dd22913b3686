// gpu tests of the pointwise convolution tactics (convolution_cublaslt_pointwise_algo*,
// convolution_cuda_pointwise_wmma and convolution_cuda_pointwise_smallc, convolution_gemm.cc; the vectorized
// epilogue and the tensor-core kernel, conv_pointwise.cu; the small-channel kernel, conv_pointwise_small.cu) against
// the reference: MobileNetV2's and ResNet-50's 1x1 layers with bias, ReLU, ReLU6,
// residual, channels-last and row-major, odd channel counts, batch 1 and large M; the launchers' refusals and the
// in-place residual; what the tactics refuse (checked without a device); their times beside cuDNN's at batch 256.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "backends/cuda/conv_kernels.h"
#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/tactic_timing_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

constexpr char const* kAlgo0 = "convolution_cublaslt_pointwise_algo0";
constexpr char const* kWmma = "convolution_cuda_pointwise_wmma";
constexpr char const* kSmallC = "convolution_cuda_pointwise_smallc";
std::vector<DataType> const kFloats{DataType::kFLOAT, DataType::kHALF, DataType::kBF16};

struct Pw {
  std::vector<int64_t> x{};  // [n, c, spatial...]
  int64_t k = 0;             // output channels
  bool bias = true, residual = false;
  int64_t act = -1;
  double alpha = 0, beta = 0;
  bool tf32 = false;
  bool constWeights = true;
};

ir::Attributes attrsOf(Pw const& p) {
  ir::Attributes a;
  size_t ns = p.x.size() - 2;
  a.setInt("num_output_maps", p.k);
  a.setInts("kernel_shape", std::vector<int64_t>(ns, 1));
  a.setInt("activation", p.act);
  a.setFloat("act_alpha", p.alpha);
  a.setFloat("act_beta", p.beta);
  if (p.tf32) a.setInt("allow_tf32", 1);
  return a;
}

std::vector<int64_t> weightShape(Pw const& p) {
  std::vector<int64_t> w{p.k, p.x[1]};
  w.resize(p.x.size(), 1);
  return w;
}

// Runs every CUDA tactic supporting the node against the reference and expects the pointwise tactic among them.
void run(Pw const& p, DataType t, bool hwc, uint32_t seed = 1) {
  SCOPED_TRACE(strCat(dataTypeName(t), hwc ? " channels-last" : " row-major", " x ", p.x[0], "x", p.x[1], " k ", p.k,
                      " act ", p.act));
  std::vector<int64_t> y = p.x;
  y[1] = p.k;
  HostTensor w = randomTensor(t, weightShape(p), seed + 1, -0.5, 0.5);
  std::vector<In> ins{var(randomTensor(t, p.x, seed)), p.constWeights ? cst(w) : var(w)};
  if (p.bias)
    ins.push_back(cst(randomTensor(t, {p.k}, seed + 2)));
  else if (p.residual)
    ins.push_back(none());
  if (p.residual) ins.push_back(var(randomTensor(t, y, seed + 3)));
  auto results =
      expectMatchesReference({ir::OpType::kConvolution, attrsOf(p), ins, 1, hwc}, p.tf32 ? kTf32Tolerance : -1);
  auto has = [&](char const* name) {
    return std::any_of(results.begin(), results.end(), [&](TacticResult const& r) { return r.tactic == name; });
  };
  EXPECT_TRUE(has(kAlgo0)) << kAlgo0 << " did not run";
  bool wmma = hwc && (t == DataType::kHALF || t == DataType::kBF16) && p.x[1] % 8 == 0 && p.k % 8 == 0;
  EXPECT_EQ(has(kWmma), wmma) << kWmma;
  bool smallc = hwc && p.x[1] > 0 && p.x[1] <= 384 && (t != DataType::kFLOAT || !p.tf32) &&
                cuda::smallPointwiseFits(static_cast<int32_t>(t), p.x[1], p.k);
  EXPECT_EQ(has(kSmallC), smallc) << kSmallC;
}

Pw relu6(std::vector<int64_t> x, int64_t k) {
  Pw p{std::move(x), k};
  p.act = static_cast<int64_t>(ActivationType::kCLIP);
  p.beta = 6.0;
  return p;
}

TEST(CudaConvPointwise, MobileNetV2Expansion) {
  KILN_REQUIRE_GPU();
  // features.2's 16 -> 96 at 112x112 with bias + ReLU6 (clip through the vectorized pass).
  for (DataType t : kFloats) run(relu6({2, 16, 112, 112}, 96), t, true);
  run(relu6({1, 160, 7, 7}, 960), DataType::kHALF, true, 3);  // batch 1
}

TEST(CudaConvPointwise, ResNet50BiasResidualRelu) {
  KILN_REQUIRE_GPU();
  // 64 -> 256 at 56x56: bias and residual in cuBLASLt's call (C, beta 1), ReLU in its epilogue.
  Pw p{{2, 64, 56, 56}, 256};
  p.residual = true;
  p.act = static_cast<int64_t>(ActivationType::kRELU);
  for (DataType t : kFloats) run(p, t, true, 5);
  Pw reduce{{2, 256, 14, 14}, 64};
  reduce.act = static_cast<int64_t>(ActivationType::kRELU);
  for (DataType t : kFloats) run(reduce, t, true, 6);
}

TEST(CudaConvPointwise, ProjectionWithResidualNoActivation) {
  KILN_REQUIRE_GPU();
  Pw p{{2, 144, 28, 28}, 24};
  p.residual = true;
  for (DataType t : kFloats) run(p, t, true, 7);
  Pw noBias{{1, 32, 9, 7}, 16};
  noBias.bias = false;
  noBias.residual = true;
  for (DataType t : kFloats) run(noBias, t, true, 8);
}

TEST(CudaConvPointwise, OddChannelsAndAlignment) {
  KILN_REQUIRE_GPU();
  // Channel counts off the 16-byte vector: cuBLASLt at smaller alignments, the scalar epilogue pass.
  for (DataType t : kFloats) {
    run(relu6({2, 3, 11, 13}, 5), t, true, 9);
    Pw p{{1, 17, 9, 10}, 13};
    p.residual = true;
    p.act = static_cast<int64_t>(ActivationType::kLEAKY_RELU);
    p.alpha = 0.1;
    run(p, t, true, 10);
    run(relu6({3, 7, 5, 5}, 9), t, false, 11);
  }
}

TEST(CudaConvPointwise, LargeM) {
  KILN_REQUIRE_GPU();
  // 32 x 56 x 56 = 100,352 rows (MobileNetV2's 24 -> 144 at batch 32).
  run(relu6({32, 24, 56, 56}, 144), DataType::kHALF, true, 12);
}

TEST(CudaConvPointwise, RowMajor) {
  KILN_REQUIRE_GPU();
  // One batched GEMM per image; the bias and activation after it, ReLU fused when there is no bias.
  for (DataType t : kFloats) {
    run(relu6({3, 16, 12, 12}, 24), t, false, 13);
    Pw p{{2, 24, 10, 9}, 40};
    p.residual = true;
    p.act = static_cast<int64_t>(ActivationType::kRELU);
    run(p, t, false, 14);
    Pw fused{{2, 8, 6, 6}, 12};
    fused.bias = false;
    fused.residual = true;
    fused.act = static_cast<int64_t>(ActivationType::kRELU);
    run(fused, t, false, 15);
    run(Pw{{2, 12, 17}, 20}, t, false, 16);     // 1-D
    run(Pw{{1, 8, 3, 4, 5}, 6}, t, false, 17);  // 3-D
  }
  Pw tf{{2, 64, 14, 14}, 128};
  tf.tf32 = true;
  run(tf, DataType::kFLOAT, false, 18);
  run(tf, DataType::kFLOAT, true, 19);
}

// Small enough (288 outputs) that a threshold with a wide margin exists: where the activation runs after cuBLASLt,
// its input is rounded to fp16/bf16 first, so a pre-activation within a rounding step of ThresholdedReLU's 1.25
// could land on the other side of it (these seeds keep every one at least 0.0107 away; bf16 rounds by 0.0039 there).
TEST(CudaConvPointwise, EveryActivationWithBiasAndResidual) {
  KILN_REQUIRE_GPU();
  for (int32_t act = 0; act < EnumMax<ActivationType>(); ++act) {
    Pw p{{1, 16, 3, 4}, 24};
    p.residual = true;
    p.act = act;
    bool clip = act == static_cast<int32_t>(ActivationType::kCLIP);
    p.alpha = clip ? -0.5 : act == static_cast<int32_t>(ActivationType::kTHRESHOLDED_RELU) ? 1.25 : 0.7;
    p.beta = clip ? 0.5 : 1.1;
    for (DataType t : kFloats) {
      run(p, t, true, 20 + static_cast<uint32_t>(act));
      run(p, t, false, 40 + static_cast<uint32_t>(act));
    }
  }
}

TEST(CudaConvPointwise, RunTimeWeightsAndEmptyBatch) {
  KILN_REQUIRE_GPU();
  Pw p = relu6({2, 16, 8, 8}, 32);
  p.constWeights = false;
  for (DataType t : kFloats) run(p, t, true, 60);
  for (bool hwc : {true, false}) run(Pw{{0, 16, 8, 8}, 32}, DataType::kHALF, hwc, 61);
}

// The vectorized epilogue's refusals (the tactic then runs the scalar pass), and the pass in place on a residual
// that is y's own memory against the scalar pass with the residual apart.
TEST(CudaConvPointwise, EpilogueVecRefusalsAndInPlaceResidual) {
  KILN_REQUIRE_GPU();
  backends::DeviceBackend* dev = device();
  void* stream = *dev->createStream();
  auto cs = static_cast<cudaStream_t>(stream);
  int64_t const rows = 37, k = 24, count = rows * k;
  size_t const bytes = static_cast<size_t>(count) * 2;
  HostTensor hy = randomTensor(DataType::kHALF, {count}, 70), hr = randomTensor(DataType::kHALF, {count}, 71);
  HostTensor hb = randomTensor(DataType::kHALF, {k}, 72);
  auto up = [&](HostTensor const& h) {
    auto b = backends::DeviceBuffer::allocate(dev, h.bytes() + 16, "test buffer");
    EXPECT_TRUE(b.isOk());
    EXPECT_TRUE(dev->copy(b->data(), h.data(), h.bytes(), backends::CopyKind::kHostToDevice, stream).isOk());
    return std::move(*b);
  };
  HostTensor hb37 = randomTensor(DataType::kHALF, {37}, 73);
  backends::DeviceBuffer y1 = up(hy), y2 = up(hy), res = up(hr), bias = up(hb), inPlace = up(hr), hbRowMajor = up(hb37);
  int32_t const f16 = static_cast<int32_t>(DataType::kHALF);
  cuda::Epilogue ep;
  ep.bias = bias.data();
  ep.activation = static_cast<int32_t>(ActivationType::kCLIP);
  ep.beta = 0.5f;
  auto* yb = static_cast<char*>(y1.data());
  EXPECT_FALSE(cuda::launchEpilogueVec(f16, rows, k, 1, ep, yb + 2, cs)) << "y misaligned";
  cuda::Epilogue badBias = ep;
  badBias.bias = static_cast<char*>(bias.data()) + 2;
  EXPECT_FALSE(cuda::launchEpilogueVec(f16, rows, k, 1, badBias, yb, cs)) << "bias misaligned";
  EXPECT_FALSE(cuda::launchEpilogueVec(f16, rows, 20, 1, ep, yb, cs)) << "channels not whole vectors";
  EXPECT_FALSE(cuda::launchEpilogueVec(f16, rows, k, 6, ep, yb, cs)) << "planes not whole vectors";
  EXPECT_FALSE(cuda::launchEpilogueVec(static_cast<int32_t>(DataType::kINT32), rows, k, 1, ep, yb, cs));
  EXPECT_FALSE(cuda::launchEpilogueVec(f16, 0, k, 1, ep, yb, cs)) << "empty";
  // In place (the residual is y's memory): the vectorized pass against the scalar one, the same float math.
  ep.residual = res.data();
  ASSERT_TRUE(cuda::launchEpilogue(f16, rows, k, 1, ep, res.data(), cs));
  ep.residual = inPlace.data();
  ASSERT_TRUE(cuda::launchEpilogueVec(f16, rows, k, 1, ep, inPlace.data(), cs));
  // Row-major (one channel per vector): y [3, 37, 8], both passes on copies of one y.
  cuda::Epilogue rm;
  rm.bias = hbRowMajor.data();
  rm.activation = static_cast<int32_t>(ActivationType::kSIGMOID);
  ASSERT_TRUE(cuda::launchEpilogue(f16, 3, 37, 8, rm, y1.data(), cs));
  ASSERT_TRUE(cuda::launchEpilogueVec(f16, 3, 37, 8, rm, y2.data(), cs));
  ASSERT_TRUE(cuda::launchStatus("epilogues").isOk());
  auto down = [&](backends::DeviceBuffer const& b) {
    HostTensor h = *HostTensor::allocate(DataType::kHALF, makeDims({count}), "download");
    EXPECT_TRUE(dev->copy(h.mutableData(), b.data(), bytes, backends::CopyKind::kDeviceToHost, stream).isOk());
    EXPECT_TRUE(dev->synchronize(stream).isOk());
    return h;
  };
  EXPECT_EQ(normRelativeError(down(inPlace), down(res)), 0.0);
  EXPECT_EQ(normRelativeError(down(y2), down(y1)), 0.0);
  dev->destroyStream(stream);
}

// The tensor-core launcher's refusals (the tactic then runs cuBLASLt), and a residual that is y's own memory against
// the same kernel with the residual apart; 300 rows and 40 columns are partial 128 x 64 tiles, 24 input channels
// a partial 32-deep step.
TEST(CudaConvPointwise, WmmaLauncherRefusalsAndInPlaceResidual) {
  KILN_REQUIRE_GPU();
  backends::DeviceBackend* dev = device();
  void* stream = *dev->createStream();
  auto cs = static_cast<cudaStream_t>(stream);
  int64_t const m = 300, n = 40, k = 24;
  HostTensor hx = randomTensor(DataType::kHALF, {m * k}, 80), hw = randomTensor(DataType::kHALF, {n * k}, 81);
  HostTensor hb = randomTensor(DataType::kHALF, {n}, 82), hr = randomTensor(DataType::kHALF, {m * n}, 83);
  auto up = [&](HostTensor const& h) {
    auto b = backends::DeviceBuffer::allocate(dev, h.bytes() + 16, "test buffer");
    EXPECT_TRUE(b.isOk());
    EXPECT_TRUE(dev->copy(b->data(), h.data(), h.bytes(), backends::CopyKind::kHostToDevice, stream).isOk());
    return std::move(*b);
  };
  backends::DeviceBuffer x = up(hx), w = up(hw), bias = up(hb), res = up(hr), inPlace = up(hr), y = up(hr);
  int32_t const f16 = static_cast<int32_t>(DataType::kHALF);
  cuda::Epilogue ep;
  ep.bias = bias.data();
  ep.activation = static_cast<int32_t>(ActivationType::kCLIP);
  ep.beta = 0.5f;
  auto* xb = static_cast<char*>(x.data());
  EXPECT_FALSE(cuda::launchPointwiseWmma(f16, m, n, k, xb + 2, w.data(), ep, y.data(), cs)) << "x misaligned";
  EXPECT_FALSE(cuda::launchPointwiseWmma(f16, m, n, k, xb, static_cast<char*>(w.data()) + 2, ep, y.data(), cs))
      << "w misaligned";
  cuda::Epilogue badBias = ep;
  badBias.bias = static_cast<char*>(bias.data()) + 2;
  EXPECT_FALSE(cuda::launchPointwiseWmma(f16, m, n, k, xb, w.data(), badBias, y.data(), cs)) << "bias misaligned";
  EXPECT_FALSE(cuda::launchPointwiseWmma(f16, m, 36, k, xb, w.data(), ep, y.data(), cs)) << "n % 8";
  EXPECT_FALSE(cuda::launchPointwiseWmma(f16, m, n, 20, xb, w.data(), ep, y.data(), cs)) << "k % 8";
  EXPECT_FALSE(
      cuda::launchPointwiseWmma(static_cast<int32_t>(DataType::kFLOAT), m, n, k, xb, w.data(), ep, y.data(), cs))
      << "fp32";
  EXPECT_FALSE(cuda::launchPointwiseWmma(f16, 0, n, k, xb, w.data(), ep, y.data(), cs)) << "empty";
  ep.residual = res.data();
  ASSERT_TRUE(cuda::launchPointwiseWmma(f16, m, n, k, xb, w.data(), ep, y.data(), cs));
  ep.residual = inPlace.data();
  ASSERT_TRUE(cuda::launchPointwiseWmma(f16, m, n, k, xb, w.data(), ep, inPlace.data(), cs));
  ASSERT_TRUE(cuda::launchStatus("tensor-core pointwise").isOk());
  auto down = [&](backends::DeviceBuffer const& b) {
    HostTensor h = *HostTensor::allocate(DataType::kHALF, makeDims({m * n}), "download");
    EXPECT_TRUE(dev->copy(h.mutableData(), b.data(), h.bytes(), backends::CopyKind::kDeviceToHost, stream).isOk());
    EXPECT_TRUE(dev->synchronize(stream).isOk());
    return h;
  };
  HostTensor want = down(y);
  EXPECT_EQ(normRelativeError(down(inPlace), want), 0.0);
  // And against a host computation of the same sums (fp32 accumulation of fp16 values).
  double num = 0, den = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = hb.doubleAt(j) + hr.doubleAt(i * n + j);
      for (int64_t c = 0; c < k; ++c) acc += hx.doubleAt(i * k + c) * hw.doubleAt(j * k + c);
      double ref = std::min(0.5, std::max(0.0, acc)), got = want.doubleAt(i * n + j);
      num += (got - ref) * (got - ref);
      den += ref * ref;
    }
  EXPECT_LE(std::sqrt(num / den), 5e-3);
  dev->destroyStream(stream);
}

// The small-channel kernel's paths through the tactic: one k-step (16 input channels or fewer) and 32-channel blocks,
// output channels in one or several 64-channel passes with a partial last one, counts off the 16-byte vector
// (element-wise loads and stores), pixel counts off the warp's 32-row tile, each compiled epilogue (none, ReLU,
// clip) and a run-time one, with and without bias and residual, in every dtype.
TEST(CudaConvPointwise, SmallChannelShapes) {
  KILN_REQUIRE_GPU();
  struct Shape {
    int64_t c, k, h, w;
  };
  std::vector<Shape> const shapes{{16, 96, 9, 7},  {3, 5, 11, 13},  {8, 48, 5, 5},  {12, 20, 7, 3},
                                  {24, 144, 6, 5}, {32, 192, 4, 9}, {40, 13, 5, 7}, {64, 384, 3, 3},
                                  {17, 100, 5, 5}, {64, 24, 7, 7},  {33, 64, 1, 1}};
  uint32_t seed = 100;
  for (DataType t : kFloats)
    for (Shape const& sh : shapes) {
      Pw p = relu6({2, sh.c, sh.h, sh.w}, sh.k);
      run(p, t, true, seed++);
      p.act = static_cast<int64_t>(ActivationType::kRELU);
      p.residual = true;
      run(p, t, true, seed++);
      p.act = -1;
      p.bias = false;
      run(p, t, true, seed++);
      p.act = static_cast<int64_t>(ActivationType::kLEAKY_RELU);
      p.alpha = 0.2;
      p.bias = true;
      p.residual = false;
      run(p, t, true, seed++);
    }
}

// The small-channel launcher directly: its refusals; misaligned x, y and residual (element-wise paths) and a
// residual in y's own memory, each against the aligned call with the residual apart; and a host computation of the
// same sums.
TEST(CudaConvPointwise, SmallChannelLauncher) {
  KILN_REQUIRE_GPU();
  backends::DeviceBackend* dev = device();
  void* stream = *dev->createStream();
  auto cs = static_cast<cudaStream_t>(stream);
  for (DataType t : kFloats) {
    SCOPED_TRACE(dataTypeName(t));
    int64_t const m = 301, n = 40, k = 24;
    HostTensor hx = randomTensor(t, {m * k}, 90), hw = randomTensor(t, {n * k}, 91);
    HostTensor hb = randomTensor(t, {n}, 92), hr = randomTensor(t, {m * n}, 93);
    size_t const es = dataTypeSize(t);
    // Each buffer one element longer, so that the copy starting one element in still fits.
    auto up = [&](HostTensor const& h, size_t offset) {
      auto b = backends::DeviceBuffer::allocate(dev, h.bytes() + 16, "test buffer");
      EXPECT_TRUE(b.isOk());
      EXPECT_TRUE(dev->copy(static_cast<char*>(b->data()) + offset, h.data(), h.bytes(),
                            backends::CopyKind::kHostToDevice, stream)
                      .isOk());
      return std::move(*b);
    };
    backends::DeviceBuffer x = up(hx, 0), xOff = up(hx, es), w = up(hw, 0), bias = up(hb, 0), res = up(hr, 0),
                           resOff = up(hr, es), inPlace = up(hr, 0), y = up(hr, 0), yOff = up(hr, 0);
    auto const dt = static_cast<int32_t>(t);
    cuda::Epilogue ep;
    ep.bias = bias.data();
    ep.activation = static_cast<int32_t>(ActivationType::kCLIP);
    ep.alpha = -0.25f;
    ep.beta = 0.5f;
    EXPECT_FALSE(cuda::launchSmallPointwise(static_cast<int32_t>(DataType::kINT32), m, k, n, x.data(), w.data(), ep,
                                            y.data(), cs))
        << "int32";
    EXPECT_FALSE(cuda::launchSmallPointwise(dt, 0, k, n, x.data(), w.data(), ep, y.data(), cs)) << "empty";
    EXPECT_FALSE(cuda::launchSmallPointwise(dt, m, 0, n, x.data(), w.data(), ep, y.data(), cs)) << "no channels";
    EXPECT_FALSE(cuda::smallPointwiseFits(dt, 4096, 4096)) << "weights beyond shared memory";
    EXPECT_FALSE(cuda::launchSmallPointwise(dt, m, 4096, 4096, x.data(), w.data(), ep, y.data(), cs));
    ep.residual = res.data();
    ASSERT_TRUE(cuda::launchSmallPointwise(dt, m, k, n, x.data(), w.data(), ep, y.data(), cs));
    ep.residual = inPlace.data();
    ASSERT_TRUE(cuda::launchSmallPointwise(dt, m, k, n, x.data(), w.data(), ep, inPlace.data(), cs));
    ep.residual = static_cast<char*>(resOff.data()) + es;
    ASSERT_TRUE(cuda::launchSmallPointwise(dt, m, k, n, static_cast<char*>(xOff.data()) + es, w.data(), ep,
                                           static_cast<char*>(yOff.data()) + es, cs));
    ASSERT_TRUE(cuda::launchStatus("small-channel pointwise").isOk());
    auto down = [&](backends::DeviceBuffer const& b, size_t offset) {
      HostTensor h = *HostTensor::allocate(t, makeDims({m * n}), "download");
      EXPECT_TRUE(dev->copy(h.mutableData(), static_cast<char const*>(b.data()) + offset, h.bytes(),
                            backends::CopyKind::kDeviceToHost, stream)
                      .isOk());
      EXPECT_TRUE(dev->synchronize(stream).isOk());
      return h;
    };
    HostTensor want = down(y, 0);
    EXPECT_EQ(normRelativeError(down(inPlace, 0), want), 0.0) << "in place";
    EXPECT_EQ(normRelativeError(down(yOff, es), want), 0.0) << "element-wise paths";
    double num = 0, den = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = hb.doubleAt(j) + hr.doubleAt(i * n + j);
        for (int64_t c = 0; c < k; ++c) acc += hx.doubleAt(i * k + c) * hw.doubleAt(j * k + c);
        double ref = std::min(0.5, std::max(-0.25, acc)), got = want.doubleAt(i * n + j);
        num += (got - ref) * (got - ref);
        den += ref * ref;
      }
    EXPECT_LE(std::sqrt(num / den), t == DataType::kFLOAT ? 1e-6 : t == DataType::kHALF ? 5e-3 : 2e-2);
  }
  dev->destroyStream(stream);
}

// What the tactics take and refuse (no device needed): MobileNetV2's and ResNet-50's pointwise layers channels-last
// and row-major (the tensor-core one: channels-last fp16/bf16 with C and K multiples of 8); never strides, pads,
// dilations, groups, larger kernels, other layouts or mixed types.
TEST(CudaConvPointwise, SupportsAndRefusals) {
  backends::Tactic const* lt = nullptr;
  backends::Tactic const* wmma = nullptr;
  for (backends::Tactic const& t : cuda::CudaTactics::instance().all()) {
    if (t.name == kAlgo0) lt = &t;
    if (t.name == kWmma) wmma = &t;
  }
  ASSERT_NE(lt, nullptr);
  ASSERT_NE(wmma, nullptr);
  backends::Tactic const* smallc = nullptr;
  for (backends::Tactic const& t : cuda::CudaTactics::instance().all())
    if (t.name == kSmallC) smallc = &t;
  ASSERT_NE(smallc, nullptr);
  backends::Tactic const* tactic = lt;
  auto check = [&](std::vector<int64_t> const& x, std::vector<int64_t> const& w, DataType t,
                   std::function<void(ir::Attributes&)> const& edit, TensorFormat f, DataType biasType) {
    ir::Graph g;
    ir::Value* xv = *g.addInput("x", t, makeDims(x));
    ir::Value* wv = g.addConstant("w", *HostTensor::allocate(t, makeDims(w), "w"))->output(0);
    ir::Value* bv = g.addConstant("b", *HostTensor::allocate(biasType, makeDims({w[0]}), "b"))->output(0);
    ir::Node* conv = g.addNode(ir::OpType::kConvolution, "pw", {xv, wv, bv}, 1);
    conv->attrs.setInt("num_output_maps", w[0]);
    conv->attrs.setInts("kernel_shape", std::vector<int64_t>(w.begin() + 2, w.end()));
    edit(conv->attrs);
    g.markOutput(conv->output(0));
    ir::HostEvaluator eval = backends::referenceEvaluator();
    Status s = ir::inferGraphInPlace(g, &eval);
    EXPECT_TRUE(s.isOk()) << s.toString();
    conv->attrs.setInt("format", static_cast<int64_t>(f));
    std::vector<ir::TensorInfo> in, out{{conv->output(0)->dtype, conv->output(0)->shape}};
    for (ir::Value* v : conv->inputs) in.push_back({v->dtype, v->shape});
    bool ok = tactic->supports(*conv, in, out);
    auto k = tactic->create(*conv);
    if (ok) {
      EXPECT_TRUE(k.isOk()) << k.status().toString();
    }
    return ok;
  };
  auto none = [](ir::Attributes&) {};
  TensorFormat const hwc = TensorFormat::kHWC, lin = TensorFormat::kLINEAR;
  struct Layer {
    int64_t hw, c, k;
  };
  std::vector<Layer> const layers{{112, 16, 96}, {56, 24, 144},  {56, 144, 24}, {28, 192, 32}, {14, 384, 64},
                                  {7, 960, 320}, {7, 320, 1280}, {56, 64, 256}, {56, 256, 64}, {7, 2048, 512}};
  for (DataType t : kFloats)
    for (int64_t n : {int64_t{1}, int64_t{256}})
      for (Layer const& l : layers) {
        SCOPED_TRACE(strCat(dataTypeName(t), " n ", n, " ", l.hw, " ", l.c, "->", l.k));
        for (TensorFormat f : {hwc, lin}) EXPECT_TRUE(check({n, l.c, l.hw, l.hw}, {l.k, l.c, 1, 1}, t, none, f, t));
        // The tensor-core kernel: channels-last fp16/bf16 only.
        tactic = wmma;
        EXPECT_EQ(check({n, l.c, l.hw, l.hw}, {l.k, l.c, 1, 1}, t, none, hwc, t), t != DataType::kFLOAT);
        EXPECT_FALSE(check({n, l.c, l.hw, l.hw}, {l.k, l.c, 1, 1}, t, none, lin, t));
        // The small-channel kernel: channels-last, at most 384 input channels, weights within its shared memory.
        tactic = smallc;
        EXPECT_EQ(check({n, l.c, l.hw, l.hw}, {l.k, l.c, 1, 1}, t, none, hwc, t),
                  l.c <= 384 && cuda::smallPointwiseFits(static_cast<int32_t>(t), l.c, l.k));
        EXPECT_FALSE(check({n, l.c, l.hw, l.hw}, {l.k, l.c, 1, 1}, t, none, lin, t));
        tactic = lt;
      }
  tactic = wmma;
  EXPECT_FALSE(check({2, 12, 5, 5}, {16, 12, 1, 1}, DataType::kHALF, none, hwc, DataType::kHALF)) << "C % 8";
  EXPECT_FALSE(check({2, 16, 5, 5}, {20, 16, 1, 1}, DataType::kHALF, none, hwc, DataType::kHALF)) << "K % 8";
  EXPECT_FALSE(check(
      {2, 16, 5, 5}, {16, 16, 1, 1}, DataType::kHALF,
      [](ir::Attributes& a) {
        a.setInts("strides", {2, 2});
      },
      hwc, DataType::kHALF))
      << "stride";
  tactic = smallc;
  EXPECT_TRUE(check({2, 16, 112, 112}, {96, 16, 1, 1}, DataType::kHALF, none, hwc, DataType::kHALF));
  EXPECT_TRUE(check({2, 3, 5, 5}, {5, 3, 1, 1}, DataType::kFLOAT, none, hwc, DataType::kFLOAT)) << "odd channels";
  EXPECT_FALSE(check(
      {2, 16, 5, 5}, {96, 16, 1, 1}, DataType::kFLOAT, [](ir::Attributes& a) { a.setInt("allow_tf32", 1); }, hwc,
      DataType::kFLOAT))
      << "TF32 allowed: cuBLASLt's";
  EXPECT_FALSE(check({2, 512, 5, 5}, {64, 512, 1, 1}, DataType::kHALF, none, hwc, DataType::kHALF)) << "C > 384";
  EXPECT_FALSE(check(
      {2, 16, 5, 5}, {16, 16, 1, 1}, DataType::kHALF,
      [](ir::Attributes& a) {
        a.setInts("strides", {2, 2});
      },
      hwc, DataType::kHALF))
      << "stride";
  tactic = lt;
  DataType const h = DataType::kHALF;
  std::vector<int64_t> const x{2, 16, 9, 9}, w1{32, 16, 1, 1};
  EXPECT_TRUE(check({2, 16, 9}, {32, 16, 1}, h, none, lin, h));  // 1-D row-major
  EXPECT_FALSE(check({2, 16, 9}, {32, 16, 1}, h, none, hwc, h)) << "channels-last is 2-D only";
  EXPECT_FALSE(check(x, w1, h, none, TensorFormat::kHWC8, h)) << "other layouts";
  EXPECT_FALSE(check(
      x, w1, h,
      [](ir::Attributes& a) {
        a.setInts("strides", {2, 2});
      },
      hwc, h))
      << "stride";
  EXPECT_FALSE(check(
      x, w1, h,
      [](ir::Attributes& a) {
        a.setInts("pads_begin", {1, 0});
      },
      hwc, h))
      << "padding";
  EXPECT_FALSE(check(
      x, w1, h,
      [](ir::Attributes& a) {
        a.setInts("dilations", {1, 2});
      },
      hwc, h))
      << "dilation";
  EXPECT_FALSE(check(
      x, {32, 8, 1, 1}, h, [](ir::Attributes& a) { a.setInt("groups", 2); }, hwc, h))
      << "groups";
  EXPECT_FALSE(check(x, {32, 16, 3, 3}, h, none, hwc, h)) << "3x3";
  EXPECT_FALSE(check(x, w1, h, none, hwc, DataType::kFLOAT)) << "mixed types";
  EXPECT_FALSE(check(x, w1, DataType::kINT8, none, lin, DataType::kINT8)) << "int8";
  EXPECT_TRUE(check(
      x, w1, h, [](ir::Attributes& a) { a.setInt("padding_mode", static_cast<int64_t>(PaddingMode::kSAME_UPPER)); },
      hwc, h))
      << "SAME pads nothing at 1x1";
}

// Device time of every CUDA tactic taking MobileNetV2's and ResNet-50's pointwise layers at batch 256, fp16
// channels-last (the median of 20 event-timed runs after a warm-up), beside the bytes each layer must move.
// Prints only: the builder's timing decides, per shape.
TEST(CudaConvPointwise, TimesAtBatch256) {
  KILN_REQUIRE_GPU();
  struct Case {
    char const* name;
    int64_t hw, c, k;
    bool residual;
    int64_t act;
  };
  std::vector<Case> const cases{
      {"mobilenetv2 features.2 expand 16->96 112x112 relu6", 112, 16, 96, false,
       static_cast<int64_t>(ActivationType::kCLIP)},
      {"mobilenetv2 features.3 expand 24->144 56x56 relu6", 56, 24, 144, false,
       static_cast<int64_t>(ActivationType::kCLIP)},
      {"mobilenetv2 features.5 expand 32->192 28x28 relu6", 28, 32, 192, false,
       static_cast<int64_t>(ActivationType::kCLIP)},
      {"mobilenetv2 features.8 expand 64->384 14x14 relu6", 14, 64, 384, false,
       static_cast<int64_t>(ActivationType::kCLIP)},
      {"mobilenetv2 features.3 project 144->24 56x56 +residual", 56, 144, 24, true, -1},
      {"mobilenetv2 features.2 project 96->24 56x56", 56, 96, 24, false, -1},
      {"mobilenetv2 features.4 project 144->32 28x28", 28, 144, 32, false, -1},
      {"resnet50 layer1 expand 64->256 56x56 +residual relu", 56, 64, 256, true,
       static_cast<int64_t>(ActivationType::kRELU)},
  };
  DataType const t = DataType::kHALF;
  int64_t const n = 256;
  for (Case const& c : cases) {
    ir::Graph g;
    ir::Value* x = *g.addInput("x", t, makeDims({n, c.c, c.hw, c.hw}));
    ir::Value* w = g.addConstant("w", *HostTensor::allocate(t, makeDims({c.k, c.c, 1, 1}), "w"))->output(0);
    ir::Value* b = g.addConstant("b", *HostTensor::allocate(t, makeDims({c.k}), "b"))->output(0);
    std::vector<ir::Value*> ins{x, w, b};
    if (c.residual) ins.push_back(*g.addInput("r", t, makeDims({n, c.k, c.hw, c.hw})));
    ir::Node* conv = g.addNode(ir::OpType::kConvolution, "pw", ins, 1);
    conv->attrs.setInt("num_output_maps", c.k);
    conv->attrs.setInts("kernel_shape", {1, 1});
    conv->attrs.setInt("activation", c.act);
    conv->attrs.setFloat("act_beta", 6.0);
    g.markOutput(conv->output(0));
    ir::HostEvaluator eval = backends::referenceEvaluator();
    ASSERT_TRUE(ir::inferGraphInPlace(g, &eval).isOk());
    conv->attrs.setInt("format", static_cast<int64_t>(TensorFormat::kHWC));
    std::vector<ir::TensorInfo> in, out{{t, conv->output(0)->shape}};
    for (ir::Value* v : conv->inputs) in.push_back({v->dtype, v->shape});
    int64_t xBytes = n * c.c * c.hw * c.hw * 2, yBytes = n * c.k * c.hw * c.hw * 2;
    double moved = static_cast<double>(xBytes + yBytes * (c.residual ? 2 : 1));
    std::printf("[ bench ] %s, batch %lld fp16 channels-last: %.0f MB to move\n", c.name, static_cast<long long>(n),
                moved / 1e6);
    printTacticTimes(*conv, in, out, moved);
  }
}

}  // namespace
}  // namespace kiln
