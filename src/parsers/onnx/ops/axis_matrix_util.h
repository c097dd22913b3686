// Applying a constant matrix along one axis of a tensor with static dims (a reshape to [before, in, after] and a
// batched MatrixMultiply): the building block of imports that are linear maps per axis (composed Resize, DFT).
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {

/// True if every extent of `d` is known.
inline bool allStatic(Dims const& d) {
  for (int32_t i = 0; i < d.nbDims; ++i)
    if (d.d[i] < 0) return false;
  return true;
}

/// A constant of `type` (kFLOAT or kFLOAT64) and `dims` holding `v` (row-major).
inline Result<ITensor*> doubleConstant(ImportContext& ctx, ::onnx::NodeProto const& node, DataType type,
                                       Dims const& dims, std::vector<double> const& v, std::string const& tag) {
  KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(type, dims));
  for (size_t i = 0; i < v.size(); ++i) {
    if (type == DataType::kFLOAT64) {
      std::memcpy(c->bytes.data() + i * 8, &v[i], 8);
    } else {
      auto const f = static_cast<float>(v[i]);
      std::memcpy(c->bytes.data() + i * 4, &f, 4);
    }
  }
  return ctx.constantTensor(c, node.name() + "_" + tag);
}

/// y[..., o, ...] = sum_i w[o * in + i] * x[..., i, ...] along `axis` of `x` (static dims, kFLOAT or kFLOAT64;
/// in = x's extent on `axis`, w holds out * in values).
inline Result<ITensor*> applyAxisMatrix(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* x, int32_t axis,
                                        int64_t out, std::vector<double> const& w, std::string const& tag) {
  Dims const d = x->getDimensions();
  if (!allStatic(d)) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "input dims ", dimsString(d),
                                    " must be known at build time");
  }
  int64_t before = 1, after = 1;
  for (int32_t i = 0; i < axis; ++i) before *= d.d[i];
  for (int32_t i = axis + 1; i < d.nbDims; ++i) after *= d.d[i];
  int64_t const in = d.d[axis];
  KO_ASSIGN_OR_RETURN(ITensor * x3, reshape(ctx, node, x, Dims{3, {before, in, after}}, false));
  KO_ASSIGN_OR_RETURN(ITensor * wt, doubleConstant(ctx, node, x->getType(), Dims{3, {1, out, in}}, w, tag));
  IMatrixMultiplyLayer* mm = ctx.network().addMatrixMultiply(*wt, MatrixOperation::kNONE, *x3, MatrixOperation::kNONE);
  KO_RETURN_IF_ERROR(ctx.check(mm, node, tag.c_str()));
  Dims od = d;
  od.d[axis] = out;
  return reshape(ctx, node, mm->getOutput(0), od, false);
}

}  // namespace kiln::onnx
