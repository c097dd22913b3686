// ONNX Neg: -x. A constant input is negated on the host, so that shape arithmetic on constants (as in the
// function bodies of LayerNormalization) stays constant for the importers that need constant shapes.
#include <cstring>
#include <type_traits>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

template <typename T>
void negateInto(Constant const& in, Constant& out) {
  for (int64_t i = 0; i < in.count(); ++i) {
    T v;
    std::memcpy(&v, in.bytes.data() + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    if constexpr (std::is_integral_v<T>) {
      // Wrapping negation: -INT_MIN would be undefined behaviour.
      v = static_cast<T>(std::make_unsigned_t<T>{0} - static_cast<std::make_unsigned_t<T>>(v));
    } else {
      v = -v;
    }
    std::memcpy(out.bytes.data() + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
  }
}

Status importNeg(ImportContext& ctx, Node const& node) {
  Constant const* c = ctx.constant(node, 0);
  bool const foldable = c != nullptr && (c->type == DataType::kFLOAT || c->type == DataType::kFLOAT64 ||
                                         c->type == DataType::kINT32 || c->type == DataType::kINT64);
  if (!foldable) {
    KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
    KO_ASSIGN_OR_RETURN(ITensor * y, unary(ctx, node, x, UnaryOperation::kNEG));
    return ctx.setOutput(node, 0, y);
  }
  KO_ASSIGN_OR_RETURN(Constant * out, ctx.newConstant(c->type, c->dims));
  if (c->type == DataType::kFLOAT) {
    negateInto<float>(*c, *out);
  } else if (c->type == DataType::kFLOAT64) {
    negateInto<double>(*c, *out);
  } else if (c->type == DataType::kINT32) {
    negateInto<int32_t>(*c, *out);
  } else {
    negateInto<int64_t>(*c, *out);
  }
  return ctx.setOutputConstant(node, 0, out);
}

KILN_ONNX_REGISTER("", "Neg", importNeg);

}  // namespace
}  // namespace kiln::onnx
