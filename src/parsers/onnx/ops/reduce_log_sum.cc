// ONNX importer for ReduceLogSum (the shared Reduce* logic is in reduce_util.cc).
#include "parsers/onnx/ops/reduce_util.h"

namespace kiln::onnx {
namespace {

Status importReduceLogSum(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return importReduceKind(ctx, node, ReduceKind::kLogSum);
}

KILN_ONNX_REGISTER("", "ReduceLogSum", importReduceLogSum);

}  // namespace
}  // namespace kiln::onnx
