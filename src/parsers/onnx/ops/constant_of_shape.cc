// ONNX importer for ConstantOfShape: a constant shape is folded into a parser-owned constant (size checked first);
// a shape known only at run time becomes a fill layer whose shape input is that tensor (its size is checked when
// the engine runs).
#include <cstring>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/shape_tensor_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// A run-time shape: fill(alpha = value, step 0); bool values are filled as int32 and cast.
Status runtimeConstantOfShape(ImportContext& ctx, Node const& node, Constant const& value) {
  KO_ASSIGN_OR_RETURN(ITensor * shape, int64Vector(ctx, node, 0));
  KO_ASSIGN_OR_RETURN(int64_t rank, vectorLength(node, shape, "the shape input"));
  if (rank > Dims::MAX_DIMS) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node, "rank ", rank, " too large");
  }
  bool const isBool = value.type == DataType::kBOOL;
  DataType const fillType = isBool ? DataType::kINT32 : value.type;
  Dims placeholder{static_cast<int32_t>(rank), {}};
  IFillLayer* l = ctx.network().addFill(placeholder, FillOperation::kLINSPACE, fillType);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "fill"));
  l->setInput(0, *shape);
  bool const isInt = fillType == DataType::kINT32 || fillType == DataType::kINT64 || fillType == DataType::kINT8 ||
                     fillType == DataType::kUINT8;
  if (isInt) {
    l->setAlphaInt64(value.asInt(0));
    l->setBetaInt64(0);
  } else {
    l->setAlpha(value.asDouble(0));
    l->setBeta(0.0);
  }
  ITensor* y = l->getOutput(0);
  if (isBool) {
    ICastLayer* c = ctx.network().addCast(*y, DataType::kBOOL);
    KO_RETURN_IF_ERROR(ctx.check(c, node, "to_bool"));
    y = c->getOutput(0);
  }
  return ctx.setOutput(node, 0, y);
}

/// ConstantOfShape: folded when the shape is a constant, else a fill layer.
Status importConstantOfShape(ImportContext& ctx, Node const& node) {
  Constant value;
  value.type = DataType::kFLOAT;
  value.dims = Dims{1, {1}};
  value.bytes.assign(4, 0);
  if (auto const* a = findAttr(node, "value")) {
    if (a->type() != ::onnx::AttributeProto::TENSOR) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "attribute 'value' must be of type TENSOR");
    }
    auto r = constantFromTensorProto(a->t(), nullptr);
    if (!r.ok() || r.value.count() != 1) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "attribute 'value' must hold one element");
    }
    value = std::move(r.value);
  }
  if (ctx.constant(node, 0) == nullptr) {
    return runtimeConstantOfShape(ctx, node, value);
  }
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> shape, constantInts(ctx, node, 0));
  if (shape.size() > static_cast<size_t>(Dims::MAX_DIMS)) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node, "rank ", shape.size(), " too large");
  }
  Dims d{static_cast<int32_t>(shape.size()), {}};
  for (size_t i = 0; i < shape.size(); ++i) {
    d.d[i] = shape[i];
  }
  auto c = ctx.newConstant(value.type, d);
  if (!c.ok()) {
    return ImportContext::nodeError(c.status.code, node, c.status.message);
  }
  size_t const es = value.bytes.size();
  for (int64_t i = 0; i < c.value->count(); ++i) {
    std::memcpy(c.value->bytes.data() + static_cast<size_t>(i) * es, value.bytes.data(), es);
  }
  return ctx.setOutputConstant(node, 0, c.value);
}

KILN_ONNX_REGISTER("", "ConstantOfShape", importConstantOfShape);

}  // namespace
}  // namespace kiln::onnx
