// Shape inference of LRN (TensorRT's ILRNLayer, cross-channel): checks the parameters' ranges (window odd in
// [1, 15], |alpha| <= 1e20, beta in [0.01, 1e5], k in [1e-5, 1e10]); y has x's shape and type.
#include <cmath>

#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferLRN(InferContext& ctx) {
  if (ctx.numInputs() != 1 || !ctx.present(0)) return ctx.error("needs exactly one input");
  Dims const& x = ctx.in[0].shape;
  if (x.nbDims < 3) return ctx.error("input must have rank >= 3 ([N, C, ...]), got ", dimsToString(x));
  int64_t window = ctx.node.attrs.getInt("window", 0);
  double alpha = ctx.node.attrs.getFloat("alpha", 1.0);
  double beta = ctx.node.attrs.getFloat("beta", 1.0);
  double k = ctx.node.attrs.getFloat("k", 1.0);
  if (window < 1 || window > 15 || window % 2 == 0)
    return ctx.error("window = ", window, " must be odd and in [1, 15]");
  if (!(std::fabs(alpha) <= 1e20)) return ctx.error("alpha = ", alpha, " must be in [-1e20, 1e20]");
  if (!(beta >= 0.01 && beta <= 1e5)) return ctx.error("beta = ", beta, " must be in [0.01, 1e5]");
  if (!(k >= 1e-5 && k <= 1e10)) return ctx.error("k = ", k, " must be in [1e-5, 1e10]");
  ctx.out[0] = ctx.in[0];
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kLRN, inferLRN);

}  // namespace kiln::ir
