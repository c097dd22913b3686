// Helpers shared by the ONNX importers split out of the former misc_ops.cc (one file per importer).
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx::misc_ops_detail {

using Node = ::onnx::NodeProto;

inline Result<ITensor*> ew(ImportContext& ctx, Node const& node, ITensor* a, ITensor* b, ElementWiseOperation op) {
  return ::kiln::onnx::elementwise(ctx, node, a, b, op);
}

using ::kiln::onnx::unary;  // op(x)

/// A 0-D constant of `type` (FLOAT, INT32 or INT64) holding `v`.
inline Result<ITensor*> scalar(ImportContext& ctx, Node const& node, DataType type, double v, char const* tag) {
  KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(type, Dims{0, {}}));
  if (type == DataType::kFLOAT) {
    float f = static_cast<float>(v);
    std::memcpy(c->bytes.data(), &f, sizeof(f));
  } else if (type == DataType::kINT32) {
    int32_t i = static_cast<int32_t>(v);
    std::memcpy(c->bytes.data(), &i, sizeof(i));
  } else if (type == DataType::kINT64) {
    int64_t i = static_cast<int64_t>(v);
    std::memcpy(c->bytes.data(), &i, sizeof(i));
  } else {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "type ", static_cast<int>(type),
                                    " is not supported here yet (FLOAT, INT32, INT64)");
  }
  return ctx.constantTensor(c, node.name() + tag);
}

inline Result<Dims> staticDims(Node const& node, ITensor* x, int32_t from) {
  Dims const d = x->getDimensions();
  for (int32_t i = from; i < d.nbDims; ++i) {
    if (d.d[i] < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node, "needs static extents after axis ",
                                      from - 1, ", got ", dimsString(d), " (not supported yet)");
    }
  }
  return d;
}

inline Result<ITensor*> activation(ImportContext& ctx, Node const& node, ITensor* x, ActivationType t, float alpha,
                                   float beta) {
  IActivationLayer* l = ctx.network().addActivation(*x, t);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "activation"));
  l->setAlpha(alpha);
  l->setBeta(beta);
  return l->getOutput(0);
}

}  // namespace kiln::onnx::misc_ops_detail
