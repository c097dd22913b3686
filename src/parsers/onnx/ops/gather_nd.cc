// ONNX importer: GatherND.
#include <algorithm>
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/index_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace index_ops_detail;  // NOLINT(google-build-using-namespace)

Status importGatherND(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * data, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * idx, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int64_t batch, attrInt(node, "batch_dims", 0));
  KO_ASSIGN_OR_RETURN(int32_t ri, rankOf(node, idx));
  if (batch < 0 || batch >= ri) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "batch_dims ", batch, " must be in [0, ", ri, ")");
  }
  IGatherLayer* l = ctx.network().addGatherV2(*data, *idx, GatherMode::kND);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "gather_nd"));
  l->setNbElementWiseDims(static_cast<int32_t>(batch));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "GatherND", importGatherND);

}  // namespace
}  // namespace kiln::onnx
