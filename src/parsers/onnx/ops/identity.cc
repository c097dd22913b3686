// ONNX importer: Identity.
#include <algorithm>
#include <cstring>
#include <limits>
#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importIdentity(ImportContext& ctx, Node const& node) {
  if (Constant const* c = ctx.constant(node, 0)) {
    return ctx.setOutputConstant(node, 0, c);
  }
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  IIdentityLayer* l = ctx.network().addIdentity(*x);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "identity"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "Identity", importIdentity);

}  // namespace
}  // namespace kiln::onnx
