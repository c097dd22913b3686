// ONNX quantization importers: QuantizeLinear/DequantizeLinear (per-tensor, per-axis and block scales, optional
// zero point) onto IQuantizeLayer/IDequantizeLayer, and DynamicQuantizeLinear composed from reductions and a
// uint8 quantize.
#include <cstring>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// How a scale applies to x: per tensor (0-D scale), per axis (1-D) or per block (rank of x).
struct ScaleLayout {
  int32_t axis = 0;
  bool perAxis = false;
  bool block = false;
  Dims blockShape{0, {}};
};

/// Reads axis/block_size and brings one-element 1-D scale and zero point to 0-D.
Result<ScaleLayout> scaleLayout(ImportContext& ctx, Node const& node, ITensor* x, ITensor*& scale, ITensor*& zp) {
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
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "block scale must have x's rank ", rx,
                                      ", got ", rs);
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

Status importQuantizeLinear(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * scale, ctx.tensor(node, 1));
  ITensor* zp = nullptr;
  if (ImportContext::hasInput(node, 2)) {
    KO_ASSIGN_OR_RETURN(zp, ctx.tensor(node, 2));
  }
  DataType outType = DataType::kUINT8;
  KO_ASSIGN_OR_RETURN(int64_t outAttr, attrInt(node, "output_dtype", 0));
  if (zp != nullptr) {
    outType = zp->getType();
  } else if (outAttr != 0) {
    KO_ASSIGN_OR_RETURN(outType, fromOnnxType(static_cast<int32_t>(outAttr)));
  }
  KO_ASSIGN_OR_RETURN(ScaleLayout s, scaleLayout(ctx, node, x, scale, zp));
  if (scale->getType() != x->getType()) {
    ICastLayer* c = ctx.network().addCast(*scale, x->getType());
    KO_RETURN_IF_ERROR(ctx.check(c, node, "cast_scale"));
    scale = c->getOutput(0);
  }
  IQuantizeLayer* l = ctx.network().addQuantize(*x, *scale, outType);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "quantize"));
  applyLayout(l, s);
  if (zp != nullptr) {
    l->setInput(2, *zp);
  }
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importDequantizeLinear(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * scale, ctx.tensor(node, 1));
  ITensor* zp = nullptr;
  if (ImportContext::hasInput(node, 2)) {
    KO_ASSIGN_OR_RETURN(zp, ctx.tensor(node, 2));
  }
  KO_ASSIGN_OR_RETURN(ScaleLayout s, scaleLayout(ctx, node, x, scale, zp));
  IDequantizeLayer* l = ctx.network().addDequantize(*x, *scale, scale->getType());
  KO_RETURN_IF_ERROR(ctx.check(l, node, "dequantize"));
  applyLayout(l, s);
  if (zp != nullptr) {
    l->setInput(2, *zp);
  }
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Result<ITensor*> floatScalar(ImportContext& ctx, Node const& node, float v, char const* tag) {
  KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(DataType::kFLOAT, Dims{0, {}}));
  std::memcpy(c->bytes.data(), &v, sizeof(v));
  return ctx.constantTensor(c, node.name() + tag);
}

Result<ITensor*> ew(ImportContext& ctx, Node const& node, ITensor* a, ITensor* b, ElementWiseOperation op) {
  IElementWiseLayer* l = ctx.network().addElementWise(*a, *b, op);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "elementwise"));
  return l->getOutput(0);
}

/// DynamicQuantizeLinear: scale = (max(0, max x) - min(0, min x)) / 255, zero point = clamp(round(-min / scale),
/// 0, 255), y = saturate(round(x / scale) + zero point), all uint8.
Status importDynamicQuantizeLinear(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  if (x->getType() != DataType::kFLOAT) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "supports FLOAT input only");
  }
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  uint32_t const all = r == 0 ? 0U : (r >= 32 ? ~0U : ((1U << static_cast<uint32_t>(r)) - 1U));
  IReduceLayer* mx = ctx.network().addReduce(*x, ReduceOperation::kMAX, all, false);
  KO_RETURN_IF_ERROR(ctx.check(mx, node, "max"));
  IReduceLayer* mn = ctx.network().addReduce(*x, ReduceOperation::kMIN, all, false);
  KO_RETURN_IF_ERROR(ctx.check(mn, node, "min"));
  KO_ASSIGN_OR_RETURN(ITensor * zero, floatScalar(ctx, node, 0.0F, "_zero"));
  KO_ASSIGN_OR_RETURN(ITensor * qmax, floatScalar(ctx, node, 255.0F, "_qmax"));
  KO_ASSIGN_OR_RETURN(ITensor * hi, ew(ctx, node, mx->getOutput(0), zero, ElementWiseOperation::kMAX));
  KO_ASSIGN_OR_RETURN(ITensor * lo, ew(ctx, node, mn->getOutput(0), zero, ElementWiseOperation::kMIN));
  KO_ASSIGN_OR_RETURN(ITensor * range, ew(ctx, node, hi, lo, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * scale, ew(ctx, node, range, qmax, ElementWiseOperation::kDIV));
  KO_ASSIGN_OR_RETURN(ITensor * q, ew(ctx, node, zero, lo, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(q, ew(ctx, node, q, scale, ElementWiseOperation::kDIV));
  IUnaryLayer* rnd = ctx.network().addUnary(*q, UnaryOperation::kROUND);
  KO_RETURN_IF_ERROR(ctx.check(rnd, node, "round"));
  KO_ASSIGN_OR_RETURN(q, ew(ctx, node, rnd->getOutput(0), zero, ElementWiseOperation::kMAX));
  KO_ASSIGN_OR_RETURN(q, ew(ctx, node, q, qmax, ElementWiseOperation::kMIN));
  ICastLayer* zp = ctx.network().addCast(*q, DataType::kUINT8);
  KO_RETURN_IF_ERROR(ctx.check(zp, node, "zero_point"));
  IQuantizeLayer* l = ctx.network().addQuantize(*x, *scale, DataType::kUINT8);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "quantize"));
  l->setInput(2, *zp->getOutput(0));
  KO_RETURN_IF_ERROR(ctx.setOutput(node, 0, l->getOutput(0)));
  if (node.output_size() > 1 && !node.output(1).empty()) {
    IIdentityLayer* id = ctx.network().addIdentity(*scale);
    KO_RETURN_IF_ERROR(ctx.check(id, node, "scale"));
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 1, id->getOutput(0)));
  }
  if (node.output_size() > 2 && !node.output(2).empty()) {
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 2, zp->getOutput(0)));
  }
  return Status::success();
}

KILN_ONNX_REGISTER("", "QuantizeLinear", importQuantizeLinear);
KILN_ONNX_REGISTER("", "DequantizeLinear", importDequantizeLinear);
KILN_ONNX_REGISTER("", "DynamicQuantizeLinear", importDynamicQuantizeLinear);

}  // namespace
}  // namespace kiln::onnx
