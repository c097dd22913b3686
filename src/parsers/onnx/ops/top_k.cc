// ONNX importer: TopK.
#include <algorithm>
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/index_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace index_ops_detail;  // NOLINT(google-build-using-namespace)

/// TopK: k from the attribute (opset < 10) or input 1 (constant: static k; else a 0-D shape tensor).
Status importTopK(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", -1));
  KO_ASSIGN_OR_RETURN(int64_t largest, attrInt(node, "largest", 1));
  KO_ASSIGN_OR_RETURN(int64_t sorted, attrInt(node, "sorted", 1));
  if (r == 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input must have rank >= 1");
  }
  static_cast<void>(sorted);  // Unsorted order is implementation-defined; the sorted order is a valid answer.
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
  int64_t k = -1;
  ITensor* kTensor = nullptr;
  if (ctx.opset() < 10) {
    KO_ASSIGN_OR_RETURN(k, attrInt(node, "k", -1));
    if (k < 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "needs attribute k");
    }
  } else {
    if (!ImportContext::hasInput(node, 1)) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "needs input K");
    }
    Constant const* kc = ctx.constant(node, 1);
    if (kc != nullptr) {
      if (kc->count() != 1) {
        return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "K must hold one element");
      }
      k = kc->asInt(0);
    } else {
      KO_ASSIGN_OR_RETURN(ITensor * kt, ctx.tensor(node, 1));
      KO_ASSIGN_OR_RETURN(kTensor, scalarInt64(ctx, node, kt));
    }
  }
  if (kTensor == nullptr && (k < 0 || k > INT32_MAX)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "K ", k, " is out of range");
  }
  ITopKLayer* l =
      ctx.network().addTopK(*x, largest != 0 ? TopKOperation::kMAX : TopKOperation::kMIN,
                            kTensor == nullptr ? static_cast<int32_t>(k) : 1, 1U << static_cast<uint32_t>(axis));
  KO_RETURN_IF_ERROR(ctx.check(l, node, "topk"));
  l->setIndicesType(DataType::kINT64);
  if (kTensor != nullptr) {
    l->setInput(1, *kTensor);
  }
  KO_RETURN_IF_ERROR(ctx.setOutput(node, 0, l->getOutput(0)));
  if (node.output_size() > 1 && !node.output(1).empty()) {
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 1, l->getOutput(1)));
  }
  return Status::success();
}

KILN_ONNX_REGISTER("", "TopK", importTopK);

}  // namespace
}  // namespace kiln::onnx
