// ONNX importer: Relu.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/elementwise_util.h"

namespace kiln::onnx {
namespace {

using namespace elementwise_detail;  // NOLINT(google-build-using-namespace)

Status importRelu(ImportContext& ctx, Node const& node) { return activation(ctx, node, ActivationType::kRELU, 0, 0); }

KILN_ONNX_REGISTER("", "Relu", importRelu);

}  // namespace
}  // namespace kiln::onnx
