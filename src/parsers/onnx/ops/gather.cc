// ONNX importer: Gather.
#include <algorithm>
#include <cstring>
#include <limits>
#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importGather(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * data, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * idx, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, data));
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", 0));
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
  IGatherLayer* l = ctx.network().addGather(*data, *idx, axis);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "gather"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "Gather", importGather);

}  // namespace
}  // namespace kiln::onnx
