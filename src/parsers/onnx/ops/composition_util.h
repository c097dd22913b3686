// Inline building blocks (namespace compose) for ONNX importers that compose an op from public layers:
// broadcasting binary and unary element-wise ops, matrix products, casts, selects, typed scalar constants and an
// index-difference grid (col - row).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx::compose {

using Node = ::onnx::NodeProto;

/// a op b, both brought to equal rank by leading 1-dims (numpy broadcasting).
inline Result<ITensor*> binary(ImportContext& ctx, Node const& node, ITensor* a, ITensor* b, ElementWiseOperation op) {
  return ::kiln::onnx::elementwise(ctx, node, a, b, op);
}

/// op(a) x op(b) with numpy batch broadcasting; rank-1 operands are vectors.
inline Result<ITensor*> matmul(ImportContext& ctx, Node const& node, ITensor* a, MatrixOperation opA, ITensor* b,
                               MatrixOperation opB) {
  KO_ASSIGN_OR_RETURN(int32_t ra, rankOf(node, a));
  KO_ASSIGN_OR_RETURN(int32_t rb, rankOf(node, b));
  if (ra == 0 || rb == 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "MatMul inputs must have rank >= 1");
  }
  if (ra == 1) {
    opA = MatrixOperation::kVECTOR;
  }
  if (rb == 1) {
    opB = MatrixOperation::kVECTOR;
  }
  // Batch axes broadcast numpy-style: bring both to the same rank (vectors keep theirs).
  if (ra > 1 && rb > 1 && ra != rb) {
    int32_t const r = std::max(ra, rb);
    KO_ASSIGN_OR_RETURN(a, broadcastToRank(ctx, node, a, r));
    KO_ASSIGN_OR_RETURN(b, broadcastToRank(ctx, node, b, r));
  }
  IMatrixMultiplyLayer* l = ctx.network().addMatrixMultiply(*a, opA, *b, opB);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "matmul"));
  return l->getOutput(0);
}

using ::kiln::onnx::unary;  // op(x)

using ::kiln::onnx::cast;  // x converted to a type (x itself when it has it)

using ::kiln::onnx::select;  // condition ? a : b, numpy broadcasting

/// `v` truncated toward zero and saturated to integer type T (NaN gives 0): a plain cast of an out-of-range
/// double is undefined behaviour.
template <typename T>
T saturatingCast(double v) {
  if (std::isnan(v)) {
    return T{0};
  }
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) {
    return std::numeric_limits<T>::lowest();
  }
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) {
    return std::numeric_limits<T>::max();
  }
  return static_cast<T>(v);
}

/// A 0-D constant of `type` holding `v` (integer types get v truncated and saturated; 16-bit floats through a
/// float and a Cast layer, since the parser has no fp16 encoder of its own).
inline Result<ITensor*> scalar(ImportContext& ctx, Node const& node, DataType type, double v, char const* tag) {
  DataType stored = (type == DataType::kHALF || type == DataType::kBF16) ? DataType::kFLOAT : type;
  KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(stored, Dims{0, {}}));
  auto put = [&](auto x) { std::memcpy(c->bytes.data(), &x, sizeof(x)); };
  switch (stored) {
    case DataType::kFLOAT:
      put(static_cast<float>(v));
      break;
    case DataType::kFLOAT64:
      put(v);
      break;
    case DataType::kINT8:
      put(saturatingCast<int8_t>(v));
      break;
    case DataType::kUINT8:
      put(saturatingCast<uint8_t>(v));
      break;
    case DataType::kBOOL:
      put(static_cast<uint8_t>(v != 0.0));
      break;
    case DataType::kINT16:
      put(saturatingCast<int16_t>(v));
      break;
    case DataType::kUINT16:
      put(saturatingCast<uint16_t>(v));
      break;
    case DataType::kINT32:
      put(saturatingCast<int32_t>(v));
      break;
    case DataType::kUINT32:
      put(saturatingCast<uint32_t>(v));
      break;
    case DataType::kINT64:
      put(saturatingCast<int64_t>(v));
      break;
    case DataType::kUINT64:
      put(saturatingCast<uint64_t>(v));
      break;
    case DataType::kHALF:
    case DataType::kBF16:
    case DataType::kFP8:
    case DataType::kINT4:
    case DataType::kFP4:
    case DataType::kE8M0:
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "no scalar constant of type ",
                                      static_cast<int>(type));
  }
  KO_ASSIGN_OR_RETURN(ITensor * t, ctx.constantTensor(c, node.name() + tag));
  return cast(ctx, node, t, type);
}

/// The trailing extents [rank-2, rank-1] of `x` as a 1-D INT64 shape tensor (constant when they are static).
inline Result<ITensor*> lastTwoExtents(ImportContext& ctx, Node const& node, ITensor* x) {
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  if (r < 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "needs an input of rank >= 2, got ", r);
  }
  Dims const d = x->getDimensions();
  if (d.d[r - 2] >= 0 && d.d[r - 1] >= 0) {
    return ctx.int64Tensor({d.d[r - 2], d.d[r - 1]}, node.name() + "_extents");
  }
  IShapeLayer* s = ctx.network().addShape(*x);
  KO_RETURN_IF_ERROR(ctx.check(s, node, "shape"));
  KO_ASSIGN_OR_RETURN(ITensor * idx, ctx.int64Tensor({r - 2, r - 1}, node.name() + "_extent_axes"));
  IGatherLayer* g = ctx.network().addGather(*s->getOutput(0), *idx, 0);
  KO_RETURN_IF_ERROR(ctx.check(g, node, "extents"));
  return g->getOutput(0);
}

/// INT64 grid of shape `extents` ([M, N], a 1-D shape tensor) holding col - row: the diagonal offset of each
/// matrix element (0 on the main diagonal, k on the k-th superdiagonal).
inline Result<ITensor*> diagonalOffsets(ImportContext& ctx, Node const& node, ITensor* extents) {
  IFillLayer* f = ctx.network().addFill(Dims{2, {0, 0}}, FillOperation::kLINSPACE, DataType::kINT64);
  KO_RETURN_IF_ERROR(ctx.check(f, node, "diagonal_offsets"));
  KO_ASSIGN_OR_RETURN(ITensor * alpha, scalar(ctx, node, DataType::kINT64, 0, "_offset_start"));
  KO_ASSIGN_OR_RETURN(ITensor * steps, ctx.int64Tensor({-1, 1}, node.name() + "_offset_steps"));
  f->setInput(0, *extents);
  f->setInput(1, *alpha);
  f->setInput(2, *steps);
  return f->getOutput(0);
}

}  // namespace kiln::onnx::compose
