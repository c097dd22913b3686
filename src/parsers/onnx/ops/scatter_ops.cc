// ONNX importers: ScatterElements, Scatter, ScatterND.
#include <algorithm>
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/index_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace index_ops_detail;  // NOLINT(google-build-using-namespace)

Result<ScatterReduction> scatterReduction(Node const& node) {
  KO_ASSIGN_OR_RETURN(std::string red, attrString(node, "reduction", "none"));
  if (red == "none") {
    return ScatterReduction::kNONE;
  }
  if (red == "add") {
    return ScatterReduction::kADD;
  }
  if (red == "mul") {
    return ScatterReduction::kMUL;
  }
  if (red == "max") {
    return ScatterReduction::kMAX;
  }
  if (red == "min") {
    return ScatterReduction::kMIN;
  }
  return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "unknown reduction '", red, "'");
}

template <ScatterMode kMode>
Status importScatter(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * data, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * idx, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * upd, ctx.tensor(node, 2));
  KO_ASSIGN_OR_RETURN(ScatterReduction red, scatterReduction(node));
  IScatterLayer* l = ctx.network().addScatter(*data, *idx, *upd, kMode);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "scatter"));
  if (kMode == ScatterMode::kELEMENT) {
    KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, data));
    KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", 0));
    KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
    l->setAxis(axis);
  }
  l->setReduction(red);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "ScatterElements", importScatter<ScatterMode::kELEMENT>);
KILN_ONNX_REGISTER("", "Scatter", importScatter<ScatterMode::kELEMENT>);
KILN_ONNX_REGISTER("", "ScatterND", importScatter<ScatterMode::kND>);

}  // namespace
}  // namespace kiln::onnx
