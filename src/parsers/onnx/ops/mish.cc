// ONNX importer: Mish.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/misc_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace misc_ops_detail;  // NOLINT(google-build-using-namespace)

/// Mish(x) = x * tanh(softplus(x)).
Status importMish(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * t, activation(ctx, node, x, ActivationType::kSOFTPLUS, 1.0F, 1.0F));
  KO_ASSIGN_OR_RETURN(t, activation(ctx, node, t, ActivationType::kTANH, 0.0F, 0.0F));
  KO_ASSIGN_OR_RETURN(t, ew(ctx, node, x, t, ElementWiseOperation::kPROD));
  return ctx.setOutput(node, 0, t);
}

KILN_ONNX_REGISTER("", "Mish", importMish);

}  // namespace
}  // namespace kiln::onnx
