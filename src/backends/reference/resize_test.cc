// Tests of Resize: shape inference from output_dims, scales and input 1 (sizes or scales), hand-computed nearest
// rounding / coordinate transformations / selector cases, N-D linear and cubic against naive 1-D formulas,
// every float type, exact integer nearest copies, and errors.
#include <gtest/gtest.h>

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

struct ResizeAttrs {
  InterpolationMode mode = InterpolationMode::kNEAREST;
  ResizeCoordinateTransformation ct = ResizeCoordinateTransformation::kASYMMETRIC;
  ResizeSelector sel = ResizeSelector::kFORMULA;
  ResizeRoundMode rnd = ResizeRoundMode::kFLOOR;
  double cubicA = -0.75;
  bool exclude = false;
};

ir::Node* addResize(ir::Graph& g, ir::Value* x, ResizeAttrs const& a, ir::Value* in1 = nullptr) {
  ir::Node* n = g.addNode(OpType::kResize, "resize", {x, in1});
  n->attrs.setInt("mode", static_cast<int64_t>(a.mode));
  n->attrs.setInt("coordinate_transformation", static_cast<int64_t>(a.ct));
  n->attrs.setInt("selector", static_cast<int64_t>(a.sel));
  n->attrs.setInt("nearest_rounding", static_cast<int64_t>(a.rnd));
  n->attrs.setFloat("cubic_coeff", a.cubicA);
  n->attrs.setInt("exclude_outside", a.exclude ? 1 : 0);
  return n;
}

// 1-D resize of `x` to `out` with output_dims (scale out / in) or an explicit scale.
std::vector<double> resize1d(std::vector<double> const& x, int64_t out, ResizeAttrs const& a, double scale = 0,
                             DataType dt = DataType::kFLOAT64) {
  ir::Graph g;
  ir::Node* n = addResize(g, constant(g, "x", dt, {static_cast<int64_t>(x.size())}, x), a);
  if (scale > 0)
    n->attrs.set("scales", ir::AttrValue{std::vector<double>{scale}});
  else
    n->attrs.setInts("output_dims", {out});
  auto r = run(g, n);
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  if (!r.isOk()) return {};
  EXPECT_EQ(r->count(), out);
  return values(*r);
}

TEST(ResizeReference, NearestRoundingModes) {
  // align_corners 3 -> 5: coordinates 0, 0.5, 1, 1.5, 2.
  std::vector<double> x{10, 20, 30};
  ResizeAttrs a;
  a.ct = ResizeCoordinateTransformation::kALIGN_CORNERS;
  a.rnd = ResizeRoundMode::kHALF_UP;
  EXPECT_EQ(resize1d(x, 5, a), (std::vector<double>{10, 20, 20, 30, 30}));
  a.rnd = ResizeRoundMode::kHALF_DOWN;
  EXPECT_EQ(resize1d(x, 5, a), (std::vector<double>{10, 10, 20, 20, 30}));
  a.rnd = ResizeRoundMode::kFLOOR;
  EXPECT_EQ(resize1d(x, 5, a), (std::vector<double>{10, 10, 20, 20, 30}));
  a.rnd = ResizeRoundMode::kCEIL;
  EXPECT_EQ(resize1d(x, 5, a), (std::vector<double>{10, 20, 20, 30, 30}));
  // Asymmetric 2x upsampling with floor (TensorRT's defaults): [1, 2] -> [1, 1, 2, 2].
  EXPECT_EQ(resize1d({1, 2}, 4, ResizeAttrs{}), (std::vector<double>{1, 1, 2, 2}));
  // Half pixel 2 -> 4: coordinates -0.25, 0.25, 0.75, 1.25; ceil -> 0 (clamped from -0), 1, 1, 2 -> 1.
  ResizeAttrs h;
  h.ct = ResizeCoordinateTransformation::kHALF_PIXEL;
  h.rnd = ResizeRoundMode::kCEIL;
  EXPECT_EQ(resize1d({1, 2}, 4, h), (std::vector<double>{1, 2, 2, 2}));
  h.rnd = ResizeRoundMode::kFLOOR;
  EXPECT_EQ(resize1d({1, 2}, 4, h), (std::vector<double>{1, 1, 1, 2}));
  // Downsampling 4 -> 2 asymmetric: coordinates 0, 2.
  EXPECT_EQ(resize1d({1, 2, 3, 4}, 2, ResizeAttrs{}), (std::vector<double>{1, 3}));
}

TEST(ResizeReference, LinearTransformsAndSelector) {
  ResizeAttrs a;
  a.mode = InterpolationMode::kLINEAR;
  a.ct = ResizeCoordinateTransformation::kALIGN_CORNERS;
  EXPECT_EQ(resize1d({1, 3}, 3, a), (std::vector<double>{1, 2, 3}));
  a.ct = ResizeCoordinateTransformation::kHALF_PIXEL;  // -0.25 (clamped), 0.25, 0.75, 1.25 (clamped)
  EXPECT_EQ(resize1d({0, 4}, 4, a), (std::vector<double>{0, 1, 3, 4}));
  a.ct = ResizeCoordinateTransformation::kASYMMETRIC;  // 0, 0.5, 1, 1.5 (clamped)
  EXPECT_EQ(resize1d({0, 4}, 4, a), (std::vector<double>{0, 2, 4, 4}));
  // 4 -> 1, half pixel: coordinate (0.5) / 0.25 - 0.5 = 1.5 with kFORMULA; 0 with kUPPER.
  a.ct = ResizeCoordinateTransformation::kHALF_PIXEL;
  EXPECT_EQ(resize1d({0, 2, 4, 6}, 1, a), (std::vector<double>{3}));
  a.sel = ResizeSelector::kUPPER;
  EXPECT_EQ(resize1d({0, 2, 4, 6}, 1, a), (std::vector<double>{0}));
  // Explicit scale 1.5 on 3 elements: 4 outputs at o / 1.5 (not o * 3 / 4): 0, 2, 4, 6 for [0, 3, 6].
  a.sel = ResizeSelector::kFORMULA;
  a.ct = ResizeCoordinateTransformation::kASYMMETRIC;
  std::vector<double> got = resize1d({0, 3, 6}, 4, a, 1.5);
  ASSERT_EQ(got.size(), 4U);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(got[i], 2.0 * static_cast<double>(i), 1e-12);
}

// Keys' cubic kernel with coefficient A.
double keys(double t, double a) {
  double u = std::fabs(t);
  if (u <= 1) return (a + 2) * u * u * u - (a + 3) * u * u + 1;
  if (u < 2) return a * u * u * u - 5 * a * u * u + 8 * a * u - 4 * a;
  return 0.0;
}

// Naive 1-D cubic: the four nearest pixels with edge replication, or (exclude) only those inside, renormalized.
std::vector<double> naiveCubic(std::vector<double> const& x, int64_t out, double a, bool exclude, bool halfPixel) {
  auto in = static_cast<int64_t>(x.size());
  double scale = static_cast<double>(out) / static_cast<double>(in);
  std::vector<double> y;
  for (int64_t o = 0; o < out; ++o) {
    double c = halfPixel ? (static_cast<double>(o) + 0.5) / scale - 0.5 : static_cast<double>(o) / scale;
    auto f = static_cast<int64_t>(std::floor(c));
    double acc = 0, wsum = 0;
    for (int64_t j = f - 1; j <= f + 2; ++j) {
      bool inside = j >= 0 && j < in;
      if (exclude && !inside) continue;
      double wt = keys(c - static_cast<double>(j), a);
      acc += wt * x[std::min(in - 1, std::max<int64_t>(0, j))];
      wsum += wt;
    }
    y.push_back(exclude ? acc / wsum : acc);
  }
  return y;
}

TEST(ResizeReference, CubicMatchesNaive) {
  std::vector<double> x = randomValues(5, 8);
  for (bool exclude : {false, true})
    for (double a : {-0.75, -0.5})
      for (bool hp : {false, true}) {
        ResizeAttrs r;
        r.mode = InterpolationMode::kCUBIC;
        r.cubicA = a;
        r.exclude = exclude;
        r.ct = hp ? ResizeCoordinateTransformation::kHALF_PIXEL : ResizeCoordinateTransformation::kASYMMETRIC;
        for (int64_t out : {1, 3, 8, 11}) {
          if (out == 1) continue;
          std::vector<double> got = resize1d(x, out, r);
          std::vector<double> ref = naiveCubic(x, out, a, exclude, hp);
          ASSERT_EQ(got.size(), ref.size());
          for (size_t i = 0; i < ref.size(); ++i)
            EXPECT_NEAR(got[i], ref[i], 1e-12) << "exclude " << exclude << " A " << a << " out " << out;
        }
      }
}

TEST(ResizeReference, Bilinear2DAndNDAgainstNaive) {
  // [1, 2, 3, 4] -> [1, 2, 5, 7] half pixel, and a 3-D resize of axes 0 and 2 only, in every float type.
  for (DataType dt : kFloatTypes) {
    std::vector<int64_t> in{1, 2, 3, 4}, out{1, 2, 5, 7};
    std::vector<double> x = randomValues(24, 12);
    ir::Graph g;
    ResizeAttrs a;
    a.mode = InterpolationMode::kLINEAR;
    a.ct = ResizeCoordinateTransformation::kHALF_PIXEL;
    ir::Node* n = addResize(g, constant(g, "x", dt, in, x), a);
    n->attrs.setInts("output_dims", out);
    auto r = run(g, n);
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    auto coord = [](int64_t o, int64_t i, int64_t of) {
      double c = (static_cast<double>(o) + 0.5) * static_cast<double>(i) / static_cast<double>(of) - 0.5;
      return std::min(static_cast<double>(i - 1), std::max(0.0, c));
    };
    std::vector<double> ref;
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t oh = 0; oh < 5; ++oh)
        for (int64_t ow = 0; ow < 7; ++ow) {
          double ch = coord(oh, 3, 5), cw = coord(ow, 4, 7);
          auto h0 = static_cast<int64_t>(ch), w0 = static_cast<int64_t>(cw);
          int64_t h1 = std::min<int64_t>(h0 + 1, 2), w1 = std::min<int64_t>(w0 + 1, 3);
          double th = ch - static_cast<double>(h0), tw = cw - static_cast<double>(w0);
          auto at = [&](int64_t hh, int64_t ww) { return x[(c * 3 + hh) * 4 + ww]; };
          ref.push_back((1 - th) * ((1 - tw) * at(h0, w0) + tw * at(h0, w1)) +
                        th * ((1 - tw) * at(h1, w0) + tw * at(h1, w1)));
        }
    expectClose(*r, ref, dt);

    // 3-D: axis 0 2 -> 3 and axis 2 2 -> 4 (align corners), axis 1 unchanged.
    std::vector<double> x3 = randomValues(2 * 3 * 2, 13);
    ir::Graph g3;
    ResizeAttrs a3;
    a3.mode = InterpolationMode::kLINEAR;
    a3.ct = ResizeCoordinateTransformation::kALIGN_CORNERS;
    ir::Node* n3 = addResize(g3, constant(g3, "x", dt, {2, 3, 2}, x3), a3);
    n3->attrs.setInts("output_dims", {3, 3, 4});
    auto r3 = run(g3, n3);
    ASSERT_TRUE(r3.isOk()) << r3.status().toString();
    std::vector<double> ref3;
    for (int64_t o0 = 0; o0 < 3; ++o0)
      for (int64_t o1 = 0; o1 < 3; ++o1)
        for (int64_t o2 = 0; o2 < 4; ++o2) {
          double c0 = static_cast<double>(o0) * 1.0 / 2.0, c2 = static_cast<double>(o2) * 1.0 / 3.0;
          auto v = [&](int64_t i0, int64_t i2) { return x3[(i0 * 3 + o1) * 2 + i2]; };
          double lo = (1 - c2) * v(0, 0) + c2 * v(0, 1), hi = (1 - c2) * v(1, 0) + c2 * v(1, 1);
          ref3.push_back((1 - c0) * lo + c0 * hi);
        }
    expectClose(*r3, ref3, dt);
  }
}

TEST(ResizeReference, NearestIntegerTypesExact) {
  int64_t big = (int64_t{1} << 60) + 3;
  std::vector<int64_t> raw{big, -big};
  ir::Graph g;
  ir::Value* x = g.addConstant("x", HostTensor::borrow(DataType::kINT64, makeDims({2}), raw.data()))->output(0);
  ir::Node* n = addResize(g, x, ResizeAttrs{});
  n->attrs.setInts("output_dims", {4});
  auto r = run(g, n);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(r->toInt64Vector(), (std::vector<int64_t>{big, big, -big, -big}));

  ir::Graph g2;
  ir::Node* n2 = addResize(g2, constant(g2, "x", DataType::kINT32, {1, 2}, {7, -9}), ResizeAttrs{});
  n2->attrs.set("scales", ir::AttrValue{std::vector<double>{2.0, 1.5}});
  auto r2 = run(g2, n2);
  ASSERT_TRUE(r2.isOk()) << r2.status().toString();
  EXPECT_EQ(dimsToString(r2->shape()), dimsToString(makeDims({2, 3})));
  EXPECT_EQ(values(*r2), (std::vector<double>{7, 7, -9, 7, 7, -9}));

  // Linear on integers: no reference kernel.
  ir::Graph g3;
  ResizeAttrs lin;
  lin.mode = InterpolationMode::kLINEAR;
  ir::Node* n3 = addResize(g3, constant(g3, "x", DataType::kINT32, {2}, {1, 2}), lin);
  n3->attrs.setInts("output_dims", {4});
  EXPECT_FALSE(run(g3, n3).isOk());
}

TEST(ResizeReference, Input1SizesAndScales) {
  ir::Graph g;
  ir::Value* sizes = constant(g, "sizes", DataType::kINT64, {2}, {2, 5});
  ResizeAttrs a;
  a.mode = InterpolationMode::kLINEAR;
  a.ct = ResizeCoordinateTransformation::kALIGN_CORNERS;
  ir::Node* n = addResize(g, constant(g, "x", DataType::kFLOAT, {2, 3}, {0, 2, 4, 1, 1, 1}), a, sizes);
  n->attrs.setInts("output_dims", {9, 9});  // input 1 overrides
  auto r = run(g, n);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(values(*r), (std::vector<double>{0, 1, 2, 3, 4, 1, 1, 1, 1, 1}));

  ir::Graph g2;
  ir::Value* scales = constant(g2, "scales", DataType::kFLOAT, {2}, {1.0, 1.5});
  ResizeAttrs b;
  b.mode = InterpolationMode::kLINEAR;
  ir::Node* n2 = addResize(g2, constant(g2, "x", DataType::kFLOAT, {1, 3}, {0, 3, 6}), b, scales);
  auto r2 = run(g2, n2);
  ASSERT_TRUE(r2.isOk()) << r2.status().toString();
  EXPECT_EQ(values(*r2), (std::vector<double>{0, 2, 4, 6}));
}

// Given scales drive kALIGN_CORNERS through the unrounded resized extent in * scale (ONNX Resize with scales):
// 4 -> floor(2.4) = 2 outputs at o * (4 - 1) / (2.4 - 1) = 0, 2.142857; with output_dims (no scale) at 0, 3.
TEST(ResizeReference, AlignCornersWithGivenScale) {
  ResizeAttrs a;
  a.mode = InterpolationMode::kLINEAR;
  a.ct = ResizeCoordinateTransformation::kALIGN_CORNERS;
  std::vector<double> got = resize1d({1, 2, 3, 4}, 2, a, 0.6);
  ASSERT_EQ(got.size(), 2U);
  EXPECT_NEAR(got[0], 1.0, 1e-12);
  EXPECT_NEAR(got[1], 1.0 + 3.0 / 1.4, 1e-12);
  EXPECT_EQ(resize1d({1, 2, 3, 4}, 2, a), (std::vector<double>{1, 4}));
  // The same scale as input 1.
  ir::Graph g;
  ir::Value* scales = constant(g, "scales", DataType::kFLOAT, {1}, {0.6});
  ir::Node* n = addResize(g, constant(g, "x", DataType::kFLOAT64, {4}, {1, 2, 3, 4}), a, scales);
  auto r = run(g, n);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  ASSERT_EQ(r->count(), 2);
  // float(0.6) is not 0.6 exactly: 4 * float(0.6) - 1 in the denominator.
  EXPECT_NEAR(r->doubleAt(1), 1.0 + 3.0 / (4.0 * static_cast<double>(0.6F) - 1.0), 1e-12);
}

TEST(ResizeInfer, ShapesAndErrors) {
  auto infer = [](std::vector<int64_t> shape, InterpolationMode mode, std::vector<int64_t> od, std::vector<double> sc,
                  Dims* out) {
    ir::Graph g;
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    ResizeAttrs a;
    a.mode = mode;
    ir::Node* n = addResize(g, constant(g, "x", DataType::kFLOAT, shape, std::vector<double>(count, 0)), a);
    if (!od.empty()) n->attrs.setInts("output_dims", od);
    if (!sc.empty()) n->attrs.set("scales", ir::AttrValue{sc});
    Status s = ir::inferGraphInPlace(g, nullptr);
    if (s && out) *out = n->output(0)->shape;
    return s;
  };
  Dims d{};
  ASSERT_TRUE(infer({1, 3, 4, 5}, InterpolationMode::kNEAREST, {}, {1, 1, 2.5, 0.5}, &d));
  EXPECT_EQ(dimsToString(d), dimsToString(makeDims({1, 3, 10, 2})));
  ASSERT_TRUE(infer({1, 3, 4, 5}, InterpolationMode::kCUBIC, {1, 3, 7, 9}, {}, &d));
  EXPECT_EQ(dimsToString(d), dimsToString(makeDims({1, 3, 7, 9})));
  EXPECT_FALSE(infer({1, 3, 4, 5}, InterpolationMode::kCUBIC, {1, 6, 7, 9}, {}, nullptr));     // cubic on axis 1
  EXPECT_FALSE(infer({1, 3, 4, 5}, InterpolationMode::kNEAREST, {}, {}, nullptr));             // nothing given
  EXPECT_FALSE(infer({1, 3, 4, 5}, InterpolationMode::kNEAREST, {1, 3}, {}, nullptr));         // wrong count
  EXPECT_FALSE(infer({1, 3, 4, 5}, InterpolationMode::kNEAREST, {}, {1, 1, -2, 1}, nullptr));  // negative scale
  EXPECT_FALSE(infer({1, 3, 4, 5}, InterpolationMode::kNEAREST, {1, 3, -1, 5}, {}, nullptr));
  EXPECT_FALSE(infer({0, 3}, InterpolationMode::kNEAREST, {2, 3}, {}, nullptr));  // 0 -> 2
  // Zero-size output is fine.
  ASSERT_TRUE(infer({2, 3}, InterpolationMode::kLINEAR, {2, 0}, {}, &d));
  EXPECT_EQ(dimsToString(d), dimsToString(makeDims({2, 0})));
}

}  // namespace
}  // namespace kiln
