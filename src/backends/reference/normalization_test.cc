// Tests of Normalization: shape inference and its errors (axes, group norm scale/bias shapes of addNormalization
// vs addNormalizationV2), and the reference kernel (layer, instance and group norm, with and without the fused
// residual) against a naive version.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <vector>

#include "backends/backend.h"
#include "backends/normalization_view.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"
#include "backends/reference/spatial_test_util.h"

namespace kiln {
namespace {

using ir::OpType;
using namespace spatialtest;  // NOLINT: test helpers

int64_t count(std::vector<int64_t> const& s) {
  int64_t n = 1;
  for (auto v : s)
    n *= v;
  return n;
}

// Naive: elements with equal "key" (coords with reduced axes zeroed; channel replaced by its group when
// groups > 1) share mean and variance; scaleIndex maps coords to the scale/bias element.
std::vector<double> naiveNorm(std::vector<int64_t> const& shape, std::vector<double> const& x,
                              std::vector<int64_t> const& axes, int64_t groups, double eps,
                              std::vector<double> const& scale, std::vector<double> const& bias,
                              std::function<int64_t(std::vector<int64_t> const&)> const& scaleIndex) {
  int64_t n = count(shape);
  std::vector<std::vector<int64_t>> coords(static_cast<size_t>(n));
  std::vector<std::vector<int64_t>> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> c(shape.size());
    int64_t rem = i;
    for (size_t d = shape.size(); d-- > 0;) {
      c[d] = rem % shape[d];
      rem /= shape[d];
    }
    std::vector<int64_t> k = c;
    for (int64_t a : axes)
      k[static_cast<size_t>(a)] = 0;
    if (groups > 1)
      k[1] = c[1] / (shape[1] / groups);
    coords[i] = c;
    keys[i] = k;
  }
  std::map<std::vector<int64_t>, std::pair<double, int64_t>> sums;
  for (int64_t i = 0; i < n; ++i) {
    sums[keys[i]].first += x[i];
    sums[keys[i]].second += 1;
  }
  std::map<std::vector<int64_t>, double> sq;
  for (int64_t i = 0; i < n; ++i) {
    double mean = sums[keys[i]].first / static_cast<double>(sums[keys[i]].second);
    sq[keys[i]] += (x[i] - mean) * (x[i] - mean);
  }
  std::vector<double> y;
  for (int64_t i = 0; i < n; ++i) {
    double cnt = static_cast<double>(sums[keys[i]].second);
    double mean = sums[keys[i]].first / cnt;
    int64_t s = scaleIndex(coords[i]);
    y.push_back((x[i] - mean) / std::sqrt(sq[keys[i]] / cnt + eps) * scale[s] + bias[s]);
  }
  return y;
}

Result<HostTensor> runNorm(DataType dt, std::vector<int64_t> const& xs, std::vector<double> const& xv,
                           std::vector<int64_t> const& ss, std::vector<double> const& sv, std::vector<double> const& bv,
                           std::vector<int64_t> const& axes, int64_t groups, bool v2, double eps,
                           std::vector<double> const* residual = nullptr) {
  ir::Graph g;
  ir::Node* n = g.addNode(OpType::kNormalization, "norm",
                          {constant(g, "x", dt, xs, xv), constant(g, "s", dt, ss, sv), constant(g, "b", dt, ss, bv)});
  if (residual)
    n->inputs.push_back(constant(g, "r", dt, xs, *residual));
  n->attrs.setInts("axes", axes);
  n->attrs.setFloat("epsilon", eps);
  n->attrs.setInt("num_groups", groups);
  n->attrs.setInt("v2", v2 ? 1 : 0);
  return run(g, n);
}

// Layer norm of x + a residual of shape `rs` (x's, or it with leading dims 1).
Result<HostTensor> runNormResidual(DataType dt, std::vector<int64_t> const& xs, std::vector<double> const& xv,
                                   std::vector<int64_t> const& ss, std::vector<double> const& sv,
                                   std::vector<double> const& bv, std::vector<int64_t> const& axes,
                                   std::vector<int64_t> const& rs, std::vector<double> const& rv) {
  ir::Graph g;
  ir::Node* n = g.addNode(OpType::kNormalization, "norm",
                          {constant(g, "x", dt, xs, xv), constant(g, "s", dt, ss, sv), constant(g, "b", dt, ss, bv),
                           constant(g, "r", dt, rs, rv)});
  n->attrs.setInts("axes", axes);
  n->attrs.setFloat("epsilon", 1e-5);
  return run(g, n);
}

class NormTypes : public ::testing::TestWithParam<DataType> {};

TEST_P(NormTypes, LayerNormLastAxisAndTwoAxes) {
  DataType dt = GetParam();
  std::vector<int64_t> xs{2, 3, 5};
  auto xv = randomValues(30, 1), sv = randomValues(5, 2), bv = randomValues(5, 3);
  auto out = runNorm(dt, xs, xv, {5}, sv, bv, {2}, 1, false, 1e-5);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  expectClose(*out, naiveNorm(xs, xv, {2}, 1, 1e-5, sv, bv, [](auto const& c) { return c[2]; }), dt);
  auto sv2 = randomValues(15, 4), bv2 = randomValues(15, 5);
  auto out2 = runNorm(dt, xs, xv, {1, 3, 5}, sv2, bv2, {1, 2}, 1, false, 1e-3);
  ASSERT_TRUE(out2.isOk()) << out2.status().toString();
  expectClose(*out2, naiveNorm(xs, xv, {1, 2}, 1, 1e-3, sv2, bv2, [](auto const& c) { return c[1] * 5 + c[2]; }), dt);
}

TEST_P(NormTypes, InstanceNorm) {
  DataType dt = GetParam();
  std::vector<int64_t> xs{2, 3, 3, 2};
  auto xv = randomValues(36, 6), sv = randomValues(3, 7), bv = randomValues(3, 8);
  for (bool v2 : {false, true}) {
    auto out = runNorm(dt, xs, xv, {1, 3, 1, 1}, sv, bv, {2, 3}, 1, v2, 1e-5);
    ASSERT_TRUE(out.isOk()) << out.status().toString();
    expectClose(*out, naiveNorm(xs, xv, {2, 3}, 1, 1e-5, sv, bv, [](auto const& c) { return c[1]; }), dt);
  }
}

TEST_P(NormTypes, GroupNormV1PerGroupAndV2PerChannel) {
  DataType dt = GetParam();
  std::vector<int64_t> xs{2, 6, 2, 3};
  auto xv = randomValues(72, 9);
  auto sg = randomValues(3, 10), bg = randomValues(3, 11);
  auto out = runNorm(dt, xs, xv, {1, 3, 1, 1}, sg, bg, {2, 3}, 3, false, 1e-5);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  expectClose(*out, naiveNorm(xs, xv, {2, 3}, 3, 1e-5, sg, bg, [](auto const& c) { return c[1] / 2; }), dt);
  auto sc = randomValues(6, 12), bc = randomValues(6, 13);
  auto out2 = runNorm(dt, xs, xv, {1, 6, 1, 1}, sc, bc, {2, 3}, 3, true, 1e-5);
  ASSERT_TRUE(out2.isOk()) << out2.status().toString();
  expectClose(*out2, naiveNorm(xs, xv, {2, 3}, 3, 1e-5, sc, bc, [](auto const& c) { return c[1]; }), dt);
  // Groups over one spatial axis only.
  auto out3 = runNorm(dt, xs, xv, {1, 6, 1, 1}, sc, bc, {3}, 2, true, 1e-5);
  ASSERT_TRUE(out3.isOk()) << out3.status().toString();
  expectClose(*out3, naiveNorm(xs, xv, {3}, 2, 1e-5, sc, bc, [](auto const& c) { return c[1]; }), dt);
}

// The fused residual: the kernel normalizes x + residual (the test values are sixteenths, exact in every type, and
// so are their sums).
TEST_P(NormTypes, ResidualIsAddedBeforeNormalizing) {
  DataType dt = GetParam();
  std::vector<int64_t> xs{3, 4, 6};
  auto xv = randomValues(72, 21), rv = randomValues(72, 22), sv = randomValues(6, 23), bv = randomValues(6, 24);
  std::vector<double> sum(xv.size());
  for (size_t i = 0; i < xv.size(); ++i)
    sum[i] = xv[i] + rv[i];
  auto out = runNorm(dt, xs, xv, {6}, sv, bv, {2}, 1, false, 1e-5, &rv);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  expectClose(*out, naiveNorm(xs, sum, {2}, 1, 1e-5, sv, bv, [](auto const& c) { return c[2]; }), dt);
  // A residual broadcast over the leading dim (a position embedding [1, 4, 6] added to [3, 4, 6]).
  std::vector<double> pv = randomValues(24, 29), psum(xv.size());
  for (size_t i = 0; i < xv.size(); ++i)
    psum[i] = xv[i] + pv[i % 24];
  auto outP = runNormResidual(dt, xs, xv, {6}, sv, bv, {2}, {1, 4, 6}, pv);
  ASSERT_TRUE(outP.isOk()) << outP.status().toString();
  expectClose(*outP, naiveNorm(xs, psum, {2}, 1, 1e-5, sv, bv, [](auto const& c) { return c[2]; }), dt);
  // Group norm with a residual.
  std::vector<int64_t> gs{2, 4, 3, 3};
  auto gx = randomValues(72, 25), gr = randomValues(72, 26), gsc = randomValues(2, 27), gb = randomValues(2, 28);
  std::vector<double> gsum(gx.size());
  for (size_t i = 0; i < gx.size(); ++i)
    gsum[i] = gx[i] + gr[i];
  auto out2 = runNorm(dt, gs, gx, {1, 2, 1, 1}, gsc, gb, {2, 3}, 2, false, 1e-5, &gr);
  ASSERT_TRUE(out2.isOk()) << out2.status().toString();
  expectClose(*out2, naiveNorm(gs, gsum, {2, 3}, 2, 1e-5, gsc, gb, [](auto const& c) { return c[1] / 2; }), dt);
}

INSTANTIATE_TEST_SUITE_P(AllFloat, NormTypes, ::testing::Values(DataType::kFLOAT, DataType::kHALF, DataType::kBF16),
                         [](auto const& pi) { return std::string(dataTypeShortName(pi.param)); });

TEST(Normalization, HandComputed) {
  // mean 2, population variance 1, eps 0: [-1, 1] * 2 + 0.5.
  auto out = runNorm(DataType::kFLOAT, {1, 1, 1, 2}, {1, 3}, {1}, {2}, {0.5}, {3}, 1, false, 0.0);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  expectClose(*out, {-1.5, 2.5}, DataType::kFLOAT);
  // A constant row: variance 0, output is the bias.
  auto flat = runNorm(DataType::kFLOAT, {1, 3}, {4, 4, 4}, {3}, {1, 1, 1}, {7, 8, 9}, {-1}, 1, false, 1e-5);
  ASSERT_TRUE(flat.isOk()) << flat.status().toString();
  expectClose(*flat, {7, 8, 9}, DataType::kFLOAT);
}

Status inferNorm(std::vector<int64_t> const& xs, std::vector<int64_t> const& ss, std::vector<int64_t> const& axes,
                 int64_t groups, bool v2) {
  ir::Graph g;
  auto x = g.addInput("x", DataType::kFLOAT, makeDims(xs));
  auto s = g.addInput("s", DataType::kFLOAT, makeDims(ss));
  auto b = g.addInput("b", DataType::kFLOAT, makeDims(ss));
  if (!x || !s || !b)
    return invalidArgument("bad test input");
  ir::Node* n = g.addNode(OpType::kNormalization, "norm", {*x, *s, *b});
  n->attrs.setInts("axes", axes);
  n->attrs.setInt("num_groups", groups);
  n->attrs.setInt("v2", v2 ? 1 : 0);
  return ir::inferGraphInPlace(g, nullptr);
}

TEST(Normalization, InferErrors) {
  EXPECT_TRUE(inferNorm({2, 8, 4, 4}, {1, 8, 1, 1}, {2, 3}, 1, false).isOk());
  EXPECT_FALSE(inferNorm({2, 8, 4, 4}, {1, 8, 1, 1}, {4}, 1, false).isOk());     // axis out of range
  EXPECT_FALSE(inferNorm({2, 8, 4, 4}, {1, 8, 1, 1}, {2, 2}, 1, false).isOk());  // duplicate axis
  EXPECT_FALSE(inferNorm({2, 8, 4, 4}, {1, 8, 1, 1}, {}, 1, false).isOk());      // no axes
  EXPECT_FALSE(inferNorm({2, 8, 4, 4}, {1, 7, 1, 1}, {2, 3}, 1, false).isOk());  // scale does not broadcast
  EXPECT_TRUE(inferNorm({2, 8, 4, 4}, {1, 4, 1, 1}, {2, 3}, 4, false).isOk());   // group norm, per group
  EXPECT_FALSE(inferNorm({2, 8, 4, 4}, {1, 8, 1, 1}, {2, 3}, 4, false).isOk());  // per channel needs V2
  EXPECT_TRUE(inferNorm({2, 8, 4, 4}, {1, 8, 1, 1}, {2, 3}, 4, true).isOk());
  EXPECT_FALSE(inferNorm({2, 8, 4, 4}, {1, 4, 1, 1}, {2, 3}, 4, true).isOk());      // V2 wants per channel
  EXPECT_FALSE(inferNorm({2, 8, 4, 4}, {1, 3, 1, 1}, {2, 3}, 3, false).isOk());     // 8 % 3
  EXPECT_FALSE(inferNorm({2, 8, 4, 4}, {1, 4, 1, 1}, {1, 2, 3}, 4, false).isOk());  // channel axis in groups
  EXPECT_FALSE(inferNorm({2, 8}, {1, 4}, {1}, 4, false).isOk());                    // rank too small for groups
  EXPECT_FALSE(inferNorm({2, 8, 4}, {1, 8, 1}, {2}, 0, false).isOk());              // num_groups 0
  EXPECT_TRUE(inferNorm({-1, 8, -1}, {1, 8, 1}, {2}, 1, false).isOk());
}

// Regression: one Dims object passed as both scale and bias (the CUDA micro-benchmark did) left the bias strides
// empty, and the CUDA launcher read them through a null pointer.
TEST(NormalizationView, OneDimsObjectAsScaleAndBias) {
  Dims const x = makeDims({4, 3, 5});
  Dims const sb = makeDims({5});
  auto v = backends::normalizationView("test", x, sb, sb, {2}, 1, false);
  ASSERT_TRUE(v.isOk()) << v.status().toString();
  EXPECT_EQ(v->scaleStrides, (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(v->biasStrides, (std::vector<int64_t>{0, 0, 1}));
  Dims const other = makeDims({3, 1});
  auto w = backends::normalizationView("test", x, sb, other, {2}, 1, false);
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  EXPECT_EQ(w->scaleStrides, (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(w->biasStrides, (std::vector<int64_t>{0, 1, 0}));
}

}  // namespace
}  // namespace kiln
