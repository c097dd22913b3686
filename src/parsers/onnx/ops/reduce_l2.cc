// ONNX importer for ReduceL2 (the shared Reduce* logic is in reduce_util.cc).
#include "parsers/onnx/ops/reduce_util.h"

namespace kiln::onnx {
namespace {

Status importReduceL2(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return importReduceKind(ctx, node, ReduceKind::kL2);
}

KILN_ONNX_REGISTER("", "ReduceL2", importReduceL2);

}  // namespace
}  // namespace kiln::onnx
