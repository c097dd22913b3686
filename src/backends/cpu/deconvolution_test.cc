// deconvolution_onednn_direct against the reference deconvolution: strides, groups, dilation, asymmetric pads,
// the SAME modes, bias, batch, 3-D; refusals.
#include <gtest/gtest.h>

#include "backends/cpu/cpu_test_util.h"

namespace kiln {
namespace {

using namespace cputest;  // NOLINT: test helpers
using V = std::vector<int64_t>;

constexpr char kTactic[] = "deconvolution_onednn_direct";
constexpr double kTol = 1e-5;

struct Case {
  V x{}, w{};  // w: [C, K/groups, k...]
  V strides{}, padsBegin{}, padsEnd{}, dilations{};
  int64_t groups = 1;
  bool bias = false;
  PaddingMode mode = PaddingMode::kEXPLICIT_ROUND_DOWN;
};

ir::Attributes deconvAttrs(Case const& c) {
  ir::Attributes a;
  V kernel(c.w.begin() + 2, c.w.end());
  size_t ns = kernel.size();
  a.set("num_output_maps", c.w[1] * c.groups);
  a.set("kernel_shape", kernel);
  a.set("strides", c.strides.empty() ? V(ns, 1) : c.strides);
  a.set("pads_begin", c.padsBegin.empty() ? V(ns, 0) : c.padsBegin);
  a.set("pads_end", c.padsEnd.empty() ? V(ns, 0) : c.padsEnd);
  a.set("dilations", c.dilations.empty() ? V(ns, 1) : c.dilations);
  a.set("groups", c.groups);
  a.set("padding_mode", static_cast<int64_t>(c.mode));
  return a;
}

std::vector<In> deconvInputs(Case const& c) {
  std::vector<In> ins{var(randomTensor(c.x, 31)), cst(randomTensor(c.w, 32))};
  if (c.bias)
    ins.push_back(cst(randomTensor({c.w[1] * c.groups}, 33)));
  return ins;
}

double run(Case const& c, int threads = 1) {
  return compareWithReference(kTactic, OpType::kDeconvolution, deconvAttrs(c), deconvInputs(c), threads);
}

TEST(OnednnDeconvolution, Shapes2D) {
  EXPECT_LT(run({.x = {1, 4, 5, 5}, .w = {4, 6, 3, 3}}), kTol);
  EXPECT_LT(run({.x = {2, 8, 7, 6}, .w = {8, 3, 4, 4}, .strides = {2, 2}, .padsBegin = {1, 1}, .padsEnd = {1, 1},
                 .bias = true}),
            kTol);
  EXPECT_LT(run({.x = {1, 6, 5, 7}, .w = {6, 2, 3, 2}, .strides = {2, 3}, .padsBegin = {0, 1}, .padsEnd = {2, 0},
                 .groups = 3, .bias = true},
                2),
            kTol);
  EXPECT_LT(run({.x = {1, 4, 6, 6}, .w = {4, 1, 3, 3}, .padsBegin = {2, 2}, .padsEnd = {2, 2}, .dilations = {2, 2},
                 .groups = 4}),
            kTol);
  EXPECT_LT(run({.x = {1, 3, 1, 1}, .w = {3, 5, 1, 1}}), kTol);
}

TEST(OnednnDeconvolution, SameModesAnd3D) {
  for (PaddingMode m : {PaddingMode::kSAME_UPPER, PaddingMode::kSAME_LOWER})
    EXPECT_LT(run({.x = {1, 3, 5, 4}, .w = {3, 2, 3, 3}, .strides = {2, 2}, .mode = m}), kTol) << static_cast<int>(m);
  EXPECT_LT(run({.x = {2, 4, 3, 4, 5}, .w = {4, 3, 3, 2, 3}, .strides = {2, 1, 2}, .padsBegin = {1, 0, 1},
                 .padsEnd = {0, 1, 1}, .bias = true}),
            kTol);
}

TEST(OnednnDeconvolution, RefusesNonConstantWeightsAnd1D) {
  Case c{.x = {1, 4, 5, 5}, .w = {4, 6, 3, 3}};
  EXPECT_FALSE(tacticSupports(kTactic, makeNode(OpType::kDeconvolution, deconvAttrs(c),
                                                {var(randomTensor(c.x, 1)), var(randomTensor(c.w, 2))})));
  Case c1{.x = {1, 4, 5}, .w = {4, 6, 3}};
  EXPECT_FALSE(tacticSupports(kTactic, makeNode(OpType::kDeconvolution, deconvAttrs(c1), deconvInputs(c1))));
}

}  // namespace
}  // namespace kiln
