// ONNX importer for ReduceSumSquare (the shared Reduce* logic is in reduce_util.cc).
#include "parsers/onnx/ops/reduce_util.h"

namespace kiln::onnx {
namespace {

Status importReduceSumSquare(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return importReduceKind(ctx, node, ReduceKind::kSumSquare);
}

KILN_ONNX_REGISTER("", "ReduceSumSquare", importReduceSumSquare);

}  // namespace
}  // namespace kiln::onnx
