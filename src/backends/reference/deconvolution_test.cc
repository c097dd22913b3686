// Tests of Deconvolution: output geometry for every PaddingMode (hand-computed), shape inference errors, and the
// reference kernel against a naive scatter-form transposed convolution in 1-D/2-D/3-D, every float type.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

#include "backends/backend.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"
#include "backends/reference/spatial_test_util.h"

namespace kiln {
namespace {

using ir::OpType;

using namespace spatialtest;  // NOLINT: test helpers

// Naive transposed convolution over 3 spatial dims (lower ranks use leading extents of 1): every input element
// scatters x * w into y[i * stride + k * dilation - padBegin]; bias added once per output element.
struct DeconvSpec {
  int64_t n = 1, c = 1, k = 1, groups = 1;
  std::array<int64_t, 3> in{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, dil{1, 1, 1}, pb{0, 0, 0}, out{1, 1, 1};
};
std::vector<double> naiveDeconv(DeconvSpec const& s, std::vector<double> const& x, std::vector<double> const& w,
                                std::vector<double> const* bias) {
  int64_t cg = s.c / s.groups, kg = s.k / s.groups;
  int64_t outVol = s.out[0] * s.out[1] * s.out[2];
  std::vector<double> y(static_cast<size_t>(s.n * s.k * outVol), 0.0);
  for (int64_t b = 0; b < s.n; ++b)
    for (int64_t ci = 0; ci < s.c; ++ci)
      for (int64_t i0 = 0; i0 < s.in[0]; ++i0)
        for (int64_t i1 = 0; i1 < s.in[1]; ++i1)
          for (int64_t i2 = 0; i2 < s.in[2]; ++i2) {
            double xv = x[(((b * s.c + ci) * s.in[0] + i0) * s.in[1] + i1) * s.in[2] + i2];
            int64_t g = ci / cg;
            for (int64_t ol = 0; ol < kg; ++ol)
              for (int64_t k0 = 0; k0 < s.kernel[0]; ++k0)
                for (int64_t k1 = 0; k1 < s.kernel[1]; ++k1)
                  for (int64_t k2 = 0; k2 < s.kernel[2]; ++k2) {
                    int64_t o0 = i0 * s.stride[0] + k0 * s.dil[0] - s.pb[0];
                    int64_t o1 = i1 * s.stride[1] + k1 * s.dil[1] - s.pb[1];
                    int64_t o2 = i2 * s.stride[2] + k2 * s.dil[2] - s.pb[2];
                    if (o0 < 0 || o0 >= s.out[0] || o1 < 0 || o1 >= s.out[1] || o2 < 0 || o2 >= s.out[2]) continue;
                    double wv = w[(((ci * kg + ol) * s.kernel[0] + k0) * s.kernel[1] + k1) * s.kernel[2] + k2];
                    int64_t oc = g * kg + ol;
                    y[(((b * s.k + oc) * s.out[0] + o0) * s.out[1] + o1) * s.out[2] + o2] += xv * wv;
                  }
          }
  if (bias)
    for (size_t i = 0; i < y.size(); ++i) y[i] += (*bias)[(i / static_cast<size_t>(outVol)) % static_cast<size_t>(s.k)];
  return y;
}

struct DeconvRun {
  std::vector<int64_t> xShape, wShape, yShape;
  std::vector<int64_t> kernel, strides, dil, pb, pe;
  int64_t groups = 1;
  PaddingMode mode = PaddingMode::kEXPLICIT_ROUND_DOWN;
};

ir::Node* addDeconv(ir::Graph& g, DeconvRun const& r, DataType dt, std::vector<double> const& x,
                    std::vector<double> const& w, std::vector<double> const* b) {
  ir::Value* bv = b ? constant(g, "b", dt, {static_cast<int64_t>(b->size())}, *b) : nullptr;
  ir::Node* n = g.addNode(OpType::kDeconvolution, "deconv",
                          {constant(g, "x", dt, r.xShape, x), constant(g, "w", dt, r.wShape, w), bv});
  n->attrs.setInts("kernel_shape", r.kernel);
  n->attrs.setInts("strides", r.strides);
  n->attrs.setInts("dilations", r.dil);
  n->attrs.setInts("pads_begin", r.pb);
  n->attrs.setInts("pads_end", r.pe);
  n->attrs.setInt("groups", r.groups);
  n->attrs.setInt("padding_mode", static_cast<int64_t>(r.mode));
  return n;
}

int64_t prod(std::vector<int64_t> const& v) {
  int64_t p = 1;
  for (int64_t d : v) p *= d;
  return p;
}

void checkAgainstNaive(DeconvRun const& r, DataType dt, bool withBias, std::vector<int64_t> const& padBegin) {
  std::vector<double> x = randomValues(prod(r.xShape), 1), w = randomValues(prod(r.wShape), 2);
  int64_t k = r.wShape[1] * r.groups;
  std::vector<double> b = randomValues(k, 3);
  ir::Graph g;
  ir::Node* n = addDeconv(g, r, dt, x, w, withBias ? &b : nullptr);
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  ASSERT_EQ(dimsToString(out->shape()), dimsToString(makeDims(r.yShape)));
  DeconvSpec s;
  s.n = r.xShape[0];
  s.c = r.xShape[1];
  s.k = k;
  s.groups = r.groups;
  size_t ns = r.kernel.size(), off = 3 - ns;
  for (size_t i = 0; i < ns; ++i) {
    s.in[off + i] = r.xShape[2 + i];
    s.kernel[off + i] = r.kernel[i];
    s.stride[off + i] = r.strides[i];
    s.dil[off + i] = r.dil[i];
    s.pb[off + i] = padBegin[i];
    s.out[off + i] = r.yShape[2 + i];
  }
  expectClose(*out, naiveDeconv(s, x, w, withBias ? &b : nullptr), dt);
}

TEST(DeconvolutionReference, MatchesNaive2D) {
  // out = (in - 1) * s + d * (k - 1) + 1 - pb - pe: (3 - 1) * 2 + 3 - 1 - 0 = 6; (4 - 1) * 1 + 2 * 1 + 1 - 0 - 1 = 5.
  DeconvRun r{{2, 4, 3, 4}, {4, 3, 3, 2}, {2, 6, 6, 5}, {3, 2}, {2, 1}, {1, 2}, {1, 0}, {0, 1}, 2};
  for (DataType dt : kFloatTypes) checkAgainstNaive(r, dt, true, {1, 0});
}

TEST(DeconvolutionReference, MatchesNaive1DAnd3D) {
  DeconvRun r1{{1, 2, 5}, {2, 3, 3}, {1, 3, 11}, {3}, {2}, {1}, {0}, {0}, 1};
  checkAgainstNaive(r1, DataType::kFLOAT, false, {0});
  DeconvRun r3{{1, 2, 2, 3, 2}, {2, 1, 2, 2, 3}, {1, 2, 3, 6, 3}, {2, 2, 3}, {1, 2, 1},
               {1, 1, 1},       {0, 0, 1},       {0, 0, 0},       2};
  for (DataType dt : kFloatTypes) checkAgainstNaive(r3, dt, true, {0, 0, 1});
  // Kernel 1, stride 3: gaps between the inputs stay 0 (plus the bias).
  DeconvRun gap{{1, 1, 3}, {1, 1, 1}, {1, 1, 7}, {1}, {3}, {1}, {0}, {0}, 1};
  checkAgainstNaive(gap, DataType::kFLOAT, true, {0});
}

TEST(DeconvolutionReference, SamePaddingModes) {
  // in 5, stride 2, kernel 4: out = 10, P = (5 - 1) * 2 + 4 - 10 = 2 -> 1 + 1.
  DeconvRun up{{1, 1, 5}, {1, 1, 4}, {1, 1, 10}, {4}, {2}, {1}, {0}, {0}, 1, PaddingMode::kSAME_UPPER};
  checkAgainstNaive(up, DataType::kFLOAT, false, {1});
  // in 4, stride 2, kernel 3: out = 8, P = 6 + 3 - 8 = 1: upper puts it at the end, lower at the start.
  DeconvRun up2{{1, 1, 4}, {1, 1, 3}, {1, 1, 8}, {3}, {2}, {1}, {0}, {0}, 1, PaddingMode::kSAME_UPPER};
  checkAgainstNaive(up2, DataType::kFLOAT, false, {0});
  DeconvRun lo2 = up2;
  lo2.mode = PaddingMode::kSAME_LOWER;
  checkAgainstNaive(lo2, DataType::kFLOAT, false, {1});
  // Explicit pads are ignored by the SAME modes; ROUND_UP gives the same size as ROUND_DOWN.
  DeconvRun ignored = up2;
  ignored.pb = {5};
  checkAgainstNaive(ignored, DataType::kFLOAT, false, {0});
  // Kernel 1 < stride 3: P = 0 and out = min(3 * 3, 2 * 3 + 1) = 7 (TensorRT's formula), in both SAME modes.
  DeconvRun small{{1, 1, 3}, {1, 1, 1}, {1, 1, 7}, {1}, {3}, {1}, {0}, {0}, 1, PaddingMode::kSAME_LOWER};
  checkAgainstNaive(small, DataType::kFLOAT, true, {0});
  // Dilated: DK = 2 * (3 - 1) + 1 = 5, stride 2: P = 3, out = min(8, 6 + 5) = 8; lower puts 2 before.
  DeconvRun dil{{1, 1, 4}, {1, 1, 3}, {1, 1, 8}, {3}, {2}, {2}, {0}, {0}, 1, PaddingMode::kSAME_LOWER};
  checkAgainstNaive(dil, DataType::kFLOAT, false, {2});
  DeconvRun roundUp{{1, 1, 4}, {1, 1, 3}, {1, 1, 8}, {3}, {2}, {1}, {1}, {0}, 1, PaddingMode::kEXPLICIT_ROUND_UP};
  checkAgainstNaive(roundUp, DataType::kFLOAT, false, {1});
}

TEST(DeconvolutionReference, HandComputed) {
  // x = [1, 2], w = [1, 10], stride 1: y = [1, 12, 20].
  DeconvRun r{{1, 1, 2}, {1, 1, 2}, {1, 1, 3}, {2}, {1}, {1}, {0}, {0}, 1};
  ir::Graph g;
  ir::Node* n = addDeconv(g, r, DataType::kFLOAT, {1, 2}, {1, 10}, nullptr);
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_EQ(values(*out), (std::vector<double>{1, 12, 20}));
}

TEST(DeconvolutionInfer, Errors) {
  auto infer = [](DeconvRun const& r) {
    ir::Graph g;
    addDeconv(g, r, DataType::kFLOAT, std::vector<double>(prod(r.xShape), 0), std::vector<double>(prod(r.wShape), 0),
              nullptr);
    return ir::inferGraphInPlace(g, nullptr);
  };
  EXPECT_TRUE(infer({{1, 2, 3}, {2, 1, 2}, {}, {2}, {1}, {1}, {0}, {0}, 1}));
  EXPECT_FALSE(infer({{1, 3, 3}, {2, 1, 2}, {}, {2}, {1}, {1}, {0}, {0}, 1}));  // channels vs weights
  EXPECT_FALSE(infer({{1, 3, 3}, {3, 1, 2}, {}, {2}, {1}, {1}, {0}, {0}, 2}));  // groups do not divide C
  EXPECT_FALSE(infer({{1, 2, 3}, {2, 1, 3}, {}, {2}, {1}, {1}, {0}, {0}, 1}));  // kernel_shape vs weights
  EXPECT_FALSE(infer({{1, 2, 1}, {2, 1, 2}, {}, {2}, {1}, {1}, {1}, {1}, 1}));  // cropped to nothing
  EXPECT_FALSE(infer({{2, 3}, {2, 1}, {}, {}, {}, {}, {}, {}, 1}));             // rank 2
  EXPECT_FALSE(infer({{1, 2, 3}, {2, 1, 2}, {}, {2}, {0}, {1}, {0}, {0}, 1}));  // stride 0
}

}  // namespace
}  // namespace kiln
