// Builders shared by importers that compose an ONNX op from public network layers (see compose_util.h).
#include "parsers/onnx/ops/compose_util.h"

#include <algorithm>
#include <cstring>

namespace kiln::onnx {

Result<ITensor*> elementwise(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* a, ITensor* b,
                             ElementWiseOperation op) {
  KO_ASSIGN_OR_RETURN(int32_t ra, rankOf(node, a));
  KO_ASSIGN_OR_RETURN(int32_t rb, rankOf(node, b));
  int32_t const r = std::max(ra, rb);
  KO_ASSIGN_OR_RETURN(a, broadcastToRank(ctx, node, a, r));
  KO_ASSIGN_OR_RETURN(b, broadcastToRank(ctx, node, b, r));
  IElementWiseLayer* l = ctx.network().addElementWise(*a, *b, op);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "elementwise"));
  return l->getOutput(0);
}

Result<ITensor*> unary(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* x, UnaryOperation op) {
  IUnaryLayer* l = ctx.network().addUnary(*x, op);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "unary"));
  return l->getOutput(0);
}

namespace {
template <typename T>
void store(Constant* c, double value) {
  T const v = static_cast<T>(value);
  std::memcpy(c->bytes.data(), &v, sizeof(T));
}
}  // namespace

Result<ITensor*> scalar(ImportContext& ctx, ::onnx::NodeProto const& node, DataType type, double value) {
  DataType stored = type;
  switch (type) {
    case DataType::kFLOAT:
    case DataType::kFLOAT64:
    case DataType::kINT8:
    case DataType::kUINT8:
    case DataType::kINT32:
    case DataType::kINT64:
    case DataType::kBOOL:
      break;
    case DataType::kHALF:
    case DataType::kBF16:
    case DataType::kFP8:
    case DataType::kINT4:
    case DataType::kFP4:
    case DataType::kE8M0:
    case DataType::kINT16:
    case DataType::kUINT16:
    case DataType::kUINT32:
    case DataType::kUINT64:
      stored = DataType::kFLOAT;
      break;
  }
  KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(stored, Dims{0, {}}));
  if (stored == DataType::kFLOAT64) {
    store<double>(c, value);
  } else if (stored == DataType::kINT8) {
    store<int8_t>(c, value);
  } else if (stored == DataType::kUINT8) {
    store<uint8_t>(c, value);
  } else if (stored == DataType::kINT32) {
    store<int32_t>(c, value);
  } else if (stored == DataType::kINT64) {
    store<int64_t>(c, value);
  } else if (stored == DataType::kBOOL) {
    store<uint8_t>(c, value != 0 ? 1.0 : 0.0);
  } else {
    store<float>(c, value);  // kFLOAT, and every type mapped to it above
  }
  KO_ASSIGN_OR_RETURN(ITensor * t, ctx.constantTensor(c, node.name() + "_scalar"));
  return cast(ctx, node, t, type);
}

Result<ITensor*> cast(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* x, DataType type) {
  if (x->getType() == type) {
    return x;
  }
  ICastLayer* l = ctx.network().addCast(*x, type);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "cast"));
  return l->getOutput(0);
}

Result<ITensor*> select(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* cond, ITensor* a, ITensor* b) {
  KO_ASSIGN_OR_RETURN(int32_t rc, rankOf(node, cond));
  KO_ASSIGN_OR_RETURN(int32_t ra, rankOf(node, a));
  KO_ASSIGN_OR_RETURN(int32_t rb, rankOf(node, b));
  int32_t const r = std::max({rc, ra, rb});
  KO_ASSIGN_OR_RETURN(cond, broadcastToRank(ctx, node, cond, r));
  KO_ASSIGN_OR_RETURN(a, broadcastToRank(ctx, node, a, r));
  KO_ASSIGN_OR_RETURN(b, broadcastToRank(ctx, node, b, r));
  ISelectLayer* l = ctx.network().addSelect(*cond, *a, *b);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "select"));
  return l->getOutput(0);
}

Result<ITensor*> reduce(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* x, ReduceOperation op,
                        uint32_t axes, bool keepDims) {
  IReduceLayer* l = ctx.network().addReduce(*x, op, axes, keepDims);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "reduce"));
  return l->getOutput(0);
}

Result<ITensor*> perChannelView(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* t, int32_t rank) {
  Dims d{rank, {}};
  for (int32_t k = 0; k < rank; ++k) {
    d.d[k] = 1;
  }
  d.d[1] = -1;
  return reshape(ctx, node, t, d);
}

Result<Constant const*> foldIntegerBinary(ImportContext& ctx, ::onnx::NodeProto const& node, ElementWiseOperation op) {
  if (node.input_size() != 2) {
    return static_cast<Constant const*>(nullptr);
  }
  Constant const* a = ctx.constant(node, 0);
  Constant const* b = ctx.constant(node, 1);
  bool const intOp =
      op == ElementWiseOperation::kSUM || op == ElementWiseOperation::kSUB || op == ElementWiseOperation::kPROD;
  if (!intOp || a == nullptr || b == nullptr || a->type != b->type ||
      (a->type != DataType::kINT64 && a->type != DataType::kINT32)) {
    return static_cast<Constant const*>(nullptr);
  }
  int64_t const na = a->count();
  int64_t const nb = b->count();
  bool const sameDims = dimsString(a->dims) == dimsString(b->dims);
  if (!sameDims && na != 1 && nb != 1) {
    return static_cast<Constant const*>(nullptr);
  }
  // The result takes the dims of the side with more elements, or of the higher rank when both hold one.
  Dims const& dims = na != nb ? (na > nb ? a->dims : b->dims) : (a->dims.nbDims >= b->dims.nbDims ? a->dims : b->dims);
  KO_ASSIGN_OR_RETURN(Constant * out, ctx.newConstant(a->type, dims));
  for (int64_t i = 0; i < out->count(); ++i) {
    int64_t const x = a->asInt(na == 1 ? 0 : i);
    int64_t const y = b->asInt(nb == 1 ? 0 : i);
    // Unsigned arithmetic wraps where int64 would overflow (undefined behaviour) on hostile constants.
    auto const ux = static_cast<uint64_t>(x);
    auto const uy = static_cast<uint64_t>(y);
    uint64_t ur = 0;
    if (op == ElementWiseOperation::kSUM) {
      ur = ux + uy;
    } else if (op == ElementWiseOperation::kSUB) {
      ur = ux - uy;
    } else {
      ur = ux * uy;
    }
    auto const r = static_cast<int64_t>(ur);
    if (a->type == DataType::kINT64) {
      std::memcpy(out->bytes.data() + i * 8, &r, 8);
    } else {
      auto const r32 = static_cast<int32_t>(r);
      std::memcpy(out->bytes.data() + i * 4, &r32, 4);
    }
  }
  return static_cast<Constant const*>(out);
}

}  // namespace kiln::onnx
