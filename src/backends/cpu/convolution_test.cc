// convolution_onednn_direct against the reference convolution over edge shapes: 1x1, 7x7/s2, depthwise, groups,
// dilation, asymmetric pads, every padding mode, odd sizes, batch > 1, 3-D, fused bias/residual/activations; and
// convolution_onednn_winograd_4x3 / _2x3 (3x3 stride 1) likewise over the shapes it takes, and what it refuses.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "backends/cpu/cpu_test_util.h"
#include "backends/cpu/onednn_util.h"

namespace kiln {
namespace {

using namespace cputest;  // NOLINT: test helpers
using V = std::vector<int64_t>;

constexpr char kTactic[] = "convolution_onednn_direct";
constexpr char kWinograd4x3[] = "convolution_onednn_winograd_4x3";
constexpr char kWinograd2x3[] = "convolution_onednn_winograd_2x3";
constexpr char const* kWinograds[] = {kWinograd4x3, kWinograd2x3};
constexpr double kTol = 1e-5;

struct Case {
  V x{}, w{};
  V strides{}, padsBegin{}, padsEnd{}, dilations{};
  int64_t groups = 1;
  bool bias = false, residual = false;
  int64_t activation = -1;
  double alpha = 0, beta = 0;
  PaddingMode mode = PaddingMode::kEXPLICIT_ROUND_DOWN;
};

ir::Attributes convAttrs(Case const& c) {
  ir::Attributes a;
  V kernel(c.w.begin() + 2, c.w.end());
  size_t ns = kernel.size();
  a.set("num_output_maps", c.w[0]);
  a.set("kernel_shape", kernel);
  a.set("strides", c.strides.empty() ? V(ns, 1) : c.strides);
  a.set("pads_begin", c.padsBegin.empty() ? V(ns, 0) : c.padsBegin);
  a.set("pads_end", c.padsEnd.empty() ? V(ns, 0) : c.padsEnd);
  a.set("dilations", c.dilations.empty() ? V(ns, 1) : c.dilations);
  a.set("groups", c.groups);
  a.set("padding_mode", static_cast<int64_t>(c.mode));
  if (c.activation >= 0) {
    a.set("activation", c.activation);
    a.set("act_alpha", c.alpha);
    a.set("act_beta", c.beta);
  }
  return a;
}

std::vector<In> convInputs(Case const& c) {
  std::vector<In> ins{var(randomTensor(c.x, 1)), cst(randomTensor(c.w, 2))};
  if (c.bias || c.residual)
    ins.push_back(c.bias ? cst(randomTensor({c.w[0]}, 3)) : none());
  if (c.residual) {
    // The residual has y's shape: infer it from a run without one.
    OneNode n = makeNode(OpType::kConvolution, convAttrs(c), {ins[0], ins[1]});
    ins.push_back(var(randomTensor(dimsToVector(n.out[0].shape), 4)));
  }
  return ins;
}

double run(Case const& c, int threads = 1, char const* tactic = kTactic) {
  return compareWithReference(tactic, OpType::kConvolution, convAttrs(c), convInputs(c), threads);
}

// The same with the activations in recorded formats: x in `src`, the residual (if any) in `res`, y in `dst`.
double runInFormats(Case const& c, int64_t src, int64_t res, int64_t dst, int threads = 1,
                    char const* tactic = kTactic) {
  return compareWithReference(tactic, OpType::kConvolution, convAttrs(c), convInputs(c), threads,
                              {src, 0, 0, c.residual ? res : 0}, dst);
}

bool winogradSupports(Case const& c, char const* tactic) {
  return tacticSupports(tactic, makeNode(OpType::kConvolution, convAttrs(c), convInputs(c)));
}

TEST(OnednnConvolution, Pointwise1x1) {
  EXPECT_LT(run({.x = {1, 8, 5, 5}, .w = {16, 8, 1, 1}}), kTol);
  EXPECT_LT(run({.x = {1, 1, 1, 1}, .w = {1, 1, 1, 1}}), kTol);
}

TEST(OnednnConvolution, Stem7x7Stride2WithBiasRelu) {
  EXPECT_LT(run({.x = {1, 3, 23, 23},
                 .w = {8, 3, 7, 7},
                 .strides = {2, 2},
                 .padsBegin = {3, 3},
                 .padsEnd = {3, 3},
                 .bias = true,
                 .activation = static_cast<int64_t>(ActivationType::kRELU)}),
            kTol);
}

TEST(OnednnConvolution, DepthwiseAndGroups) {
  EXPECT_LT(run({.x = {2, 6, 9, 9}, .w = {6, 1, 3, 3}, .padsBegin = {1, 1}, .padsEnd = {1, 1}, .groups = 6}), kTol);
  EXPECT_LT(run({.x = {1, 8, 7, 7}, .w = {12, 4, 3, 3}, .groups = 2, .bias = true}), kTol);
  EXPECT_LT(run({.x = {1, 32, 8, 8}, .w = {64, 1, 3, 3}, .strides = {2, 2}, .padsBegin = {1, 1}, .padsEnd = {1, 1},
                 .groups = 32}),
            kTol);
}

TEST(OnednnConvolution, DilationAndAsymmetricPads) {
  EXPECT_LT(run({.x = {1, 4, 11, 11}, .w = {5, 4, 3, 3}, .padsBegin = {2, 2}, .padsEnd = {2, 2}, .dilations = {2, 2}}),
            kTol);
  EXPECT_LT(run({.x = {1, 3, 8, 9}, .w = {4, 3, 3, 2}, .padsBegin = {1, 0}, .padsEnd = {0, 2}}), kTol);
  EXPECT_LT(run({.x = {1, 3, 10, 7}, .w = {4, 3, 3, 3}, .strides = {2, 3}, .padsBegin = {0, 2}, .padsEnd = {1, 0},
                 .dilations = {1, 2}}),
            kTol);
}

TEST(OnednnConvolution, PaddingModes) {
  for (PaddingMode m : {PaddingMode::kEXPLICIT_ROUND_UP, PaddingMode::kSAME_UPPER, PaddingMode::kSAME_LOWER}) {
    EXPECT_LT(run({.x = {1, 3, 8, 7}, .w = {4, 3, 3, 3}, .strides = {2, 2}, .padsBegin = {1, 0}, .mode = m}), kTol)
        << static_cast<int>(m);
  }
}

TEST(OnednnConvolution, OddSizesBatchAndThreads) {
  Case c{.x = {3, 5, 13, 11}, .w = {7, 5, 3, 5}, .strides = {2, 1}, .padsBegin = {1, 2}, .padsEnd = {1, 2},
         .bias = true};
  EXPECT_LT(run(c), kTol);
  EXPECT_LT(run(c, 2), kTol);
  EXPECT_LT(run(c, 3), kTol);
}

TEST(OnednnConvolution, ThreeD) {
  EXPECT_LT(run({.x = {2, 4, 5, 6, 7}, .w = {6, 4, 3, 3, 3}, .padsBegin = {1, 1, 1}, .padsEnd = {1, 1, 1}, .bias = true}),
            kTol);
  EXPECT_LT(run({.x = {1, 6, 7, 8, 9},
                 .w = {4, 3, 2, 3, 3},
                 .strides = {1, 2, 2},
                 .padsBegin = {0, 1, 2},
                 .padsEnd = {1, 0, 2},
                 .dilations = {2, 1, 2},
                 .groups = 2,
                 .residual = true}),
            kTol);
}

TEST(OnednnConvolution, ResidualAndEveryMappedActivation) {
  struct Act {
    ActivationType t;
    double alpha, beta;
  };
  for (Act act : {Act{ActivationType::kRELU, 0, 0}, Act{ActivationType::kSIGMOID, 0, 0}, Act{ActivationType::kTANH, 0, 0},
                  Act{ActivationType::kLEAKY_RELU, 0.1, 0}, Act{ActivationType::kELU, 0.7, 0},
                  Act{ActivationType::kSELU, 1.67, 1.05}, Act{ActivationType::kSOFTPLUS, 0.8, 1.5},
                  Act{ActivationType::kCLIP, -0.5, 0.6}, Act{ActivationType::kHARD_SIGMOID, 0.2, 0.5},
                  Act{ActivationType::kSCALED_TANH, 1.3, 0.7}, Act{ActivationType::kGELU_ERF, 0, 0},
                  Act{ActivationType::kGELU_TANH, 0, 0}}) {
    for (bool residual : {false, true}) {
      Case c{.x = {2, 4, 6, 6}, .w = {8, 4, 3, 3}, .padsBegin = {1, 1}, .padsEnd = {1, 1}, .bias = true,
             .residual = residual, .activation = static_cast<int64_t>(act.t), .alpha = act.alpha, .beta = act.beta};
      EXPECT_LT(run(c), kTol) << "activation " << static_cast<int>(act.t) << " residual " << residual;
    }
  }
}

// Activations in blocked (nChw8c, nChw16c) and channels-last formats, as the builder records them between oneDNN
// layers: every combination of source, residual and destination format, odd spatial sizes, stride, depthwise.
TEST(OnednnConvolution, RecordedActivationFormats) {
  int64_t const formats[] = {0, 1, 8, 16};
  Case conv{.x = {2, 16, 7, 9}, .w = {32, 16, 3, 3}, .padsBegin = {1, 1}, .padsEnd = {1, 1}, .bias = true,
            .residual = true, .activation = static_cast<int64_t>(ActivationType::kRELU)};
  for (int64_t src : formats)
    for (int64_t res : formats)
      for (int64_t dst : formats)
        EXPECT_LT(runInFormats(conv, src, res, dst), kTol) << src << " " << res << " " << dst;
  Case dw{.x = {1, 32, 11, 11}, .w = {32, 1, 3, 3}, .strides = {2, 2}, .padsBegin = {1, 1}, .padsEnd = {1, 1},
          .groups = 32, .activation = static_cast<int64_t>(ActivationType::kCLIP), .alpha = 0, .beta = 6};
  Case pw{.x = {3, 48, 5, 5}, .w = {16, 48, 1, 1}, .bias = true};
  Case stem{.x = {1, 3, 17, 17}, .w = {16, 3, 7, 7}, .strides = {2, 2}, .padsBegin = {3, 3}, .padsEnd = {3, 3}};
  for (int64_t f : formats) {
    EXPECT_LT(runInFormats(dw, f, 0, f), kTol) << f;
    EXPECT_LT(runInFormats(dw, f, 0, f, 2), kTol) << f;
    EXPECT_LT(runInFormats(pw, f, 0, f), kTol) << f;
    EXPECT_LT(runInFormats(stem, 0, 0, f), kTol) << f;
  }
}

// y written over the residual's memory, as the builder places them when the convolution reads the residual last
// (outputMayReuseInput): 1x1 and 3x3, every format pair (the residual reordered through scratch where its format
// differs from y's), a chain of three post-ops (run on plain activations and reordered), two threads.
TEST(OnednnConvolution, OutputOverTheResidual) {
  int64_t const formats[] = {0, 1, 8, 16};
  Case pw{.x = {1, 16, 7, 9},
          .w = {32, 16, 1, 1},
          .bias = true,
          .residual = true,
          .activation = static_cast<int64_t>(ActivationType::kRELU)};
  Case k3{.x = {2, 16, 5, 6}, .w = {16, 16, 3, 3}, .padsBegin = {1, 1}, .padsEnd = {1, 1}, .residual = true};
  Case chain{.x = {1, 16, 6, 6},
             .w = {16, 16, 3, 3},
             .padsBegin = {1, 1},
             .padsEnd = {1, 1},
             .bias = true,
             .residual = true,
             .activation = static_cast<int64_t>(ActivationType::kSOFTPLUS),
             .alpha = 0.8,
             .beta = 1.5};
  for (Case const& c : {pw, k3, chain})
    for (int64_t res : formats)
      for (int64_t dst : formats)
        for (int threads : {1, 2}) {
          double e = compareWithReference(kTactic, OpType::kConvolution, convAttrs(c), convInputs(c), threads,
                                          {dst, 0, 0, res}, dst, 3);
          EXPECT_LT(e, kTol) << "x " << c.x[1] << " w " << c.w[2] << " res " << res << " dst " << dst << " threads "
                             << threads;
        }
}

// The CPU builder's fused swish (cpu_swish: y * sigmoid(y) after bias, residual and activation), in plain and
// recorded formats, against the reference kernel's.
TEST(OnednnConvolution, FusedSwish) {
  for (bool residual : {false, true})
    for (int64_t f : {0, 1, 16}) {
      Case c{.x = {2, 16, 7, 7}, .w = {16, 16, 3, 3}, .padsBegin = {1, 1}, .padsEnd = {1, 1}, .bias = true,
             .residual = residual};
      ir::Attributes a = convAttrs(c);
      a.set("cpu_swish", int64_t{1});
      EXPECT_LT(compareWithReference(kTactic, OpType::kConvolution, a, convInputs(c), 2,
                                     {f, 0, 0, residual ? f : 0}, f),
                kTol)
          << residual << " " << f;
    }
  // From 4096 outputs on AVX-512 CPUs the swish runs as Kiln's own loop after the primitive (swish.h): EfficientNet's
  // depthwise and 1x1 shapes scaled down, with a ReLU before it, the residual, and y over the residual.
  Case dw{.x = {1, 32, 17, 17}, .w = {32, 1, 3, 3}, .padsBegin = {1, 1}, .padsEnd = {1, 1}, .groups = 32, .bias = true};
  Case pw{.x = {1, 32, 16, 16}, .w = {64, 32, 1, 1}, .bias = true, .residual = true,
          .activation = static_cast<int64_t>(ActivationType::kRELU)};
  for (Case const& c : {dw, pw})
    for (int64_t f : {0, 1, 16}) {
      ir::Attributes a = convAttrs(c);
      a.set("cpu_swish", int64_t{1});
      int64_t res = c.residual ? f : 0;
      EXPECT_LT(compareWithReference(kTactic, OpType::kConvolution, a, convInputs(c), 2, {f, 0, 0, res}, f), kTol)
          << c.groups << " " << f;
      if (c.residual) {
        EXPECT_LT(compareWithReference(kTactic, OpType::kConvolution, a, convInputs(c), 1, {f, 0, 0, f}, f, 3), kTol)
            << f << " over the residual";
      }
    }
}

TEST(OnednnConvolution, RefusesFormatsThatDoNotFit) {
  // nChw16c needs C divisible by 16: the kernel says so instead of reading past the tensor.
  Case c{.x = {1, 8, 5, 5}, .w = {8, 8, 3, 3}};
  OneNode n = makeNode(OpType::kConvolution, convAttrs(c), convInputs(c));
  n.node->attrs.setInts("cpu_formats_in", {16, 0});
  n.node->attrs.setInts("cpu_formats_out", {0});
  EXPECT_FALSE(backends::TacticRegistry::instance().find(kTactic)->create(*n.node).isOk());
  // Formats are for 2-D convolutions only.
  Case c3{.x = {1, 16, 4, 4, 4}, .w = {16, 16, 1, 1, 1}};
  OneNode n3 = makeNode(OpType::kConvolution, convAttrs(c3), convInputs(c3));
  n3.node->attrs.setInts("cpu_formats_in", {16, 0});
  n3.node->attrs.setInts("cpu_formats_out", {16});
  EXPECT_FALSE(backends::TacticRegistry::instance().find(kTactic)->create(*n3.node).isOk());
}

TEST(OnednnConvolution, RefusesWhatItCannotMatch) {
  Case c{.x = {1, 4, 6, 6}, .w = {8, 4, 3, 3}};
  // Activations oneDNN 2.6 has no exact post-op for, and clip with alpha > beta.
  for (auto [t, alpha, beta] : {std::tuple{ActivationType::kSOFTSIGN, 0.0, 0.0},
                                std::tuple{ActivationType::kTHRESHOLDED_RELU, 0.5, 0.0},
                                std::tuple{ActivationType::kCLIP, 1.0, -1.0}}) {
    c.activation = static_cast<int64_t>(t);
    c.alpha = alpha;
    c.beta = beta;
    EXPECT_FALSE(tacticSupports(kTactic, makeNode(OpType::kConvolution, convAttrs(c), convInputs(c))));
  }
  c.activation = -1;
  // Weights that are not a constant.
  EXPECT_FALSE(tacticSupports(
      kTactic, makeNode(OpType::kConvolution, convAttrs(c), {var(randomTensor(c.x, 1)), var(randomTensor(c.w, 2))})));
  // 1-D convolutions and float16.
  Case c1{.x = {1, 4, 9}, .w = {2, 4, 3}};
  EXPECT_FALSE(tacticSupports(kTactic, makeNode(OpType::kConvolution, convAttrs(c1), convInputs(c1))));
  HostTensor xh = *HostTensor::allocate(DataType::kHALF, makeDims(c.x), "x");
  HostTensor wh = *HostTensor::allocate(DataType::kHALF, makeDims(c.w), "w");
  EXPECT_FALSE(tacticSupports(kTactic, makeNode(OpType::kConvolution, convAttrs(c), {var(xh), cst(wh)})));
}

// Winograd on ResNet's 3x3 stride-1 shapes (scaled down): channels in and out multiples of 16, same padding, odd
// and even sizes (partial tiles), batch, bias, ReLU and the residual, one and two threads; the activations in
// every recorded format (the kernel reorders them into and out of the primitive's nChw16c), y over the residual.
// Its transforms round differently from direct convolution, but well within the tolerance.
TEST(OnednnWinograd, ResNetShapesFormatsAndResidual) {
  auto relu = static_cast<int64_t>(ActivationType::kRELU);
  std::vector<Case> cases{
      {.x = {1, 16, 18, 17},
       .w = {16, 16, 3, 3},
       .padsBegin = {1, 1},
       .padsEnd = {1, 1},
       .bias = true,
       .activation = relu},
      {.x = {2, 32, 14, 15},
       .w = {16, 32, 3, 3},
       .padsBegin = {1, 1},
       .padsEnd = {1, 1},
       .bias = true,
       .residual = true,
       .activation = relu},
      {.x = {1, 16, 20, 21},
       .w = {32, 16, 3, 3},
       .padsBegin = {1, 1},
       .padsEnd = {1, 1},
       .bias = true,
       .activation = relu},
      {.x = {1, 16, 21, 22}, .w = {32, 16, 3, 3}, .residual = true},  // no padding
  };
  // Kept small: every comparison recomputes the fp64 reference, and the sanitized unit tier runs this at -O0 (82 s
  // there with the earlier 24 x 24 images). The tactics take a layer only when its transformed weights are no larger
  // than its activations, hence the channel counts; sizes off the 4 x 4 and 2 x 2 output tiles keep partial tiles.
  // oneDNN's Winograd convolutions are AVX-512 code: elsewhere the tactics refuse every layer.
  if (!backends::cpu::onednnAvx512()) {
    for (char const* wino : kWinograds)
      for (Case const& c : cases) EXPECT_FALSE(winogradSupports(c, wino)) << wino;
    GTEST_SKIP() << "oneDNN has no Winograd convolution on this CPU (AVX-512 needed); the refusals were checked";
  }
  for (char const* wino : kWinograds)
    for (Case const& c : cases) {
      ASSERT_TRUE(winogradSupports(c, wino)) << wino << " " << c.x[1] << " -> " << c.w[0];
      for (int threads : {1, 2}) {
        if (threads == 1 && &c != &cases[0]) continue;  // one thread: the first case is enough
        EXPECT_LT(run(c, threads, wino), kTol)
            << wino << " " << c.x[1] << " -> " << c.w[0] << ", " << threads << " threads";
      }
      for (int64_t f : {1, 16})
        EXPECT_LT(runInFormats(c, f, f, f, 2, wino), kTol)
            << wino << " " << c.x[1] << " -> " << c.w[0] << ", format " << f;
      EXPECT_LT(runInFormats(c, 1, 16, 0, 1, wino), kTol)
          << wino << " " << c.x[1] << " -> " << c.w[0] << ", mixed formats";
      if (c.residual) {
        for (int64_t f : {0, 1, 16})
          EXPECT_LT(
              compareWithReference(wino, OpType::kConvolution, convAttrs(c), convInputs(c), 2, {f, 0, 0, f}, f, 3),
              kTol)
              << wino << " y over the residual, format " << f;
      }
    }
}

// The activations it can fuse (a sum and one eltwise post-op), each against the reference; whatever oneDNN has no
// Winograd kernel for is refused by supports(), never failed in create().
void activationsAndRefusals(char const* wino) {
  for (auto [t, alpha, beta] :
       {std::tuple{ActivationType::kRELU, 0.0, 0.0}, std::tuple{ActivationType::kCLIP, 0.0, 6.0},
        std::tuple{ActivationType::kLEAKY_RELU, 0.1, 0.0}, std::tuple{ActivationType::kSIGMOID, 0.0, 0.0},
        std::tuple{ActivationType::kSOFTPLUS, 0.8, 1.5}}) {
    for (bool residual : {false, true}) {
      Case c{.x = {1, 16, 24, 24},
             .w = {16, 16, 3, 3},
             .padsBegin = {1, 1},
             .padsEnd = {1, 1},
             .bias = true,
             .residual = residual,
             .activation = static_cast<int64_t>(t),
             .alpha = alpha,
             .beta = beta};
      if (winogradSupports(c, wino)) {
        EXPECT_LT(run(c, 1, wino), kTol) << wino << " " << static_cast<int>(t) << " residual " << residual;
        OneNode n = makeNode(OpType::kConvolution, convAttrs(c), convInputs(c));
        EXPECT_TRUE(backends::TacticRegistry::instance().find(wino)->create(*n.node).isOk());
      }
    }
  }
  Case relu{.x = {1, 16, 24, 24},
            .w = {16, 16, 3, 3},
            .padsBegin = {1, 1},
            .padsEnd = {1, 1},
            .activation = static_cast<int64_t>(ActivationType::kRELU)};
  EXPECT_TRUE(winogradSupports(relu, wino)) << wino;
  // Transformed weights over 12 times the activations (256 channels at 8x8: 32x and 73x): from memory on every run
  // in a network, slower than direct there whatever the isolated timing says.
  Case heavy{.x = {1, 256, 8, 8}, .w = {256, 256, 3, 3}, .padsBegin = {1, 1}, .padsEnd = {1, 1}};
  EXPECT_FALSE(winogradSupports(heavy, wino)) << wino;
  EXPECT_TRUE(tacticSupports(kTactic, makeNode(OpType::kConvolution, convAttrs(heavy), convInputs(heavy))));
  // ResNet-50's layer3 (256 channels at 14x14): F(2x2, 3x3)'s weights are 10.5 times the activations (taken),
  // F(4x4, 3x3)'s 23.5 times (refused). Not run here: the fp64 reference of 115M products is too slow for the
  // sanitized unit tier; ResNetShapesFormatsAndResidual checks the kernels' results.
  Case layer3{.x = {1, 256, 14, 14}, .w = {256, 256, 3, 3}, .padsBegin = {1, 1}, .padsEnd = {1, 1}};
  EXPECT_EQ(winogradSupports(layer3, wino), std::string(wino) == "convolution_onednn_winograd_2x3") << wino;
  // Not a 3x3 stride-1 ungrouped undilated 2-D window: left to the direct tactic.
  Case strided = relu;
  strided.strides = {2, 2};
  Case dilated = relu;
  dilated.dilations = {2, 2};
  Case grouped = relu;
  grouped.w = {16, 8, 3, 3};
  grouped.groups = 2;
  Case pointwise = relu;
  pointwise.w = {16, 16, 1, 1};
  pointwise.padsBegin = pointwise.padsEnd = {0, 0};
  Case fiveByFive = relu;
  fiveByFive.w = {16, 16, 5, 5};
  Case threeD{.x = {1, 16, 16, 16, 16}, .w = {16, 16, 3, 3, 3}, .padsBegin = {1, 1, 1}, .padsEnd = {1, 1, 1}};
  for (Case const& c : {strided, dilated, grouped, pointwise, fiveByFive, threeD}) {
    EXPECT_FALSE(winogradSupports(c, wino)) << wino << " " << c.w[1] << "x" << c.w[2];
    EXPECT_TRUE(tacticSupports(kTactic, makeNode(OpType::kConvolution, convAttrs(c), convInputs(c))));
  }
  // Channels oneDNN's Winograd does not block: either refused or right.
  Case narrow{.x = {1, 4, 16, 16}, .w = {8, 4, 3, 3}, .padsBegin = {1, 1}, .padsEnd = {1, 1}};
  if (winogradSupports(narrow, wino)) {
    EXPECT_LT(run(narrow, 1, wino), kTol) << wino;
  }
}

TEST(OnednnWinograd, ActivationsAndRefusals) {
  if (!backends::cpu::onednnAvx512()) GTEST_SKIP() << "oneDNN has no Winograd convolution on this CPU (AVX-512 needed)";
  for (char const* wino : kWinograds) {
    activationsAndRefusals(wino);
  }
  // The level-0 heuristic keeps the direct tactic (priority) where all apply.
  Case relu{.x = {1, 16, 24, 24},
            .w = {16, 16, 3, 3},
            .padsBegin = {1, 1},
            .padsEnd = {1, 1},
            .activation = static_cast<int64_t>(ActivationType::kRELU)};
  OneNode n = makeNode(OpType::kConvolution, convAttrs(relu), convInputs(relu));
  auto cands = backends::TacticRegistry::instance().candidates(*n.node, n.in, n.out, DeviceType::kCPU, ~0u);
  ASSERT_GE(cands.size(), 3u);
  EXPECT_EQ(cands[0]->name, kTactic);
  EXPECT_EQ(cands[1]->name, kWinograd4x3);
  EXPECT_EQ(cands[2]->name, kWinograd2x3);
}

// One kernel run from several threads at once (as many execution contexts do) gives the reference's result, for
// both tactics (each thread runs the shared primitive with its own scratchpad and reorder buffers).
void concurrentEnqueues(char const* tactic) {
  Case c{.x = {2, 16, 16, 16},
         .w = {16, 16, 3, 3},
         .padsBegin = {1, 1},
         .padsEnd = {1, 1},
         .bias = true,
         .activation = static_cast<int64_t>(ActivationType::kRELU)};
  std::vector<In> ins = convInputs(c);
  OneNode n = makeNode(OpType::kConvolution, convAttrs(c), ins);
  std::vector<HostTensor> ref{*HostTensor::allocate(DataType::kFLOAT, n.out[0].shape, "ref")};
  ASSERT_TRUE(backends::evaluateOnHost(*n.node, n.ptrs, ref).isOk());
  ASSERT_TRUE(tacticSupports(tactic, n));
  auto k = backends::TacticRegistry::instance().find(tactic)->create(*n.node);
  ASSERT_TRUE(k.isOk());
  std::vector<double> err(4, 1.0);
  std::vector<std::thread> workers;
  for (size_t t = 0; t < err.size(); ++t) {
    workers.emplace_back([&, t] {
      ThreadPool pool(1 + static_cast<int>(t % 2));
      HostTensor y = *HostTensor::allocate(DataType::kFLOAT, n.out[0].shape, "y");
      backends::CpuStream stream;
      backends::LaunchContext ctx;
      ctx.stream = &stream;
      ctx.pool = t % 2 ? &pool : nullptr;
      for (size_t i = 0; i < ins.size(); ++i)
        ctx.inputs.push_back({const_cast<void*>(n.ptrs[i]->data()), n.in[i].dtype, n.in[i].shape});
      ctx.outputs.push_back({y.mutableData(), y.dtype(), y.shape()});
      double worst = 0;
      for (int rep = 0; rep < 5; ++rep) {
        if (!(*k)->enqueue(ctx).isOk())
          return;
        for (int64_t i = 0; i < y.count(); ++i)
          worst = std::max(worst, std::fabs(y.doubleAt(i) - ref[0].doubleAt(i)));
      }
      err[t] = worst;
    });
  }
  for (std::thread& w : workers) w.join();
  for (double e : err) EXPECT_LT(e, 1e-4) << tactic;
}

TEST(OnednnConvolution, ConcurrentEnqueues) {
  concurrentEnqueues(kTactic);
  if (!backends::cpu::onednnAvx512()) return;  // no Winograd tactic runs without AVX-512
  concurrentEnqueues(kWinograd4x3);
  concurrentEnqueues(kWinograd2x3);
}

}  // namespace
}  // namespace kiln
