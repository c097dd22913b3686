// ONNX importer for ReduceMax (the shared Reduce* logic is in reduce_util.cc).
#include "parsers/onnx/ops/reduce_util.h"

namespace kiln::onnx {
namespace {

Status importReduceMax(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return importReduceKind(ctx, node, ReduceKind::kMax);
}

KILN_ONNX_REGISTER("", "ReduceMax", importReduceMax);

}  // namespace
}  // namespace kiln::onnx
