// ONNX importer: Concat.
#include <algorithm>
#include <cstring>
#include <limits>
#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importConcat(ImportContext& ctx, Node const& node) {
  auto const* a = findAttr(node, "axis");
  if (a == nullptr) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "attribute 'axis' is required");
  }
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", 0));
  std::vector<ITensor*> ins;
  for (int i = 0; i < node.input_size(); ++i) {
    KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, i));
    ins.push_back(t);
  }
  if (ins.empty()) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "needs at least one input");
  }
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, ins[0]));
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
  IConcatenationLayer* l = ctx.network().addConcatenation(ins.data(), static_cast<int32_t>(ins.size()));
  KO_RETURN_IF_ERROR(ctx.check(l, node, "concat"));
  l->setAxis(axis);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "Concat", importConcat);

}  // namespace
}  // namespace kiln::onnx
