// ONNX importer for ReduceLogSumExp (the shared Reduce* logic is in reduce_util.cc).
#include "parsers/onnx/ops/reduce_util.h"

namespace kiln::onnx {
namespace {

Status importReduceLogSumExp(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return importReduceKind(ctx, node, ReduceKind::kLogSumExp);
}

KILN_ONNX_REGISTER("", "ReduceLogSumExp", importReduceLogSumExp);

}  // namespace
}  // namespace kiln::onnx
