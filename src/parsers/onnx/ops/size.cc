// ONNX Size: the element count of input 0 as an int64 scalar; a constant when every extent is known, else the
// product of the run-time shape.
#include <cstring>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importSize(ImportContext& ctx, Node const& node) {
  if (Constant const* c = ctx.constant(node, 0)) {
    KO_ASSIGN_OR_RETURN(Constant * n, ctx.newConstant(DataType::kINT64, Dims{0, {}}));
    int64_t const count = c->count();
    std::memcpy(n->bytes.data(), &count, sizeof(count));
    return ctx.setOutputConstant(node, 0, n);
  }
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t rank, rankOf(node, x));
  Dims const d = x->getDimensions();
  int64_t count = 1;
  bool known = true;
  for (int32_t i = 0; i < rank; ++i) {
    known &= d.d[i] >= 0;
    count *= d.d[i] >= 0 ? d.d[i] : 1;
  }
  if (known) {
    KO_ASSIGN_OR_RETURN(Constant * n, ctx.newConstant(DataType::kINT64, Dims{0, {}}));
    std::memcpy(n->bytes.data(), &count, sizeof(count));
    return ctx.setOutputConstant(node, 0, n);
  }
  IShapeLayer* s = ctx.network().addShape(*x);
  KO_RETURN_IF_ERROR(ctx.check(s, node, "shape"));
  KO_ASSIGN_OR_RETURN(ITensor * n, reduce(ctx, node, s->getOutput(0), ReduceOperation::kPROD, 1U, false));
  return ctx.setOutput(node, 0, n);
}

KILN_ONNX_REGISTER("", "Size", importSize);

}  // namespace
}  // namespace kiln::onnx
