// ONNX CenterCropPad (opset 18): each listed axis is center-cropped or zero-padded to the requested extent. One
// Slice layer in kFILL mode does both: a start inside the input crops, a negative start pads. As ONNX's
// reference does, an odd difference leaves the extra element at the end (cropped there, or padded there).
#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importCenterCropPad(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> shape, constantInts(ctx, node, 1));
  std::vector<int64_t> axes;
  if (findAttr(node, "axes") != nullptr) {
    KO_ASSIGN_OR_RETURN(axes, attrInts(node, "axes"));
  } else {
    for (int32_t a = 0; a < r; ++a) axes.push_back(a);
  }
  if (axes.size() != shape.size()) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "shape has ", shape.size(), " entries for ",
                                    axes.size(), " axes");
  }
  Dims const in = x->getDimensions();
  Dims start{r, {}};
  Dims size = in;
  Dims stride{r, {}};
  std::vector<bool> seen(static_cast<size_t>(r), false);
  for (int32_t k = 0; k < r; ++k) stride.d[k] = 1;
  for (size_t i = 0; i < axes.size(); ++i) {
    KO_ASSIGN_OR_RETURN(int32_t a, normalizeAxis(node, axes[i], r));
    if (seen[static_cast<size_t>(a)]) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axis ", axes[i], " is listed twice");
    }
    seen[static_cast<size_t>(a)] = true;
    if (shape[i] < 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "negative target extent ", shape[i]);
    }
    if (in.d[a] < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node, "axis ", a, " has a dynamic extent");
    }
    // Truncation toward zero: cropping by d starts at floor(d / 2); padding by d starts at -floor(d / 2).
    start.d[a] = (in.d[a] - shape[i]) / 2;
    size.d[a] = shape[i];
  }
  for (int32_t k = 0; k < r; ++k) {
    if (size.d[k] < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node, "axis ", k, " has a dynamic extent");
    }
  }
  ISliceLayer* l = ctx.network().addSlice(*x, start, size, stride);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "center_crop_pad"));
  l->setMode(SampleMode::kFILL);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "CenterCropPad", importCenterCropPad);

}  // namespace
}  // namespace kiln::onnx
