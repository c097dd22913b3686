// ONNX importer for ReduceProd (the shared Reduce* logic is in reduce_util.cc).
#include "parsers/onnx/ops/reduce_util.h"

namespace kiln::onnx {
namespace {

Status importReduceProd(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return importReduceKind(ctx, node, ReduceKind::kProd);
}

KILN_ONNX_REGISTER("", "ReduceProd", importReduceProd);

}  // namespace
}  // namespace kiln::onnx
