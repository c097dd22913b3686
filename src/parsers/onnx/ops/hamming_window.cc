// ONNX HammingWindow: a generalized-cosine window of run-time length (see cosine_window_util.h).
#include "parsers/onnx/ops/cosine_window_util.h"

namespace kiln::onnx {
namespace {

Status importHammingWindow(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return compose::importCosineWindow(ctx, node, 25.0 / 46.0, 21.0 / 46.0, 0.0);
}

KILN_ONNX_REGISTER("", "HammingWindow", importHammingWindow);

}  // namespace
}  // namespace kiln::onnx
