// ONNX importer: MeanVarianceNormalization.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/misc_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace misc_ops_detail;  // NOLINT(google-build-using-namespace)

/// (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9) over `axes` (ONNX's function body).
Status importMVN(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> axes, attrInts(node, "axes", {0, 2, 3}));
  uint32_t mask = 0;
  for (int64_t a : axes) {
    KO_ASSIGN_OR_RETURN(int32_t n, normalizeAxis(node, a, r));
    mask |= 1U << static_cast<uint32_t>(n);
  }
  IReduceLayer* mean = ctx.network().addReduce(*x, ReduceOperation::kAVG, mask, true);
  KO_RETURN_IF_ERROR(ctx.check(mean, node, "mean"));
  KO_ASSIGN_OR_RETURN(ITensor * x2, ew(ctx, node, x, x, ElementWiseOperation::kPROD));
  IReduceLayer* ex2 = ctx.network().addReduce(*x2, ReduceOperation::kAVG, mask, true);
  KO_RETURN_IF_ERROR(ctx.check(ex2, node, "mean_square"));
  ITensor* m = mean->getOutput(0);
  KO_ASSIGN_OR_RETURN(ITensor * m2, ew(ctx, node, m, m, ElementWiseOperation::kPROD));
  KO_ASSIGN_OR_RETURN(ITensor * var, ew(ctx, node, ex2->getOutput(0), m2, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * sd, unary(ctx, node, var, UnaryOperation::kSQRT));
  KO_ASSIGN_OR_RETURN(ITensor * eps, scalar(ctx, node, x->getType(), 1e-9, "_eps"));
  KO_ASSIGN_OR_RETURN(sd, ew(ctx, node, sd, eps, ElementWiseOperation::kSUM));
  KO_ASSIGN_OR_RETURN(ITensor * d, ew(ctx, node, x, m, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * y, ew(ctx, node, d, sd, ElementWiseOperation::kDIV));
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "MeanVarianceNormalization", importMVN);

}  // namespace
}  // namespace kiln::onnx
