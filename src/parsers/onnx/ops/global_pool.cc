// ONNX importers: GlobalAveragePool, GlobalMaxPool.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/spatial_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

template <ReduceOperation kOp>
Status importGlobalPool(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  if (r < 3) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input rank ", r, " is below 3");
  }
  uint32_t axes = 0;
  for (int32_t i = 2; i < r; ++i) {
    axes |= 1U << static_cast<uint32_t>(i);
  }
  IReduceLayer* l = ctx.network().addReduce(*x, kOp, axes, true);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "global_pool"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "GlobalAveragePool", importGlobalPool<ReduceOperation::kAVG>);
KILN_ONNX_REGISTER("", "GlobalMaxPool", importGlobalPool<ReduceOperation::kMAX>);

}  // namespace
}  // namespace kiln::onnx
