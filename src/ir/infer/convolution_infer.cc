// Shape inference of Convolution (TensorRT's IConvolutionLayer, N-D, grouped, dilated, with fused bias,
// residual and activation): y = [N, K, spatial out...] in x's type.
#include "ir/infer/window_util.h"
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferConvolution(InferContext& ctx) {
  if (ctx.numInputs() < 2 || ctx.numInputs() > 4 || !ctx.present(0) || !ctx.present(1))
    return ctx.error("needs inputs x and w, then optional b and residual");
  Dims const& x = ctx.in[0].shape;
  Dims const& w = ctx.in[1].shape;
  int32_t rank = x.nbDims;
  if (rank < 3 || rank > 5)
    return ctx.error("input x must have rank 3, 4 or 5 ([N, C, spatial...]), got ", dimsToString(x));
  int32_t ns = rank - 2;
  if (w.nbDims != rank)
    return ctx.error("weights w must have rank ", rank, " ([K, C/groups, k...]), got ", dimsToString(w));
  int64_t groups = ctx.node.attrs.getInt("groups", 1);
  if (groups < 1)
    return ctx.error("groups = ", groups, " must be >= 1");

  std::vector<int64_t> wKernel;
  bool wKernelKnown = true;
  for (int32_t i = 0; i < ns; ++i) {
    wKernel.push_back(w.d[2 + i]);
    if (w.d[2 + i] < 0)
      wKernelKnown = false;
  }
  KILN_ASSIGN_OR_RETURN(WindowParams p, readWindowParams(ctx.node, "kernel_shape", ns, true,
                                                         wKernelKnown ? wKernel : std::vector<int64_t>{}));
  for (int32_t i = 0; i < ns; ++i) {
    if (wKernel[i] >= 0 && wKernel[i] != p.kernel[i])
      return ctx.error("kernel_shape[", i, "] = ", p.kernel[i], " does not match the weights ", dimsToString(w));
  }

  int64_t k = w.d[0];
  if (ctx.node.attrs.has("num_output_maps")) {
    int64_t nout = ctx.node.attrs.getInt("num_output_maps");
    if (nout < 1)
      return ctx.error("num_output_maps = ", nout, " must be >= 1");
    if (k >= 0 && k != nout)
      return ctx.error("num_output_maps = ", nout, " but the weights ", dimsToString(w), " have ", k, " output maps");
    k = nout;
  }
  if (k >= 0 && k % groups != 0)
    return ctx.error(k, " output maps are not divisible by groups = ", groups);
  int64_t c = x.d[1];
  if (c >= 0 && c % groups != 0)
    return ctx.error(c, " input channels are not divisible by groups = ", groups);
  if (c >= 0 && w.d[1] >= 0 && w.d[1] * groups != c)
    return ctx.error("input x has ", c, " channels but the weights ", dimsToString(w), " with groups = ", groups,
                     " expect ", w.d[1] * groups);

  Dims y{};
  y.nbDims = rank;
  y.d[0] = x.d[0];
  y.d[1] = k;
  for (int32_t i = 0; i < ns; ++i) {
    int64_t in = x.d[2 + i];
    WindowDim wd =
        computeWindowDim(in, p.kernel[i], p.strides[i], p.dilations[i], p.padsBegin[i], p.padsEnd[i], p.mode);
    if (in >= 0 && wd.out < 1 && in > 0)
      return ctx.error("spatial dim ", i, " of size ", in, " with padding ", wd.padBegin, "+", wd.padEnd,
                       " is smaller than the dilated kernel ", p.dilations[i] * (p.kernel[i] - 1) + 1);
    y.d[2 + i] = in == 0 ? 0 : wd.out;
  }

  if (ctx.present(2)) {
    Dims const& b = ctx.in[2].shape;
    if (b.nbDims != 1 || (b.d[0] >= 0 && k >= 0 && b.d[0] != k))
      return ctx.error("bias b must have shape [", k, "], got ", dimsToString(b));
  }
  if (ctx.present(3)) {
    Dims const& r = ctx.in[3].shape;
    bool ok = r.nbDims == rank;
    for (int32_t i = 0; ok && i < rank; ++i)
      if (r.d[i] >= 0 && y.d[i] >= 0 && r.d[i] != y.d[i])
        ok = false;
    if (!ok)
      return ctx.error("residual ", dimsToString(r), " must have the output's shape ", dimsToString(y));
  }
  int64_t act = ctx.node.attrs.getInt("activation", -1);
  if (act < -1 || act >= EnumMax<ActivationType>())
    return ctx.error("unknown activation ", act);
  ctx.out[0] = {ctx.in[0].dtype, y};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kConvolution, inferConvolution);

}  // namespace kiln::ir
