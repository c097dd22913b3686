// ONNX importer: Gemm.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"
#include "parsers/onnx/ops/math_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace math_ops_detail;  // NOLINT(google-build-using-namespace)

/// A scalar constant of `type` (kFLOAT only here) as a rank-`rank` tensor of ones' shape.
Result<ITensor*> scalarTensor(ImportContext& ctx, Node const& node, float v, int32_t rank, char const* tag) {
  Dims d{rank, {}};
  for (int32_t i = 0; i < rank; ++i) {
    d.d[i] = 1;
  }
  KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(DataType::kFLOAT, d));
  std::memcpy(c->bytes.data(), &v, sizeof(v));
  return ctx.constantTensor(c, node.name() + tag);
}

Status importGemm(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 1.0F));
  KO_ASSIGN_OR_RETURN(float beta, attrFloat(node, "beta", 1.0F));
  KO_ASSIGN_OR_RETURN(int64_t transA, attrInt(node, "transA", 0));
  KO_ASSIGN_OR_RETURN(int64_t transB, attrInt(node, "transB", 0));
  KO_ASSIGN_OR_RETURN(ITensor * a, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int32_t ra, rankOf(node, a));
  KO_ASSIGN_OR_RETURN(int32_t rb, rankOf(node, b));
  if (ra != 2 || rb != 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "A and B must be 2-D (got ", ra, " and ", rb, ")");
  }
  KO_ASSIGN_OR_RETURN(ITensor * y, matmul(ctx, node, a, transA ? MatrixOperation::kTRANSPOSE : MatrixOperation::kNONE,
                                          b, transB ? MatrixOperation::kTRANSPOSE : MatrixOperation::kNONE));
  if (alpha != 1.0F) {
    KO_ASSIGN_OR_RETURN(ITensor * s, scalarTensor(ctx, node, alpha, 2, "_alpha"));
    IElementWiseLayer* l = ctx.network().addElementWise(*y, *s, ElementWiseOperation::kPROD);
    KO_RETURN_IF_ERROR(ctx.check(l, node, "alpha"));
    y = l->getOutput(0);
  }
  if (ImportContext::hasInput(node, 2) && beta != 0.0F) {
    KO_ASSIGN_OR_RETURN(ITensor * c, ctx.tensor(node, 2));
    KO_ASSIGN_OR_RETURN(c, broadcastToRank(ctx, node, c, 2));
    if (beta != 1.0F) {
      KO_ASSIGN_OR_RETURN(ITensor * s, scalarTensor(ctx, node, beta, 2, "_beta"));
      IElementWiseLayer* l = ctx.network().addElementWise(*c, *s, ElementWiseOperation::kPROD);
      KO_RETURN_IF_ERROR(ctx.check(l, node, "beta"));
      c = l->getOutput(0);
    }
    IElementWiseLayer* l = ctx.network().addElementWise(*y, *c, ElementWiseOperation::kSUM);
    KO_RETURN_IF_ERROR(ctx.check(l, node, "bias"));
    y = l->getOutput(0);
  }
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "Gemm", importGemm);

}  // namespace
}  // namespace kiln::onnx
