// ONNX importer: GatherElements.
#include <algorithm>
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/index_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace index_ops_detail;  // NOLINT(google-build-using-namespace)

Status importGatherElements(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * data, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * idx, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, data));
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", 0));
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
  IGatherLayer* l = ctx.network().addGatherV2(*data, *idx, GatherMode::kELEMENT);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "gather_elements"));
  l->setGatherAxis(axis);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "GatherElements", importGatherElements);

}  // namespace
}  // namespace kiln::onnx
