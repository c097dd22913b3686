// ONNX Size: the element count of the input as a 0-D INT64, a constant when the shape is static, else the product
// of the input's Shape.
#include <cstring>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importSize(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  Dims const d = x->getDimensions();
  bool known = true;
  int64_t n = 1;
  for (int32_t i = 0; i < r; ++i) {
    known = known && d.d[i] >= 0;
    n *= known ? d.d[i] : 1;
  }
  if (known) {
    KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(DataType::kINT64, Dims{0, {}}));
    std::memcpy(c->bytes.data(), &n, sizeof(n));
    return ctx.setOutputConstant(node, 0, c);
  }
  IShapeLayer* s = ctx.network().addShape(*x);
  KO_RETURN_IF_ERROR(ctx.check(s, node, "shape"));
  IReduceLayer* p = ctx.network().addReduce(*s->getOutput(0), ReduceOperation::kPROD, 1U, false);
  KO_RETURN_IF_ERROR(ctx.check(p, node, "count"));
  return ctx.setOutput(node, 0, p->getOutput(0));
}

KILN_ONNX_REGISTER("", "Size", importSize);

}  // namespace
}  // namespace kiln::onnx
