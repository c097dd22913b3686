// Shape inference of MatrixMultiply (TensorRT's IMatrixMultiplyLayer): each input is a (batch of) matrices
// (kNONE / kTRANSPOSE, last two dims) or vectors (kVECTOR, last dim); batch dims broadcast; optional bias
// broadcast to y; optional residual of y's shape (fused by fuse_bias_activation); fused activation.
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

// Dims [begin, end) of d.
Dims subDims(Dims const& d, int32_t begin, int32_t end) {
  Dims r{};
  r.nbDims = end - begin;
  for (int32_t i = begin; i < end; ++i)
    r.d[i - begin] = d.d[i];
  return r;
}

Status inferMatrixMultiply(InferContext& ctx) {
  if (ctx.numInputs() < 2 || ctx.numInputs() > 4 || !ctx.present(0) || !ctx.present(1))
    return ctx.error("needs inputs a and b, then an optional bias and an optional residual");
  int64_t opA = ctx.node.attrs.getInt("op_a", 0);
  int64_t opB = ctx.node.attrs.getInt("op_b", 0);
  if (opA < 0 || opA >= EnumMax<MatrixOperation>())
    return ctx.error("unknown op_a ", opA);
  if (opB < 0 || opB >= EnumMax<MatrixOperation>())
    return ctx.error("unknown op_b ", opB);
  bool vecA = opA == static_cast<int64_t>(MatrixOperation::kVECTOR);
  bool vecB = opB == static_cast<int64_t>(MatrixOperation::kVECTOR);
  bool trA = opA == static_cast<int64_t>(MatrixOperation::kTRANSPOSE);
  bool trB = opB == static_cast<int64_t>(MatrixOperation::kTRANSPOSE);
  Dims const& a = ctx.in[0].shape;
  Dims const& b = ctx.in[1].shape;
  int32_t matA = vecA ? 1 : 2, matB = vecB ? 1 : 2;
  if (a.nbDims < matA)
    return ctx.error("input a ", dimsToString(a), " needs rank >= ", matA);
  if (b.nbDims < matB)
    return ctx.error("input b ", dimsToString(b), " needs rank >= ", matB);

  // a: [.., M, K] (or [.., K, M] transposed, or [.., K] as a vector); b: [.., K, N] (or transposed, or [.., K]).
  int32_t ra = a.nbDims, rb = b.nbDims;
  int64_t m = vecA ? 1 : (trA ? a.d[ra - 1] : a.d[ra - 2]);
  int64_t ka = vecA ? a.d[ra - 1] : (trA ? a.d[ra - 2] : a.d[ra - 1]);
  int64_t kb = vecB ? b.d[rb - 1] : (trB ? b.d[rb - 1] : b.d[rb - 2]);
  int64_t n = vecB ? 1 : (trB ? b.d[rb - 2] : b.d[rb - 1]);
  if (ka >= 0 && kb >= 0 && ka != kb)
    return ctx.error("inner dimensions differ: a ", dimsToString(a), " gives ", ka, ", b ", dimsToString(b), " gives ",
                     kb);
  auto batch = broadcastShapes(subDims(a, 0, ra - matA), subDims(b, 0, rb - matB));
  if (!batch)
    return ctx.error("batch dims of a ", dimsToString(a), " and b ", dimsToString(b), " do not broadcast");
  Dims y = *batch;
  if (!vecA)
    y.d[y.nbDims++] = m;
  if (!vecB)
    y.d[y.nbDims++] = n;
  if (y.nbDims > Dims::MAX_DIMS)
    return ctx.error("output rank exceeds ", Dims::MAX_DIMS);

  if (ctx.present(2)) {
    Dims const& bias = ctx.in[2].shape;
    bool ok = bias.nbDims <= y.nbDims;
    for (int32_t i = 0; ok && i < bias.nbDims; ++i) {
      int64_t bd = bias.d[i], yd = y.d[y.nbDims - bias.nbDims + i];
      if (bd >= 0 && bd != 1 && yd >= 0 && bd != yd)
        ok = false;
    }
    if (!ok)
      return ctx.error("bias ", dimsToString(bias), " does not broadcast to the output ", dimsToString(y));
  }
  if (ctx.present(3)) {
    Dims const& r = ctx.in[3].shape;
    bool ok = r.nbDims == y.nbDims;
    for (int32_t i = 0; ok && i < y.nbDims; ++i)
      if (r.d[i] >= 0 && y.d[i] >= 0 && r.d[i] != y.d[i]) ok = false;
    if (!ok) return ctx.error("residual ", dimsToString(r), " must have the output's shape ", dimsToString(y));
    if (ctx.in[3].dtype != ctx.in[0].dtype)
      return ctx.error("residual of type ", dataTypeName(ctx.in[3].dtype), " must have the output's type ",
                       dataTypeName(ctx.in[0].dtype));
  }
  int64_t act = ctx.node.attrs.getInt("activation", -1);
  if (act < -1 || act >= EnumMax<ActivationType>())
    return ctx.error("unknown activation ", act);
  ctx.out[0] = {ctx.in[0].dtype, y};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kMatrixMultiply, inferMatrixMultiply);

}  // namespace kiln::ir
