// ONNX importer for ReduceSum (the shared Reduce* logic is in reduce_util.cc).
#include "parsers/onnx/ops/reduce_util.h"

namespace kiln::onnx {
namespace {

Status importReduceSum(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return importReduceKind(ctx, node, ReduceKind::kSum);
}

KILN_ONNX_REGISTER("", "ReduceSum", importReduceSum);

}  // namespace
}  // namespace kiln::onnx
