// ONNX importer: HardSigmoid.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/elementwise_util.h"

namespace kiln::onnx {
namespace {

using namespace elementwise_detail;  // NOLINT(google-build-using-namespace)

Status importHardSigmoid(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 0.2F));
  KO_ASSIGN_OR_RETURN(float beta, attrFloat(node, "beta", 0.5F));
  return activation(ctx, node, ActivationType::kHARD_SIGMOID, alpha, beta);
}

KILN_ONNX_REGISTER("", "HardSigmoid", importHardSigmoid);

}  // namespace
}  // namespace kiln::onnx
