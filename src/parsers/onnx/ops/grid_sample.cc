// ONNX importer: GridSample.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/misc_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace misc_ops_detail;  // NOLINT(google-build-using-namespace)

Status importGridSample(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * grid, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(std::string mode, attrString(node, "mode", ctx.opset() >= 20 ? "linear" : "bilinear"));
  KO_ASSIGN_OR_RETURN(std::string pad, attrString(node, "padding_mode", "zeros"));
  KO_ASSIGN_OR_RETURN(int64_t align, attrInt(node, "align_corners", 0));
  InterpolationMode im = InterpolationMode::kLINEAR;
  if (mode == "nearest") {
    im = InterpolationMode::kNEAREST;
  } else if (mode == "bicubic" || mode == "cubic") {
    im = InterpolationMode::kCUBIC;
  } else if (mode != "bilinear" && mode != "linear") {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "unknown mode '", mode, "'");
  }
  SampleMode sm = SampleMode::kFILL;
  if (pad == "border") {
    sm = SampleMode::kCLAMP;
  } else if (pad == "reflection") {
    sm = SampleMode::kREFLECT;
  } else if (pad != "zeros") {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "unknown padding_mode '", pad, "'");
  }
  IGridSampleLayer* l = ctx.network().addGridSample(*x, *grid);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "grid_sample"));
  l->setInterpolationMode(im);
  l->setAlignCorners(align != 0);
  l->setSampleMode(sm);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "GridSample", importGridSample);

}  // namespace
}  // namespace kiln::onnx
