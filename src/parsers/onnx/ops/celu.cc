// ONNX importer: Celu.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/misc_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace misc_ops_detail;  // NOLINT(google-build-using-namespace)

/// Celu(x) = alpha * elu(x / alpha).
Status importCelu(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 1.0F));
  KO_ASSIGN_OR_RETURN(ITensor * a, scalar(ctx, node, x->getType(), alpha, "_alpha"));
  KO_ASSIGN_OR_RETURN(ITensor * t, ew(ctx, node, x, a, ElementWiseOperation::kDIV));
  KO_ASSIGN_OR_RETURN(t, activation(ctx, node, t, ActivationType::kELU, 1.0F, 0.0F));
  KO_ASSIGN_OR_RETURN(t, ew(ctx, node, t, a, ElementWiseOperation::kPROD));
  return ctx.setOutput(node, 0, t);
}

KILN_ONNX_REGISTER("", "Celu", importCelu);

}  // namespace
}  // namespace kiln::onnx
