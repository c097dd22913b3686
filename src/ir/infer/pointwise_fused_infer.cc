// Shape inference of PointwiseFused (builder/passes/fuse_pointwise.cc): the program is validated against the
// input types (a corrupt plan is refused here, on load), the output is the inputs' numpy broadcast in type `to`.
#include "core/broadcast.h"
#include "ir/pointwise_program.h"
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferPointwiseFused(InferContext& ctx) {
  std::vector<DataType> types;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.present(i)) return ctx.error("input ", i, " is absent");
    types.push_back(ctx.in[i].dtype);
  }
  int64_t const to = ctx.node.attrs.getInt("to", -1);
  if (to < 0 || to > INT32_MAX) return ctx.error("output type ", to, " is invalid");
  auto const outType = static_cast<DataType>(to);
  Result<PointwiseProgram> p = decodePointwiseProgram(ctx.node.attrs, types, outType, ctx.node.describe());
  if (!p.isOk()) return p.status();
  Dims shape = ctx.in[0].shape;
  for (size_t i = 1; i < ctx.numInputs(); ++i) {
    Result<Dims> s = broadcastShapes(shape, ctx.in[i].shape);
    if (!s.isOk()) return ctx.error(s.status().message());
    shape = *s;
  }
  ctx.out[0] = {outType, shape};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kPointwiseFused, inferPointwiseFused);

}  // namespace kiln::ir
