// ONNX importer for Range: folded into a constant when start, limit and delta are constants; otherwise a linspace
// fill (alpha = start, step = delta) whose length max(ceil((limit - start) / delta), 0) is computed by shape-tensor
// arithmetic when the engine runs (and checked there: absurd lengths fail without allocating).
#include <cmath>
#include <cstring>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/shape_tensor_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// Start, limit or delta known only at run time.
Status runtimeRange(ImportContext& ctx, Node const& node) {
  ITensor* in[3];
  for (int i = 0; i < 3; ++i) {
    KO_ASSIGN_OR_RETURN(in[i], ctx.tensor(node, i));
    Dims const d = in[i]->getDimensions();
    if (d.nbDims > 1 || (d.nbDims == 1 && d.d[0] != 1)) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "start, limit and delta must be scalars, not ",
                                      dimsString(d));
    }
    KO_ASSIGN_OR_RETURN(in[i], toScalar(ctx, node, in[i]));
  }
  DataType const t = in[0]->getType();
  bool const isFloat = t == DataType::kFLOAT || t == DataType::kFLOAT64 || t == DataType::kHALF;
  if (!isFloat && t != DataType::kINT32 && t != DataType::kINT64 && t != DataType::kINT16) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "unsupported type");
  }
  if (in[1]->getType() != t || in[2]->getType() != t) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "start, limit and delta differ in type");
  }
  using Op = ElementWiseOperation;
  ITensor* count = nullptr;
  if (isFloat) {
    KO_ASSIGN_OR_RETURN(ITensor * span, binary(ctx, node, in[1], in[0], Op::kSUB));
    KO_ASSIGN_OR_RETURN(ITensor * q, binary(ctx, node, span, in[2], Op::kDIV));
    IUnaryLayer* up = ctx.network().addUnary(*q, UnaryOperation::kCEIL);
    KO_RETURN_IF_ERROR(ctx.check(up, node, "ceil"));
    KO_ASSIGN_OR_RETURN(count, asInt64(ctx, node, up->getOutput(0)));
  } else {
    // ceil((limit - start) / delta) = -floor((start - limit) / delta), exact in int64.
    ITensor* i64[3];
    for (int i = 0; i < 3; ++i) {
      KO_ASSIGN_OR_RETURN(i64[i], asInt64(ctx, node, in[i]));
    }
    KO_ASSIGN_OR_RETURN(ITensor * negSpan, binary(ctx, node, i64[0], i64[1], Op::kSUB));
    KO_ASSIGN_OR_RETURN(ITensor * negCount, binary(ctx, node, negSpan, i64[2], Op::kFLOOR_DIV));
    KO_ASSIGN_OR_RETURN(Constant * z, ctx.newConstant(DataType::kINT64, Dims{0, {}}));
    KO_ASSIGN_OR_RETURN(ITensor * zero0, ctx.constantTensor(z, node.name() + "_zero"));
    KO_ASSIGN_OR_RETURN(count, binary(ctx, node, zero0, negCount, Op::kSUB));
  }
  KO_ASSIGN_OR_RETURN(count, reshape(ctx, node, count, Dims{1, {1}}));
  KO_ASSIGN_OR_RETURN(ITensor * zero, int64Const(ctx, node, {0}));
  KO_ASSIGN_OR_RETURN(count, binary(ctx, node, count, zero, Op::kMAX));
  IFillLayer* l = ctx.network().addFill(Dims{1, {0}}, FillOperation::kLINSPACE, t);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "range"));
  l->setInput(0, *count);
  l->setInput(1, *in[0]);
  l->setInput(2, *in[2]);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

/// Range: constant start/limit/delta are folded into a constant of max(ceil((limit - start) / delta), 0) values.
Status importRange(ImportContext& ctx, Node const& node) {
  Constant const* c[3];
  for (int i = 0; i < 3; ++i) {
    c[i] = ctx.constant(node, i);
    if (c[i] == nullptr) {
      return runtimeRange(ctx, node);
    }
    if (c[i]->count() != 1) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "start, limit and delta must be scalars");
    }
  }
  DataType const t = c[0]->type;
  bool const isFloat = t == DataType::kFLOAT || t == DataType::kFLOAT64;
  if (!isFloat && t != DataType::kINT32 && t != DataType::kINT64) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "unsupported type");
  }
  double const start = c[0]->asDouble(0);
  double const limit = c[1]->asDouble(0);
  double const delta = c[2]->asDouble(0);
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "delta is 0 or a bound is not finite");
  }
  double const nd = std::max(std::ceil((limit - start) / delta), 0.0);
  if (nd > static_cast<double>(kMaxConstantElements)) {
    return ImportContext::nodeError(ErrorCode::kMEM_ALLOC_FAILED, node, "Range of ", nd, " elements is too large");
  }
  auto const n = static_cast<int64_t>(nd);
  auto out = ctx.newConstant(t, Dims{1, {n}});
  if (!out.ok()) {
    return ImportContext::nodeError(out.status.code, node, out.status.message);
  }
  for (int64_t i = 0; i < n; ++i) {
    uint8_t* p = out.value->bytes.data() + i * elementSize(t);
    if (t == DataType::kFLOAT) {
      auto v = static_cast<float>(start + static_cast<double>(i) * delta);
      std::memcpy(p, &v, 4);
    } else if (t == DataType::kFLOAT64) {
      double v = start + static_cast<double>(i) * delta;
      std::memcpy(p, &v, 8);
    } else if (t == DataType::kINT32) {
      auto v = static_cast<int32_t>(c[0]->asInt(0) + i * c[2]->asInt(0));
      std::memcpy(p, &v, 4);
    } else {
      int64_t v = c[0]->asInt(0) + i * c[2]->asInt(0);
      std::memcpy(p, &v, 8);
    }
  }
  return ctx.setOutputConstant(node, 0, out.value);
}

KILN_ONNX_REGISTER("", "Range", importRange);

}  // namespace
}  // namespace kiln::onnx
