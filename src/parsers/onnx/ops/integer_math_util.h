// Shared pieces of the ONNX integer-math importers (MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv): 8-bit
// operands minus their zero points are carried in float64, where products and their sums stay exact integers
// (|sum| < 2^53, far beyond any int32 accumulator), then requantized with round-half-to-even and saturation.
#pragma once

#include <cmath>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx::integer {

using Node = ::onnx::NodeProto;

/// float64(x) - float64(zeroPoint) (input `zpIndex` of `node`, absent: 0). A 1-D zero point of more than one
/// element applies along axis `zpAxis` of x (e.g. rows of A, output channels of W).
inline Result<ITensor*> centered(ImportContext& ctx, Node const& node, ITensor* x, int zpIndex, int32_t zpAxis) {
  DataType const t = x->getType();
  if (t != DataType::kUINT8 && t != DataType::kINT8) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "needs int8 or uint8 operands");
  }
  KO_ASSIGN_OR_RETURN(ITensor * x64, compose::cast(ctx, node, x, DataType::kFLOAT64));
  if (!ImportContext::hasInput(node, zpIndex)) {
    return x64;
  }
  KO_ASSIGN_OR_RETURN(ITensor * zp, ctx.tensor(node, zpIndex));
  KO_ASSIGN_OR_RETURN(ITensor * zp64, compose::cast(ctx, node, zp, DataType::kFLOAT64));
  Dims const zd = zp->getDimensions();
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  if (zd.nbDims == 1 && zd.d[0] != 1) {
    // Per-axis zero point: [n] -> [n, 1, ..., 1] aligned with axis zpAxis of x.
    Dims d{r - zpAxis, {}};
    for (int32_t i = 0; i < d.nbDims; ++i) {
      d.d[i] = i == 0 ? -1 : 1;
    }
    KO_ASSIGN_OR_RETURN(zp64, reshape(ctx, node, zp64, d));
  }
  return compose::binary(ctx, node, x64, zp64, ElementWiseOperation::kSUB);
}

/// saturate(round_half_even(acc * aScale * bScale / yScale) + yZeroPoint) in the type of y's zero point (inputs
/// aScale, bScale, yScale, yZeroPoint of `node`; uint8 when the zero point is absent).
inline Result<ITensor*> requantize(ImportContext& ctx, Node const& node, ITensor* acc, int aScale, int bScale,
                                   int yScale, int yZeroPoint) {
  using Op = ElementWiseOperation;
  auto f64 = [&](int i) -> Result<ITensor*> {
    KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, i));
    return compose::cast(ctx, node, t, DataType::kFLOAT64);
  };
  KO_ASSIGN_OR_RETURN(ITensor * sa, f64(aScale));
  KO_ASSIGN_OR_RETURN(ITensor * sb, f64(bScale));
  KO_ASSIGN_OR_RETURN(ITensor * sy, f64(yScale));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, acc));
  // A 1-D scale of more than one element is per output channel (axis 1 of a conv, the last axis of a matmul).
  auto align = [&](ITensor* s, bool conv) -> Result<ITensor*> {
    Dims const d = s->getDimensions();
    if (!conv || d.nbDims != 1 || d.d[0] == 1) {
      return s;
    }
    Dims nd{r - 1, {}};
    for (int32_t i = 0; i < nd.nbDims; ++i) {
      nd.d[i] = i == 0 ? -1 : 1;
    }
    return reshape(ctx, node, s, nd);
  };
  bool const conv = node.op_type() == "QLinearConv";
  KO_ASSIGN_OR_RETURN(sb, align(sb, conv));
  KO_ASSIGN_OR_RETURN(ITensor * y, compose::binary(ctx, node, acc, sa, Op::kPROD));
  KO_ASSIGN_OR_RETURN(y, compose::binary(ctx, node, y, sb, Op::kPROD));
  KO_ASSIGN_OR_RETURN(y, compose::binary(ctx, node, y, sy, Op::kDIV));
  KO_ASSIGN_OR_RETURN(y, compose::unary(ctx, node, y, UnaryOperation::kROUND));
  DataType outType = DataType::kUINT8;
  if (ImportContext::hasInput(node, yZeroPoint)) {
    KO_ASSIGN_OR_RETURN(ITensor * zp, ctx.tensor(node, yZeroPoint));
    outType = zp->getType();
    KO_ASSIGN_OR_RETURN(ITensor * zp64, compose::cast(ctx, node, zp, DataType::kFLOAT64));
    KO_ASSIGN_OR_RETURN(y, compose::binary(ctx, node, y, zp64, Op::kSUM));
  }
  double const lo = outType == DataType::kINT8 ? -128 : 0, hi = outType == DataType::kINT8 ? 127 : 255;
  KO_ASSIGN_OR_RETURN(ITensor * loT, compose::scalar(ctx, node, DataType::kFLOAT64, lo, "_lo"));
  KO_ASSIGN_OR_RETURN(ITensor * hiT, compose::scalar(ctx, node, DataType::kFLOAT64, hi, "_hi"));
  KO_ASSIGN_OR_RETURN(y, compose::binary(ctx, node, y, loT, Op::kMAX));
  KO_ASSIGN_OR_RETURN(y, compose::binary(ctx, node, y, hiT, Op::kMIN));
  return compose::cast(ctx, node, y, outType);
}

}  // namespace kiln::onnx::integer
