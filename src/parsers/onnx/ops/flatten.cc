// ONNX importer: Flatten.
#include <algorithm>
#include <cstring>
#include <limits>
#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importFlatten(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", 1));
  if (axisAttr < -r || axisAttr > r) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axis ", axisAttr, " is out of range");
  }
  int32_t const axis = static_cast<int32_t>(axisAttr < 0 ? axisAttr + r : axisAttr);
  Dims const in = x->getDimensions();
  // Static extents where known; otherwise 0 (copy) for a single leading axis or -1 for the rest.
  int64_t outer = 1;
  int64_t inner = 1;
  bool outerKnown = true;
  bool innerKnown = true;
  for (int32_t i = 0; i < r; ++i) {
    bool known = in.d[i] >= 0;
    (i < axis ? outerKnown : innerKnown) &= known;
    (i < axis ? outer : inner) *= known ? in.d[i] : 1;
  }
  Dims d{2, {outerKnown ? outer : (axis == 1 ? 0 : -1), innerKnown ? inner : -1}};
  if (!outerKnown && !innerKnown && axis != 1) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                    "dynamic extents on both sides of the axis are not supported yet");
  }
  KO_ASSIGN_OR_RETURN(ITensor * y, reshape(ctx, node, x, d));
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "Flatten", importFlatten);

}  // namespace
}  // namespace kiln::onnx
