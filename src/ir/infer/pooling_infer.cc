// Shape inference of Pooling (TensorRT's IPoolingLayer, N-D max / average / blend): y = [N, C, spatial out...].
#include "ir/infer/window_util.h"
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferPooling(InferContext& ctx) {
  if (ctx.numInputs() != 1 || !ctx.present(0))
    return ctx.error("needs exactly one input");
  Dims const& x = ctx.in[0].shape;
  int32_t rank = x.nbDims;
  if (rank < 3 || rank > 5)
    return ctx.error("input x must have rank 3, 4 or 5 ([N, C, spatial...]), got ", dimsToString(x));
  int32_t ns = rank - 2;
  int64_t type = ctx.node.attrs.getInt("type", static_cast<int64_t>(PoolingType::kMAX));
  if (type < 0 || type >= EnumMax<PoolingType>())
    return ctx.error("unknown pooling type ", type);
  double blend = ctx.node.attrs.getFloat("blend_factor", 0.0);
  if (!(blend >= 0.0 && blend <= 1.0))
    return ctx.error("blend_factor = ", blend, " must be in [0, 1]");
  KILN_ASSIGN_OR_RETURN(WindowParams p, readWindowParams(ctx.node, "window", ns, false));
  Dims y = x;
  for (int32_t i = 0; i < ns; ++i) {
    bool explicitPads = p.mode == PaddingMode::kEXPLICIT_ROUND_DOWN || p.mode == PaddingMode::kEXPLICIT_ROUND_UP;
    if (explicitPads && (p.padsBegin[i] >= p.kernel[i] || p.padsEnd[i] >= p.kernel[i]))
      return ctx.error("padding of spatial dim ", i, " (", p.padsBegin[i], ", ", p.padsEnd[i],
                       ") must be smaller than the window ", p.kernel[i]);
    int64_t in = x.d[2 + i];
    WindowDim wd = computeWindowDim(in, p.kernel[i], p.strides[i], 1, p.padsBegin[i], p.padsEnd[i], p.mode);
    if (in > 0 && wd.out < 1)
      return ctx.error("spatial dim ", i, " of size ", in, " with padding ", wd.padBegin, "+", wd.padEnd,
                       " is smaller than the window ", p.kernel[i]);
    y.d[2 + i] = in == 0 ? 0 : wd.out;
  }
  ctx.out[0] = {ctx.in[0].dtype, y};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kPooling, inferPooling);

}  // namespace kiln::ir
