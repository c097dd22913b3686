// ONNX importer: Elu.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/elementwise_util.h"

namespace kiln::onnx {
namespace {

using namespace elementwise_detail;  // NOLINT(google-build-using-namespace)

Status importElu(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 1.0F));
  return activation(ctx, node, ActivationType::kELU, alpha, 0);
}

KILN_ONNX_REGISTER("", "Elu", importElu);

}  // namespace
}  // namespace kiln::onnx
