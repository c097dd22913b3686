// ONNX importer for ReduceMin (the shared Reduce* logic is in reduce_util.cc).
#include "parsers/onnx/ops/reduce_util.h"

namespace kiln::onnx {
namespace {

Status importReduceMin(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return importReduceKind(ctx, node, ReduceKind::kMin);
}

KILN_ONNX_REGISTER("", "ReduceMin", importReduceMin);

}  // namespace
}  // namespace kiln::onnx
