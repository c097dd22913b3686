// Shape inference of Deconvolution (TensorRT's IDeconvolutionLayer, 1-D/2-D/3-D, grouped, dilated, with bias):
// x [N, C, spatial...], w [C, K/groups, k...], optional b [K]; y = [N, K, spatial out...] in x's type.
#include "ir/infer/deconvolution_infer.h"

#include <algorithm>

#include "ir/shape_inference.h"

namespace kiln::ir {

WindowDim deconvWindowDim(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin,
                          int64_t padEnd, PaddingMode mode) {
  if (in < 0) return {-1, -1, -1};
  int64_t dk = dilation * (kernel - 1) + 1;
  switch (mode) {
    case PaddingMode::kEXPLICIT_ROUND_DOWN:
    case PaddingMode::kEXPLICIT_ROUND_UP:
      return {padBegin, padEnd, in == 0 ? 0 : (in - 1) * stride + dk - padBegin - padEnd};
    case PaddingMode::kSAME_UPPER:
    case PaddingMode::kSAME_LOWER: {
      if (in == 0) return {0, 0, 0};
      int64_t out = std::min(in * stride, (in - 1) * stride + dk);
      int64_t total = std::max<int64_t>(0, dk - stride);
      int64_t half = total / 2;
      if (mode == PaddingMode::kSAME_UPPER) return {half, total - half, out};
      return {total - half, half, out};
    }
  }
  return {padBegin, padEnd, -1};
}

namespace {

Status inferDeconvolution(InferContext& ctx) {
  if (ctx.numInputs() < 2 || ctx.numInputs() > 3 || !ctx.present(0) || !ctx.present(1))
    return ctx.error("needs inputs x and w, then optional b");
  Dims const& x = ctx.in[0].shape;
  Dims const& w = ctx.in[1].shape;
  int32_t rank = x.nbDims;
  if (rank < 3 || rank > 5)
    return ctx.error("input x must have rank 3, 4 or 5 ([N, C, spatial...]), got ", dimsToString(x));
  int32_t ns = rank - 2;
  if (w.nbDims != rank)
    return ctx.error("weights w must have rank ", rank, " ([C, K/groups, k...]), got ", dimsToString(w));
  int64_t groups = ctx.node.attrs.getInt("groups", 1);
  if (groups < 1) return ctx.error("groups = ", groups, " must be >= 1");
  std::vector<int64_t> wKernel;
  bool wKernelKnown = true;
  for (int32_t i = 0; i < ns; ++i) {
    wKernel.push_back(w.d[2 + i]);
    wKernelKnown = wKernelKnown && w.d[2 + i] >= 0;
  }
  KILN_ASSIGN_OR_RETURN(WindowParams p, readWindowParams(ctx.node, "kernel_shape", ns, true,
                                                         wKernelKnown ? wKernel : std::vector<int64_t>{}));
  for (int32_t i = 0; i < ns; ++i)
    if (wKernel[i] >= 0 && wKernel[i] != p.kernel[i])
      return ctx.error("kernel_shape[", i, "] = ", p.kernel[i], " does not match the weights ", dimsToString(w));
  int64_t c = x.d[1];
  if (c >= 0 && c % groups != 0) return ctx.error(c, " input channels are not divisible by groups = ", groups);
  if (c >= 0 && w.d[0] >= 0 && w.d[0] != c)
    return ctx.error("input x has ", c, " channels but the weights ", dimsToString(w), " expect ", w.d[0]);
  int64_t k = w.d[1] >= 0 ? w.d[1] * groups : -1;
  if (ctx.node.attrs.has("num_output_maps")) {
    int64_t nout = ctx.node.attrs.getInt("num_output_maps");
    if (nout < 1) return ctx.error("num_output_maps = ", nout, " must be >= 1");
    if (k >= 0 && k != nout)
      return ctx.error("num_output_maps = ", nout, " but the weights ", dimsToString(w), " with groups = ", groups,
                       " give ", k, " output maps");
    k = nout;
  }
  if (k >= 0 && k % groups != 0) return ctx.error(k, " output maps are not divisible by groups = ", groups);
  Dims y{};
  y.nbDims = rank;
  y.d[0] = x.d[0];
  y.d[1] = k;
  for (int32_t i = 0; i < ns; ++i) {
    int64_t in = x.d[2 + i];
    if (in > (int64_t{1} << 31))  // with the 31-bit window values, in * stride stays within 64 bits
      return ctx.error("spatial dim ", i, " of size ", in, " is too large for a deconvolution");
    WindowDim wd = deconvWindowDim(in, p.kernel[i], p.strides[i], p.dilations[i], p.padsBegin[i], p.padsEnd[i], p.mode);
    if (in > 0 && wd.out < 1)
      return ctx.error("spatial dim ", i, " of size ", in, " with padding ", wd.padBegin, "+", wd.padEnd,
                       " gives an empty output");
    y.d[2 + i] = wd.out;
  }
  if (ctx.present(2)) {
    Dims const& b = ctx.in[2].shape;
    if (b.nbDims != 1 || (b.d[0] >= 0 && k >= 0 && b.d[0] != k))
      return ctx.error("bias b must have shape [", k, "], got ", dimsToString(b));
  }
  ctx.out[0] = {ctx.in[0].dtype, y};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kDeconvolution, inferDeconvolution);

}  // namespace kiln::ir
