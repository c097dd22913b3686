// ONNX importer: Softplus.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/elementwise_util.h"

namespace kiln::onnx {
namespace {

using namespace elementwise_detail;  // NOLINT(google-build-using-namespace)

Status importSoftplus(ImportContext& ctx, Node const& node) {
  return activation(ctx, node, ActivationType::kSOFTPLUS, 1.0F, 1.0F);
}

KILN_ONNX_REGISTER("", "Softplus", importSoftplus);

}  // namespace
}  // namespace kiln::onnx
