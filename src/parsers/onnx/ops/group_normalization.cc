// ONNX importer: GroupNormalization.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/misc_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace misc_ops_detail;  // NOLINT(google-build-using-namespace)

/// GroupNormalization: [N, G, -1] statistics, then per-channel scale and bias (opset 18's per-group scale and
/// bias, when constant, are expanded to channels).
Status importGroupNorm(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(float epsilon, attrFloat(node, "epsilon", 1e-5F));
  KO_ASSIGN_OR_RETURN(int64_t groups, attrInt(node, "num_groups", 0));
  if (r < 2 || groups <= 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "needs rank >= 2 and num_groups > 0");
  }
  if (x->getType() != DataType::kFLOAT) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "supports FLOAT only");
  }
  int64_t const c = x->getDimensions().d[1];
  if (c < 0 || c % groups != 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "channels ", c,
                                    " must be static and divisible by num_groups ", groups);
  }
  IShapeLayer* shape = ctx.network().addShape(*x);
  KO_RETURN_IF_ERROR(ctx.check(shape, node, "shape"));
  KO_ASSIGN_OR_RETURN(ITensor * g, reshape(ctx, node, x, Dims{3, {0, groups, -1}}));
  IReduceLayer* mean = ctx.network().addReduce(*g, ReduceOperation::kAVG, 4U, true);
  KO_RETURN_IF_ERROR(ctx.check(mean, node, "mean"));
  KO_ASSIGN_OR_RETURN(ITensor * d, ew(ctx, node, g, mean->getOutput(0), ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * d2, ew(ctx, node, d, d, ElementWiseOperation::kPROD));
  IReduceLayer* var = ctx.network().addReduce(*d2, ReduceOperation::kAVG, 4U, true);
  KO_RETURN_IF_ERROR(ctx.check(var, node, "variance"));
  KO_ASSIGN_OR_RETURN(ITensor * eps, scalar(ctx, node, DataType::kFLOAT, epsilon, "_eps"));
  KO_ASSIGN_OR_RETURN(ITensor * ve, ew(ctx, node, var->getOutput(0), eps, ElementWiseOperation::kSUM));
  KO_ASSIGN_OR_RETURN(ITensor * sd, unary(ctx, node, ve, UnaryOperation::kSQRT));
  KO_ASSIGN_OR_RETURN(ITensor * n, ew(ctx, node, d, sd, ElementWiseOperation::kDIV));
  IShuffleLayer* back = ctx.network().addShuffle(*n);
  KO_RETURN_IF_ERROR(ctx.check(back, node, "restore_shape"));
  back->setInput(1, *shape->getOutput(0));
  ITensor* y = back->getOutput(0);
  Dims cshape{r, {}};
  for (int32_t i = 0; i < r; ++i) {
    cshape.d[i] = i == 1 ? c : 1;
  }
  for (int i = 1; i <= 2; ++i) {
    ITensor* p = nullptr;
    Constant const* pc = ctx.constant(node, i);
    if (pc != nullptr && pc->count() == groups && groups != c) {
      KO_ASSIGN_OR_RETURN(Constant * e, ctx.newConstant(DataType::kFLOAT, cshape));
      for (int64_t k = 0; k < c; ++k) {
        float const v = static_cast<float>(pc->asDouble(k / (c / groups)));
        std::memcpy(e->bytes.data() + k * 4, &v, 4);
      }
      KO_ASSIGN_OR_RETURN(p, ctx.constantTensor(e, node.name() + (i == 1 ? "_scale" : "_bias")));
    } else {
      KO_ASSIGN_OR_RETURN(p, ctx.tensor(node, i));
      Dims const pd = p->getDimensions();
      if (pd.nbDims != 1 || pd.d[0] != c) {
        return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_INPUT, node, "scale/bias ", dimsString(pd),
                                        " must be [C] or constant [num_groups]");
      }
      KO_ASSIGN_OR_RETURN(p, reshape(ctx, node, p, cshape));
    }
    KO_ASSIGN_OR_RETURN(y, ew(ctx, node, y, p, i == 1 ? ElementWiseOperation::kPROD : ElementWiseOperation::kSUM));
  }
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "GroupNormalization", importGroupNorm);

}  // namespace
}  // namespace kiln::onnx
