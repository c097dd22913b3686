// Tests of GridSample: hand-computed samples for every interpolation and sample mode (zeros, border,
// reflection, half-to-even nearest), identity grids in every float type, cubic on a linear ramp, and errors.
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

ir::Node* addGrid(ir::Graph& g, DataType dt, std::vector<int64_t> const& xs, std::vector<double> const& x,
                  std::vector<int64_t> const& gs, std::vector<double> const& grid, InterpolationMode mode, bool align,
                  SampleMode sm) {
  ir::Node* n = g.addNode(OpType::kGridSample, "gs", {constant(g, "x", dt, xs, x), constant(g, "grid", dt, gs, grid)});
  n->attrs.setInt("mode", static_cast<int64_t>(mode));
  n->attrs.setInt("align_corners", align ? 1 : 0);
  n->attrs.setInt("sample_mode", static_cast<int64_t>(sm));
  return n;
}

std::vector<double> sample(std::vector<int64_t> const& xs, std::vector<double> const& x,
                           std::vector<double> const& grid, InterpolationMode mode, bool align, SampleMode sm) {
  ir::Graph g;
  int64_t pts = static_cast<int64_t>(grid.size()) / 2;
  ir::Node* n = addGrid(g, DataType::kFLOAT64, xs, x, {1, 1, pts, 2}, grid, mode, align, sm);
  auto out = run(g, n);
  EXPECT_TRUE(out.isOk()) << out.status().toString();
  return out.isOk() ? values(*out) : std::vector<double>{};
}

TEST(GridSampleReference, LinearPaddingModes) {
  // One row [1, 2, 4] (H = 1, W = 3). x = -1.5 maps to pixel ((-0.5) * 3 - 1) / 2 = -1.25 (align_corners 0):
  // zeros: 0.25 * 0 + 0.75 * 0 = 0; border: clamped to 0 -> 1; reflection about -0.5 -> 0.25 -> 1.25.
  std::vector<int64_t> xs{1, 1, 1, 3};
  std::vector<double> x{1, 2, 4};
  using IM = InterpolationMode;
  EXPECT_EQ(sample(xs, x, {-1.5, 0}, IM::kLINEAR, false, SampleMode::kFILL), std::vector<double>{0});
  EXPECT_EQ(sample(xs, x, {-1.5, 0}, IM::kLINEAR, false, SampleMode::kCLAMP), std::vector<double>{1});
  EXPECT_EQ(sample(xs, x, {-1.5, 0}, IM::kLINEAR, false, SampleMode::kREFLECT), std::vector<double>{1.25});
  // x = 1 maps to 2.5 (half outside): zeros 0.5 * 4 = 2; border 4; reflection 4.
  EXPECT_EQ(sample(xs, x, {1, 0}, IM::kLINEAR, false, SampleMode::kFILL), std::vector<double>{2});
  EXPECT_EQ(sample(xs, x, {1, 0}, IM::kLINEAR, false, SampleMode::kCLAMP), std::vector<double>{4});
  EXPECT_EQ(sample(xs, x, {1, 0}, IM::kLINEAR, false, SampleMode::kREFLECT), std::vector<double>{4});
  // align_corners: -1 and 1 are the corner centers; 0.25 -> pixel 1.25 -> 2.5. x = 1.5 -> pixel 2.5, reflected
  // about 2 -> 1.5 -> 3.
  EXPECT_EQ(sample(xs, x, {-1, 0, 1, 0, 0.25, 0}, IM::kLINEAR, true, SampleMode::kFILL),
            (std::vector<double>{1, 4, 2.5}));
  EXPECT_EQ(sample(xs, x, {1.5, 0}, IM::kLINEAR, true, SampleMode::kREFLECT), std::vector<double>{3});
  // 2-D: [[1, 2], [3, 4]], center -> 2.5 in both conventions; corner (-1, -1), align 0 -> 0.25 * 1.
  std::vector<int64_t> sq{1, 1, 2, 2};
  std::vector<double> v{1, 2, 3, 4};
  EXPECT_EQ(sample(sq, v, {0, 0}, IM::kLINEAR, false, SampleMode::kFILL), std::vector<double>{2.5});
  EXPECT_EQ(sample(sq, v, {0, 0}, IM::kLINEAR, true, SampleMode::kFILL), std::vector<double>{2.5});
  EXPECT_EQ(sample(sq, v, {-1, -1}, IM::kLINEAR, false, SampleMode::kFILL), std::vector<double>{0.25});
  // (x, y) order: x = 1 (right column), y = -1 (top row) with align_corners -> 2.
  EXPECT_EQ(sample(sq, v, {1, -1}, IM::kLINEAR, true, SampleMode::kFILL), std::vector<double>{2});
}

TEST(GridSampleReference, NearestRoundsHalfToEven) {
  std::vector<int64_t> xs{1, 1, 1, 3};
  std::vector<double> x{1, 2, 4};
  using IM = InterpolationMode;
  // align_corners, W = 3: pixel = x + 1. -0.5 -> 0.5 -> 0; 0.5 -> 1.5 -> 2; 0.2 -> 1.2 -> 1; 1.9 -> 2.9 -> 3 (out).
  EXPECT_EQ(sample(xs, x, {-0.5, 0, 0.5, 0, 0.2, 0, 1.9, 0}, IM::kNEAREST, true, SampleMode::kFILL),
            (std::vector<double>{1, 4, 2, 0}));
  EXPECT_EQ(sample(xs, x, {1.9, 0}, IM::kNEAREST, true, SampleMode::kCLAMP), std::vector<double>{4});
  // 2.9 reflected about 2 -> 1.1 -> 1.
  EXPECT_EQ(sample(xs, x, {1.9, 0}, IM::kNEAREST, true, SampleMode::kREFLECT), std::vector<double>{2});
}

TEST(GridSampleReference, CubicReproducesLinearRampInside) {
  // f(h, w) = 3h + w on a 5x6 image; bicubic weights sum to 1 and are symmetric, so interior samples at integer
  // and half-integer pixel positions reproduce the ramp exactly (for any A).
  std::vector<double> img;
  for (int64_t h = 0; h < 5; ++h)
    for (int64_t w = 0; w < 6; ++w) img.push_back(3.0 * static_cast<double>(h) + static_cast<double>(w));
  std::vector<double> grid{0, -0.25, -0.4, 0.25, 0.2, 0};
  auto out = sample({1, 1, 5, 6}, img, grid, InterpolationMode::kCUBIC, true, SampleMode::kFILL);
  ASSERT_EQ(out.size(), 3U);
  for (size_t i = 0; i < 3; ++i) {
    double px = (grid[2 * i] + 1) / 2 * 5, py = (grid[2 * i + 1] + 1) / 2 * 4;
    EXPECT_NEAR(out[i], 3 * py + px, 1e-9);
  }
  // Near the border the padding mode matters: border replicates, zeros pull towards 0.
  auto border = sample({1, 1, 5, 6}, img, {-1, -1}, InterpolationMode::kCUBIC, true, SampleMode::kCLAMP);
  auto zeros = sample({1, 1, 5, 6}, img, {-0.9, -0.9}, InterpolationMode::kCUBIC, true, SampleMode::kFILL);
  ASSERT_EQ(border.size(), 1U);
  EXPECT_NEAR(border[0], 0.0, 1e-12);  // exactly at the corner pixel
  ASSERT_EQ(zeros.size(), 1U);
}

TEST(GridSampleReference, CubicMatchesKeysKernel) {
  // Independent form: sum over every pixel of W(dx) * W(dy) * v with Keys' kernel (A = -0.75), zeros outside.
  std::vector<double> img = randomValues(4 * 5, 21);
  auto keys = [](double t) {
    double a = -0.75, u = std::fabs(t);
    if (u <= 1) return (a + 2) * u * u * u - (a + 3) * u * u + 1;
    if (u < 2) return a * u * u * u - 5 * a * u * u + 8 * a * u - 4 * a;
    return 0.0;
  };
  std::vector<double> grid{0.37, -0.61, -0.95, 0.9, 0.0, 0.0};
  auto out = sample({1, 1, 4, 5}, img, grid, InterpolationMode::kCUBIC, false, SampleMode::kFILL);
  ASSERT_EQ(out.size(), 3U);
  for (size_t i = 0; i < 3; ++i) {
    double px = ((grid[2 * i] + 1) * 5 - 1) / 2, py = ((grid[2 * i + 1] + 1) * 4 - 1) / 2;
    double ref = 0;
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t w = 0; w < 5; ++w)
        ref += keys(px - static_cast<double>(w)) * keys(py - static_cast<double>(h)) * img[h * 5 + w];
    EXPECT_NEAR(out[i], ref, 1e-12) << i;
  }
}

TEST(GridSampleReference, IdentityGridEveryTypeAndMode) {
  int64_t n = 2, c = 3, h = 3, w = 4;
  std::vector<double> x = randomValues(n * c * h * w, 4);
  std::vector<double> grid;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j) {
        grid.push_back(2.0 * static_cast<double>(j) / static_cast<double>(w - 1) - 1.0);
        grid.push_back(2.0 * static_cast<double>(i) / static_cast<double>(h - 1) - 1.0);
      }
  for (DataType dt : kFloatTypes) {
    for (auto mode : {InterpolationMode::kNEAREST, InterpolationMode::kLINEAR, InterpolationMode::kCUBIC}) {
      for (auto sm : {SampleMode::kFILL, SampleMode::kCLAMP, SampleMode::kREFLECT}) {
        ir::Graph g;
        ir::Node* nd = addGrid(g, dt, {n, c, h, w}, x, {n, h, w, 2}, grid, mode, true, sm);
        auto out = run(g, nd);
        ASSERT_TRUE(out.isOk()) << out.status().toString();
        EXPECT_EQ(dimsToString(out->shape()), dimsToString(makeDims({n, c, h, w})));
        // The grid values k/(w-1) are not all exact in float16/bfloat16: allow a coordinate rounding error.
        double tol = dt == DataType::kFLOAT || dt == DataType::kFLOAT64 ? 1e-5 : 0.1;
        if (mode == InterpolationMode::kNEAREST || dt == DataType::kFLOAT || dt == DataType::kFLOAT64) {
          auto got = values(*out);
          for (size_t i = 0; i < x.size(); ++i)
            ASSERT_NEAR(got[i], x[i], tol) << dataTypeName(dt) << " mode " << static_cast<int>(mode) << " at " << i;
        }
      }
    }
  }
}

TEST(GridSampleReference, GridKeepsItsOwnType) {
  // float16 image, float32 grid: 2x2 [[1, 2], [3, 4]] at the center -> 2.5.
  ir::Graph g;
  ir::Node* n = g.addNode(OpType::kGridSample, "gs",
                          {constant(g, "x", DataType::kHALF, {1, 1, 2, 2}, {1, 2, 3, 4}),
                           constant(g, "grid", DataType::kFLOAT, {1, 1, 1, 2}, {0, 0})});
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_EQ(out->dtype(), DataType::kHALF);
  EXPECT_EQ(values(*out), std::vector<double>{2.5});
}

TEST(GridSampleReference, OutputShapeAndEmptyGrid) {
  ir::Graph g;
  ir::Node* n = addGrid(g, DataType::kFLOAT, {1, 2, 3, 3}, std::vector<double>(18, 1), {1, 0, 5, 2}, {},
                        InterpolationMode::kLINEAR, false, SampleMode::kFILL);
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_EQ(dimsToString(out->shape()), dimsToString(makeDims({1, 2, 0, 5})));
}

// Volumetric (Kiln extension): x [1, 1, 2, 2, 2] = 0..7 (index = 4z + 2y + x), align_corners 1 so that -1 and 1
// are the corner voxels. Hand-computed: corners give 0 and 7; the center is the mean 3.5; (0, -1, 1) lies between
// voxels 4 and 5 -> 4.5; (3, 0, 0) is past the x edge (pixel 2) -> 0 with zeros padding, and with border padding
// clamps to x = 1: mean of voxels 1, 3, 5, 7 = 4. Nearest at (0.2, -1, 1): pixel x 0.6 rounds to 1 -> voxel 5.
TEST(GridSampleReference, Volumetric) {
  std::vector<double> vol{0, 1, 2, 3, 4, 5, 6, 7};
  auto sample3d = [&](std::vector<double> const& grid, InterpolationMode mode, SampleMode sm) {
    ir::Graph g;
    auto pts = static_cast<int64_t>(grid.size()) / 3;
    ir::Node* n = g.addNode(OpType::kGridSample, "gs",
                            {constant(g, "x", DataType::kFLOAT64, {1, 1, 2, 2, 2}, vol),
                             constant(g, "grid", DataType::kFLOAT64, {1, 1, 1, pts, 3}, grid)});
    n->attrs.setInt("mode", static_cast<int64_t>(mode));
    n->attrs.setInt("align_corners", 1);
    n->attrs.setInt("sample_mode", static_cast<int64_t>(sm));
    auto out = run(g, n);
    EXPECT_TRUE(out.isOk()) << out.status().toString();
    if (out.isOk()) {
      EXPECT_EQ(dimsToString(out->shape()), dimsToString(makeDims({1, 1, 1, 1, pts})));
    }
    return out.isOk() ? values(*out) : std::vector<double>{};
  };
  using IM = InterpolationMode;
  EXPECT_EQ(sample3d({-1, -1, -1, 1, 1, 1, 0, 0, 0, 0, -1, 1, 3, 0, 0}, IM::kLINEAR, SampleMode::kFILL),
            (std::vector<double>{0, 7, 3.5, 4.5, 0}));
  EXPECT_EQ(sample3d({3, 0, 0}, IM::kLINEAR, SampleMode::kCLAMP), std::vector<double>{4});
  EXPECT_EQ(sample3d({0.2, -1, 1}, IM::kNEAREST, SampleMode::kFILL), std::vector<double>{5});
  // Cubic is not defined for volumes; a 5-D input needs a 5-D grid of 3-vectors.
  ir::Graph g;
  ir::Node* n = g.addNode(OpType::kGridSample, "gs",
                          {constant(g, "x", DataType::kFLOAT, {1, 1, 2, 2, 2}, vol),
                           constant(g, "grid", DataType::kFLOAT, {1, 1, 1, 1, 3}, std::vector<double>{0, 0, 0})});
  n->attrs.setInt("mode", static_cast<int64_t>(IM::kCUBIC));
  EXPECT_FALSE(ir::inferGraphInPlace(g, nullptr).isOk());
  ir::Graph g2;
  g2.addNode(OpType::kGridSample, "gs",
             {constant(g2, "x", DataType::kFLOAT, {1, 1, 2, 2, 2}, vol),
              constant(g2, "grid", DataType::kFLOAT, {1, 1, 1, 1, 2}, std::vector<double>{0, 0})});
  EXPECT_FALSE(ir::inferGraphInPlace(g2, nullptr).isOk());
}

TEST(GridSampleInfer, Errors) {
  auto infer = [](std::vector<int64_t> xs, std::vector<int64_t> gs, DataType gt, SampleMode sm) {
    ir::Graph g;
    int64_t nx = 1, ng = 1;
    for (int64_t d : xs) nx *= d;
    for (int64_t d : gs) ng *= d;
    ir::Node* n = g.addNode(OpType::kGridSample, "gs",
                            {constant(g, "x", DataType::kFLOAT, xs, std::vector<double>(nx, 0)),
                             constant(g, "grid", gt, gs, std::vector<double>(ng, 0))});
    n->attrs.setInt("sample_mode", static_cast<int64_t>(sm));
    return ir::inferGraphInPlace(g, nullptr);
  };
  EXPECT_TRUE(infer({1, 1, 2, 2}, {1, 3, 3, 2}, DataType::kFLOAT, SampleMode::kFILL));
  EXPECT_FALSE(infer({1, 1, 2, 2}, {1, 3, 3, 3}, DataType::kFLOAT, SampleMode::kFILL));
  EXPECT_FALSE(infer({1, 2, 2}, {1, 3, 3, 2}, DataType::kFLOAT, SampleMode::kFILL));
  EXPECT_FALSE(infer({2, 1, 2, 2}, {1, 3, 3, 2}, DataType::kFLOAT, SampleMode::kFILL));
  EXPECT_TRUE(infer({1, 1, 2, 2}, {1, 3, 3, 2}, DataType::kHALF, SampleMode::kFILL));  // grid type of its own
  EXPECT_FALSE(infer({1, 1, 2, 2}, {1, 3, 3, 2}, DataType::kINT32, SampleMode::kFILL));
  EXPECT_FALSE(infer({1, 1, 2, 2}, {1, 3, 3, 2}, DataType::kFLOAT, SampleMode::kWRAP));
}

}  // namespace
}  // namespace kiln
