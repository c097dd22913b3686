// Shape inference of Assertion: no outputs; a condition known at build time to be false is an error.
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferAssertion(InferContext& ctx) {
  if (ctx.numInputs() != 1 || !ctx.present(0)) return ctx.error("needs exactly one input");
  if (!ctx.out.empty()) return ctx.error("has no outputs");
  if (ctx.in[0].dtype != DataType::kBOOL) return ctx.error("condition must be bool, not ", dataTypeName(ctx.in[0].dtype));
  if (HostTensor const* c = ctx.inValues[0]) {
    for (int64_t i = 0; i < c->count(); ++i)
      if (c->intAt(i) == 0) return ctx.error("assertion failed: ", ctx.node.attrs.getString("message"));
  }
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kAssertion, inferAssertion);

}  // namespace kiln::ir
