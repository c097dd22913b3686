// ONNX importer: Selu.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/elementwise_util.h"

namespace kiln::onnx {
namespace {

using namespace elementwise_detail;  // NOLINT(google-build-using-namespace)

Status importSelu(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 1.67326319217681884765625F));
  KO_ASSIGN_OR_RETURN(float gamma, attrFloat(node, "gamma", 1.05070102214813232421875F));
  return activation(ctx, node, ActivationType::kSELU, alpha, gamma);
}

KILN_ONNX_REGISTER("", "Selu", importSelu);

}  // namespace
}  // namespace kiln::onnx
