// ONNX importer for ReduceMean (the shared Reduce* logic is in reduce_util.cc).
#include "parsers/onnx/ops/reduce_util.h"

namespace kiln::onnx {
namespace {

Status importReduceMean(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return importReduceKind(ctx, node, ReduceKind::kMean);
}

KILN_ONNX_REGISTER("", "ReduceMean", importReduceMean);

}  // namespace
}  // namespace kiln::onnx
