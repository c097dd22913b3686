// Shared composition of the ONNX generalized-cosine windows (HannWindow, HammingWindow, BlackmanWindow):
// w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), n = 0..size-1, N = size (periodic) or size - 1
// (symmetric); `size` is a run-time 0-D input, so the output extent is read from it while running.
#pragma once

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx::compose {

/// Imports a window op with coefficients a0, a1, a2 (computed in float64, converted to output_datatype).
inline Status importCosineWindow(ImportContext& ctx, Node const& node, double a0, double a1, double a2) {
  KO_ASSIGN_OR_RETURN(ITensor * size, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int64_t periodic, attrInt(node, "periodic", 1));
  KO_ASSIGN_OR_RETURN(int64_t onnxType, attrInt(node, "output_datatype", 1));
  KO_ASSIGN_OR_RETURN(DataType outType, fromOnnxType(static_cast<int32_t>(onnxType)));
  KO_ASSIGN_OR_RETURN(ITensor * size64, cast(ctx, node, size, DataType::kINT64));
  KO_ASSIGN_OR_RETURN(ITensor * extent, reshape(ctx, node, size64, Dims{1, {1}}));
  // n = 0, 1, ..., size - 1
  IFillLayer* f = ctx.network().addFill(Dims{1, {0}}, FillOperation::kLINSPACE, DataType::kINT64);
  KO_RETURN_IF_ERROR(ctx.check(f, node, "indices"));
  KO_ASSIGN_OR_RETURN(ITensor * start, scalar(ctx, node, DataType::kINT64, 0, "_start"));
  KO_ASSIGN_OR_RETURN(ITensor * step, scalar(ctx, node, DataType::kINT64, 1, "_step"));
  f->setInput(0, *extent);
  f->setInput(1, *start);
  f->setInput(2, *step);
  KO_ASSIGN_OR_RETURN(ITensor * n, cast(ctx, node, f->getOutput(0), DataType::kFLOAT64));
  KO_ASSIGN_OR_RETURN(ITensor * denom, reshape(ctx, node, size64, Dims{0, {}}));
  KO_ASSIGN_OR_RETURN(denom, cast(ctx, node, denom, DataType::kFLOAT64));
  if (periodic == 0) {
    KO_ASSIGN_OR_RETURN(ITensor * one, scalar(ctx, node, DataType::kFLOAT64, 1, "_one"));
    KO_ASSIGN_OR_RETURN(denom, binary(ctx, node, denom, one, ElementWiseOperation::kSUB));
  }
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  KO_ASSIGN_OR_RETURN(ITensor * twoPi, scalar(ctx, node, DataType::kFLOAT64, kTwoPi, "_two_pi"));
  KO_ASSIGN_OR_RETURN(ITensor * theta, binary(ctx, node, n, twoPi, ElementWiseOperation::kPROD));
  KO_ASSIGN_OR_RETURN(theta, binary(ctx, node, theta, denom, ElementWiseOperation::kDIV));
  KO_ASSIGN_OR_RETURN(ITensor * c1, unary(ctx, node, theta, UnaryOperation::kCOS));
  KO_ASSIGN_OR_RETURN(ITensor * k1, scalar(ctx, node, DataType::kFLOAT64, a1, "_a1"));
  KO_ASSIGN_OR_RETURN(ITensor * k0, scalar(ctx, node, DataType::kFLOAT64, a0, "_a0"));
  KO_ASSIGN_OR_RETURN(ITensor * w, binary(ctx, node, c1, k1, ElementWiseOperation::kPROD));
  KO_ASSIGN_OR_RETURN(w, binary(ctx, node, k0, w, ElementWiseOperation::kSUB));
  if (a2 != 0.0) {
    KO_ASSIGN_OR_RETURN(ITensor * two, scalar(ctx, node, DataType::kFLOAT64, 2, "_two"));
    KO_ASSIGN_OR_RETURN(ITensor * theta2, binary(ctx, node, theta, two, ElementWiseOperation::kPROD));
    KO_ASSIGN_OR_RETURN(ITensor * c2, unary(ctx, node, theta2, UnaryOperation::kCOS));
    KO_ASSIGN_OR_RETURN(ITensor * k2, scalar(ctx, node, DataType::kFLOAT64, a2, "_a2"));
    KO_ASSIGN_OR_RETURN(c2, binary(ctx, node, c2, k2, ElementWiseOperation::kPROD));
    KO_ASSIGN_OR_RETURN(w, binary(ctx, node, w, c2, ElementWiseOperation::kSUM));
  }
  KO_ASSIGN_OR_RETURN(w, cast(ctx, node, w, outType));
  return ctx.setOutput(node, 0, w);
}

}  // namespace kiln::onnx::compose
