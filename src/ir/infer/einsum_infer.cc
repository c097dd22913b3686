// Shape inference of Einsum: every input has one type (float or integer, not bool); the output's dims are the
// extents of the output labels of the equation (see einsum_util.h).
#include "ir/infer/einsum_util.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

Status inferEinsum(InferContext& ctx) {
  if (ctx.numInputs() < 1) return ctx.error("needs at least one input");
  std::vector<Dims> shapes;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.present(i)) return ctx.error("input ", i, " is absent");
    if (ctx.in[i].dtype != ctx.in[0].dtype)
      return ctx.error("inputs have different types: ", dataTypeName(ctx.in[0].dtype), " and ",
                       dataTypeName(ctx.in[i].dtype));
    shapes.push_back(ctx.in[i].shape);
  }
  DataType t = ctx.in[0].dtype;
  if (!isFloatType(t) && !isIntegerType(t)) return ctx.error("inputs must be float or integer, not ", dataTypeName(t));
  Result<EinsumSpec> spec = parseEinsum(ctx.node.attrs.getString("equation"), shapes);
  if (!spec.isOk()) return ctx.error(spec.status().message());
  Dims out{};
  out.nbDims = static_cast<int32_t>(spec->outputLabels.size());
  for (int32_t i = 0; i < out.nbDims; ++i) out.d[i] = spec->extents[static_cast<size_t>(spec->outputLabels[i])];
  ctx.out[0] = {t, out};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kEinsum, inferEinsum);

}  // namespace kiln::ir
