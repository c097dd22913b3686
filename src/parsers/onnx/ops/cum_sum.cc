// ONNX importer for CumSum: a cumulative layer; a constant axis is checked here, one known only at run time is
// checked by the layer when the engine runs.
#include <cstring>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/shape_tensor_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importCumSum(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int64_t exclusive, attrInt(node, "exclusive", 0));
  KO_ASSIGN_OR_RETURN(int64_t reverse, attrInt(node, "reverse", 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  ITensor* at = nullptr;
  if (Constant const* ac = ctx.constant(node, 1)) {
    if (ac->count() != 1) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axis must hold one element");
    }
    KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, ac->asInt(0), r));
    KO_ASSIGN_OR_RETURN(Constant * a, ctx.newConstant(DataType::kINT64, Dims{0, {}}));
    int64_t const v = axis;
    std::memcpy(a->bytes.data(), &v, sizeof(v));
    KO_ASSIGN_OR_RETURN(at, ctx.constantTensor(a, node.name() + "_axis"));
  } else {
    KO_ASSIGN_OR_RETURN(ITensor * axis, ctx.tensor(node, 1));
    Dims const d = axis->getDimensions();
    bool const oneElement = d.nbDims == 0 || (d.nbDims == 1 && d.d[0] == 1);
    if (!oneElement || (axis->getType() != DataType::kINT32 && axis->getType() != DataType::kINT64)) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node,
                                      "axis must be an int32/int64 tensor of one element, not ", dimsString(d));
    }
    KO_ASSIGN_OR_RETURN(at, toScalar(ctx, node, axis));
  }
  ICumulativeLayer* l = ctx.network().addCumulative(*x, *at, CumulativeOperation::kSUM, exclusive != 0, reverse != 0);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "cumsum"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "CumSum", importCumSum);

}  // namespace
}  // namespace kiln::onnx
