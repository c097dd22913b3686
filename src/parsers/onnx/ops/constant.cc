// ONNX importer: Constant.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"
#include "parsers/onnx/ops/math_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace math_ops_detail;  // NOLINT(google-build-using-namespace)

Status importConstant(ImportContext& ctx, Node const& node) {
  if (node.attribute_size() != 1) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "needs exactly one attribute");
  }
  auto const& a = node.attribute(0);
  Constant c;
  if (a.name() == "value") {
    if (a.type() != ::onnx::AttributeProto::TENSOR) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "attribute 'value' must be of type TENSOR");
    }
    auto r = constantFromTensorProto(a.t(), nullptr, ctx.constantBytesLeft());
    if (!r.ok()) {
      return ImportContext::nodeError(r.status.code, node, r.status.message);
    }
    c = std::move(r.value);
  } else if (a.name() == "value_float" || a.name() == "value_int") {
    bool const isFloat = a.name() == "value_float";
    if (a.type() != (isFloat ? ::onnx::AttributeProto::FLOAT : ::onnx::AttributeProto::INT)) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "attribute '", a.name(), "' has the wrong type");
    }
    c.type = isFloat ? DataType::kFLOAT : DataType::kINT64;
    c.dims = Dims{0, {}};
    c.bytes.resize(isFloat ? 4 : 8);
    if (isFloat) {
      float f = a.f();
      std::memcpy(c.bytes.data(), &f, 4);
    } else {
      int64_t i = a.i();
      std::memcpy(c.bytes.data(), &i, 8);
    }
  } else if (a.name() == "value_floats" || a.name() == "value_ints") {
    bool const isFloat = a.name() == "value_floats";
    if (a.type() != (isFloat ? ::onnx::AttributeProto::FLOATS : ::onnx::AttributeProto::INTS)) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "attribute '", a.name(), "' has the wrong type");
    }
    int64_t const n = isFloat ? a.floats_size() : a.ints_size();
    c.type = isFloat ? DataType::kFLOAT : DataType::kINT64;
    c.dims = Dims{1, {n}};
    c.bytes.resize(static_cast<size_t>(n * (isFloat ? 4 : 8)));
    if (n > 0) {
      std::memcpy(c.bytes.data(), isFloat ? static_cast<void const*>(a.floats().data()) : a.ints().data(),
                  c.bytes.size());
    }
  } else {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "attribute '", a.name(),
                                    "' is not supported yet");
  }
  return ctx.setOutputConstant(node, 0, ctx.keep(std::move(c)));
}

KILN_ONNX_REGISTER("", "Constant", importConstant);

}  // namespace
}  // namespace kiln::onnx
