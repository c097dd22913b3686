// Helpers shared by the ONNX importers split out of the former quantize_ops.cc (one file per importer).
#pragma once

#include <cstring>
#include "parsers/onnx/import_context.h"

namespace kiln::onnx::quantize_ops_detail {

using Node = ::onnx::NodeProto;

/// How a scale applies to x: per tensor (0-D scale), per axis (1-D) or per block (rank of x).
struct ScaleLayout {
  int32_t axis = 0;
  bool perAxis = false;
  bool block = false;
  Dims blockShape{0, {}};
};

/// Reads axis/block_size and brings one-element 1-D scale and zero point to 0-D.
inline Result<ScaleLayout> scaleLayout(ImportContext& ctx, Node const& node, ITensor* x, ITensor*& scale,
                                       ITensor*& zp) {
  ScaleLayout s;
  KO_ASSIGN_OR_RETURN(int32_t rx, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int32_t rs, rankOf(node, scale));
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", 1));
  KO_ASSIGN_OR_RETURN(int64_t blockSize, attrInt(node, "block_size", 0));
  Dims const sd = scale->getDimensions();
  if (rs == 1 && sd.d[0] == 1 && blockSize == 0) {
    // A one-element 1-D scale is per tensor unless x's axis also has extent 1 (same result either way).
    KO_ASSIGN_OR_RETURN(scale, reshape(ctx, node, scale, Dims{0, {}}));
    if (zp != nullptr) {
      KO_ASSIGN_OR_RETURN(zp, reshape(ctx, node, zp, Dims{0, {}}));
    }
    rs = 0;
  }
  if (rs == 0) {
    if (blockSize != 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "block_size needs a scale of x's rank");
    }
    return s;
  }
  KO_ASSIGN_OR_RETURN(s.axis, normalizeAxis(node, axisAttr, rx));
  if (blockSize > 0) {
    if (rs != rx) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "block scale must have x's rank ", rx, ", got ",
                                      rs);
    }
    s.block = true;
    s.blockShape = Dims{rx, {}};
    for (int32_t i = 0; i < rx; ++i) {
      s.blockShape.d[i] = i == s.axis ? blockSize : 1;
    }
    return s;
  }
  if (blockSize < 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "negative block_size ", blockSize);
  }
  if (rs != 1) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "scale must be 0-D, 1-D or blocked, got rank ", rs);
  }
  s.perAxis = true;
  return s;
}

template <typename L>
void applyLayout(L* l, ScaleLayout const& s) {
  if (s.perAxis || s.block) {
    l->setAxis(s.axis);
  }
  if (s.block) {
    l->setBlockShape(s.blockShape);
  }
}

}  // namespace kiln::onnx::quantize_ops_detail
