// ONNX importers: Max, Min, Sum, Mean.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/elementwise_util.h"

namespace kiln::onnx {
namespace {

using namespace elementwise_detail;  // NOLINT(google-build-using-namespace)

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

KILN_ONNX_REGISTER("", "Max", (importVariadic<ElementWiseOperation::kMAX>));
KILN_ONNX_REGISTER("", "Min", (importVariadic<ElementWiseOperation::kMIN>));
KILN_ONNX_REGISTER("", "Sum", (importVariadic<ElementWiseOperation::kSUM>));
KILN_ONNX_REGISTER("", "Mean", (importVariadic<ElementWiseOperation::kSUM, true>));

}  // namespace
}  // namespace kiln::onnx
