// ONNX element-wise importers: binary arithmetic/comparison/logic with numpy broadcasting (variadic Sum/Max/
// Min/Mean), unary math, and activations (Relu, Sigmoid, Gelu...).
#include <cstring>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

template <ElementWiseOperation kOp>
Status importBinary(ImportContext& ctx, Node const& node) {
  if (node.input_size() != 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects 2 inputs, got ", node.input_size());
  }
  KO_ASSIGN_OR_RETURN(ITensor * a, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * out, elementwise(ctx, node, a, b, kOp));
  return ctx.setOutput(node, 0, out);
}

/// Variadic Sum/Max/Min (and Mean: the sum divided by the count).
template <ElementWiseOperation kOp, bool kMean = false>
Status importVariadic(ImportContext& ctx, Node const& node) {
  if (node.input_size() < 1) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects at least 1 input");
  }
  KO_ASSIGN_OR_RETURN(ITensor * acc, ctx.tensor(node, 0));
  for (int i = 1; i < node.input_size(); ++i) {
    KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, i));
    KO_ASSIGN_OR_RETURN(acc, elementwise(ctx, node, acc, b, kOp));
  }
  if (node.input_size() == 1) {
    IIdentityLayer* id = ctx.network().addIdentity(*acc);
    KO_RETURN_IF_ERROR(ctx.check(id, node, "identity"));
    acc = id->getOutput(0);
  }
  if (kMean && node.input_size() > 1) {
    KO_ASSIGN_OR_RETURN(Constant * n, ctx.newConstant(acc->getType(), Dims{0, {}}));
    if (acc->getType() != DataType::kFLOAT) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "Mean supports FLOAT only");
    }
    float v = static_cast<float>(node.input_size());
    std::memcpy(n->bytes.data(), &v, sizeof(v));
    KO_ASSIGN_OR_RETURN(ITensor * nt, ctx.constantTensor(n, node.name() + "_count"));
    KO_ASSIGN_OR_RETURN(acc, elementwise(ctx, node, acc, nt, ElementWiseOperation::kDIV));
  }
  return ctx.setOutput(node, 0, acc);
}

/// LessOrEqual / GreaterOrEqual as not(greater) / not(less), NaN aside.
template <ElementWiseOperation kOp>
Status importNotCompare(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * a, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * c, elementwise(ctx, node, a, b, kOp));
  IUnaryLayer* n = ctx.network().addUnary(*c, UnaryOperation::kNOT);
  KO_RETURN_IF_ERROR(ctx.check(n, node, "not"));
  return ctx.setOutput(node, 0, n->getOutput(0));
}

template <UnaryOperation kOp>
Status importUnary(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  IUnaryLayer* l = ctx.network().addUnary(*x, kOp);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "unary"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status activation(ImportContext& ctx, Node const& node, ActivationType type, float alpha, float beta) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  IActivationLayer* l = ctx.network().addActivation(*x, type);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "activation"));
  l->setAlpha(alpha);
  l->setBeta(beta);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importRelu(ImportContext& ctx, Node const& node) { return activation(ctx, node, ActivationType::kRELU, 0, 0); }
Status importSigmoid(ImportContext& ctx, Node const& node) {
  return activation(ctx, node, ActivationType::kSIGMOID, 0, 0);
}
Status importTanh(ImportContext& ctx, Node const& node) { return activation(ctx, node, ActivationType::kTANH, 0, 0); }
Status importSoftsign(ImportContext& ctx, Node const& node) {
  return activation(ctx, node, ActivationType::kSOFTSIGN, 0, 0);
}
Status importSoftplus(ImportContext& ctx, Node const& node) {
  return activation(ctx, node, ActivationType::kSOFTPLUS, 1.0F, 1.0F);
}
Status importLeakyRelu(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 0.01F));
  return activation(ctx, node, ActivationType::kLEAKY_RELU, alpha, 0);
}
Status importElu(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 1.0F));
  return activation(ctx, node, ActivationType::kELU, alpha, 0);
}
Status importSelu(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 1.67326319217681884765625F));
  KO_ASSIGN_OR_RETURN(float gamma, attrFloat(node, "gamma", 1.05070102214813232421875F));
  return activation(ctx, node, ActivationType::kSELU, alpha, gamma);
}
Status importHardSigmoid(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 0.2F));
  KO_ASSIGN_OR_RETURN(float beta, attrFloat(node, "beta", 0.5F));
  return activation(ctx, node, ActivationType::kHARD_SIGMOID, alpha, beta);
}
Status importThresholdedRelu(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 1.0F));
  return activation(ctx, node, ActivationType::kTHRESHOLDED_RELU, alpha, 0);
}
Status importGelu(ImportContext& ctx, Node const& node) {
  // Kept as a Result (not moved out): GCC 12 at -O2 reports a false maybe-uninitialized on the moved string.
  Result<std::string> const approxR = attrString(node, "approximate", "none");
  KO_RETURN_IF_ERROR(approxR.status);
  std::string const& approx = approxR.value;
  if (approx != "none" && approx != "tanh") {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "approximate '", approx,
                                    "' is not 'none' or 'tanh'");
  }
  return activation(ctx, node, approx == "tanh" ? ActivationType::kGELU_TANH : ActivationType::kGELU_ERF, 0, 0);
}

Status importPRelu(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * slope, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(slope, broadcastToRank(ctx, node, slope, r));
  IParametricReLULayer* l = ctx.network().addParametricReLU(*x, *slope);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "prelu"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "PRelu", importPRelu);
KILN_ONNX_REGISTER("", "Add", importBinary<ElementWiseOperation::kSUM>);
KILN_ONNX_REGISTER("", "Mul", importBinary<ElementWiseOperation::kPROD>);
KILN_ONNX_REGISTER("", "Div", importBinary<ElementWiseOperation::kDIV>);
KILN_ONNX_REGISTER("", "Equal", importBinary<ElementWiseOperation::kEQUAL>);
KILN_ONNX_REGISTER("", "Greater", importBinary<ElementWiseOperation::kGREATER>);
KILN_ONNX_REGISTER("", "Less", importBinary<ElementWiseOperation::kLESS>);
KILN_ONNX_REGISTER("", "GreaterOrEqual", importNotCompare<ElementWiseOperation::kLESS>);
KILN_ONNX_REGISTER("", "LessOrEqual", importNotCompare<ElementWiseOperation::kGREATER>);
KILN_ONNX_REGISTER("", "And", importBinary<ElementWiseOperation::kAND>);
KILN_ONNX_REGISTER("", "Or", importBinary<ElementWiseOperation::kOR>);
KILN_ONNX_REGISTER("", "Xor", importBinary<ElementWiseOperation::kXOR>);
KILN_ONNX_REGISTER("", "Max", (importVariadic<ElementWiseOperation::kMAX>));
KILN_ONNX_REGISTER("", "Min", (importVariadic<ElementWiseOperation::kMIN>));
KILN_ONNX_REGISTER("", "Sum", (importVariadic<ElementWiseOperation::kSUM>));
KILN_ONNX_REGISTER("", "Mean", (importVariadic<ElementWiseOperation::kSUM, true>));
KILN_ONNX_REGISTER("", "Not", importUnary<UnaryOperation::kNOT>);
KILN_ONNX_REGISTER("", "Exp", importUnary<UnaryOperation::kEXP>);
KILN_ONNX_REGISTER("", "Log", importUnary<UnaryOperation::kLOG>);
KILN_ONNX_REGISTER("", "Sqrt", importUnary<UnaryOperation::kSQRT>);
KILN_ONNX_REGISTER("", "Reciprocal", importUnary<UnaryOperation::kRECIP>);
KILN_ONNX_REGISTER("", "Abs", importUnary<UnaryOperation::kABS>);
KILN_ONNX_REGISTER("", "Sin", importUnary<UnaryOperation::kSIN>);
KILN_ONNX_REGISTER("", "Cos", importUnary<UnaryOperation::kCOS>);
KILN_ONNX_REGISTER("", "Tan", importUnary<UnaryOperation::kTAN>);
KILN_ONNX_REGISTER("", "Sinh", importUnary<UnaryOperation::kSINH>);
KILN_ONNX_REGISTER("", "Cosh", importUnary<UnaryOperation::kCOSH>);
KILN_ONNX_REGISTER("", "Asin", importUnary<UnaryOperation::kASIN>);
KILN_ONNX_REGISTER("", "Acos", importUnary<UnaryOperation::kACOS>);
KILN_ONNX_REGISTER("", "Atan", importUnary<UnaryOperation::kATAN>);
KILN_ONNX_REGISTER("", "Asinh", importUnary<UnaryOperation::kASINH>);
KILN_ONNX_REGISTER("", "Acosh", importUnary<UnaryOperation::kACOSH>);
KILN_ONNX_REGISTER("", "Atanh", importUnary<UnaryOperation::kATANH>);
KILN_ONNX_REGISTER("", "Ceil", importUnary<UnaryOperation::kCEIL>);
KILN_ONNX_REGISTER("", "Floor", importUnary<UnaryOperation::kFLOOR>);
KILN_ONNX_REGISTER("", "Erf", importUnary<UnaryOperation::kERF>);
KILN_ONNX_REGISTER("", "Sign", importUnary<UnaryOperation::kSIGN>);
KILN_ONNX_REGISTER("", "Round", importUnary<UnaryOperation::kROUND>);
KILN_ONNX_REGISTER("", "IsNaN", importUnary<UnaryOperation::kISNAN>);
KILN_ONNX_REGISTER("", "Relu", importRelu);
KILN_ONNX_REGISTER("", "Sigmoid", importSigmoid);
KILN_ONNX_REGISTER("", "Tanh", importTanh);
KILN_ONNX_REGISTER("", "Softsign", importSoftsign);
KILN_ONNX_REGISTER("", "Softplus", importSoftplus);
KILN_ONNX_REGISTER("", "LeakyRelu", importLeakyRelu);
KILN_ONNX_REGISTER("", "Elu", importElu);
KILN_ONNX_REGISTER("", "Selu", importSelu);
KILN_ONNX_REGISTER("", "HardSigmoid", importHardSigmoid);
KILN_ONNX_REGISTER("", "ThresholdedRelu", importThresholdedRelu);
KILN_ONNX_REGISTER("", "Gelu", importGelu);

}  // namespace
}  // namespace kiln::onnx
