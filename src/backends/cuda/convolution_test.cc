// gpu tests of the CUDA Convolution tactics (direct kernel and every cuDNN algorithm) against the reference:
// 1-D/2-D/3-D, strides, dilations, groups, depthwise, asymmetric pads, every padding mode, 1x1, bias + residual
// + each activation, fp32 / fp16 / bf16 and TF32.
#include "backends/cuda/cuda_test_util.h"
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

void run(Conv const& c, DataType t, uint32_t seed = 1, bool constWeights = true, bool hwc = false, size_t minTactics = 0) {
  SCOPED_TRACE(std::string("dtype ") + dataTypeName(t));
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
  HostTensor w = randomTensor(t, c.w, seed + 1, -0.5, 0.5);
  std::vector<In> ins{var(randomTensor(t, c.x, seed)), constWeights ? cst(w) : var(w)};
  if (c.bias)
    ins.push_back(cst(randomTensor(t, {c.w[0]}, seed + 2)));
  else if (c.residual)
    ins.push_back(none());
  if (c.residual) ins.push_back(var(randomTensor(t, outShape(c), seed + 3)));
  // The direct kernel, then the exact cuDNN algorithms (and FFT / Winograd for fp16, bf16, TF32).
  // Channels-last: the implicit-GEMM algorithms (and the fused call where it applies) only.
  expectMatchesReference({ir::OpType::kConvolution, a, ins, 1, hwc}, c.tf32 ? kTf32Tolerance : -1,
                         minTactics ? minTactics : hwc ? 2 : 4);
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
    run({{2, 32, 7, 5}, {16, 32, 1, 1}}, t, 12, true, true);                        // 1x1 (cuBLASLt too)
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

}  // namespace
}  // namespace kiln
