// ONNX importers for Resize (and, through importResizeOrUpsample, Upsample): a resize layer whose scales or sizes
// are constants (attributes of the layer) or tensors known only at run time (the layer's input 1).
#include "parsers/onnx/ops/resize_util.h"

namespace kiln::onnx {

Status importResizeOrUpsample(ImportContext& ctx, ::onnx::NodeProto const& node, bool upsample) {
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
  if ((!scales.empty() && scales.size() != static_cast<size_t>(r)) ||
      (!sizes.empty() && sizes.size() != static_cast<size_t>(r))) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "scales/sizes must have one entry per axis");
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
                                    "' is not supported yet");
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
