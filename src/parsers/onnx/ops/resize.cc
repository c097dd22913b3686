// ONNX importers for Resize (and, through importResizeOrUpsample, Upsample): a resize layer whose scales or sizes
// are constants (attributes of the layer) or tensors known only at run time (the layer's input 1). What the layer
// lacks (half_pixel_symmetric, tf_crop_and_resize, antialias, keep_aspect_ratio_policy's rounded sizes with the
// policy's scale) is composed, for static shapes and constant parameters, from one constant matrix per axis.
#include <algorithm>
#include <cmath>

#include "parsers/onnx/ops/axis_matrix_util.h"
#include "parsers/onnx/ops/resize_util.h"

namespace kiln::onnx {
namespace {

/// How one axis is resized by the composed path.
struct AxisResize {
  int64_t in = 1, out = 1;
  double scale = 1.0;
  double roiStart = 0.0, roiEnd = 1.0;
};

struct ComposedParams {
  std::string mode, coord, nearest;
  double cubicA = -0.75;
  bool exclude = false;
  bool antialias = false;
};

/// Interpolation kernel of linear (support 2) or cubic (support 4) resizing at distance t.
double filterWeight(ComposedParams const& p, double t) {
  t = std::abs(t);
  if (p.mode == "linear") return std::max(0.0, 1.0 - t);
  double const A = p.cubicA;
  if (t <= 1.0) return ((A + 2) * t - (A + 3)) * t * t + 1;
  if (t < 2.0) return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
  return 0.0;
}

/// ONNX Resize's input coordinate of output index o.
double sourceCoordinate(ComposedParams const& p, AxisResize const& a, int64_t o) {
  auto const od = static_cast<double>(o);
  auto const in = static_cast<double>(a.in);
  auto const out = static_cast<double>(a.out);
  if (p.coord == "half_pixel_symmetric") {
    double const adjustment = out / (a.scale * in);
    double const offset = in / 2.0 * (1.0 - adjustment);
    return offset + (od + 0.5) / a.scale - 0.5;
  }
  if (p.coord == "pytorch_half_pixel") return a.out > 1 ? (od + 0.5) / a.scale - 0.5 : 0.0;
  if (p.coord == "align_corners") return a.out > 1 ? od * (in - 1.0) / (out - 1.0) : 0.0;
  if (p.coord == "asymmetric") return od / a.scale;
  if (p.coord == "tf_crop_and_resize") {
    return a.out > 1 ? a.roiStart * (in - 1.0) + od * (a.roiEnd - a.roiStart) * (in - 1.0) / (out - 1.0)
                     : 0.5 * (a.roiStart + a.roiEnd) * (in - 1.0);
  }
  return (od + 0.5) / a.scale - 0.5;  // half_pixel
}

/// The [out, in] interpolation matrix of one axis; `outside[o]` marks tf_crop_and_resize's extrapolated rows.
std::vector<double> axisMatrix(ComposedParams const& p, AxisResize const& a, std::vector<bool>& outside) {
  std::vector<double> w(static_cast<size_t>(a.out * a.in), 0.0);
  outside.assign(static_cast<size_t>(a.out), false);
  auto clampIndex = [&a](int64_t i) { return std::min(a.in - 1, std::max<int64_t>(0, i)); };
  for (int64_t o = 0; o < a.out; ++o) {
    double x = sourceCoordinate(p, a, o);
    double* row = w.data() + o * a.in;
    if (p.coord == "tf_crop_and_resize" && (x < 0.0 || x > static_cast<double>(a.in - 1))) {
      outside[static_cast<size_t>(o)] = true;
      continue;
    }
    if (p.antialias && p.mode != "nearest") {
      // Antialiased resizing: the kernel stretched by 1/scale when downsampling, taps around the left neighbour
      // (the one below x; x itself with weight ratio 1 when x is whole), edge values outside the input, weights
      // normalized to sum 1 (ONNX's reference, which ONNX Runtime matches).
      double const s = std::min(a.scale, 1.0);
      double const f = std::floor(x);
      bool const whole = x == f;
      auto const base = static_cast<int64_t>(f) - (whole ? 1 : 0);
      double const ratio = whole ? 1.0 : x - f;
      int64_t first = 0, last = 0;  // tap offsets [first, last)
      if (p.mode == "linear") {
        first = static_cast<int64_t>(std::floor(-1.0 / s)) + 1;
        last = first + 2 - 2 * first;
      } else {
        first = static_cast<int64_t>(std::floor(-2.0 / s)) + 1;
        last = 2 - first;
      }
      std::vector<double> c;
      double total = 0.0;
      for (int64_t i = first; i < last; ++i) {
        int64_t const idx = base + i;
        double const wgt =
            p.exclude && (idx < 0 || idx >= a.in) ? 0.0 : filterWeight(p, (static_cast<double>(i) - ratio) * s);
        c.push_back(wgt);
        total += wgt;
      }
      for (int64_t i = first; i < last; ++i)
        row[clampIndex(base + i)] += total != 0.0 ? c[static_cast<size_t>(i - first)] / total : 0.0;
    } else if (p.mode == "nearest") {
      double r = 0.0;
      if (p.nearest == "round_prefer_ceil") {
        r = std::floor(x + 0.5);
      } else if (p.nearest == "floor") {
        r = std::floor(x);
      } else if (p.nearest == "ceil") {
        r = std::ceil(x);
      } else {
        r = std::ceil(x - 0.5);
      }
      row[clampIndex(static_cast<int64_t>(r))] = 1.0;
    } else if (p.mode == "cubic") {
      double const f = std::floor(x), t = x - f, A = p.cubicA;
      auto const i0 = static_cast<int64_t>(f);
      double const c[4] = {((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A,
                           ((A + 2) * t - (A + 3)) * t * t + 1, ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1,
                           ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A};
      double sum = 0.0;
      for (int64_t j = 0; j < 4; ++j) {
        int64_t const idx = i0 - 1 + j;
        if (p.exclude && (idx < 0 || idx >= a.in)) continue;
        sum += c[j];
      }
      for (int64_t j = 0; j < 4; ++j) {
        int64_t const idx = i0 - 1 + j;
        if (p.exclude && (idx < 0 || idx >= a.in)) continue;
        row[clampIndex(idx)] += p.exclude && sum != 0.0 ? c[j] / sum : c[j];
      }
    } else {  // linear: edge values outside the input
      x = std::min(static_cast<double>(a.in - 1), std::max(0.0, x));
      auto const i0 = static_cast<int64_t>(std::floor(x));
      double const t = x - static_cast<double>(i0);
      row[i0] += 1.0 - t;
      row[clampIndex(i0 + 1)] += t;
    }
  }
  return w;
}

/// Resize composed from one constant matrix per resized axis (plus a constant for extrapolated elements).
Status importComposedResize(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* x, ComposedParams const& p,
                            std::vector<AxisResize> const& axes, float extrapolation) {
  if (x->getType() != DataType::kFLOAT && x->getType() != DataType::kFLOAT64) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "coordinate_transformation_mode '", p.coord,
                                    "' and keep_aspect_ratio_policy need a float32 or float64 input");
  }
  auto const r = static_cast<int32_t>(axes.size());
  ITensor* y = x;
  Dims od{r, {}};
  std::vector<std::vector<bool>> outside(axes.size());
  bool anyOutside = false;
  for (int32_t i = 0; i < r; ++i) {
    AxisResize const& a = axes[static_cast<size_t>(i)];
    od.d[i] = a.out;
    if (a.out > 0 && a.in == 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axis ", i, " of extent 0 cannot be resized");
    }
    if (static_cast<double>(a.out) * static_cast<double>(a.in) > static_cast<double>(kMaxConstantElements)) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "axis ", i, " is too large to resize");
    }
    std::vector<double> w = axisMatrix(p, a, outside[static_cast<size_t>(i)]);
    for (bool b : outside[static_cast<size_t>(i)]) anyOutside |= b;
    bool identity = a.in == a.out;
    for (int64_t o = 0; identity && o < a.out; ++o)
      for (int64_t k = 0; identity && k < a.in; ++k)
        identity = w[static_cast<size_t>(o * a.in + k)] == (o == k ? 1.0 : 0.0);
    if (identity) continue;
    KO_ASSIGN_OR_RETURN(y, applyAxisMatrix(ctx, node, y, i, a.out, w, "resize_axis" + std::to_string(i)));
  }
  if (anyOutside) {
    // Extrapolated elements (any axis outside the input) are 0 after the matrices; add the value there.
    int64_t n = 1;
    for (int32_t i = 0; i < r; ++i) n *= od.d[i];
    if (n > kMaxConstantElements) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "output ", dimsString(od), " is too large");
    }
    std::vector<double> e(static_cast<size_t>(n), 0.0);
    std::vector<int64_t> idx(static_cast<size_t>(r), 0);
    for (int64_t lin = 0; lin < n; ++lin) {
      bool out = false;
      for (int32_t i = 0; i < r; ++i) out = out || outside[static_cast<size_t>(i)][static_cast<size_t>(idx[i])];
      if (out) e[static_cast<size_t>(lin)] = extrapolation;
      for (int32_t i = r - 1; i >= 0; --i) {
        if (++idx[i] < od.d[i]) break;
        idx[i] = 0;
      }
    }
    KO_ASSIGN_OR_RETURN(ITensor * et, doubleConstant(ctx, node, x->getType(), od, e, "extrapolation"));
    IElementWiseLayer* add = ctx.network().addElementWise(*y, *et, ElementWiseOperation::kSUM);
    KO_RETURN_IF_ERROR(ctx.check(add, node, "extrapolation"));
    y = add->getOutput(0);
  }
  return ctx.setOutput(node, 0, y);
}

}  // namespace

Status importResizeOrUpsample(ImportContext& ctx, ::onnx::NodeProto const& node, bool upsample) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(std::string mode, attrString(node, "mode", "nearest"));
  KO_ASSIGN_OR_RETURN(std::string coord, attrString(node, "coordinate_transformation_mode", "half_pixel"));
  KO_ASSIGN_OR_RETURN(std::string nearest, attrString(node, "nearest_mode", "round_prefer_floor"));
  KO_ASSIGN_OR_RETURN(float cubicA, attrFloat(node, "cubic_coeff_a", -0.75F));
  KO_ASSIGN_OR_RETURN(int64_t exclude, attrInt(node, "exclude_outside", 0));
  KO_ASSIGN_OR_RETURN(int64_t antialias, attrInt(node, "antialias", 0));
  KO_ASSIGN_OR_RETURN(std::string policy, attrString(node, "keep_aspect_ratio_policy", "stretch"));
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "keep_aspect_ratio_policy '", policy,
                                    "' is invalid");
  }
  KO_ASSIGN_OR_RETURN(float extrapolation, attrFloat(node, "extrapolation_value", 0.0F));
  // axes (opset 18): scales/sizes list only these axes; the others keep scale 1 and their extent.
  std::vector<int32_t> axes;
  if (findAttr(node, "axes") != nullptr) {
    KO_ASSIGN_OR_RETURN(std::vector<int64_t> a, attrInts(node, "axes"));
    for (int64_t v : a) {
      KO_ASSIGN_OR_RETURN(int32_t ax, normalizeAxis(node, v, r));
      if (std::find(axes.begin(), axes.end(), ax) != axes.end()) {
        return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axes repeats axis ", v);
      }
      axes.push_back(ax);
    }
  } else {
    for (int32_t i = 0; i < r; ++i) axes.push_back(i);
  }
  auto const nAxes = static_cast<int32_t>(axes.size());
  Dims const xd = x->getDimensions();
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  ITensor* sizesTensor = nullptr;
  ITensor* scalesTensor = nullptr;
  int64_t const opset = ctx.opset();
  if (upsample && opset < 9) {
    KO_ASSIGN_OR_RETURN(scales, attrFloats(node, "scales"));
  } else {
    int const scalesIdx = (upsample || opset < 11) ? 1 : 2;
    if (ImportContext::hasInput(node, scalesIdx)) {
      Constant const* s = ctx.constant(node, scalesIdx);
      if (s == nullptr) {
        // Known only at run time: the layer reads them (and uses them in the coordinate transform) while running.
        // An input that is empty at build time is the ONNX way of leaving scales out.
        KO_ASSIGN_OR_RETURN(ITensor * st, ctx.tensor(node, scalesIdx));
        Dims const sd = st->getDimensions();
        if (!(sd.nbDims == 1 && sd.d[0] == 0)) {
          scalesTensor = st;
        }
      } else {
        for (int64_t i = 0; i < s->count(); ++i) {
          scales.push_back(static_cast<float>(s->asDouble(i)));
        }
      }
    }
    if (!upsample && opset >= 11 && ImportContext::hasInput(node, 3)) {
      if (ctx.constant(node, 3) != nullptr) {
        KO_ASSIGN_OR_RETURN(sizes, constantInts(ctx, node, 3));
      } else {
        KO_ASSIGN_OR_RETURN(sizesTensor, ctx.tensor(node, 3));
      }
    }
  }
  if (scalesTensor != nullptr && (sizesTensor != nullptr || !sizes.empty())) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "scales and sizes are both given");
  }
  if (scales.empty() && sizes.empty() && sizesTensor == nullptr && scalesTensor == nullptr) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "neither scales nor sizes is given");
  }
  if ((!scales.empty() && scales.size() != static_cast<size_t>(nAxes)) ||
      (!sizes.empty() && sizes.size() != static_cast<size_t>(nAxes))) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "scales/sizes must have one entry per ",
                                    nAxes == r ? "axis" : "listed axis");
  }
  bool const composed =
      policy != "stretch" || coord == "half_pixel_symmetric" || coord == "tf_crop_and_resize" || antialias != 0;
  if ((nAxes != r || composed) && (scalesTensor != nullptr || sizesTensor != nullptr)) {
    return ImportContext::nodeError(
        ErrorCode::kUNSUPPORTED_NODE, node,
        "axes, keep_aspect_ratio_policy, antialias, half_pixel_symmetric and tf_crop_and_resize need "
        "constant scales or sizes");
  }
  if (nAxes != r || composed) {
    // Expand to one entry per axis (and apply keep_aspect_ratio_policy); needs the listed extents for sizes.
    bool const bySizes = !sizes.empty();
    std::vector<float> fullScales(static_cast<size_t>(r), 1.0F);
    std::vector<int64_t> fullSizes(static_cast<size_t>(r), 0);
    double policyScale = policy == "not_larger" ? 1e300 : 0.0;
    for (int32_t i = 0; i < r; ++i) fullSizes[static_cast<size_t>(i)] = xd.d[i];
    for (int32_t k = 0; k < nAxes; ++k) {
      int32_t const ax = axes[static_cast<size_t>(k)];
      if (!bySizes) {
        fullScales[static_cast<size_t>(ax)] = scales[static_cast<size_t>(k)];
        continue;
      }
      if (xd.d[ax] < 0 && policy != "stretch") {
        return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "keep_aspect_ratio_policy needs axis ", ax,
                                        " known at build time");
      }
      fullSizes[static_cast<size_t>(ax)] = sizes[static_cast<size_t>(k)];
      if (xd.d[ax] > 0) {
        double const ratio = static_cast<double>(sizes[static_cast<size_t>(k)]) / static_cast<double>(xd.d[ax]);
        policyScale = policy == "not_larger" ? std::min(policyScale, ratio) : std::max(policyScale, ratio);
      }
    }
    if (bySizes) {
      for (int32_t i = 0; i < r; ++i) {
        bool const listed = std::find(axes.begin(), axes.end(), i) != axes.end();
        if (fullSizes[static_cast<size_t>(i)] < 0) {
          return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "axes with sizes need axis ", i,
                                          " known at build time");
        }
        if (listed && policy != "stretch") {
          fullSizes[static_cast<size_t>(i)] =
              static_cast<int64_t>(std::round(policyScale * static_cast<double>(xd.d[i])));
        }
      }
    }
    if (composed) {
      if (!allStatic(xd)) {
        return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "input dims ", dimsString(xd),
                                        " must be known at build time here");
      }
      std::vector<double> roi;
      if (coord == "tf_crop_and_resize") {
        if (!ImportContext::hasInput(node, 1) || ctx.constant(node, 1) == nullptr) {
          return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node,
                                          "tf_crop_and_resize needs a constant roi (a run-time roi is not supported)");
        }
        Constant const* rc = ctx.constant(node, 1);
        if (rc->count() != 2 * static_cast<int64_t>(nAxes)) {
          return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "roi must hold ", 2 * nAxes, " values");
        }
        for (int64_t i = 0; i < rc->count(); ++i) roi.push_back(rc->asDouble(i));
      }
      ComposedParams p{mode, coord, nearest, cubicA, exclude != 0, antialias != 0};
      if (p.mode == "bilinear") p.mode = "linear";
      if (p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic") {
        return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "mode '", mode, "' is not supported");
      }
      std::vector<AxisResize> ar(static_cast<size_t>(r));
      for (int32_t i = 0; i < r; ++i) {
        AxisResize& a = ar[static_cast<size_t>(i)];
        a.in = xd.d[i];
        auto const listed = std::find(axes.begin(), axes.end(), i);
        if (bySizes) {
          a.out = fullSizes[static_cast<size_t>(i)];
          a.scale = listed != axes.end() && policy != "stretch" ? policyScale
                    : a.in > 0                                  ? static_cast<double>(a.out) / static_cast<double>(a.in)
                                                                : 1.0;
        } else {
          a.scale = fullScales[static_cast<size_t>(i)];
          a.out = static_cast<int64_t>(std::floor(a.scale * static_cast<double>(a.in)));
        }
        if (!(a.scale > 0.0) || a.out < 0) {
          return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "scale of axis ", i, " must be positive");
        }
        if (!roi.empty() && listed != axes.end()) {
          auto const k = static_cast<size_t>(listed - axes.begin());
          a.roiStart = roi[k];
          a.roiEnd = roi[k + static_cast<size_t>(nAxes)];
        }
      }
      return importComposedResize(ctx, node, x, p, ar, extrapolation);
    }
    if (bySizes) {
      sizes = fullSizes;
    } else {
      scales = fullScales;
    }
  }
  IResizeLayer* l = ctx.network().addResize(*x);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "resize"));
  if (sizesTensor != nullptr) {
    l->setInput(1, *sizesTensor);
  } else if (scalesTensor != nullptr) {
    if (scalesTensor->getType() != DataType::kFLOAT) {
      ICastLayer* c = ctx.network().addCast(*scalesTensor, DataType::kFLOAT);
      KO_RETURN_IF_ERROR(ctx.check(c, node, "scales_float"));
      scalesTensor = c->getOutput(0);
    }
    l->setInput(1, *scalesTensor);
  } else if (!sizes.empty()) {
    Dims d{r, {}};
    for (int32_t i = 0; i < r; ++i) {
      d.d[i] = sizes[static_cast<size_t>(i)];
    }
    l->setOutputDimensions(d);
  } else {
    l->setScales(scales.data(), r);
  }
  if (mode == "nearest") {
    l->setResizeMode(InterpolationMode::kNEAREST);
  } else if (mode == "linear" || mode == "bilinear") {
    l->setResizeMode(InterpolationMode::kLINEAR);
  } else if (mode == "cubic") {
    l->setResizeMode(InterpolationMode::kCUBIC);
  } else {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "mode '", mode, "' is not supported");
  }
  // Upsample and Resize-10 use asymmetric coordinates and floor rounding.
  if (upsample || opset < 11) {
    coord = "asymmetric";
    nearest = "floor";
  }
  if (coord == "half_pixel") {
    l->setCoordinateTransformation(ResizeCoordinateTransformation::kHALF_PIXEL);
  } else if (coord == "pytorch_half_pixel") {
    l->setCoordinateTransformation(ResizeCoordinateTransformation::kHALF_PIXEL);
    l->setSelectorForSinglePixel(ResizeSelector::kUPPER);
  } else if (coord == "align_corners") {
    l->setCoordinateTransformation(ResizeCoordinateTransformation::kALIGN_CORNERS);
  } else if (coord == "asymmetric") {
    l->setCoordinateTransformation(ResizeCoordinateTransformation::kASYMMETRIC);
  } else {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "coordinate_transformation_mode '", coord,
                                    "' is not supported");
  }
  if (nearest == "round_prefer_floor") {
    l->setNearestRounding(ResizeRoundMode::kHALF_DOWN);
  } else if (nearest == "round_prefer_ceil") {
    l->setNearestRounding(ResizeRoundMode::kHALF_UP);
  } else if (nearest == "floor") {
    l->setNearestRounding(ResizeRoundMode::kFLOOR);
  } else if (nearest == "ceil") {
    l->setNearestRounding(ResizeRoundMode::kCEIL);
  } else {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "nearest_mode '", nearest, "' is invalid");
  }
  l->setCubicCoeff(cubicA);
  l->setExcludeOutside(exclude != 0);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

namespace {

Status importResize(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return importResizeOrUpsample(ctx, node, false);
}

KILN_ONNX_REGISTER("", "Resize", importResize);

}  // namespace
}  // namespace kiln::onnx
