// ONNX importer: Shape.
#include <algorithm>
#include <cstring>
#include <limits>
#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importShape(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int64_t startAttr, attrInt(node, "start", 0));
  KO_ASSIGN_OR_RETURN(int64_t endAttr, attrInt(node, "end", r));
  IShapeLayer* l = ctx.network().addShape(*x);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "shape"));
  ITensor* y = l->getOutput(0);
  int64_t s = std::clamp<int64_t>(startAttr < 0 ? startAttr + r : startAttr, 0, r);
  int64_t e = std::clamp<int64_t>(endAttr < 0 ? endAttr + r : endAttr, 0, r);
  if (s != 0 || e != r) {
    ISliceLayer* sl = ctx.network().addSlice(*y, Dims{1, {s}}, Dims{1, {std::max<int64_t>(0, e - s)}}, Dims{1, {1}});
    KO_RETURN_IF_ERROR(ctx.check(sl, node, "shape_slice"));
    y = sl->getOutput(0);
  }
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "Shape", importShape);

}  // namespace
}  // namespace kiln::onnx
