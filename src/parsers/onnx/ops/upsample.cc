// ONNX importer for Upsample (opsets 7-9): Resize with asymmetric coordinates and floor rounding.
#include "parsers/onnx/ops/resize_util.h"

namespace kiln::onnx {
namespace {

Status importUpsample(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return importResizeOrUpsample(ctx, node, true);
}

KILN_ONNX_REGISTER("", "Upsample", importUpsample);

}  // namespace
}  // namespace kiln::onnx
