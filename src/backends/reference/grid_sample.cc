// Reference kernel of GridSample (ONNX GridSample, as PyTorch's grid_sample): nearest (round half to even),
// bilinear or bicubic (A = -0.75) sampling with zeros (kFILL), border (kCLAMP) or reflection (kREFLECT) padding;
// volumes (Kiln extension, ONNX opset 20): nearest or trilinear sampling of [N, C, D, H, W] at (x, y, z) points.
#include <array>
#include <cmath>
#include <vector>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

using ir::OpType;

bool isFloatOrDouble(DataType t) { return isComputeFloat(t) || t == DataType::kFLOAT64; }

struct GridParams {
  std::string who;
  InterpolationMode mode = InterpolationMode::kLINEAR;
  bool alignCorners = false;
  SampleMode sample = SampleMode::kFILL;
};

double unnormalize(double c, int64_t size, bool align) {
  return align ? (c + 1.0) / 2.0 * static_cast<double>(size - 1) : ((c + 1.0) * static_cast<double>(size) - 1.0) / 2.0;
}

// Reflects x into [twiceLow / 2, twiceHigh / 2] (bounds doubled so that half-pixel bounds stay integers).
double reflect(double x, double twiceLow, double twiceHigh) {
  if (twiceLow == twiceHigh) return 0.0;
  double lo = twiceLow / 2.0, span = (twiceHigh - twiceLow) / 2.0;
  x = std::fabs(x - lo);
  double extra = std::fmod(x, span);
  auto flips = static_cast<int64_t>(std::floor(x / span));
  return flips % 2 == 0 ? extra + lo : span - extra + lo;
}

double clip(double x, int64_t size) { return std::min(static_cast<double>(size - 1), std::max(0.0, x)); }

// Border/reflection handling of a source coordinate (the coordinate itself, not an index).
double padCoordinate(double x, int64_t size, GridParams const& p) {
  if (p.sample == SampleMode::kCLAMP) return clip(x, size);
  if (p.sample == SampleMode::kREFLECT) {
    x = p.alignCorners ? reflect(x, 0.0, 2.0 * static_cast<double>(size - 1))
                       : reflect(x, -1.0, 2.0 * static_cast<double>(size) - 1.0);
    return clip(x, size);
  }
  return x;
}

double cubic1(double x, double a) { return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0; }
double cubic2(double x, double a) { return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a; }

Status runGridSample(GridParams const& p, LaunchContext const& ctx) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& grid = ctx.inputs[1];
  TensorView const& y = ctx.outputs[0];
  if (x.shape.nbDims != 4 || grid.shape.nbDims != 4 || y.shape.nbDims != 4 || grid.shape.d[3] != 2 ||
      grid.shape.d[0] != x.shape.d[0] || y.shape.d[0] != x.shape.d[0] || y.shape.d[1] != x.shape.d[1] ||
      y.shape.d[2] != grid.shape.d[1] || y.shape.d[3] != grid.shape.d[2])
    return invalidArgument(p.who, ": shapes x ", dimsToString(x.shape), ", grid ", dimsToString(grid.shape), ", y ",
                           dimsToString(y.shape), " do not agree");
  int64_t n = x.shape.d[0], c = x.shape.d[1], h = x.shape.d[2], w = x.shape.d[3];
  int64_t ho = y.shape.d[2], wo = y.shape.d[3];
  if ((h == 0 || w == 0) && y.count() > 0)
    return invalidArgument(p.who, ": cannot sample an empty image ", dimsToString(x.shape));
  // Pixel fetch with zero padding (the coordinates were already clamped/reflected where that applies).
  auto at = [&](int64_t b, int64_t ch, int64_t iy, int64_t ix) {
    if (iy < 0 || iy >= h || ix < 0 || ix >= w) return 0.0;
    return loadAsDouble(x, ((b * c + ch) * h + iy) * w + ix);
  };
  // Cubic taps read out of bounds pixels through the padding mode.
  auto bounded = [&](int64_t b, int64_t ch, int64_t iy, int64_t ix) {
    if (p.sample == SampleMode::kFILL) return at(b, ch, iy, ix);
    auto fx = static_cast<int64_t>(padCoordinate(static_cast<double>(ix), w, p));
    auto fy = static_cast<int64_t>(padCoordinate(static_cast<double>(iy), h, p));
    return at(b, ch, fy, fx);
  };
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < ho; ++oy)
      for (int64_t ox = 0; ox < wo; ++ox) {
        int64_t gi = ((b * ho + oy) * wo + ox) * 2;
        double sx = unnormalize(loadAsDouble(grid, gi), w, p.alignCorners);
        double sy = unnormalize(loadAsDouble(grid, gi + 1), h, p.alignCorners);
        for (int64_t ch = 0; ch < c; ++ch) {
          double v = 0.0;
          switch (p.mode) {
            case InterpolationMode::kNEAREST: {
              double px = padCoordinate(sx, w, p), py = padCoordinate(sy, h, p);
              v = at(b, ch, static_cast<int64_t>(std::nearbyint(py)), static_cast<int64_t>(std::nearbyint(px)));
              break;
            }
            case InterpolationMode::kLINEAR: {
              double px = padCoordinate(sx, w, p), py = padCoordinate(sy, h, p);
              double x0 = std::floor(px), y0 = std::floor(py);
              double tx = px - x0, ty = py - y0;
              auto ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0);
              v = (1 - ty) * ((1 - tx) * at(b, ch, iy, ix) + tx * at(b, ch, iy, ix + 1)) +
                  ty * ((1 - tx) * at(b, ch, iy + 1, ix) + tx * at(b, ch, iy + 1, ix + 1));
              break;
            }
            case InterpolationMode::kCUBIC: {
              double x0 = std::floor(sx), y0 = std::floor(sy);
              double tx = sx - x0, ty = sy - y0;
              double const a = -0.75;
              std::array<double, 4> cx{cubic2(tx + 1, a), cubic1(tx, a), cubic1(1 - tx, a), cubic2(2 - tx, a)};
              std::array<double, 4> cy{cubic2(ty + 1, a), cubic1(ty, a), cubic1(1 - ty, a), cubic2(2 - ty, a)};
              auto ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0);
              for (int64_t j = 0; j < 4; ++j) {
                double row = 0.0;
                for (int64_t i = 0; i < 4; ++i) row += cx[i] * bounded(b, ch, iy - 1 + j, ix - 1 + i);
                v += cy[j] * row;
              }
              break;
            }
          }
          storeFromDouble(y, ((b * c + ch) * ho + oy) * wo + ox, v);
        }
      }
  return Status::ok();
}

// The volumetric form: x [N, C, D, H, W], grid [N, Do, Ho, Wo, 3] holding (x, y, z); nearest or trilinear.
Status runGridSample3d(GridParams const& p, LaunchContext const& ctx) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& grid = ctx.inputs[1];
  TensorView const& y = ctx.outputs[0];
  if (x.shape.nbDims != 5 || grid.shape.nbDims != 5 || y.shape.nbDims != 5 || grid.shape.d[4] != 3 ||
      grid.shape.d[0] != x.shape.d[0] || y.shape.d[0] != x.shape.d[0] || y.shape.d[1] != x.shape.d[1] ||
      y.shape.d[2] != grid.shape.d[1] || y.shape.d[3] != grid.shape.d[2] || y.shape.d[4] != grid.shape.d[3])
    return invalidArgument(p.who, ": shapes x ", dimsToString(x.shape), ", grid ", dimsToString(grid.shape), ", y ",
                           dimsToString(y.shape), " do not agree");
  if (p.mode == InterpolationMode::kCUBIC) return unsupported(p.who, ": cubic sampling of a volume");
  int64_t n = x.shape.d[0], c = x.shape.d[1], d = x.shape.d[2], h = x.shape.d[3], w = x.shape.d[4];
  int64_t dout = y.shape.d[2], ho = y.shape.d[3], wo = y.shape.d[4];
  if ((d == 0 || h == 0 || w == 0) && y.count() > 0)
    return invalidArgument(p.who, ": cannot sample an empty volume ", dimsToString(x.shape));
  auto at = [&](int64_t b, int64_t ch, int64_t iz, int64_t iy, int64_t ix) {
    if (iz < 0 || iz >= d || iy < 0 || iy >= h || ix < 0 || ix >= w) return 0.0;
    return loadAsDouble(x, (((b * c + ch) * d + iz) * h + iy) * w + ix);
  };
  int64_t const points = dout * ho * wo;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t pt = 0; pt < points; ++pt) {
      int64_t gi = (b * points + pt) * 3;
      double px = padCoordinate(unnormalize(loadAsDouble(grid, gi), w, p.alignCorners), w, p);
      double py = padCoordinate(unnormalize(loadAsDouble(grid, gi + 1), h, p.alignCorners), h, p);
      double pz = padCoordinate(unnormalize(loadAsDouble(grid, gi + 2), d, p.alignCorners), d, p);
      for (int64_t ch = 0; ch < c; ++ch) {
        double v = 0.0;
        if (p.mode == InterpolationMode::kNEAREST) {
          v = at(b, ch, static_cast<int64_t>(std::nearbyint(pz)), static_cast<int64_t>(std::nearbyint(py)),
                 static_cast<int64_t>(std::nearbyint(px)));
        } else {
          double x0 = std::floor(px), y0 = std::floor(py), z0 = std::floor(pz);
          double tx = px - x0, ty = py - y0, tz = pz - z0;
          auto ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0), iz = static_cast<int64_t>(z0);
          for (int64_t k = 0; k < 2; ++k)
            for (int64_t j = 0; j < 2; ++j)
              for (int64_t i = 0; i < 2; ++i) {
                double wgt = (k ? tz : 1 - tz) * (j ? ty : 1 - ty) * (i ? tx : 1 - tx);
                v += wgt * at(b, ch, iz + k, iy + j, ix + i);
              }
        }
        storeFromDouble(y, (b * c + ch) * points + pt, v);
      }
    }
  return Status::ok();
}

Tactic gridSampleTactic() {
  return makeTactic(
      "grid_sample_reference", OpType::kGridSample,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        GridParams p;
        p.who = node.describe();
        int64_t mode = node.attrs.getInt("mode", static_cast<int64_t>(InterpolationMode::kLINEAR));
        if (mode < 0 || mode >= EnumMax<InterpolationMode>())
          return invalidGraph(p.who, ": unknown interpolation mode ", mode);
        p.mode = static_cast<InterpolationMode>(mode);
        p.alignCorners = node.attrs.getInt("align_corners", 0) != 0;
        p.sample = static_cast<SampleMode>(node.attrs.getInt("sample_mode", static_cast<int64_t>(SampleMode::kFILL)));
        if (p.sample != SampleMode::kFILL && p.sample != SampleMode::kCLAMP && p.sample != SampleMode::kREFLECT)
          return invalidGraph(p.who, ": sample_mode must be kFILL, kCLAMP or kREFLECT");
        return makeKernel([p](LaunchContext const& ctx) {
          return ctx.inputs[0].shape.nbDims == 5 ? runGridSample3d(p, ctx) : runGridSample(p, ctx);
        });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return in.size() == 2 && out.size() == 1 && isFloatOrDouble(in[0].dtype) && isFloatOrDouble(in[1].dtype) &&
               out[0].dtype == in[0].dtype;
      });
}

KILN_REGISTER_TACTIC(gridSampleTactic);

}  // namespace
}  // namespace kiln::backends::reference
