// ONNX BlackmanWindow: a generalized-cosine window of run-time length (see cosine_window_util.h).
#include "parsers/onnx/ops/cosine_window_util.h"

namespace kiln::onnx {
namespace {

Status importBlackmanWindow(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return compose::importCosineWindow(ctx, node, 0.42, 0.5, 0.08);
}

KILN_ONNX_REGISTER("", "BlackmanWindow", importBlackmanWindow);

}  // namespace
}  // namespace kiln::onnx
