// ONNX ConstantOfShape: a tensor of the shape given by input 0 filled with the one-element `value` (default
// float 0). A constant shape folds into a parser-owned constant; a run-time shape becomes a fill layer driven by
// the shape tensor.
#include <cstring>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// The `value` attribute (float 0 when absent).
Result<Constant> fillValue(Node const& node) {
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
  return value;
}

/// Run-time shape: kLINSPACE fill with step 0 (integers exact through the int64 parameters), cast when the
/// fill layer cannot produce the value's type itself.
Status runtimeShape(ImportContext& ctx, Node const& node, Constant const& value) {
  KO_ASSIGN_OR_RETURN(ITensor * shape, ctx.tensor(node, 0));
  Dims const sd = shape->getDimensions();
  if (sd.nbDims != 1 || sd.d[0] < 0) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                    "the shape input must be 1-D with a known length");
  }
  bool const isInt = value.type == DataType::kINT64 || value.type == DataType::kINT32 ||
                     value.type == DataType::kINT8 || value.type == DataType::kUINT8 || value.type == DataType::kBOOL;
  DataType const fillType = isInt ? DataType::kINT64 : DataType::kFLOAT;
  IFillLayer* f = ctx.network().addFill(Dims{0, {}}, FillOperation::kLINSPACE, fillType);
  KO_RETURN_IF_ERROR(ctx.check(f, node, "fill"));
  f->setInput(0, *shape);
  if (isInt) {
    f->setAlphaInt64(value.asInt(0));
    f->setBetaInt64(0);
  } else {
    f->setAlpha(value.asDouble(0));
    f->setBeta(0.0);
  }
  KO_ASSIGN_OR_RETURN(ITensor * y, cast(ctx, node, f->getOutput(0), value.type));
  return ctx.setOutput(node, 0, y);
}

Status importConstantOfShape(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(Constant value, fillValue(node));
  if (ctx.constant(node, 0) == nullptr) {
    return runtimeShape(ctx, node, value);
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
