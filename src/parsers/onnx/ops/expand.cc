// ONNX importer for Expand: numpy broadcasting of x to a shape, as a wrapping slice (extent-1 axes repeat). A
// constant shape is checked here; a shape known only at run time gives the slice size by shape-tensor arithmetic
// (out = x's extent, or the requested one where x's is 1), checked by an assertion when the engine runs.
#include <algorithm>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/shape_tensor_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status runtimeExpand(ImportContext& ctx, Node const& node, ITensor* x) {
  KO_ASSIGN_OR_RETURN(ITensor * shape, int64Vector(ctx, node, 1));
  KO_ASSIGN_OR_RETURN(int64_t m, vectorLength(node, shape, "the shape input"));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  int64_t const outRank = std::max<int64_t>(r, m);
  if (outRank > Dims::MAX_DIMS) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node, "rank too large");
  }
  auto const rank = static_cast<int32_t>(outRank);
  KO_ASSIGN_OR_RETURN(x, broadcastToRank(ctx, node, x, rank));
  if (m < outRank) {
    KO_ASSIGN_OR_RETURN(ITensor * lead,
                        int64Const(ctx, node, std::vector<int64_t>(static_cast<size_t>(outRank - m), 1)));
    ITensor* parts[] = {lead, shape};
    IConcatenationLayer* c = ctx.network().addConcatenation(parts, 2);
    KO_RETURN_IF_ERROR(ctx.check(c, node, "shape_concat"));
    c->setAxis(0);
    shape = c->getOutput(0);
  }
  KO_ASSIGN_OR_RETURN(ITensor * xShape, shapeOf(ctx, node, x));
  KO_ASSIGN_OR_RETURN(ITensor * one, int64Const(ctx, node, {1}));
  KO_ASSIGN_OR_RETURN(ITensor * isOne, binary(ctx, node, xShape, one, ElementWiseOperation::kEQUAL));
  KO_ASSIGN_OR_RETURN(ITensor * size, choose(ctx, node, isOne, shape, xShape));
  // Numpy broadcasting: each requested extent is 1, x's extent, or anything where x's is 1.
  KO_ASSIGN_OR_RETURN(ITensor * wantsOne, binary(ctx, node, shape, one, ElementWiseOperation::kEQUAL));
  KO_ASSIGN_OR_RETURN(ITensor * same, binary(ctx, node, shape, xShape, ElementWiseOperation::kEQUAL));
  KO_ASSIGN_OR_RETURN(ITensor * ok, binary(ctx, node, isOne, wantsOne, ElementWiseOperation::kOR));
  KO_ASSIGN_OR_RETURN(ok, binary(ctx, node, ok, same, ElementWiseOperation::kOR));
  KO_RETURN_IF_ERROR(assertAll(ctx, node, ok, "the input cannot be broadcast to the requested shape"));
  Dims zeros{rank, {}};
  Dims ones{rank, {}};
  for (int32_t k = 0; k < rank; ++k) {
    ones.d[k] = 1;
  }
  ISliceLayer* l = ctx.network().addSlice(*x, zeros, ones, ones);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "expand"));
  l->setMode(SampleMode::kWRAP);
  l->setInput(2, *size);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

/// Expand: numpy broadcast to a constant shape, as a wrapping slice (runtimeExpand for a run-time shape).
Status importExpand(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  if (ctx.constant(node, 1) == nullptr) {
    return runtimeExpand(ctx, node, x);
  }
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> shape, constantInts(ctx, node, 1));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  int32_t const outRank = std::max<int32_t>(r, static_cast<int32_t>(shape.size()));
  if (outRank > Dims::MAX_DIMS) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node, "rank too large");
  }
  KO_ASSIGN_OR_RETURN(x, broadcastToRank(ctx, node, x, outRank));
  Dims const in = x->getDimensions();
  Dims st{outRank, {}};
  Dims sz{outRank, {}};
  Dims stride{outRank, {}};
  size_t const off = static_cast<size_t>(outRank) - shape.size();
  for (int32_t k = 0; k < outRank; ++k) {
    int64_t want = static_cast<size_t>(k) >= off ? shape[static_cast<size_t>(k) - off] : 1;
    if (in.d[k] < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                      "expanding a dynamic extent is not supported yet");
    }
    if (in.d[k] != 1 && want != 1 && want != in.d[k]) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "cannot broadcast extent ", in.d[k], " to ",
                                      want);
    }
    sz.d[k] = in.d[k] == 1 ? want : in.d[k];
    stride.d[k] = 1;
  }
  // Wrapping coordinates repeat extent-1 axes: a broadcast copy.
  ISliceLayer* l = ctx.network().addSlice(*x, st, sz, stride);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "expand"));
  l->setMode(SampleMode::kWRAP);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "Expand", importExpand);

}  // namespace
}  // namespace kiln::onnx
