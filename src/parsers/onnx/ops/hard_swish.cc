// ONNX importer: HardSwish.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/misc_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace misc_ops_detail;  // NOLINT(google-build-using-namespace)

/// HardSwish(x) = x * HardSigmoid(x; alpha = 1/6, beta = 0.5).
Status importHardSwish(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * t, activation(ctx, node, x, ActivationType::kHARD_SIGMOID, 1.0F / 6.0F, 0.5F));
  KO_ASSIGN_OR_RETURN(t, ew(ctx, node, x, t, ElementWiseOperation::kPROD));
  return ctx.setOutput(node, 0, t);
}

KILN_ONNX_REGISTER("", "HardSwish", importHardSwish);

}  // namespace
}  // namespace kiln::onnx
