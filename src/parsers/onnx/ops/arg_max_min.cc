// ONNX importers: ArgMax, ArgMin.
#include <algorithm>
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/index_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace index_ops_detail;  // NOLINT(google-build-using-namespace)

/// Removes axis `axis` (extent 1) of `t`.
Result<ITensor*> squeezeAxis(ImportContext& ctx, Node const& node, ITensor* t, int32_t axis) {
  KO_ASSIGN_OR_RETURN(ITensor * axes, ctx.int64Tensor({axis}, node.name() + "_squeeze_axes"));
  ISqueezeLayer* l = ctx.network().addSqueeze(*t, *axes);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "squeeze"));
  return l->getOutput(0);
}

/// ArgMax/ArgMin: TopK with k = 1 on INT64 indices; keepdims = 0 squeezes the axis; select_last_index = 1 runs
/// on the reversed axis and maps the index back (needs a static extent).
template <TopKOperation kOp>
Status importArg(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", 0));
  KO_ASSIGN_OR_RETURN(int64_t keep, attrInt(node, "keepdims", 1));
  KO_ASSIGN_OR_RETURN(int64_t last, attrInt(node, "select_last_index", 0));
  if (r == 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input must have rank >= 1");
  }
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
  Dims const in = x->getDimensions();
  int64_t const extent = in.d[axis];
  if (last != 0) {
    if (extent < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                      "select_last_index needs a static extent on the axis (not supported yet)");
    }
    Dims start{r, {}};
    Dims size = in;
    Dims stride{r, {}};
    for (int32_t i = 0; i < r; ++i) {
      start.d[i] = i == axis ? extent - 1 : 0;
      stride.d[i] = i == axis ? -1 : 1;
    }
    bool dynamic = false;
    for (int32_t i = 0; i < r; ++i) {
      dynamic |= in.d[i] < 0;
    }
    ISliceLayer* rev = ctx.network().addSlice(*x, start, dynamic ? Dims{r, {}} : size, stride);
    KO_RETURN_IF_ERROR(ctx.check(rev, node, "reverse"));
    if (dynamic) {
      IShapeLayer* shape = ctx.network().addShape(*x);
      KO_RETURN_IF_ERROR(ctx.check(shape, node, "shape"));
      rev->setInput(2, *shape->getOutput(0));
    }
    x = rev->getOutput(0);
  }
  ITopKLayer* l = ctx.network().addTopK(*x, kOp, 1, 1U << static_cast<uint32_t>(axis));
  KO_RETURN_IF_ERROR(ctx.check(l, node, "topk"));
  l->setIndicesType(DataType::kINT64);
  ITensor* idx = l->getOutput(1);
  if (last != 0) {
    Dims ones{r, {}};
    for (int32_t i = 0; i < r; ++i) {
      ones.d[i] = 1;
    }
    KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(DataType::kINT64, ones));
    int64_t const top = extent - 1;
    std::memcpy(c->bytes.data(), &top, sizeof(top));
    KO_ASSIGN_OR_RETURN(ITensor * ct, ctx.constantTensor(c, node.name() + "_last"));
    IElementWiseLayer* sub = ctx.network().addElementWise(*ct, *idx, ElementWiseOperation::kSUB);
    KO_RETURN_IF_ERROR(ctx.check(sub, node, "last_index"));
    idx = sub->getOutput(0);
  }
  if (keep == 0) {
    KO_ASSIGN_OR_RETURN(idx, squeezeAxis(ctx, node, idx, axis));
  }
  return ctx.setOutput(node, 0, idx);
}

KILN_ONNX_REGISTER("", "ArgMax", importArg<TopKOperation::kMAX>);
KILN_ONNX_REGISTER("", "ArgMin", importArg<TopKOperation::kMIN>);

}  // namespace
}  // namespace kiln::onnx
