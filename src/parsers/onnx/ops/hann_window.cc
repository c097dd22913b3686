// ONNX HannWindow: a generalized-cosine window of run-time length (see cosine_window_util.h).
#include "parsers/onnx/ops/cosine_window_util.h"

namespace kiln::onnx {
namespace {

Status importHannWindow(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return compose::importCosineWindow(ctx, node, 0.5, 0.5, 0.0);
}

KILN_ONNX_REGISTER("", "HannWindow", importHannWindow);

}  // namespace
}  // namespace kiln::onnx
