// ONNX importer: LeakyRelu.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/elementwise_util.h"

namespace kiln::onnx {
namespace {

using namespace elementwise_detail;  // NOLINT(google-build-using-namespace)

Status importLeakyRelu(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 0.01F));
  return activation(ctx, node, ActivationType::kLEAKY_RELU, alpha, 0);
}

KILN_ONNX_REGISTER("", "LeakyRelu", importLeakyRelu);

}  // namespace
}  // namespace kiln::onnx
