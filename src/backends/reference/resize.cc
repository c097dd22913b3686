// Reference kernel of Resize (TensorRT's IResizeLayer): nearest (any storable type, copied exactly), N-D linear
// and cubic (A = cubic_coeff, exclude_outside) over every axis, with every coordinate transformation, selector
// and nearest rounding mode. Linear and cubic run one axis at a time in fp64 and round once on store.
#include <cmath>
#include <cstring>
#include <vector>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

using ir::OpType;

bool isFloatOrDouble(DataType t) { return isComputeFloat(t) || t == DataType::kFLOAT64; }

struct ResizeParams {
  std::string who;
  InterpolationMode mode = InterpolationMode::kNEAREST;
  ResizeCoordinateTransformation transform = ResizeCoordinateTransformation::kASYMMETRIC;
  ResizeSelector selector = ResizeSelector::kFORMULA;
  ResizeRoundMode rounding = ResizeRoundMode::kFLOOR;
  double cubicA = -0.75;
  bool excludeOutside = false;
  std::vector<double> scales;  // from the attribute; empty when absent
};

struct Tap {
  int64_t index;
  double weight;
};

// The input coordinate of output index o along an axis of extent in -> out with scale `scale`. With given scales
// (`scaleGiven`), kALIGN_CORNERS maps the corners of the unrounded resized extent in * scale (as ONNX Resize does);
// otherwise those of out.
double sourceCoordinate(ResizeParams const& p, int64_t o, int64_t in, int64_t out, double scale, bool scaleGiven) {
  if (out == 1 && p.selector == ResizeSelector::kUPPER) return 0.0;
  auto od = static_cast<double>(o);
  switch (p.transform) {
    case ResizeCoordinateTransformation::kALIGN_CORNERS: {
      double resized = scaleGiven ? static_cast<double>(in) * scale : static_cast<double>(out);
      return out == 1 || !(resized > 1.0) ? 0.0 : od * static_cast<double>(in - 1) / (resized - 1.0);
    }
    case ResizeCoordinateTransformation::kASYMMETRIC:
      return od / scale;
    case ResizeCoordinateTransformation::kHALF_PIXEL:
      return (od + 0.5) / scale - 0.5;
  }
  return od;
}

int64_t roundNearest(ResizeRoundMode m, double x) {
  switch (m) {
    case ResizeRoundMode::kHALF_UP:
      return static_cast<int64_t>(std::floor(x + 0.5));
    case ResizeRoundMode::kHALF_DOWN:
      return static_cast<int64_t>(std::ceil(x - 0.5));
    case ResizeRoundMode::kFLOOR:
      return static_cast<int64_t>(std::floor(x));
    case ResizeRoundMode::kCEIL:
      return static_cast<int64_t>(std::ceil(x));
  }
  return 0;
}

// The weighted input taps of every output index along one axis.
std::vector<std::vector<Tap>> axisTaps(ResizeParams const& p, int64_t in, int64_t out, double scale, bool scaleGiven) {
  std::vector<std::vector<Tap>> taps(static_cast<size_t>(out));
  auto clampIndex = [in](int64_t i) { return std::min(in - 1, std::max<int64_t>(0, i)); };
  for (int64_t o = 0; o < out; ++o) {
    double x = sourceCoordinate(p, o, in, out, scale, scaleGiven);
    switch (p.mode) {
      case InterpolationMode::kNEAREST:
        taps[o].push_back({clampIndex(roundNearest(p.rounding, x)), 1.0});
        break;
      case InterpolationMode::kLINEAR: {
        x = std::min(static_cast<double>(in - 1), std::max(0.0, x));
        auto i0 = static_cast<int64_t>(std::floor(x));
        double t = x - static_cast<double>(i0);
        taps[o].push_back({i0, 1.0 - t});
        if (t > 0.0) taps[o].push_back({clampIndex(i0 + 1), t});
        break;
      }
      case InterpolationMode::kCUBIC: {
        double a = p.cubicA;
        double f = std::floor(x);
        double t = x - f;
        auto i0 = static_cast<int64_t>(f);
        double w[4] = {((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a, ((a + 2) * t - (a + 3)) * t * t + 1,
                       ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
                       ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a};
        double sum = 0.0;
        for (int64_t j = 0; j < 4; ++j) {
          int64_t idx = i0 - 1 + j;
          bool outside = idx < 0 || idx >= in;
          if (outside && p.excludeOutside) continue;
          taps[o].push_back({clampIndex(idx), w[j]});
          sum += w[j];
        }
        if (p.excludeOutside && sum != 0.0)
          for (Tap& tp : taps[o]) tp.weight /= sum;
        break;
      }
    }
  }
  return taps;
}

Status runResize(ResizeParams const& p, LaunchContext const& ctx) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& y = ctx.outputs[0];
  int32_t rank = x.shape.nbDims;
  if (y.shape.nbDims != rank || x.dtype != y.dtype)
    return invalidArgument(p.who, ": y ", dimsToString(y.shape), " must have x's rank and type");
  std::vector<double> scales(static_cast<size_t>(rank), 0.0);
  TensorView const* in1 = ctx.inputs.size() > 1 && ctx.inputs[1].data ? &ctx.inputs[1] : nullptr;
  bool in1Scales = in1 && isFloatOrDouble(in1->dtype);
  if (in1 && in1->count() != rank) return invalidArgument(p.who, ": input 1 must hold ", rank, " values");
  for (int32_t i = 0; i < rank; ++i) {
    int64_t in = x.shape.d[i], out = y.shape.d[i];
    if (in == 0 && out > 0) return invalidArgument(p.who, ": axis ", i, " of extent 0 cannot be resized to ", out);
    if (in1Scales)
      scales[i] = loadAsDouble(*in1, i);
    else if (!in1 && !p.scales.empty())
      scales[i] = p.scales[i];
    else
      scales[i] = in > 0 ? static_cast<double>(out) / static_cast<double>(in) : 1.0;
    if (!(scales[i] > 0.0)) return invalidArgument(p.who, ": scale ", scales[i], " of axis ", i, " must be positive");
  }
  if (p.mode == InterpolationMode::kCUBIC)
    for (int32_t i = 0; i + 2 < rank; ++i)
      if (x.shape.d[i] != y.shape.d[i])
        return unsupported(p.who, ": kCUBIC resizes only the two innermost axes, not axis ", i);
  if (y.count() == 0) return Status::ok();
  std::vector<std::vector<std::vector<Tap>>> taps;
  bool scaleGiven = in1Scales || (!in1 && !p.scales.empty());
  for (int32_t i = 0; i < rank; ++i) taps.push_back(axisTaps(p, x.shape.d[i], y.shape.d[i], scales[i], scaleGiven));

  if (p.mode == InterpolationMode::kNEAREST) {
    size_t es = dataTypeSize(x.dtype);
    if (es == 0) return unsupported(p.who, ": type ", dataTypeName(x.dtype), " is not supported");
    auto const* src = static_cast<unsigned char const*>(x.data);
    auto* dst = static_cast<unsigned char*>(y.data);
    std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
    for (int64_t lin = 0; lin < y.count(); ++lin) {
      int64_t off = 0;
      for (int32_t a = 0; a < rank; ++a) off = off * x.shape.d[a] + taps[a][idx[a]][0].index;
      std::memcpy(dst + static_cast<size_t>(lin) * es, src + static_cast<size_t>(off) * es, es);
      for (int32_t a = rank - 1; a >= 0; --a) {
        if (++idx[a] < y.shape.d[a]) break;
        idx[a] = 0;
      }
    }
    return Status::ok();
  }
  if (!isFloatOrDouble(x.dtype))
    return unsupported(p.who, ": linear and cubic resize need a float type, got ", dataTypeName(x.dtype));
  // Separable passes: resize one axis at a time (axes whose extent and mapping are unchanged are skipped).
  std::vector<double> cur(static_cast<size_t>(x.count()));
  for (int64_t i = 0; i < x.count(); ++i) cur[i] = loadAsDouble(x, i);
  Dims shape = x.shape;
  for (int32_t a = 0; a < rank; ++a) {
    int64_t in = shape.d[a], out = y.shape.d[a];
    bool identity = in == out;
    for (int64_t o = 0; identity && o < out; ++o)
      identity = taps[a][o].size() == 1 && taps[a][o][0].index == o && taps[a][o][0].weight == 1.0;
    if (identity) continue;
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < a; ++d) outer *= shape.d[d];
    for (int32_t d = a + 1; d < rank; ++d) inner *= shape.d[d];
    std::vector<double> next(static_cast<size_t>(outer * out * inner), 0.0);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < out; ++j)
        for (int64_t s = 0; s < inner; ++s) {
          double acc = 0.0;
          for (Tap const& tp : taps[a][j]) acc += tp.weight * cur[(o * in + tp.index) * inner + s];
          next[(o * out + j) * inner + s] = acc;
        }
    cur.swap(next);
    shape.d[a] = out;
  }
  for (int64_t i = 0; i < y.count(); ++i) storeFromDouble(y, i, cur[i]);
  return Status::ok();
}

Tactic resizeTactic() {
  return makeTactic(
      "resize_reference", OpType::kResize,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        ResizeParams p;
        p.who = node.describe();
        int64_t mode = node.attrs.getInt("mode", 0), ct = node.attrs.getInt("coordinate_transformation", 1);
        int64_t sel = node.attrs.getInt("selector", 0), rnd = node.attrs.getInt("nearest_rounding", 2);
        if (mode < 0 || mode >= EnumMax<InterpolationMode>() || ct < 0 ||
            ct >= EnumMax<ResizeCoordinateTransformation>() || sel < 0 || sel >= EnumMax<ResizeSelector>() || rnd < 0 ||
            rnd >= EnumMax<ResizeRoundMode>())
          return invalidGraph(p.who, ": unknown mode, coordinate_transformation, selector or nearest_rounding");
        p.mode = static_cast<InterpolationMode>(mode);
        p.transform = static_cast<ResizeCoordinateTransformation>(ct);
        p.selector = static_cast<ResizeSelector>(sel);
        p.rounding = static_cast<ResizeRoundMode>(rnd);
        p.cubicA = node.attrs.getFloat("cubic_coeff", -0.75);
        p.excludeOutside = node.attrs.getInt("exclude_outside", 0) != 0;
        if (!node.attrs.has("output_dims")) p.scales = node.attrs.getFloats("scales");
        return makeKernel([p](LaunchContext const& ctx) { return runResize(p, ctx); });
      },
      [](ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        if (in.empty() || in.size() > 2 || out.size() != 1 || in[0].dtype != out[0].dtype) return false;
        if (node.attrs.getInt("mode", 0) == static_cast<int64_t>(InterpolationMode::kNEAREST))
          return dataTypeSize(in[0].dtype) > 0;
        return isFloatOrDouble(in[0].dtype);
      });
}

KILN_REGISTER_TACTIC(resizeTactic);

}  // namespace
}  // namespace kiln::backends::reference
