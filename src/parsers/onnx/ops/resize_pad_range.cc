// ONNX importers for Pad (a slice with fill/reflect/clamp/wrap sampling), Range (folded when its inputs are
// constants), Resize and Upsample (resize layer).
#include <cmath>
#include <cstring>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importPad(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(std::string mode, attrString(node, "mode", "constant"));
  std::vector<int64_t> pads;
  ITensor* fill = nullptr;
  std::vector<int64_t> axes;
  if (ctx.opset() < 11) {
    KO_ASSIGN_OR_RETURN(pads, attrInts(node, ctx.opset() < 2 ? "paddings" : "pads"));
    KO_ASSIGN_OR_RETURN(float value, attrFloat(node, "value", 0.0F));
    if (value != 0.0F) {
      KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(DataType::kFLOAT, Dims{0, {}}));
      std::memcpy(c->bytes.data(), &value, 4);
      KO_ASSIGN_OR_RETURN(fill, ctx.constantTensor(c, node.name() + "_value"));
    }
  } else {
    KO_ASSIGN_OR_RETURN(pads, constantInts(ctx, node, 1));
    if (ImportContext::hasInput(node, 2)) {
      KO_ASSIGN_OR_RETURN(fill, ctx.tensor(node, 2));
      KO_ASSIGN_OR_RETURN(int32_t fr, rankOf(node, fill));
      if (fr != 0) {
        KO_ASSIGN_OR_RETURN(fill, reshape(ctx, node, fill, Dims{0, {}}));
      }
    }
    if (ImportContext::hasInput(node, 3)) {
      KO_ASSIGN_OR_RETURN(axes, constantInts(ctx, node, 3));
    }
  }
  if (axes.empty()) {
    for (int32_t i = 0; i < r; ++i) {
      axes.push_back(i);
    }
  }
  if (pads.size() != 2 * axes.size()) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "pads has ", pads.size(), " values for ",
                                    axes.size(), " axes");
  }
  SampleMode sm = SampleMode::kFILL;
  if (mode == "reflect") {
    sm = SampleMode::kREFLECT;
  } else if (mode == "edge") {
    sm = SampleMode::kCLAMP;
  } else if (mode == "wrap") {
    sm = SampleMode::kWRAP;
  } else if (mode != "constant") {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "mode '", mode, "' is not supported");
  }
  Dims const in = x->getDimensions();
  Dims st{r, {}};
  Dims sz = in;
  Dims stride{r, {}};
  for (int32_t k = 0; k < r; ++k) {
    stride.d[k] = 1;
  }
  size_t const n = axes.size();
  for (size_t i = 0; i < n; ++i) {
    KO_ASSIGN_OR_RETURN(int32_t a, normalizeAxis(node, axes[i], r));
    if (in.d[a] < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                      "padding a dynamic axis is not supported yet");
    }
    st.d[a] = -pads[i];
    sz.d[a] = in.d[a] + pads[i] + pads[i + n];
    if (sz.d[a] < 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "pads make axis ", a, " negative");
    }
  }
  for (int32_t k = 0; k < r; ++k) {
    if (sz.d[k] < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                      "padding a tensor with dynamic extents is not supported yet");
    }
  }
  ISliceLayer* l = ctx.network().addSlice(*x, st, sz, stride);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "pad"));
  l->setMode(sm);
  if (fill != nullptr && sm == SampleMode::kFILL) {
    l->setInput(4, *fill);
  }
  return ctx.setOutput(node, 0, l->getOutput(0));
}

/// Range with constant start/limit/delta, folded into a constant of max(ceil((limit - start) / delta), 0) values.
Status importRange(ImportContext& ctx, Node const& node) {
  Constant const* c[3];
  for (int i = 0; i < 3; ++i) {
    c[i] = ctx.constant(node, i);
    if (c[i] == nullptr || c[i]->count() != 1) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                      "start, limit and delta must be scalar constants (dynamic Range is not "
                                      "supported yet)");
    }
  }
  DataType const t = c[0]->type;
  bool const isFloat = t == DataType::kFLOAT || t == DataType::kFLOAT64;
  if (!isFloat && t != DataType::kINT32 && t != DataType::kINT64) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "unsupported type");
  }
  double const start = c[0]->asDouble(0);
  double const limit = c[1]->asDouble(0);
  double const delta = c[2]->asDouble(0);
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "delta is 0 or a bound is not finite");
  }
  double const nd = std::max(std::ceil((limit - start) / delta), 0.0);
  if (nd > static_cast<double>(kMaxConstantElements)) {
    return ImportContext::nodeError(ErrorCode::kMEM_ALLOC_FAILED, node, "Range of ", nd, " elements is too large");
  }
  auto const n = static_cast<int64_t>(nd);
  auto out = ctx.newConstant(t, Dims{1, {n}});
  if (!out.ok()) {
    return ImportContext::nodeError(out.status.code, node, out.status.message);
  }
  for (int64_t i = 0; i < n; ++i) {
    uint8_t* p = out.value->bytes.data() + i * elementSize(t);
    if (t == DataType::kFLOAT) {
      auto v = static_cast<float>(start + static_cast<double>(i) * delta);
      std::memcpy(p, &v, 4);
    } else if (t == DataType::kFLOAT64) {
      double v = start + static_cast<double>(i) * delta;
      std::memcpy(p, &v, 8);
    } else if (t == DataType::kINT32) {
      auto v = static_cast<int32_t>(c[0]->asInt(0) + i * c[2]->asInt(0));
      std::memcpy(p, &v, 4);
    } else {
      int64_t v = c[0]->asInt(0) + i * c[2]->asInt(0);
      std::memcpy(p, &v, 8);
    }
  }
  return ctx.setOutputConstant(node, 0, out.value);
}

/// Resize (opset 10+) and Upsample (7-9): mode, coordinate transformation, nearest rounding, scales or sizes.
Status resize(ImportContext& ctx, Node const& node, bool upsample) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(std::string mode, attrString(node, "mode", "nearest"));
  KO_ASSIGN_OR_RETURN(std::string coord, attrString(node, "coordinate_transformation_mode", "half_pixel"));
  KO_ASSIGN_OR_RETURN(std::string nearest, attrString(node, "nearest_mode", "round_prefer_floor"));
  KO_ASSIGN_OR_RETURN(float cubicA, attrFloat(node, "cubic_coeff_a", -0.75F));
  KO_ASSIGN_OR_RETURN(int64_t exclude, attrInt(node, "exclude_outside", 0));
  KO_ASSIGN_OR_RETURN(int64_t antialias, attrInt(node, "antialias", 0));
  if (antialias != 0 || findAttr(node, "axes") != nullptr) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node,
                                    "antialias and axes are not supported yet");
  }
  KO_ASSIGN_OR_RETURN(std::string policy, attrString(node, "keep_aspect_ratio_policy", "stretch"));
  if (policy != "stretch") {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "keep_aspect_ratio_policy '", policy,
                                    "' is not supported yet");
  }
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  ITensor* sizesTensor = nullptr;
  int64_t const opset = ctx.opset();
  if (upsample && opset < 9) {
    KO_ASSIGN_OR_RETURN(scales, attrFloats(node, "scales"));
  } else {
    int const scalesIdx = (upsample || opset < 11) ? 1 : 2;
    if (ImportContext::hasInput(node, scalesIdx)) {
      Constant const* s = ctx.constant(node, scalesIdx);
      if (s == nullptr) {
        return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node, "scales must be a constant");
      }
      for (int64_t i = 0; i < s->count(); ++i) {
        scales.push_back(static_cast<float>(s->asDouble(i)));
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
  if (scales.empty() && sizes.empty() && sizesTensor == nullptr) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "neither scales nor sizes is given");
  }
  if ((!scales.empty() && scales.size() != static_cast<size_t>(r)) ||
      (!sizes.empty() && sizes.size() != static_cast<size_t>(r))) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "scales/sizes must have one entry per axis");
  }
  IResizeLayer* l = ctx.network().addResize(*x);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "resize"));
  if (sizesTensor != nullptr) {
    l->setInput(1, *sizesTensor);
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
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "coordinate_transformation_mode '",
                                    coord, "' is not supported yet");
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
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "nearest_mode '", nearest,
                                    "' is invalid");
  }
  l->setCubicCoeff(cubicA);
  l->setExcludeOutside(exclude != 0);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importResize(ImportContext& ctx, Node const& node) { return resize(ctx, node, false); }
Status importUpsample(ImportContext& ctx, Node const& node) { return resize(ctx, node, true); }

KILN_ONNX_REGISTER("", "Pad", importPad);
KILN_ONNX_REGISTER("", "Range", importRange);
KILN_ONNX_REGISTER("", "Resize", importResize);
KILN_ONNX_REGISTER("", "Upsample", importUpsample);

}  // namespace
}  // namespace kiln::onnx
