// The shared ONNX Reduce* importer (see reduce_util.h). Constant axes become the layer's axes mask; run-time axes
// go to the reduce layer's input 1 (a Kiln extension), whose contents the runtime reads when the layer runs.
#include "parsers/onnx/ops/reduce_util.h"

#include "parsers/onnx/ops/shape_tensor_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Result<ITensor*> unaryOp(ImportContext& ctx, Node const& node, ITensor* x, UnaryOperation op) {
  IUnaryLayer* l = ctx.network().addUnary(*x, op);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "unary"));
  return l->getOutput(0);
}

ReduceOperation reduceOperation(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kMean:
      return ReduceOperation::kAVG;
    case ReduceKind::kMax:
      return ReduceOperation::kMAX;
    case ReduceKind::kMin:
      return ReduceOperation::kMIN;
    case ReduceKind::kProd:
      return ReduceOperation::kPROD;
    case ReduceKind::kSum:
    case ReduceKind::kL1:
    case ReduceKind::kL2:
    case ReduceKind::kLogSum:
    case ReduceKind::kLogSumExp:
    case ReduceKind::kSumSquare:
      return ReduceOperation::kSUM;
  }
  return ReduceOperation::kSUM;
}

/// The reduction itself; returns `x` when noop_with_empty_axes leaves it unchanged.
Result<ITensor*> reduce(ImportContext& ctx, Node const& node, ITensor* x, ReduceOperation op, bool axesAsInput) {
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int64_t keep, attrInt(node, "keepdims", 1));
  KO_ASSIGN_OR_RETURN(int64_t noop, attrInt(node, "noop_with_empty_axes", 0));
  std::vector<int64_t> axes;
  if (axesAsInput) {
    if (ImportContext::hasInput(node, 1)) {
      if (ctx.constant(node, 1) != nullptr) {
        KO_ASSIGN_OR_RETURN(axes, constantInts(ctx, node, 1));
      } else {
        KO_ASSIGN_OR_RETURN(ITensor * axesT, int64Vector(ctx, node, 1));
        KO_ASSIGN_OR_RETURN(int64_t n, vectorLength(node, axesT, "axes"));
        if (n > 0) {
          // Which axes is only known while running; the mask is replaced by input 1.
          IReduceLayer* l = ctx.network().addReduce(*x, op, 0, keep != 0);
          KO_RETURN_IF_ERROR(ctx.check(l, node, "reduce"));
          l->setInput(1, *axesT);
          return l->getOutput(0);
        }
        // An empty run-time axes tensor is empty every run: the same as no axes.
      }
    }
  } else {
    KO_ASSIGN_OR_RETURN(axes, attrInts(node, "axes"));
  }
  if (axes.empty()) {
    if (noop != 0) {
      return x;
    }
    for (int32_t i = 0; i < r; ++i) {
      axes.push_back(i);
    }
  }
  uint32_t mask = 0;
  for (int64_t a : axes) {
    KO_ASSIGN_OR_RETURN(int32_t n, normalizeAxis(node, a, r));
    if ((mask & (1U << static_cast<uint32_t>(n))) != 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axis ", a, " is repeated");
    }
    mask |= 1U << static_cast<uint32_t>(n);
  }
  IReduceLayer* l = ctx.network().addReduce(*x, op, mask, keep != 0);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "reduce"));
  return l->getOutput(0);
}

}  // namespace

Status importReduceKind(ImportContext& ctx, Node const& node, ReduceKind kind) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  bool const axesAsInput = ctx.opset() >= 18 || (kind == ReduceKind::kSum && ctx.opset() >= 13);
  ITensor* t = x;
  switch (kind) {
    case ReduceKind::kL1: {
      KO_ASSIGN_OR_RETURN(t, unaryOp(ctx, node, x, UnaryOperation::kABS));
      break;
    }
    case ReduceKind::kL2:
    case ReduceKind::kSumSquare: {
      IElementWiseLayer* sq = ctx.network().addElementWise(*x, *x, ElementWiseOperation::kPROD);
      KO_RETURN_IF_ERROR(ctx.check(sq, node, "square"));
      t = sq->getOutput(0);
      break;
    }
    case ReduceKind::kLogSumExp: {
      KO_ASSIGN_OR_RETURN(t, unaryOp(ctx, node, x, UnaryOperation::kEXP));
      break;
    }
    case ReduceKind::kSum:
    case ReduceKind::kMean:
    case ReduceKind::kMax:
    case ReduceKind::kMin:
    case ReduceKind::kProd:
    case ReduceKind::kLogSum:
      break;
  }
  KO_ASSIGN_OR_RETURN(t, reduce(ctx, node, t, reduceOperation(kind), axesAsInput));
  switch (kind) {
    case ReduceKind::kL2: {
      KO_ASSIGN_OR_RETURN(t, unaryOp(ctx, node, t, UnaryOperation::kSQRT));
      break;
    }
    case ReduceKind::kLogSum:
    case ReduceKind::kLogSumExp: {
      KO_ASSIGN_OR_RETURN(t, unaryOp(ctx, node, t, UnaryOperation::kLOG));
      break;
    }
    case ReduceKind::kSum:
    case ReduceKind::kMean:
    case ReduceKind::kMax:
    case ReduceKind::kMin:
    case ReduceKind::kProd:
    case ReduceKind::kL1:
    case ReduceKind::kSumSquare:
      break;
  }
  if (t == x) {
    IIdentityLayer* id = ctx.network().addIdentity(*x);
    KO_RETURN_IF_ERROR(ctx.check(id, node, "identity"));
    t = id->getOutput(0);
  }
  return ctx.setOutput(node, 0, t);
}

}  // namespace kiln::onnx
