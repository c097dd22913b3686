// Shape-tensor arithmetic helpers of the ONNX importers (see shape_tensor_util.h).
#include "parsers/onnx/ops/shape_tensor_util.h"

namespace kiln::onnx {

using Node = ::onnx::NodeProto;

Result<ITensor*> asInt64(ImportContext& ctx, Node const& node, ITensor* t) {
  if (t->getType() == DataType::kINT64) {
    return t;
  }
  ICastLayer* c = ctx.network().addCast(*t, DataType::kINT64);
  KO_RETURN_IF_ERROR(ctx.check(c, node, "to_int64"));
  return c->getOutput(0);
}

Result<ITensor*> int64Vector(ImportContext& ctx, Node const& node, int i) {
  KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, i));
  DataType const type = t->getType();
  if (type != DataType::kINT32 && type != DataType::kINT64) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input ", i, " must be int32 or int64");
  }
  KO_ASSIGN_OR_RETURN(t, asInt64(ctx, node, t));
  int32_t const r = t->getDimensions().nbDims;
  if (r == 0) {
    return reshape(ctx, node, t, Dims{1, {1}});
  }
  if (r != 1) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input ", i, " must be 1-D, not rank ", r);
  }
  return t;
}

Result<ITensor*> int64Const(ImportContext& ctx, Node const& node, std::vector<int64_t> const& values) {
  return ctx.int64Tensor(values, node.name() + "_const");
}

Result<ITensor*> binary(ImportContext& ctx, Node const& node, ITensor* a, ITensor* b, ElementWiseOperation op) {
  IElementWiseLayer* l = ctx.network().addElementWise(*a, *b, op);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "shape_arith"));
  return l->getOutput(0);
}

Result<ITensor*> choose(ImportContext& ctx, Node const& node, ITensor* condition, ITensor* a, ITensor* b) {
  ISelectLayer* l = ctx.network().addSelect(*condition, *a, *b);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "shape_select"));
  return l->getOutput(0);
}

Result<ITensor*> shapeOf(ImportContext& ctx, Node const& node, ITensor* x) {
  IShapeLayer* l = ctx.network().addShape(*x);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "shape"));
  return asInt64(ctx, node, l->getOutput(0));
}

Result<ITensor*> gather(ImportContext& ctx, Node const& node, ITensor* t, ITensor* indices) {
  IGatherLayer* l = ctx.network().addGather(*t, *indices, 0);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "shape_gather"));
  return l->getOutput(0);
}

Result<ITensor*> clamp(ImportContext& ctx, Node const& node, ITensor* t, ITensor* lo, ITensor* hi) {
  KO_ASSIGN_OR_RETURN(ITensor * a, binary(ctx, node, t, lo, ElementWiseOperation::kMAX));
  return binary(ctx, node, a, hi, ElementWiseOperation::kMIN);
}

Result<ITensor*> normalizeAxes(ImportContext& ctx, Node const& node, ITensor* axes, int32_t rank) {
  KO_ASSIGN_OR_RETURN(ITensor * zero, int64Const(ctx, node, {0}));
  KO_ASSIGN_OR_RETURN(ITensor * rankT, int64Const(ctx, node, {rank}));
  KO_ASSIGN_OR_RETURN(ITensor * negative, binary(ctx, node, axes, zero, ElementWiseOperation::kLESS));
  KO_ASSIGN_OR_RETURN(ITensor * shifted, binary(ctx, node, axes, rankT, ElementWiseOperation::kSUM));
  return choose(ctx, node, negative, shifted, axes);
}

Result<ITensor*> toScalar(ImportContext& ctx, Node const& node, ITensor* t) {
  if (t->getDimensions().nbDims == 0) {
    return t;
  }
  return reshape(ctx, node, t, Dims{0, {}});
}

Status assertAll(ImportContext& ctx, Node const& node, ITensor* condition, std::string const& message) {
  std::string const full = cat("ONNX node '", node.name(), "' (", node.op_type(), "): ", message);
  IAssertionLayer* l = ctx.network().addAssertion(*condition, full.c_str());
  return ctx.check(l, node, "check");
}

Result<int64_t> vectorLength(Node const& node, ITensor* t, char const* what) {
  Dims const d = t->getDimensions();
  if (d.nbDims != 1 || d.d[0] < 0) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node, what,
                                    " must be 1-D with a length known at build time, not ", dimsString(d));
  }
  return d.d[0];
}

}  // namespace kiln::onnx
