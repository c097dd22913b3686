// Shape inference of Squeeze and Unsqueeze: the axes come from input 1, a 1-D int32/int64 shape tensor
// (negative axes count from the end of the input for Squeeze, of the output for Unsqueeze; duplicates are
// errors). Squeezed axes must have extent 1 (unknown extents are taken to be 1). While the axes are known only at
// run time, the output rank follows from their count and every dim is -1.
#include <algorithm>
#include <vector>

#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

// Checks inputs and the axes tensor's type and rank; `count` gets its length (-1 if unknown).
Status checkAxesInput(InferContext& ctx, int64_t& count) {
  if (ctx.numInputs() != 2 || !ctx.present(0) || !ctx.present(1))
    return ctx.error("needs exactly two inputs (x, axes)");
  DataType at = ctx.in[1].dtype;
  if (at != DataType::kINT32 && at != DataType::kINT64)
    return ctx.error("axes must be int32 or int64, not ", dataTypeName(at));
  if (ctx.in[1].shape.nbDims != 1) return ctx.error("axes must be 1-D, not ", dimsToString(ctx.in[1].shape));
  count = ctx.in[1].shape.d[0];
  return Status::ok();
}

// The output of rank `rank` whose dims are not known until the axes are.
Status unknownDims(InferContext& ctx, int64_t rank) {
  if (rank < 0 || rank > Dims::MAX_DIMS)
    return ctx.error("the number of axes must be known at build time and give a rank between 0 and ", Dims::MAX_DIMS,
                     " (input ", dimsToString(ctx.in[0].shape), ", axes ", dimsToString(ctx.in[1].shape), ")");
  Dims out{};
  out.nbDims = static_cast<int32_t>(rank);
  for (int32_t i = 0; i < out.nbDims; ++i) out.d[i] = -1;
  ctx.out[0] = {ctx.in[0].dtype, out};
  return Status::ok();
}

// The axes of input 1 (known contents) normalized against `rank`, sorted; errors for malformed or repeated axes.
Status readAxes(InferContext& ctx, HostTensor const* v, int32_t rank, std::vector<int32_t>& axes) {
  for (int64_t a : v->toInt64Vector()) {
    Result<int32_t> n = normalizeAxis(a, rank);
    if (!n.isOk()) return ctx.error(n.status().message());
    if (std::find(axes.begin(), axes.end(), *n) != axes.end()) return ctx.error("axis ", a, " is repeated");
    axes.push_back(*n);
  }
  std::sort(axes.begin(), axes.end());
  return Status::ok();
}

Status inferSqueeze(InferContext& ctx) {
  int64_t count = -1;
  KILN_RETURN_IF_ERROR(checkAxesInput(ctx, count));
  Dims const& x = ctx.in[0].shape;
  HostTensor const* v = ctx.inValues[1];
  if (v == nullptr) return unknownDims(ctx, count < 0 ? -1 : x.nbDims - count);
  std::vector<int32_t> axes;
  KILN_RETURN_IF_ERROR(readAxes(ctx, v, x.nbDims, axes));
  Dims out{};
  out.nbDims = 0;
  for (int32_t i = 0; i < x.nbDims; ++i) {
    if (std::binary_search(axes.begin(), axes.end(), i)) {
      if (x.d[i] != 1 && x.d[i] >= 0)
        return ctx.error("cannot squeeze axis ", i, " of extent ", x.d[i], " (input ", dimsToString(x), ")");
      continue;
    }
    out.d[out.nbDims++] = x.d[i];
  }
  ctx.out[0] = {ctx.in[0].dtype, out};
  return Status::ok();
}

Status inferUnsqueeze(InferContext& ctx) {
  int64_t count = -1;
  KILN_RETURN_IF_ERROR(checkAxesInput(ctx, count));
  Dims const& x = ctx.in[0].shape;
  HostTensor const* v = ctx.inValues[1];
  if (v == nullptr) return unknownDims(ctx, count < 0 ? -1 : x.nbDims + count);
  int64_t rank = int64_t{x.nbDims} + v->count();
  if (rank > Dims::MAX_DIMS) return ctx.error("output would have rank ", rank, " (at most ", Dims::MAX_DIMS, ")");
  std::vector<int32_t> axes;
  KILN_RETURN_IF_ERROR(readAxes(ctx, v, static_cast<int32_t>(rank), axes));
  Dims out{};
  out.nbDims = static_cast<int32_t>(rank);
  int32_t src = 0;
  for (int32_t i = 0; i < out.nbDims; ++i) out.d[i] = std::binary_search(axes.begin(), axes.end(), i) ? 1 : x.d[src++];
  ctx.out[0] = {ctx.in[0].dtype, out};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kSqueeze, inferSqueeze);
KILN_REGISTER_INFER(kUnsqueeze, inferUnsqueeze);

}  // namespace kiln::ir
