// ONNX importer: LRN.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/misc_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace misc_ops_detail;  // NOLINT(google-build-using-namespace)

Status importLRN(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int64_t size, attrInt(node, "size", 0));
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 1e-4F));
  KO_ASSIGN_OR_RETURN(float beta, attrFloat(node, "beta", 0.75F));
  KO_ASSIGN_OR_RETURN(float bias, attrFloat(node, "bias", 1.0F));
  if (size <= 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "size must be positive");
  }
  ILRNLayer* l = ctx.network().addLRN(*x, size, alpha, beta, bias);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "lrn"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "LRN", importLRN);

}  // namespace
}  // namespace kiln::onnx
