// ONNX importer: OneHot.
#include <algorithm>
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/index_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace index_ops_detail;  // NOLINT(google-build-using-namespace)

/// OneHot(indices, depth, values): float indices are cast to INT64; depth becomes a 0-D INT64 shape tensor.
Status importOneHot(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * idx, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * values, ctx.tensor(node, 2));
  KO_ASSIGN_OR_RETURN(int64_t axis, attrInt(node, "axis", -1));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, idx));
  if (axis < -(r + 1) || axis > r) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axis ", axis, " is out of range for rank ", r + 1);
  }
  if (idx->getType() != DataType::kINT32 && idx->getType() != DataType::kINT64) {
    ICastLayer* c = ctx.network().addCast(*idx, DataType::kINT64);
    KO_RETURN_IF_ERROR(ctx.check(c, node, "cast_indices"));
    idx = c->getOutput(0);
  }
  ITensor* depth = nullptr;
  if (Constant const* dc = ctx.constant(node, 1); dc != nullptr) {
    if (dc->count() != 1) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "depth must hold one element");
    }
    KO_ASSIGN_OR_RETURN(Constant * d, ctx.newConstant(DataType::kINT64, Dims{0, {}}));
    int64_t const v = static_cast<int64_t>(dc->asDouble(0));
    std::memcpy(d->bytes.data(), &v, sizeof(v));
    KO_ASSIGN_OR_RETURN(depth, ctx.constantTensor(d, node.name() + "_depth"));
  } else {
    KO_ASSIGN_OR_RETURN(ITensor * dt, ctx.tensor(node, 1));
    KO_ASSIGN_OR_RETURN(depth, scalarInt64(ctx, node, dt));
  }
  KO_ASSIGN_OR_RETURN(int32_t vr, rankOf(node, values));
  if (vr != 1) {
    KO_ASSIGN_OR_RETURN(values, reshape(ctx, node, values, Dims{1, {2}}));
  }
  IOneHotLayer* l = ctx.network().addOneHot(*idx, *values, *depth, static_cast<int32_t>(axis));
  KO_RETURN_IF_ERROR(ctx.check(l, node, "onehot"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "OneHot", importOneHot);

}  // namespace
}  // namespace kiln::onnx
