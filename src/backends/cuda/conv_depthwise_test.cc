// gpu tests of the channels-last depthwise convolution tactics (convolution_cuda_depthwise_hwc, its vectorized form,
// conv_depthwise.cu, its shared-memory-tiled form, conv_depthwise_tiled.cu, and its pipelined 3x3 form,
// conv_depthwise_pipe.cu) against the reference: channel counts
// around the vector width, 1 to 112 pixels wide, 3x3 / 5x5 / other kernels, strides, dilation, asymmetric pads, bias,
// residual, activations, each kernel variant of the vectorized launcher forced in turn; the launchers' refusals, the
// in-place residual, and that they are candidates for MobileNetV2's and EfficientNet-B0's depthwise layers.
#include <algorithm>
#include <functional>

#include "backends/cuda/conv_kernels.h"
#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/tactic_timing_test_util.h"
#include "ir/infer/window_util.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

constexpr char const* kVec = "convolution_cuda_depthwise_hwc_vec";
constexpr char const* kScalar = "convolution_cuda_depthwise_hwc";
constexpr char const* kTiled = "convolution_cuda_depthwise_hwc_tiled";
constexpr char const* kPipe = "convolution_cuda_depthwise_hwc_pipe";

struct Dw {
  std::vector<int64_t> x{};  // [n, c, h, w]
  std::vector<int64_t> k{3, 3};
  std::vector<int64_t> strides{1, 1}, dil{1, 1}, pb{1, 1}, pe{1, 1};
  bool bias = true, residual = false;
  ActivationType act = ActivationType::kRELU;
  bool hasAct = true;
  double alpha = 0, beta = 0;
};

std::vector<int64_t> outShape(Dw const& c) {
  std::vector<int64_t> y{c.x[0], c.x[1]};
  for (int i = 0; i < 2; ++i)
    y.push_back(ir::computeWindowDim(c.x[2 + i], c.k[i], c.strides[i], c.dil[i], c.pb[i], c.pe[i],
                                     PaddingMode::kEXPLICIT_ROUND_DOWN)
                    .out);
  return y;
}

NodeSpec nodeOf(Dw const& c, DataType t, uint32_t seed) {
  ir::Attributes a;
  int64_t ch = c.x[1];
  a.setInt("num_output_maps", ch);
  a.setInts("kernel_shape", c.k);
  a.setInts("strides", c.strides);
  a.setInts("dilations", c.dil);
  a.setInts("pads_begin", c.pb);
  a.setInts("pads_end", c.pe);
  a.setInt("padding_mode", static_cast<int64_t>(PaddingMode::kEXPLICIT_ROUND_DOWN));
  a.setInt("groups", ch);
  a.setInt("activation", c.hasAct ? static_cast<int64_t>(c.act) : -1);
  a.setFloat("act_alpha", c.alpha);
  a.setFloat("act_beta", c.beta);
  std::vector<In> ins{var(randomTensor(t, c.x, seed)),
                      cst(randomTensor(t, {ch, 1, c.k[0], c.k[1]}, seed + 1, -0.5, 0.5))};
  if (c.bias)
    ins.push_back(cst(randomTensor(t, {ch}, seed + 2)));
  else if (c.residual)
    ins.push_back(none());
  if (c.residual) ins.push_back(var(randomTensor(t, outShape(c), seed + 3)));
  return {ir::OpType::kConvolution, a, ins, 1, true};
}

// Runs every CUDA tactic of the channels-last node against the reference; the vectorized and tiled tactics must be
// among them exactly when C is a multiple of their vector width.
void run(Dw const& c, DataType t, uint32_t seed) {
  SCOPED_TRACE(std::string("dtype ") + dataTypeName(t) + ", x [" + std::to_string(c.x[0]) + ", " +
               std::to_string(c.x[1]) + ", " + std::to_string(c.x[2]) + ", " + std::to_string(c.x[3]) + "], kernel " +
               std::to_string(c.k[0]) + "x" + std::to_string(c.k[1]));
  auto results = expectMatchesReference(nodeOf(c, t, seed), -1, 1);
  auto has = [&](char const* name) {
    return std::any_of(results.begin(), results.end(), [&](TacticResult const& r) { return r.tactic == name; });
  };
  int width = cuda::depthwiseHwcVecWidth(static_cast<int32_t>(t));
  EXPECT_TRUE(has(kScalar));
  EXPECT_EQ(has(kVec), c.x[1] % width == 0) << "C = " << c.x[1] << ", vector width " << width;
  EXPECT_EQ(has(kTiled), c.x[1] % width == 0) << "C = " << c.x[1] << ", vector width " << width;
  bool const pipe = c.x[1] % width == 0 && c.k == std::vector<int64_t>{3, 3} && c.strides[0] == c.strides[1] &&
                    (c.strides[0] == 1 || c.strides[0] == 2) && c.dil == std::vector<int64_t>{1, 1};
  EXPECT_EQ(has(kPipe), pipe) << kPipe;
}

// Caps the pipelined launcher's blocks per channel chunk for the scope, so each block loops over many tiles.
class ForcePipeBlocks {
 public:
  explicit ForcePipeBlocks(int blocks) { cuda::setDepthwiseHwcPipeBlocksForTesting(blocks); }
  ~ForcePipeBlocks() { cuda::setDepthwiseHwcPipeBlocksForTesting(0); }
  ForcePipeBlocks(ForcePipeBlocks const&) = delete;
  ForcePipeBlocks& operator=(ForcePipeBlocks const&) = delete;
};

// Forces one variant of the vectorized launcher for the scope (0: its own choice).
class ForceVariant {
 public:
  explicit ForceVariant(int mode) { cuda::setDepthwiseHwcVecTileForTesting(mode); }
  ~ForceVariant() { cuda::setDepthwiseHwcVecTileForTesting(0); }
  ForceVariant(ForceVariant const&) = delete;
  ForceVariant& operator=(ForceVariant const&) = delete;
};

std::vector<DataType> const kFloats{DataType::kFLOAT, DataType::kHALF, DataType::kBF16};

Dw relu6(Dw c) {
  c.act = ActivationType::kCLIP;
  c.alpha = 0;
  c.beta = 0.6;  // ReLU6's shape at the scale of these random values
  return c;
}

// The edge shapes, each run with the launcher's own choice, several pixels per thread (4 at stride 1, 2 at stride 2),
// one pixel per thread, and the generic loop.
std::vector<Dw> edgeShapes() {
  std::vector<Dw> v;
  v.push_back({{4, 8, 1, 1}});                          // every tap but the centre in the padding
  v.push_back(relu6({{1, 16, 7, 7}, {3, 3}, {2, 2}}));  // stride 2, odd size
  Dw res = relu6({{4, 24, 14, 14}});
  res.residual = true;
  v.push_back(res);                                         // bias + residual + ReLU6, batch 4
  v.push_back({{1, 32, 15, 15}, {3, 3}, {2, 2}});           // stride 2, a partial last pixel tile
  v.push_back(relu6({{1, 96, 112, 112}, {3, 3}, {2, 2}}));  // MobileNetV2's second depthwise layer
  Dw wide = relu6({{1, 960, 7, 7}});
  wide.residual = true;
  v.push_back(wide);  // 960 channels: several channel chunks per pixel
  v.push_back({{4, 32, 15, 14}, {5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}});  // 5x5, stride 1
  Dw five{{1, 96, 14, 15}, {5, 5}, {2, 2}, {1, 1}, {1, 2}, {2, 1}};
  five.residual = true;
  five.hasAct = false;
  v.push_back(five);                                                              // 5x5, stride 2, asymmetric pads
  v.push_back(relu6({{4, 16, 14, 14}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}}));  // dilation 2
  v.push_back({{1, 24, 15, 7}, {3, 3}, {2, 2}, {1, 1}, {0, 1}, {1, 0}});          // asymmetric pads, stride 2
  Dw odd{{2, 40, 11, 13}, {3, 5}, {2, 1}, {1, 2}, {0, 2}, {1, 1}};
  odd.residual = true;
  odd.bias = false;
  odd.act = ActivationType::kLEAKY_RELU;
  odd.alpha = 0.2;
  v.push_back(odd);                                       // 3x5, mixed strides and dilations: generic only
  v.push_back({{1, 8, 1, 112}});                          // one row, 112 wide
  v.push_back(relu6({{2, 16, 112, 1}, {3, 3}, {2, 2}}));  // one column
  v.push_back({{1, 8, 5, 5}, {5, 5}, {1, 1}, {1, 1}, {0, 0}, {0, 0}});  // the window fills the input
  return v;
}

TEST(CudaDepthwiseHwc, EdgeShapesEveryVariant) {
  KILN_REQUIRE_GPU();
  for (int mode : {0, 4, 1, -1}) {
    SCOPED_TRACE("launcher variant " + std::to_string(mode));
    ForceVariant force(mode);
    uint32_t seed = 1;
    for (Dw const& c : edgeShapes())
      for (DataType t : kFloats) run(c, t, seed += 7);
  }
}

// Channel counts that are not a multiple of the vector: the vectorized tactic is refused (fp16/bf16 12, all 3),
// fp32 takes 12 (three 4-channel vectors); the scalar kernel runs them all.
TEST(CudaDepthwiseHwc, ChannelsNotMultipleOfTheVector) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    run({{2, 3, 9, 8}}, t, 3);
    Dw twelve = relu6({{1, 12, 14, 14}, {3, 3}, {2, 2}});
    twelve.residual = true;
    run(twelve, t, 5);
  }
}

TEST(CudaDepthwiseHwc, Activations) {
  KILN_REQUIRE_GPU();
  struct A {
    ActivationType t;
    double alpha, beta;
  };
  for (A const& a : {A{ActivationType::kSIGMOID, 0, 0}, A{ActivationType::kLEAKY_RELU, 0.1, 0},
                     A{ActivationType::kHARD_SIGMOID, 0.2, 0.5}, A{ActivationType::kGELU_ERF, 0, 0},
                     A{ActivationType::kCLIP, -0.5, 0.5}}) {
    SCOPED_TRACE("activation " + std::to_string(static_cast<int>(a.t)));
    Dw c{{2, 16, 9, 10}};
    c.residual = true;
    c.act = a.t;
    c.alpha = a.alpha;
    c.beta = a.beta;
    for (DataType t : kFloats) run(c, t, 9);
  }
}

// The launcher's refusals (nothing launched: the tactic then runs the scalar kernel), and a residual that is y's
// own memory, against the scalar kernel with the residual apart.
TEST(CudaDepthwiseHwc, LauncherRefusalsAndInPlaceResidual) {
  KILN_REQUIRE_GPU();
  backends::DeviceBackend* dev = device();
  void* stream = *dev->createStream();
  cuda::ConvGeom g;
  g.n = 2;
  g.c = g.k = g.groups = 16;
  g.in[1] = 9;
  g.in[2] = 11;
  g.out[1] = 9;
  g.out[2] = 11;
  g.kernel[1] = g.kernel[2] = 3;
  g.padBegin[1] = g.padBegin[2] = 1;
  int64_t const count = g.n * g.c * 9 * 11;
  size_t const bytes = static_cast<size_t>(count) * sizeof(float);
  HostTensor hx = randomTensor(DataType::kFLOAT, {count}, 21), hw = randomTensor(DataType::kFLOAT, {16 * 9}, 22);
  HostTensor hb = randomTensor(DataType::kFLOAT, {16}, 23), hr = randomTensor(DataType::kFLOAT, {count}, 24);
  auto up = [&](HostTensor const& h, size_t extra) {
    auto b = backends::DeviceBuffer::allocate(dev, h.bytes() + extra, "test buffer");
    EXPECT_TRUE(b.isOk());
    EXPECT_TRUE(dev->copy(b->data(), h.data(), h.bytes(), backends::CopyKind::kHostToDevice, stream).isOk());
    return std::move(*b);
  };
  backends::DeviceBuffer x = up(hx, 16), w = up(hw, 0), bias = up(hb, 16), res = up(hr, 0), inPlace = up(hr, 0);
  auto y = backends::DeviceBuffer::allocate(dev, bytes + 16, "test output");
  ASSERT_TRUE(y.isOk());
  auto cs = static_cast<cudaStream_t>(stream);
  cuda::Epilogue ep;
  ep.bias = bias.data();
  int32_t const f32 = static_cast<int32_t>(DataType::kFLOAT);
  auto* xb = static_cast<char*>(x.data());
  EXPECT_FALSE(cuda::launchDepthwiseHwcVec(f32, g, xb + 4, w.data(), ep, y->data(), cs)) << "x misaligned";
  EXPECT_FALSE(cuda::launchDepthwiseHwcVec(f32, g, xb, w.data(), ep, static_cast<char*>(y->data()) + 8, cs))
      << "y misaligned";
  cuda::Epilogue badBias = ep;
  badBias.bias = static_cast<char*>(bias.data()) + 4;
  EXPECT_FALSE(cuda::launchDepthwiseHwcVec(f32, g, xb, w.data(), badBias, y->data(), cs)) << "bias misaligned";
  EXPECT_FALSE(cuda::launchDepthwiseHwcVec(static_cast<int32_t>(DataType::kINT32), g, xb, w.data(), ep, y->data(), cs));
  cuda::ConvGeom odd = g;
  odd.c = odd.k = odd.groups = 6;  // not whole 4-channel vectors
  EXPECT_FALSE(cuda::launchDepthwiseHwcVec(f32, odd, xb, w.data(), ep, y->data(), cs));
  cuda::ConvGeom dense = g;
  dense.k = 32;  // not depthwise
  EXPECT_FALSE(cuda::launchDepthwiseHwcVec(f32, dense, xb, w.data(), ep, y->data(), cs));

  // The reference result: the scalar kernel, residual apart; then the vectorized one with y holding the residual.
  ep.residual = res.data();
  ep.activation = static_cast<int32_t>(ActivationType::kRELU);
  ASSERT_TRUE(cuda::launchDepthwiseHwc(f32, g, xb, w.data(), ep, y->data(), cs));
  ASSERT_TRUE(cuda::launchStatus("scalar depthwise").isOk());
  ep.residual = inPlace.data();
  ASSERT_TRUE(cuda::launchDepthwiseHwcVec(f32, g, xb, w.data(), ep, inPlace.data(), cs));
  ASSERT_TRUE(cuda::launchStatus("vectorized depthwise").isOk());
  HostTensor want = *HostTensor::allocate(DataType::kFLOAT, makeDims({count}), "want");
  HostTensor got = *HostTensor::allocate(DataType::kFLOAT, makeDims({count}), "got");
  ASSERT_TRUE(dev->copy(want.mutableData(), y->data(), bytes, backends::CopyKind::kDeviceToHost, stream).isOk());
  ASSERT_TRUE(dev->copy(got.mutableData(), inPlace.data(), bytes, backends::CopyKind::kDeviceToHost, stream).isOk());
  ASSERT_TRUE(dev->synchronize(stream).isOk());
  EXPECT_LE(normRelativeError(got, want), 1e-6);
  dev->destroyStream(stream);
}

// The tiled launcher's refusals (the tactic then runs the vectorized kernel), its window past the shared memory,
// and a residual that is y's own memory, against the scalar kernel with the residual apart; 9x11 pixels are two
// partial 8x8 tiles per dimension.
TEST(CudaDepthwiseHwc, TiledLauncherRefusalsAndInPlaceResidual) {
  KILN_REQUIRE_GPU();
  backends::DeviceBackend* dev = device();
  void* stream = *dev->createStream();
  cuda::ConvGeom g;
  g.n = 3;
  g.c = g.k = g.groups = 16;
  g.in[1] = 9;
  g.in[2] = 11;
  g.out[1] = 9;
  g.out[2] = 11;
  g.kernel[1] = g.kernel[2] = 3;
  g.padBegin[1] = g.padBegin[2] = 1;
  int64_t const count = g.n * g.c * 9 * 11;
  size_t const bytes = static_cast<size_t>(count) * sizeof(float);
  HostTensor hx = randomTensor(DataType::kFLOAT, {count}, 31), hw = randomTensor(DataType::kFLOAT, {16 * 9}, 32);
  HostTensor hb = randomTensor(DataType::kFLOAT, {16}, 33), hr = randomTensor(DataType::kFLOAT, {count}, 34);
  auto up = [&](HostTensor const& h, size_t extra) {
    auto b = backends::DeviceBuffer::allocate(dev, h.bytes() + extra, "test buffer");
    EXPECT_TRUE(b.isOk());
    EXPECT_TRUE(dev->copy(b->data(), h.data(), h.bytes(), backends::CopyKind::kHostToDevice, stream).isOk());
    return std::move(*b);
  };
  backends::DeviceBuffer x = up(hx, 16), w = up(hw, 0), bias = up(hb, 16), res = up(hr, 0), inPlace = up(hr, 0);
  auto y = backends::DeviceBuffer::allocate(dev, bytes + 16, "test output");
  ASSERT_TRUE(y.isOk());
  auto cs = static_cast<cudaStream_t>(stream);
  cuda::Epilogue ep;
  ep.bias = bias.data();
  int32_t const f32 = static_cast<int32_t>(DataType::kFLOAT);
  auto* xb = static_cast<char*>(x.data());
  EXPECT_FALSE(cuda::launchDepthwiseHwcTiled(f32, g, xb + 4, w.data(), ep, y->data(), cs)) << "x misaligned";
  EXPECT_FALSE(cuda::launchDepthwiseHwcTiled(f32, g, xb, w.data(), ep, static_cast<char*>(y->data()) + 8, cs))
      << "y misaligned";
  cuda::Epilogue badBias = ep;
  badBias.bias = static_cast<char*>(bias.data()) + 4;
  EXPECT_FALSE(cuda::launchDepthwiseHwcTiled(f32, g, xb, w.data(), badBias, y->data(), cs)) << "bias misaligned";
  EXPECT_FALSE(
      cuda::launchDepthwiseHwcTiled(static_cast<int32_t>(DataType::kINT32), g, xb, w.data(), ep, y->data(), cs));
  cuda::ConvGeom odd = g;
  odd.c = odd.k = odd.groups = 6;  // not whole 4-channel vectors
  EXPECT_FALSE(cuda::launchDepthwiseHwcTiled(f32, odd, xb, w.data(), ep, y->data(), cs));
  cuda::ConvGeom dense = g;
  dense.k = 32;  // not depthwise
  EXPECT_FALSE(cuda::launchDepthwiseHwcTiled(f32, dense, xb, w.data(), ep, y->data(), cs));
  cuda::ConvGeom huge = g;
  huge.dil[1] = huge.dil[2] = 64;  // a window of 136 x 136 vectors: past 48 KiB
  EXPECT_FALSE(cuda::depthwiseHwcTiledFits(f32, huge));
  EXPECT_FALSE(cuda::launchDepthwiseHwcTiled(f32, huge, xb, w.data(), ep, y->data(), cs));
  EXPECT_TRUE(cuda::depthwiseHwcTiledFits(f32, g));

  ep.residual = res.data();
  ep.activation = static_cast<int32_t>(ActivationType::kRELU);
  ASSERT_TRUE(cuda::launchDepthwiseHwc(f32, g, xb, w.data(), ep, y->data(), cs));
  ASSERT_TRUE(cuda::launchStatus("scalar depthwise").isOk());
  ep.residual = inPlace.data();
  ASSERT_TRUE(cuda::launchDepthwiseHwcTiled(f32, g, xb, w.data(), ep, inPlace.data(), cs));
  ASSERT_TRUE(cuda::launchStatus("tiled depthwise").isOk());
  HostTensor want = *HostTensor::allocate(DataType::kFLOAT, makeDims({count}), "want");
  HostTensor got = *HostTensor::allocate(DataType::kFLOAT, makeDims({count}), "got");
  ASSERT_TRUE(dev->copy(want.mutableData(), y->data(), bytes, backends::CopyKind::kDeviceToHost, stream).isOk());
  ASSERT_TRUE(dev->copy(got.mutableData(), inPlace.data(), bytes, backends::CopyKind::kDeviceToHost, stream).isOk());
  ASSERT_TRUE(dev->synchronize(stream).isOk());
  EXPECT_LE(normRelativeError(got, want), 1e-6);
  dev->destroyStream(stream);
}

// MobileNetV2's stride-1 layers at full resolution, several images and channel chunks of 1, 2 and 4 vectors (fp16:
// 144 channels are 18 vectors, chunks of 2; 32 are 4, one chunk of 4; 24 are 3, chunks of 1).
TEST(CudaDepthwiseHwc, TiledMobileNetV2Shapes) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    run(relu6({{2, 32, 112, 112}}), t, 41);
    run(relu6({{3, 144, 56, 56}}), t, 42);
    Dw r = relu6({{2, 24, 28, 30}, {3, 3}, {2, 2}});
    r.residual = true;
    run(r, t, 43);
  }
}

// The pipelined launcher's refusals (the tactic then runs the vectorized kernel): types, alignment, channels, and
// every geometry but 3x3 at equal strides 1 or 2 without dilation; then fp16 with a residual that is y's own memory,
// one block per chunk (every tile through the two window buffers in turn), against the scalar kernel with the
// residual apart. 9x21 pixels are partial 8x16 tiles in both dimensions.
TEST(CudaDepthwiseHwc, PipeLauncherRefusalsAndInPlaceResidual) {
  KILN_REQUIRE_GPU();
  backends::DeviceBackend* dev = device();
  void* stream = *dev->createStream();
  auto cs = static_cast<cudaStream_t>(stream);
  for (int64_t stride : {1, 2}) {
    SCOPED_TRACE(strCat("stride ", stride));
    cuda::ConvGeom g;
    g.n = 3;
    g.c = g.k = g.groups = 24;
    g.in[1] = 9 * stride;
    g.in[2] = 21 * stride;
    g.out[1] = 9;
    g.out[2] = 21;
    g.kernel[1] = g.kernel[2] = 3;
    g.stride[1] = g.stride[2] = stride;
    g.padBegin[1] = g.padBegin[2] = 1;
    int64_t const inCount = g.n * g.c * g.in[1] * g.in[2], count = g.n * g.c * 9 * 21;
    DataType const t = DataType::kHALF;
    size_t const bytes = static_cast<size_t>(count) * 2;
    HostTensor hx = randomTensor(t, {inCount}, 51), hw = randomTensor(t, {24 * 9}, 52, -0.5, 0.5);
    HostTensor hb = randomTensor(t, {24}, 53), hr = randomTensor(t, {count}, 54);
    auto up = [&](HostTensor const& h, size_t extra) {
      auto b = backends::DeviceBuffer::allocate(dev, h.bytes() + extra, "test buffer");
      EXPECT_TRUE(b.isOk());
      EXPECT_TRUE(dev->copy(b->data(), h.data(), h.bytes(), backends::CopyKind::kHostToDevice, stream).isOk());
      return std::move(*b);
    };
    backends::DeviceBuffer x = up(hx, 16), w = up(hw, 0), bias = up(hb, 16), res = up(hr, 0), inPlace = up(hr, 0);
    auto y = backends::DeviceBuffer::allocate(dev, bytes + 16, "test output");
    ASSERT_TRUE(y.isOk());
    cuda::Epilogue ep;
    ep.bias = bias.data();
    int32_t const f16 = static_cast<int32_t>(t);
    auto* xb = static_cast<char*>(x.data());
    EXPECT_FALSE(cuda::launchDepthwiseHwcPipe(f16, g, xb + 2, w.data(), ep, y->data(), cs)) << "x misaligned";
    EXPECT_FALSE(cuda::launchDepthwiseHwcPipe(f16, g, xb, w.data(), ep, static_cast<char*>(y->data()) + 8, cs))
        << "y misaligned";
    cuda::Epilogue badBias = ep;
    badBias.bias = static_cast<char*>(bias.data()) + 2;
    EXPECT_FALSE(cuda::launchDepthwiseHwcPipe(f16, g, xb, w.data(), badBias, y->data(), cs)) << "bias misaligned";
    EXPECT_FALSE(
        cuda::launchDepthwiseHwcPipe(static_cast<int32_t>(DataType::kINT32), g, xb, w.data(), ep, y->data(), cs));
    cuda::ConvGeom odd = g;
    odd.c = odd.k = odd.groups = 12;  // not whole 8-channel vectors
    EXPECT_FALSE(cuda::launchDepthwiseHwcPipe(f16, odd, xb, w.data(), ep, y->data(), cs));
    cuda::ConvGeom dense = g;
    dense.k = 48;  // not depthwise
    EXPECT_FALSE(cuda::launchDepthwiseHwcPipe(f16, dense, xb, w.data(), ep, y->data(), cs));
    auto refused = [&](char const* what, std::function<void(cuda::ConvGeom&)> const& edit) {
      cuda::ConvGeom o = g;
      edit(o);
      EXPECT_FALSE(cuda::depthwiseHwcPipeFits(f16, o)) << what;
      EXPECT_FALSE(cuda::launchDepthwiseHwcPipe(f16, o, xb, w.data(), ep, y->data(), cs)) << what;
    };
    refused("5x5", [](cuda::ConvGeom& o) { o.kernel[1] = o.kernel[2] = 5; });
    refused("3x1", [](cuda::ConvGeom& o) { o.kernel[2] = 1; });
    refused("stride 3", [](cuda::ConvGeom& o) { o.stride[1] = o.stride[2] = 3; });
    refused("mixed strides", [](cuda::ConvGeom& o) { o.stride[2] = o.stride[1] == 1 ? 2 : 1; });
    refused("dilation", [](cuda::ConvGeom& o) { o.dil[1] = 2; });
    EXPECT_TRUE(cuda::depthwiseHwcPipeFits(f16, g));
    EXPECT_TRUE(cuda::depthwiseHwcPipeFits(static_cast<int32_t>(DataType::kFLOAT), g));

    ep.residual = res.data();
    ep.activation = static_cast<int32_t>(ActivationType::kCLIP);
    ep.beta = 0.6f;
    ASSERT_TRUE(cuda::launchDepthwiseHwc(f16, g, xb, w.data(), ep, y->data(), cs));
    ASSERT_TRUE(cuda::launchStatus("scalar depthwise").isOk());
    ep.residual = inPlace.data();
    {
      ForcePipeBlocks one(1);
      ASSERT_TRUE(cuda::launchDepthwiseHwcPipe(f16, g, xb, w.data(), ep, inPlace.data(), cs));
    }
    ASSERT_TRUE(cuda::launchStatus("pipelined depthwise").isOk());
    HostTensor want = *HostTensor::allocate(t, makeDims({count}), "want");
    HostTensor got = *HostTensor::allocate(t, makeDims({count}), "got");
    ASSERT_TRUE(dev->copy(want.mutableData(), y->data(), bytes, backends::CopyKind::kDeviceToHost, stream).isOk());
    ASSERT_TRUE(dev->copy(got.mutableData(), inPlace.data(), bytes, backends::CopyKind::kDeviceToHost, stream).isOk());
    ASSERT_TRUE(dev->synchronize(stream).isOk());
    // fp32 sums in another order than the scalar kernel's: at most a rounding step of fp16 apart.
    EXPECT_LE(normRelativeError(got, want), 1e-3);
  }
  dev->destroyStream(stream);
}

// The pipelined kernel on MobileNetV2's 3x3 layers (stride 1 and 2, channel chunks of 4, 2 and 1 vectors: fp16 32,
// 144 and 24 channels), odd sizes, residual, every dtype; with the occupancy-sized grid and with 1 and 3 blocks per
// chunk (many tiles per block: the double buffer reused throughout).
TEST(CudaDepthwiseHwc, PipeMobileNetV2Shapes) {
  KILN_REQUIRE_GPU();
  for (int blocks : {0, 1, 3}) {
    SCOPED_TRACE(strCat("blocks per chunk ", blocks));
    ForcePipeBlocks force(blocks);
    uint32_t seed = 60;
    for (DataType t : kFloats) {
      run(relu6({{2, 32, 112, 112}}), t, seed++);
      run(relu6({{2, 96, 112, 112}, {3, 3}, {2, 2}}), t, seed++);
      Dw r = relu6({{3, 144, 29, 31}});
      r.residual = true;
      run(r, t, seed++);
      Dw s2 = relu6({{2, 24, 27, 33}, {3, 3}, {2, 2}});
      s2.residual = true;
      s2.bias = false;
      run(s2, t, seed++);
      Dw asym{{1, 16, 17, 18}, {3, 3}, {2, 2}, {1, 1}, {0, 1}, {1, 0}};
      asym.hasAct = false;
      run(asym, t, seed++);            // asymmetric pads
      run({{2, 8, 1, 1}}, t, seed++);  // every tap but the centre in the padding
    }
  }
}

// MobileNetV2's seventeen depthwise layers (ten distinct shapes, 3x3) and EfficientNet-B0's 5x5 ones, fp16/bf16/fp32
// channels-last at batch 1 and 256: the vectorized and tiled tactics must be candidates for each, the pipelined one
// for the 3x3 ones (no device needed).
TEST(CudaDepthwiseHwc, CandidateForMobileNetV2AndEfficientNet) {
  struct Layer {
    int64_t hw, c, k, s;
  };
  std::vector<Layer> const layers{{112, 32, 3, 1}, {112, 96, 3, 2}, {56, 144, 3, 1}, {56, 144, 3, 2}, {28, 192, 3, 1},
                                  {28, 192, 3, 2}, {14, 384, 3, 1}, {14, 576, 3, 1}, {14, 576, 3, 2}, {7, 960, 3, 1},
                                  {56, 144, 5, 2}, {28, 240, 5, 1}, {14, 480, 5, 1}, {14, 672, 5, 2}, {7, 1152, 5, 1}};
  backends::Tactic const* vec = nullptr;
  backends::Tactic const* tiled = nullptr;
  backends::Tactic const* pipe = nullptr;
  for (backends::Tactic const& t : cuda::CudaTactics::instance().all()) {
    if (t.name == kVec) vec = &t;
    if (t.name == kTiled) tiled = &t;
    if (t.name == kPipe) pipe = &t;
  }
  ASSERT_NE(vec, nullptr);
  ASSERT_NE(tiled, nullptr);
  ASSERT_NE(pipe, nullptr);
  for (DataType t : kFloats)
    for (int64_t n : {int64_t{1}, int64_t{256}})
      for (Layer const& l : layers) {
        SCOPED_TRACE(strCat(dataTypeName(t), " n ", n, " ", l.hw, "x", l.hw, "x", l.c, " k", l.k, " s", l.s));
        ir::Graph g;
        ir::Value* x = *g.addInput("x", t, makeDims({n, l.c, l.hw, l.hw}));
        ir::Value* w = g.addConstant("w", *HostTensor::allocate(t, makeDims({l.c, 1, l.k, l.k}), "w"))->output(0);
        ir::Value* b = g.addConstant("b", *HostTensor::allocate(t, makeDims({l.c}), "b"))->output(0);
        ir::Node* conv = g.addNode(ir::OpType::kConvolution, "dw", {x, w, b}, 1);
        conv->attrs.setInt("num_output_maps", l.c);
        conv->attrs.setInts("kernel_shape", {l.k, l.k});
        conv->attrs.setInts("strides", {l.s, l.s});
        conv->attrs.setInts("pads_begin", {l.k / 2, l.k / 2});
        conv->attrs.setInts("pads_end", {l.k / 2, l.k / 2});
        conv->attrs.setInt("groups", l.c);
        conv->attrs.setInt("activation", static_cast<int64_t>(ActivationType::kCLIP));
        conv->attrs.setFloat("act_beta", 6.0);
        g.markOutput(conv->output(0));
        ir::HostEvaluator eval = backends::referenceEvaluator();
        ASSERT_TRUE(ir::inferGraphInPlace(g, &eval).isOk());
        conv->attrs.setInt("format", static_cast<int64_t>(TensorFormat::kHWC));
        std::vector<ir::TensorInfo> in, out{{conv->output(0)->dtype, conv->output(0)->shape}};
        for (ir::Value* v : conv->inputs) in.push_back({v->dtype, v->shape});
        EXPECT_TRUE(vec->supports(*conv, in, out));
        EXPECT_TRUE(tiled->supports(*conv, in, out));
        EXPECT_EQ(pipe->supports(*conv, in, out), l.k == 3) << "the pipelined kernel: 3x3 only";
      }
}

// Device time of every CUDA tactic taking MobileNetV2's depthwise layers at batch 256, fp16 channels-last, with bias
// and ReLU6 (printed, not asserted: the builder's timing decides per shape).
TEST(CudaDepthwiseHwc, TimesAtBatch256) {
  KILN_REQUIRE_GPU();
  struct Layer {
    int64_t hw, c, s;
  };
  DataType const t = DataType::kHALF;
  int64_t const n = 256;
  for (Layer const& l : {Layer{112, 32, 1}, Layer{112, 96, 2}, Layer{56, 144, 1}, Layer{56, 144, 2}, Layer{28, 192, 1},
                         Layer{28, 192, 2}, Layer{14, 576, 1}}) {
    ir::Graph g;
    ir::Value* x = *g.addInput("x", t, makeDims({n, l.c, l.hw, l.hw}));
    ir::Value* w = g.addConstant("w", *HostTensor::allocate(t, makeDims({l.c, 1, 3, 3}), "w"))->output(0);
    ir::Value* b = g.addConstant("b", *HostTensor::allocate(t, makeDims({l.c}), "b"))->output(0);
    ir::Node* conv = g.addNode(ir::OpType::kConvolution, "dw", {x, w, b}, 1);
    conv->attrs.setInt("num_output_maps", l.c);
    conv->attrs.setInts("kernel_shape", {3, 3});
    conv->attrs.setInts("strides", {l.s, l.s});
    conv->attrs.setInts("pads_begin", {1, 1});
    conv->attrs.setInts("pads_end", {1, 1});
    conv->attrs.setInt("groups", l.c);
    conv->attrs.setInt("activation", static_cast<int64_t>(ActivationType::kCLIP));
    conv->attrs.setFloat("act_beta", 6.0);
    g.markOutput(conv->output(0));
    ir::HostEvaluator eval = backends::referenceEvaluator();
    ASSERT_TRUE(ir::inferGraphInPlace(g, &eval).isOk());
    conv->attrs.setInt("format", static_cast<int64_t>(TensorFormat::kHWC));
    std::vector<ir::TensorInfo> in, out{{t, conv->output(0)->shape}};
    for (ir::Value* v : conv->inputs) in.push_back({v->dtype, v->shape});
    double moved = static_cast<double>((volume(in[0].shape) + volume(out[0].shape)) * 2);
    std::printf("[ bench ] depthwise 3x3 %lldx%lldx%lld stride %lld, batch %lld fp16 channels-last: %.0f MB to move\n",
                static_cast<long long>(l.hw), static_cast<long long>(l.hw), static_cast<long long>(l.c),
                static_cast<long long>(l.s), static_cast<long long>(n), moved / 1e6);
    printTacticTimes(*conv, in, out, moved);
  }
}

}  // namespace
}  // namespace kiln
