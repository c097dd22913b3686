// ONNX importer: Sigmoid.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/elementwise_util.h"

namespace kiln::onnx {
namespace {

using namespace elementwise_detail;  // NOLINT(google-build-using-namespace)

Status importSigmoid(ImportContext& ctx, Node const& node) {
  return activation(ctx, node, ActivationType::kSIGMOID, 0, 0);
}

KILN_ONNX_REGISTER("", "Sigmoid", importSigmoid);

}  // namespace
}  // namespace kiln::onnx
