// ONNX importer: Gelu.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/elementwise_util.h"

namespace kiln::onnx {
namespace {

using namespace elementwise_detail;  // NOLINT(google-build-using-namespace)

Status importGelu(ImportContext& ctx, Node const& node) {
  // Kept as a Result (not moved out): GCC 12 at -O2 reports a false maybe-uninitialized on the moved string.
  Result<std::string> const approxR = attrString(node, "approximate", "none");
  KO_RETURN_IF_ERROR(approxR.status);
  std::string const& approx = approxR.value;
  if (approx != "none" && approx != "tanh") {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "approximate '", approx,
                                    "' is not 'none' or 'tanh'");
  }
  return activation(ctx, node, approx == "tanh" ? ActivationType::kGELU_TANH : ActivationType::kGELU_ERF, 0, 0);
}

KILN_ONNX_REGISTER("", "Gelu", importGelu);

}  // namespace
}  // namespace kiln::onnx
