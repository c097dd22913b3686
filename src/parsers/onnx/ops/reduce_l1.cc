// ONNX importer for ReduceL1 (the shared Reduce* logic is in reduce_util.cc).
#include "parsers/onnx/ops/reduce_util.h"

namespace kiln::onnx {
namespace {

Status importReduceL1(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return importReduceKind(ctx, node, ReduceKind::kL1);
}

KILN_ONNX_REGISTER("", "ReduceL1", importReduceL1);

}  // namespace
}  // namespace kiln::onnx
