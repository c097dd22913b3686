// ONNX matrix, softmax and constant importers: MatMul, Gemm, Softmax, LogSoftmax, Constant (Reduce* live in
// reduce_*.cc).
#include <cstring>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;
using compose::matmul;

Status importMatMul(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * a, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * y, matmul(ctx, node, a, MatrixOperation::kNONE, b, MatrixOperation::kNONE));
  return ctx.setOutput(node, 0, y);
}

/// A scalar constant of `type` (kFLOAT only here) as a rank-`rank` tensor of ones' shape.
Result<ITensor*> scalarTensor(ImportContext& ctx, Node const& node, float v, int32_t rank, char const* tag) {
  Dims d{rank, {}};
  for (int32_t i = 0; i < rank; ++i) {
    d.d[i] = 1;
  }
  KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(DataType::kFLOAT, d));
  std::memcpy(c->bytes.data(), &v, sizeof(v));
  return ctx.constantTensor(c, node.name() + tag);
}

Status importGemm(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 1.0F));
  KO_ASSIGN_OR_RETURN(float beta, attrFloat(node, "beta", 1.0F));
  KO_ASSIGN_OR_RETURN(int64_t transA, attrInt(node, "transA", 0));
  KO_ASSIGN_OR_RETURN(int64_t transB, attrInt(node, "transB", 0));
  KO_ASSIGN_OR_RETURN(ITensor * a, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int32_t ra, rankOf(node, a));
  KO_ASSIGN_OR_RETURN(int32_t rb, rankOf(node, b));
  if (ra != 2 || rb != 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "A and B must be 2-D (got ", ra, " and ", rb, ")");
  }
  KO_ASSIGN_OR_RETURN(ITensor * y, matmul(ctx, node, a, transA ? MatrixOperation::kTRANSPOSE : MatrixOperation::kNONE,
                                          b, transB ? MatrixOperation::kTRANSPOSE : MatrixOperation::kNONE));
  if (alpha != 1.0F) {
    KO_ASSIGN_OR_RETURN(ITensor * s, scalarTensor(ctx, node, alpha, 2, "_alpha"));
    IElementWiseLayer* l = ctx.network().addElementWise(*y, *s, ElementWiseOperation::kPROD);
    KO_RETURN_IF_ERROR(ctx.check(l, node, "alpha"));
    y = l->getOutput(0);
  }
  if (ImportContext::hasInput(node, 2) && beta != 0.0F) {
    KO_ASSIGN_OR_RETURN(ITensor * c, ctx.tensor(node, 2));
    KO_ASSIGN_OR_RETURN(c, broadcastToRank(ctx, node, c, 2));
    if (beta != 1.0F) {
      KO_ASSIGN_OR_RETURN(ITensor * s, scalarTensor(ctx, node, beta, 2, "_beta"));
      IElementWiseLayer* l = ctx.network().addElementWise(*c, *s, ElementWiseOperation::kPROD);
      KO_RETURN_IF_ERROR(ctx.check(l, node, "beta"));
      c = l->getOutput(0);
    }
    IElementWiseLayer* l = ctx.network().addElementWise(*y, *c, ElementWiseOperation::kSUM);
    KO_RETURN_IF_ERROR(ctx.check(l, node, "bias"));
    y = l->getOutput(0);
  }
  return ctx.setOutput(node, 0, y);
}

/// Softmax/LogSoftmax. Before opset 13 the input is flattened to 2-D at `axis` (default 1) and the softmax runs
/// over the flattened inner part; from 13 it runs over the single axis (default -1).
template <bool kLog>
Status importSoftmax(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  bool const legacy = ctx.opset() < 13;
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", legacy ? 1 : -1));
  if (r == 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input must have rank >= 1");
  }
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
  ITensor* y = x;
  IShapeLayer* shape = nullptr;
  if (legacy && !(axis == r - 1)) {
    // Flatten to [outer, inner], softmax over axis 1, then restore the shape.
    shape = ctx.network().addShape(*x);
    KO_RETURN_IF_ERROR(ctx.check(shape, node, "shape"));
    Dims const in = x->getDimensions();
    int64_t outer = 1;
    bool outerKnown = true;
    for (int32_t i = 0; i < axis; ++i) {
      outerKnown &= in.d[i] >= 0;
      outer *= in.d[i];
    }
    if (outerKnown) {
      KO_ASSIGN_OR_RETURN(y, reshape(ctx, node, x, Dims{2, {outer, -1}}));
    } else if (axis == 1) {
      KO_ASSIGN_OR_RETURN(y, reshape(ctx, node, x, Dims{2, {0, -1}}));
    } else {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                      "dynamic extents before the axis are not supported yet");
    }
    axis = 1;
  }
  ISoftMaxLayer* sm = ctx.network().addSoftMax(*y);
  KO_RETURN_IF_ERROR(ctx.check(sm, node, "softmax"));
  sm->setAxes(1U << static_cast<uint32_t>(axis));
  y = sm->getOutput(0);
  if (kLog) {
    IUnaryLayer* lg = ctx.network().addUnary(*y, UnaryOperation::kLOG);
    KO_RETURN_IF_ERROR(ctx.check(lg, node, "log"));
    y = lg->getOutput(0);
  }
  if (shape != nullptr) {
    IShuffleLayer* back = ctx.network().addShuffle(*y);
    KO_RETURN_IF_ERROR(ctx.check(back, node, "restore_shape"));
    back->setInput(1, *shape->getOutput(0));
    y = back->getOutput(0);
  }
  return ctx.setOutput(node, 0, y);
}

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
    auto r = constantFromTensorProto(a.t(), nullptr);
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

KILN_ONNX_REGISTER("", "MatMul", importMatMul);
KILN_ONNX_REGISTER("", "Gemm", importGemm);
KILN_ONNX_REGISTER("", "Softmax", importSoftmax<false>);
KILN_ONNX_REGISTER("", "LogSoftmax", importSoftmax<true>);
KILN_ONNX_REGISTER("", "Constant", importConstant);

}  // namespace
}  // namespace kiln::onnx
