// convolution_onednn_matmul_1x1 against the reference convolution: odd and tiny channel counts, batch, one row,
// every recorded format of x, y and the residual, y over the residual, fused activations and swish, two threads,
// concurrent enqueues; and the nodes it refuses (windows other than 1x1/stride 1/unpadded, groups, 3-op chains).
#include <gtest/gtest.h>

#include <thread>

#include "backends/cpu/cpu_test_util.h"

namespace kiln {
namespace {

using namespace cputest;  // NOLINT: test helpers
using V = std::vector<int64_t>;

constexpr char kTactic[] = "convolution_onednn_matmul_1x1";
constexpr double kTol = 1e-5;

struct Case {
  V x{}, w{};
  V strides{}, pads{};
  int64_t groups = 1;
  bool bias = false, residual = false;
  int64_t activation = -1;
  double alpha = 0, beta = 0;
  PaddingMode mode = PaddingMode::kEXPLICIT_ROUND_DOWN;
  bool swish = false;
};

ir::Attributes attrs(Case const& c) {
  ir::Attributes a;
  a.set("num_output_maps", c.w[0]);
  a.set("kernel_shape", V{c.w[2], c.w[3]});
  a.set("strides", c.strides.empty() ? V{1, 1} : c.strides);
  a.set("pads_begin", c.pads.empty() ? V{0, 0} : c.pads);
  a.set("pads_end", c.pads.empty() ? V{0, 0} : c.pads);
  a.set("dilations", V{1, 1});
  a.set("groups", c.groups);
  a.set("padding_mode", static_cast<int64_t>(c.mode));
  if (c.activation >= 0) {
    a.set("activation", c.activation);
    a.set("act_alpha", c.alpha);
    a.set("act_beta", c.beta);
  }
  if (c.swish) a.set("cpu_swish", int64_t{1});
  return a;
}

std::vector<In> inputs(Case const& c) {
  std::vector<In> ins{var(randomTensor(c.x, 1)), cst(randomTensor(c.w, 2))};
  if (c.bias || c.residual) ins.push_back(c.bias ? cst(randomTensor({c.w[0]}, 3)) : none());
  if (c.residual) {
    OneNode n = makeNode(OpType::kConvolution, attrs(c), {ins[0], ins[1]});
    ins.push_back(var(randomTensor(dimsToVector(n.out[0].shape), 4)));
  }
  return ins;
}

// x in `src`, the residual in `res`, y in `dst` (recorded formats); `over`: y written over the residual.
double run(Case const& c, int threads = 1, int64_t src = 0, int64_t res = 0, int64_t dst = 0, bool over = false) {
  return compareWithReference(kTactic, OpType::kConvolution, attrs(c), inputs(c), threads,
                              {src, 0, 0, c.residual ? res : 0}, dst, over ? 3 : -1);
}

bool supports(Case const& c) { return tacticSupports(kTactic, makeNode(OpType::kConvolution, attrs(c), inputs(c))); }

auto const kRelu = static_cast<int64_t>(ActivationType::kRELU);

TEST(OnednnMatmulConv1x1, ShapesAndThreads) {
  // One channel, odd channels, a single row of pixels, ResNet's layer4 shape scaled down, batch, SAME padding.
  for (Case const& c : {Case{.x = {1, 1, 7, 7}, .w = {1, 1, 1, 1}}, Case{.x = {1, 3, 7, 9}, .w = {5, 3, 1, 1}},
                        Case{.x = {1, 17, 1, 49}, .w = {33, 17, 1, 1}, .bias = true},
                        Case{.x = {1, 64, 7, 7}, .w = {96, 64, 1, 1}, .bias = true, .activation = kRelu},
                        Case{.x = {3, 24, 5, 9}, .w = {40, 24, 1, 1}, .bias = true, .activation = kRelu},
                        Case{.x = {1, 8, 8, 8}, .w = {16, 8, 1, 1}, .mode = PaddingMode::kSAME_UPPER}})
    for (int threads : {1, 2}) EXPECT_LT(run(c, threads), kTol) << c.x[1] << " -> " << c.w[0] << " " << threads;
}

// Every combination of recorded formats (plain, channels-last, nChw8c, nChw16c) for x, the residual and y, with y in
// its own buffer and over the residual's (the residual reordered through scratch where its format differs).
TEST(OnednnMatmulConv1x1, RecordedFormatsAndResidual) {
  int64_t const formats[] = {0, 1, 8, 16};
  Case c{.x = {2, 16, 7, 5}, .w = {32, 16, 1, 1}, .bias = true, .residual = true, .activation = kRelu};
  for (int64_t src : formats)
    for (int64_t res : formats)
      for (int64_t dst : formats) {
        EXPECT_LT(run(c, 1, src, res, dst), kTol) << src << " " << res << " " << dst;
        EXPECT_LT(run(c, 2, src, res, dst, true), kTol) << src << " " << res << " " << dst << " over";
      }
}

TEST(OnednnMatmulConv1x1, ActivationsAndSwish) {
  struct Act {
    ActivationType t;
    double alpha, beta;
  };
  for (Act act : {Act{ActivationType::kRELU, 0, 0}, Act{ActivationType::kSIGMOID, 0, 0},
                  Act{ActivationType::kLEAKY_RELU, 0.1, 0}, Act{ActivationType::kELU, 0.7, 0},
                  Act{ActivationType::kSELU, 1.67, 1.05}, Act{ActivationType::kCLIP, -0.5, 0.6},
                  Act{ActivationType::kHARD_SIGMOID, 0.2, 0.5}, Act{ActivationType::kGELU_ERF, 0, 0}})
    for (bool residual : {false, true})
      for (int64_t f : {0, 1}) {
        Case c{.x = {1, 16, 7, 7},
               .w = {24, 16, 1, 1},
               .bias = true,
               .residual = residual,
               .activation = static_cast<int64_t>(act.t),
               .alpha = act.alpha,
               .beta = act.beta};
        EXPECT_LT(run(c, 2, f, f, f), kTol) << static_cast<int>(act.t) << " " << residual << " " << f;
      }
  // Swish as oneDNN's post-op (784 outputs) and, on AVX-512 CPUs, as Kiln's own loop after the matmul (8192).
  for (bool residual : {false, true})
    for (int64_t k : {16, 128}) {
      Case c{.x = {1, 16, 7, 7}, .w = {k, 16, 1, 1}, .bias = true, .residual = residual, .swish = true};
      EXPECT_LT(run(c, 2, 1, 1, 1), kTol) << residual << " " << k;
      EXPECT_LT(run(c, 1, 16, 16, 16, residual), kTol) << residual << " " << k;
    }
}

TEST(OnednnMatmulConv1x1, Refusals) {
  Case base{.x = {1, 8, 8, 8}, .w = {8, 8, 1, 1}};
  EXPECT_TRUE(supports(base));
  Case k3 = base;
  k3.w = {8, 8, 3, 3};
  EXPECT_FALSE(supports(k3));
  Case strided = base;
  strided.strides = {2, 2};
  EXPECT_FALSE(supports(strided));
  Case padded = base;
  padded.pads = {1, 1};
  EXPECT_FALSE(supports(padded));
  Case grouped = base;
  grouped.groups = 2;
  grouped.w = {8, 4, 1, 1};
  EXPECT_FALSE(supports(grouped));
  // Three eltwise post-ops (softplus, scaled tanh): oneDNN 2.6's brgemm kernels get such chains wrong.
  Case softplus = base;
  softplus.activation = static_cast<int64_t>(ActivationType::kSOFTPLUS);
  softplus.alpha = 0.8;
  softplus.beta = 1.5;
  EXPECT_FALSE(supports(softplus));
  // Fewer rows than 7 x 7 (the squeeze-excitation's 1x1 maps) or more than 16 x 16: left to the direct convolution.
  EXPECT_TRUE(supports({.x = {1, 8, 16, 16}, .w = {8, 8, 1, 1}}));
  EXPECT_TRUE(supports({.x = {1, 8, 7, 7}, .w = {8, 8, 1, 1}}));
  EXPECT_FALSE(supports({.x = {1, 8, 6, 8}, .w = {8, 8, 1, 1}}));
  EXPECT_FALSE(supports({.x = {1, 8, 1, 1}, .w = {8, 8, 1, 1}}));
  EXPECT_FALSE(supports({.x = {1, 8, 16, 17}, .w = {8, 8, 1, 1}}));
  EXPECT_FALSE(supports({.x = {2, 8, 14, 14}, .w = {8, 8, 1, 1}}));
  Case softsign = base;
  softsign.activation = static_cast<int64_t>(ActivationType::kSOFTSIGN);
  EXPECT_FALSE(supports(softsign));
  EXPECT_FALSE(tacticSupports(kTactic, makeNode(OpType::kConvolution, attrs(base),
                                                {var(randomTensor(base.x, 1)), var(randomTensor(base.w, 2))})));
  // The level-0 heuristic keeps the direct convolution: this one is a timed candidate behind it.
  OneNode n = makeNode(OpType::kConvolution, attrs(base), inputs(base));
  auto cands = backends::TacticRegistry::instance().candidates(*n.node, n.in, n.out, DeviceType::kCPU, ~0u);
  ASSERT_GE(cands.size(), 2u);
  EXPECT_EQ(cands[0]->name, "convolution_onednn_direct");
  EXPECT_EQ(cands[1]->name, kTactic);
}

// One kernel run from four threads at once (each with its own scratchpad and reorder buffers; one and two OpenMP
// threads, so two primitives) gives the reference's result.
TEST(OnednnMatmulConv1x1, ConcurrentEnqueues) {
  Case c{.x = {1, 32, 9, 9}, .w = {48, 32, 1, 1}, .bias = true, .activation = kRelu};
  std::vector<In> ins = inputs(c);
  OneNode n = makeNode(OpType::kConvolution, attrs(c), ins);
  std::vector<HostTensor> ref{*HostTensor::allocate(DataType::kFLOAT, n.out[0].shape, "ref")};
  ASSERT_TRUE(backends::evaluateOnHost(*n.node, n.ptrs, ref).isOk());
  auto k = backends::TacticRegistry::instance().find(kTactic)->create(*n.node);
  ASSERT_TRUE(k.isOk()) << k.status().toString();
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
        if (!(*k)->enqueue(ctx).isOk()) return;
        for (int64_t i = 0; i < y.count(); ++i) worst = std::max(worst, std::fabs(y.doubleAt(i) - ref[0].doubleAt(i)));
      }
      err[t] = worst;
    });
  }
  for (std::thread& w : workers) w.join();
  for (double e : err) EXPECT_LT(e, 1e-4);
}

}  // namespace
}  // namespace kiln
