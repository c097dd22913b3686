// The integer convolution shared by ConvInteger and QLinearConv: (x - x_zp) conv (w - w_zp) in float64 (exact,
// see integer_math_util.h) through an IConvolutionLayer whose kernel is a tensor input.
#pragma once

#include <vector>

#include "parsers/onnx/ops/integer_math_util.h"
#include "parsers/onnx/ops/spatial_util.h"

namespace kiln::onnx::integer {

/// The float64 accumulator of the convolution of inputs xIndex/wIndex with zero points xZp/wZp (and, when
/// biasIndex names a present input, plus that INT32 bias per output channel).
inline Result<ITensor*> convAccumulator(ImportContext& ctx, Node const& node, int xIndex, int xZp, int wIndex, int wZp,
                                        int biasIndex) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, xIndex));
  KO_ASSIGN_OR_RETURN(ITensor * w, ctx.tensor(node, wIndex));
  KO_ASSIGN_OR_RETURN(int32_t nbSpatial, spatial::spatialAxes(node, x));
  Dims const wd = w->getDimensions();
  if (wd.nbDims != nbSpatial + 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "weight rank ", wd.nbDims,
                                    " does not match the input");
  }
  for (int32_t i = 0; i < wd.nbDims; ++i) {
    if (wd.d[i] < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node, "needs a weight of static shape");
    }
  }
  std::vector<int64_t> kshape(wd.d + 2, wd.d + wd.nbDims);
  KO_ASSIGN_OR_RETURN(spatial::Spatial s, spatial::readSpatial(node, nbSpatial, kshape));
  KO_ASSIGN_OR_RETURN(int64_t group, attrInt(node, "group", 1));
  KO_ASSIGN_OR_RETURN(ITensor * x0, centered(ctx, node, x, xZp, 1));
  KO_ASSIGN_OR_RETURN(ITensor * w0, centered(ctx, node, w, wZp, 0));
  bool const oneD = nbSpatial == 1;
  if (oneD) {
    KO_ASSIGN_OR_RETURN(x0, spatial::to2d(ctx, node, x0));
    KO_ASSIGN_OR_RETURN(w0, spatial::to2d(ctx, node, w0));
  }
  IConvolutionLayer* l = ctx.network().addConvolutionNd(*x0, wd.d[0], s.kernel, Weights{DataType::kFLOAT, nullptr, 0},
                                                        Weights{DataType::kFLOAT, nullptr, 0});
  KO_RETURN_IF_ERROR(ctx.check(l, node, "conv"));
  l->setInput(1, *w0);
  l->setNbGroups(group);
  l->setStrideNd(s.strides);
  l->setPrePadding(s.pre);
  l->setPostPadding(s.post);
  l->setDilationNd(s.dilations);
  l->setPaddingMode(s.mode == PaddingMode::kEXPLICIT_ROUND_UP ? PaddingMode::kEXPLICIT_ROUND_DOWN : s.mode);
  ITensor* acc = l->getOutput(0);
  if (biasIndex >= 0 && ImportContext::hasInput(node, biasIndex)) {
    KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, biasIndex));
    KO_ASSIGN_OR_RETURN(b, compose::cast(ctx, node, b, DataType::kFLOAT64));
    Dims bd{oneD ? 3 : nbSpatial + 1, {}};
    for (int32_t i = 0; i < bd.nbDims; ++i) {
      bd.d[i] = i == 0 ? -1 : 1;
    }
    KO_ASSIGN_OR_RETURN(b, reshape(ctx, node, b, bd));
    KO_ASSIGN_OR_RETURN(acc, compose::binary(ctx, node, acc, b, ElementWiseOperation::kSUM));
  }
  if (oneD) {
    KO_ASSIGN_OR_RETURN(acc, spatial::from2d(ctx, node, acc));
  }
  return acc;
}

}  // namespace kiln::onnx::integer
