// gpu tests of the CUDA Convolution tactics (direct kernel, every cuDNN algorithm, the small-window kernel) against
// the reference: 1-D/2-D/3-D, strides, dilations, groups, depthwise, asymmetric pads, every padding mode, 1x1, bias +
// residual + each activation, fp32 / fp16 / bf16 and TF32; the small-window tactic's refusals and its time on
// MobileNetV2's first layer at batch 256.
#include <algorithm>

#include "backends/cuda/conv_kernels.h"
#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/tactic_timing_test_util.h"
#include "ir/infer/window_util.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

struct Conv {
  std::vector<int64_t> x{}, w{};  // x [n, c, in...], w [k, c/groups, kernel...]
  std::vector<int64_t> strides{}, dil{}, pb{}, pe{};
  int64_t groups = 1;
  PaddingMode mode = PaddingMode::kEXPLICIT_ROUND_DOWN;
  bool bias = false, residual = false;
  int64_t act = -1;
  double alpha = 0, beta = 0;
  bool tf32 = false;
};

// y's shape by TensorRT's window formulas (for the residual input).
std::vector<int64_t> outShape(Conv const& c) {
  size_t ns = c.x.size() - 2;
  std::vector<int64_t> y{c.x[0], c.w[0]};
  for (size_t i = 0; i < ns; ++i) {
    auto d =
        ir::computeWindowDim(c.x[2 + i], c.w[2 + i], c.strides.empty() ? 1 : c.strides[i], c.dil.empty() ? 1 : c.dil[i],
                             c.pb.empty() ? 0 : c.pb[i], c.pe.empty() ? 0 : c.pe[i], c.mode);
    y.push_back(d.out);
  }
  return y;
}

constexpr char const* kSmallWindow = "convolution_cuda_smallwindow_hwc";

ir::Attributes attrsOf(Conv const& c) {
  ir::Attributes a;
  size_t ns = c.x.size() - 2;
  a.setInt("num_output_maps", c.w[0]);
  a.setInts("kernel_shape", std::vector<int64_t>(c.w.begin() + 2, c.w.end()));
  if (!c.strides.empty()) a.setInts("strides", c.strides);
  if (!c.dil.empty()) a.setInts("dilations", c.dil);
  if (!c.pb.empty()) a.setInts("pads_begin", c.pb);
  if (!c.pe.empty()) a.setInts("pads_end", c.pe);
  a.setInt("padding_mode", static_cast<int64_t>(c.mode));
  a.setInt("groups", c.groups);
  a.setInt("activation", c.act);
  a.setFloat("act_alpha", c.alpha);
  a.setFloat("act_beta", c.beta);
  if (c.tf32) a.setInt("allow_tf32", 1);
  (void)ns;
  return a;
}

// Runs every CUDA tactic taking the node against the reference; returns what ran.
std::vector<TacticResult> run(Conv const& c, DataType t, uint32_t seed = 1, bool constWeights = true, bool hwc = false,
                              size_t minTactics = 0) {
  SCOPED_TRACE(std::string("dtype ") + dataTypeName(t));
  ir::Attributes a = attrsOf(c);
  HostTensor w = randomTensor(t, c.w, seed + 1, -0.5, 0.5);
  std::vector<In> ins{var(randomTensor(t, c.x, seed)), constWeights ? cst(w) : var(w)};
  if (c.bias)
    ins.push_back(cst(randomTensor(t, {c.w[0]}, seed + 2)));
  else if (c.residual)
    ins.push_back(none());
  if (c.residual) ins.push_back(var(randomTensor(t, outShape(c), seed + 3)));
  // The direct kernel, then the exact cuDNN algorithms (and FFT / Winograd for fp16, bf16, TF32).
  // Channels-last: the implicit-GEMM algorithms (and the fused call where it applies) only.
  size_t const least = minTactics ? minTactics : hwc ? 2 : 4;
  return expectMatchesReference({ir::OpType::kConvolution, a, ins, 1, hwc}, c.tf32 ? kTf32Tolerance : -1, least);
}

bool ran(std::vector<TacticResult> const& results, char const* name) {
  return std::any_of(results.begin(), results.end(), [&](TacticResult const& r) { return r.tactic == name; });
}

std::vector<DataType> const kFloats{DataType::kFLOAT, DataType::kHALF, DataType::kBF16};

TEST(CudaConvolution, ResNet3x3BiasResidualRelu) {
  KILN_REQUIRE_GPU();
  Conv c{{2, 64, 14, 14}, {64, 64, 3, 3}, {}, {}, {1, 1}, {1, 1}};
  c.bias = c.residual = true;
  c.act = static_cast<int64_t>(ActivationType::kRELU);
  for (DataType t : kFloats) run(c, t);
}

TEST(CudaConvolution, ResNetStem7x7Stride2) {
  KILN_REQUIRE_GPU();
  Conv c{{1, 3, 45, 38}, {16, 3, 7, 7}, {2, 2}, {}, {3, 3}, {3, 3}};
  c.bias = true;
  c.act = static_cast<int64_t>(ActivationType::kRELU);
  for (DataType t : kFloats) run(c, t, 7);
}

TEST(CudaConvolution, OneByOne) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    run({{2, 32, 7, 5}, {17, 32, 1, 1}}, t);
    run({{1, 8, 9, 9}, {12, 8, 1, 1}, {2, 2}}, t, 3);  // strided 1x1 (ResNet downsample)
  }
}

TEST(CudaConvolution, OneD) {
  KILN_REQUIRE_GPU();
  Conv c{{2, 4, 17}, {6, 4, 3}, {2}, {2}, {1}, {1}};
  c.bias = true;
  for (DataType t : kFloats) run(c, t);
  run({{1, 3, 11}, {5, 3, 4}, {1}, {}, {2}, {0}}, DataType::kFLOAT);  // asymmetric 1-D
}

TEST(CudaConvolution, ThreeD) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    run({{1, 4, 6, 7, 8}, {5, 4, 3, 3, 3}, {1, 2, 1}, {}, {1, 1, 1}, {1, 1, 1}}, t);
    Conv c{{2, 3, 5, 6, 7}, {4, 3, 2, 3, 2}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1}, {0, 1, 1}};
    c.bias = c.residual = true;
    c.act = static_cast<int64_t>(ActivationType::kLEAKY_RELU);
    c.alpha = 0.1;
    run(c, t, 5);
  }
}

TEST(CudaConvolution, StridesAndDilations) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    run({{2, 5, 13, 11}, {7, 5, 3, 3}, {2, 3}, {2, 1}, {2, 1}, {2, 1}}, t);
    run({{1, 3, 16, 16}, {4, 3, 5, 3}, {1, 1}, {3, 2}, {0, 0}, {0, 0}}, t, 9);
  }
}

TEST(CudaConvolution, GroupsAndDepthwise) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    Conv g{{2, 8, 9, 9}, {12, 4, 3, 3}, {}, {}, {1, 1}, {1, 1}};
    g.groups = 2;
    g.bias = true;
    run(g, t);
    Conv dw{{1, 16, 10, 10}, {16, 1, 3, 3}, {2, 2}, {}, {1, 1}, {1, 1}};
    dw.groups = 16;
    dw.bias = true;
    dw.act = static_cast<int64_t>(ActivationType::kCLIP);
    dw.alpha = 0;
    dw.beta = 0.6;  // ReLU6-like
    run(dw, t, 4);
    Conv mult{{1, 6, 8, 7}, {12, 2, 3, 3}, {1, 2}, {}, {0, 1}, {2, 0}};
    mult.groups = 3;
    run(mult, t, 6);
  }
}

TEST(CudaConvolution, AsymmetricPads) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    run({{1, 3, 10, 9}, {4, 3, 3, 3}, {}, {}, {0, 1}, {2, 0}}, t);
    run({{2, 4, 11, 12}, {6, 4, 4, 2}, {2, 2}, {}, {2, 0}, {1, 3}}, t, 8);
  }
}

TEST(CudaConvolution, PaddingModes) {
  KILN_REQUIRE_GPU();
  for (PaddingMode m : {PaddingMode::kEXPLICIT_ROUND_UP, PaddingMode::kSAME_UPPER, PaddingMode::kSAME_LOWER}) {
    SCOPED_TRACE("padding mode " + std::to_string(static_cast<int>(m)));
    for (DataType t : kFloats) {
      Conv c{{1, 3, 10, 11}, {5, 3, 4, 3}, {3, 2}, {}, {1, 0}, {0, 1}};
      c.mode = m;
      c.bias = true;
      c.residual = true;
      run(c, t);
      Conv d{{2, 2, 9, 8}, {3, 2, 3, 2}, {2, 2}, {2, 1}, {}, {}};
      d.mode = m;
      run(d, t, 3);
    }
  }
}

TEST(CudaConvolution, EveryActivationWithBiasAndResidual) {
  KILN_REQUIRE_GPU();
  struct A {
    ActivationType t;
    double alpha, beta;
  };
  std::vector<A> acts{{ActivationType::kRELU, 0, 0},
                      {ActivationType::kSIGMOID, 0, 0},
                      {ActivationType::kTANH, 0, 0},
                      {ActivationType::kLEAKY_RELU, 0.1, 0},
                      {ActivationType::kELU, 1.0, 0},
                      {ActivationType::kSELU, 1.67, 1.05},
                      {ActivationType::kSOFTSIGN, 0, 0},
                      {ActivationType::kSOFTPLUS, 1.0, 1.0},
                      {ActivationType::kCLIP, -0.5, 0.5},
                      {ActivationType::kHARD_SIGMOID, 0.2, 0.5},
                      {ActivationType::kSCALED_TANH, 1.5, 0.7},
                      {ActivationType::kTHRESHOLDED_RELU, 0.1, 0},
                      {ActivationType::kGELU_ERF, 0, 0},
                      {ActivationType::kGELU_TANH, 0, 0}};
  for (A const& act : acts) {
    SCOPED_TRACE("activation " + std::to_string(static_cast<int>(act.t)));
    for (DataType t : kFloats) {
      Conv c{{2, 6, 9, 8}, {5, 6, 3, 3}, {}, {}, {1, 1}, {1, 1}};
      c.bias = true;
      c.residual = true;
      c.act = static_cast<int64_t>(act.t);
      c.alpha = act.alpha;
      c.beta = act.beta;
      run(c, t, 11);
    }
  }
}

TEST(CudaConvolution, ResidualWithoutBias) {
  KILN_REQUIRE_GPU();
  Conv c{{1, 4, 7, 7}, {4, 4, 3, 3}, {}, {}, {1, 1}, {1, 1}};
  c.residual = true;
  for (DataType t : kFloats) run(c, t);
}

TEST(CudaConvolution, RunTimeWeights) {
  KILN_REQUIRE_GPU();
  Conv c{{1, 4, 9, 9}, {6, 4, 3, 3}, {2, 1}, {}, {1, 1}, {1, 1}};
  c.bias = true;
  for (DataType t : kFloats) run(c, t, 2, false);
}

TEST(CudaConvolution, Tf32) {
  KILN_REQUIRE_GPU();
  Conv c{{2, 32, 12, 12}, {32, 32, 3, 3}, {}, {}, {1, 1}, {1, 1}};
  c.bias = true;
  c.tf32 = true;
  run(c, DataType::kFLOAT);
}

TEST(CudaConvolution, ManyBlocksOddSizes) {
  KILN_REQUIRE_GPU();
  // More outputs than one wave of blocks, sizes off every power of two.
  run({{3, 7, 61, 53}, {9, 7, 3, 3}, {}, {}, {1, 1}, {1, 1}}, DataType::kFLOAT);
  run({{3, 7, 61, 53}, {9, 7, 3, 3}, {}, {}, {1, 1}, {1, 1}}, DataType::kHALF);
}

TEST(CudaConvolution, EmptyBatch) {
  KILN_REQUIRE_GPU();
  run({{0, 3, 5, 5}, {4, 3, 3, 3}}, DataType::kFLOAT);
}

// Channels-last (node format kHWC): x, w, residual and y in NHWC memory, the weights [K, R, S, C/groups].
TEST(CudaConvolution, ChannelsLast) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    Conv r{{2, 16, 9, 11}, {24, 16, 3, 3}, {}, {}, {1, 1}, {1, 1}};
    r.bias = r.residual = true;
    r.act = static_cast<int64_t>(ActivationType::kRELU);
    run(r, t, 11, true, true);
    run({{2, 32, 7, 5}, {16, 32, 1, 1}}, t, 12, true, true);  // 1x1 (cuBLASLt too)
    Conv expand{{2, 16, 9, 7}, {48, 16, 1, 1}};
    expand.bias = true;
    expand.act = static_cast<int64_t>(ActivationType::kCLIP);
    expand.beta = 0.6;  // MobileNetV2's expansion: 1x1 + bias + ReLU6
    run(expand, t, 16, true, true);
    run({{1, 8, 16, 16}, {16, 8, 3, 3}, {2, 2}, {}, {1, 1}, {1, 1}}, t, 13, true, true);  // strided
    Conv stem{{1, 3, 33, 30}, {16, 3, 7, 7}, {2, 2}, {}, {3, 3}, {3, 3}};
    stem.bias = true;
    run(stem, t, 14, true, true);  // three input channels
    Conv dw{{2, 32, 10, 10}, {32, 1, 3, 3}, {1, 1}, {}, {1, 1}, {1, 1}};
    dw.groups = 32;
    dw.bias = true;
    dw.act = static_cast<int64_t>(ActivationType::kCLIP);
    dw.beta = 0.6;  // ReLU6-like, through our epilogue
    run(dw, t, 15, true, true);
    // Depthwise with asymmetric pads and a dilation: only our channels-last depthwise kernel takes it.
    Conv odd{{1, 24, 11, 9}, {24, 1, 3, 5}, {2, 1}, {1, 2}, {0, 2}, {1, 1}};
    odd.groups = 24;
    odd.bias = odd.residual = true;
    odd.act = static_cast<int64_t>(ActivationType::kLEAKY_RELU);
    odd.alpha = 0.2;
    run(odd, t, 17, true, true, 1);
  }
}

// The small-window kernel (channels-last fp16/bf16, c * kh * kw <= 32): MobileNetV2's first layer (3x3/2, 3 -> 32,
// bias, ReLU6), one k-step (9 values) and one block (18, 27, 32), output channels off the 16-byte vector (element
// stores), asymmetric pads, dilation, a residual, compiled and run-time activations; pixel counts off its 32-row
// tiles. Each case must run the tactic (no minimum otherwise: cuDNN may refuse the odd geometries).
TEST(CudaConvolution, SmallWindowChannelsLast) {
  KILN_REQUIRE_GPU();
  Conv stem{{2, 3, 224, 224}, {32, 3, 3, 3}, {2, 2}, {}, {1, 1}, {1, 1}};
  stem.bias = true;
  stem.act = static_cast<int64_t>(ActivationType::kCLIP);
  stem.beta = 0.6;
  Conv k9{{2, 1, 9, 11}, {8, 1, 3, 3}, {}, {}, {1, 1}, {1, 1}};
  k9.residual = true;
  Conv odd{{1, 3, 17, 15}, {13, 3, 3, 3}, {2, 2}, {}, {1, 0}, {0, 1}};
  odd.bias = odd.residual = true;
  odd.act = static_cast<int64_t>(ActivationType::kLEAKY_RELU);
  odd.alpha = 0.2;
  Conv dil{{2, 2, 10, 13}, {24, 2, 3, 3}, {1, 2}, {2, 2}, {2, 1}, {2, 2}};
  dil.bias = true;
  dil.act = static_cast<int64_t>(ActivationType::kSIGMOID);
  Conv k32{{1, 2, 12, 12}, {16, 2, 4, 4}, {1, 1}, {}, {0, 0}, {0, 0}};
  k32.bias = true;
  k32.act = static_cast<int64_t>(ActivationType::kRELU);
  Conv wide{{3, 3, 7, 9}, {72, 3, 3, 3}, {1, 1}, {}, {1, 1}, {1, 1}};  // two output-channel passes (64 + 8)
  wide.bias = wide.residual = true;
  uint32_t seed = 40;
  for (DataType t : {DataType::kHALF, DataType::kBF16})
    for (Conv const* c : {&stem, &k9, &odd, &dil, &k32, &wide}) {
      auto results = run(*c, t, seed++, true, true, 1);
      EXPECT_TRUE(ran(results, kSmallWindow)) << kSmallWindow << " did not run, x " << c->x[1] << "x" << c->x[2] << "x"
                                              << c->x[3] << ", w " << c->w[0] << "x" << c->w[1];
    }
}

// What the small-window tactic takes (no device needed): channels-last fp16/bf16 2-D, one group, a window of 2 to 32
// values; not fp32, row-major, groups, 1x1 (the pointwise tactics') or larger windows.
TEST(CudaConvolution, SmallWindowSupports) {
  backends::Tactic const* tactic = nullptr;
  for (backends::Tactic const& t : cuda::CudaTactics::instance().all())
    if (t.name == kSmallWindow) tactic = &t;
  ASSERT_NE(tactic, nullptr);
  auto supports = [&](Conv const& c, DataType t, TensorFormat f) {
    ir::Graph g;
    ir::Value* xv = *g.addInput("x", t, makeDims(c.x));
    ir::Value* wv = g.addConstant("w", *HostTensor::allocate(t, makeDims(c.w), "w"))->output(0);
    ir::Node* conv = g.addNode(ir::OpType::kConvolution, "conv", {xv, wv}, 1);
    conv->attrs = attrsOf(c);
    g.markOutput(conv->output(0));
    ir::HostEvaluator eval = backends::referenceEvaluator();
    Status st = ir::inferGraphInPlace(g, &eval);
    EXPECT_TRUE(st.isOk()) << st.toString();
    conv->attrs.setInt("format", static_cast<int64_t>(f));
    std::vector<ir::TensorInfo> in, out{{conv->output(0)->dtype, conv->output(0)->shape}};
    for (ir::Value* v : conv->inputs) in.push_back({v->dtype, v->shape});
    bool ok = tactic->supports(*conv, in, out);
    if (ok) {
      auto k = tactic->create(*conv);
      EXPECT_TRUE(k.isOk()) << k.status().toString();
    }
    return ok;
  };
  Conv stem{{256, 3, 224, 224}, {32, 3, 3, 3}, {2, 2}, {}, {1, 1}, {1, 1}};
  TensorFormat const hwc = TensorFormat::kHWC;
  EXPECT_TRUE(supports(stem, DataType::kHALF, hwc));
  EXPECT_TRUE(supports(stem, DataType::kBF16, hwc));
  EXPECT_FALSE(supports(stem, DataType::kFLOAT, hwc)) << "fp32";
  EXPECT_FALSE(supports(stem, DataType::kHALF, TensorFormat::kLINEAR)) << "row-major";
  EXPECT_FALSE(supports({{1, 4, 9, 9}, {8, 4, 3, 3}}, DataType::kHALF, hwc)) << "36 values";
  EXPECT_TRUE(supports({{1, 2, 9, 9}, {8, 2, 4, 4}}, DataType::kHALF, hwc)) << "32 values";
  EXPECT_FALSE(supports({{1, 16, 9, 9}, {8, 16, 1, 1}}, DataType::kHALF, hwc)) << "1x1";
  Conv grouped{{1, 4, 9, 9}, {8, 2, 3, 3}};
  grouped.groups = 2;
  EXPECT_FALSE(supports(grouped, DataType::kHALF, hwc)) << "groups";
  cuda::ConvGeom g;
  g.n = 1;
  g.c = 3;
  g.k = 32;
  g.in[1] = g.in[2] = 9;
  g.out[1] = g.out[2] = 9;
  g.kernel[1] = g.kernel[2] = 3;
  g.padBegin[1] = g.padBegin[2] = 1;
  int32_t const f16 = static_cast<int32_t>(DataType::kHALF);
  EXPECT_TRUE(cuda::smallWindowConvFits(f16, g));
  EXPECT_FALSE(cuda::smallWindowConvFits(static_cast<int32_t>(DataType::kFLOAT), g));
  cuda::ConvGeom grp = g;
  grp.groups = 3;
  EXPECT_FALSE(cuda::smallWindowConvFits(f16, grp));
  EXPECT_FALSE(cuda::launchSmallWindowConv(f16, grp, nullptr, nullptr, cuda::Epilogue{}, nullptr, nullptr));
}

// Device time of every CUDA tactic taking MobileNetV2's first layer (3x3/2, 3 -> 32 channels, bias, ReLU6) at batch
// 256, fp16 channels-last (printed, not asserted: the builder's timing decides).
TEST(CudaConvolution, TimesMobileNetV2StemAtBatch256) {
  KILN_REQUIRE_GPU();
  DataType const t = DataType::kHALF;
  Conv stem{{256, 3, 224, 224}, {32, 3, 3, 3}, {2, 2}, {}, {1, 1}, {1, 1}};
  ir::Graph g;
  ir::Value* x = *g.addInput("x", t, makeDims(stem.x));
  ir::Value* w = g.addConstant("w", *HostTensor::allocate(t, makeDims(stem.w), "w"))->output(0);
  ir::Value* b = g.addConstant("b", *HostTensor::allocate(t, makeDims({32}), "b"))->output(0);
  ir::Node* conv = g.addNode(ir::OpType::kConvolution, "stem", {x, w, b}, 1);
  stem.act = static_cast<int64_t>(ActivationType::kCLIP);
  stem.beta = 6.0;
  conv->attrs = attrsOf(stem);
  g.markOutput(conv->output(0));
  ir::HostEvaluator eval = backends::referenceEvaluator();
  ASSERT_TRUE(ir::inferGraphInPlace(g, &eval).isOk());
  conv->attrs.setInt("format", static_cast<int64_t>(TensorFormat::kHWC));
  std::vector<ir::TensorInfo> in, out{{t, conv->output(0)->shape}};
  for (ir::Value* v : conv->inputs) in.push_back({v->dtype, v->shape});
  double moved = static_cast<double>((volume(in[0].shape) + volume(out[0].shape)) * 2);
  std::printf(
      "[ bench ] mobilenetv2 features.0 3x3/2 3->32 224x224 relu6, batch 256 fp16 channels-last: %.0f MB to "
      "move\n",
      moved / 1e6);
  printTacticTimes(*conv, in, out, moved);
}

}  // namespace
}  // namespace kiln
