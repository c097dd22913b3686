// ONNX LpPool (opsets 2, 11, 18): y = (sum over the window of |x|^p)^(1/p). Composed as |x|^p, a depthwise
// convolution with an all-ones kernel (groups = C: the exact window sum; padded elements add 0, as ONNX Runtime's
// sum over the valid elements does), then ^(1/p). Strides, explicit pads, auto_pad, ceil_mode (as extra end
// padding) and dilations map onto the convolution; 1-D runs as 2-D with a unit trailing axis.
#include <cmath>
#include <cstring>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importLpPool(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  if (r < 3 || r > 5) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node, "input rank ", r,
                                    " is not supported (1-D, 2-D or 3-D spatial only)");
  }
  DataType const t = x->getType();
  if (t != DataType::kFLOAT && t != DataType::kHALF && t != DataType::kFLOAT64 && t != DataType::kBF16) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "needs a float input");
  }
  auto const n = static_cast<size_t>(r - 2);
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> k, attrInts(node, "kernel_shape"));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> st, attrInts(node, "strides", std::vector<int64_t>(n, 1)));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> pads, attrInts(node, "pads", std::vector<int64_t>(2 * n, 0)));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> dil, attrInts(node, "dilations", std::vector<int64_t>(n, 1)));
  KO_ASSIGN_OR_RETURN(std::string autoPad, attrString(node, "auto_pad", "NOTSET"));
  KO_ASSIGN_OR_RETURN(int64_t ceilMode, attrInt(node, "ceil_mode", 0));
  double p = 2.0;
  if (auto const* pa = findAttr(node, "p"); pa != nullptr) {
    p = pa->type() == ::onnx::AttributeProto::FLOAT ? static_cast<double>(pa->f()) : static_cast<double>(pa->i());
  }
  if (k.size() != n || st.size() != n || pads.size() != 2 * n || dil.size() != n) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "kernel_shape/strides/pads/dilations do not match ",
                                    n, " spatial axes");
  }
  if (!(p > 0.0) || !std::isfinite(p)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "p must be positive, got ", p);
  }
  Dims const in = x->getDimensions();
  if (in.d[1] < 0) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node, "the channel count is dynamic");
  }
  // Explicit begin/end pads per spatial axis, end pads grown so that a plain (round-down) convolution gives the
  // output extent ONNX asks for.
  int32_t const r2 = n == 1 ? 2 : static_cast<int32_t>(n);
  Dims kernel{r2, {}}, strides{r2, {}}, pre{r2, {}}, post{r2, {}}, dilations{r2, {}};
  for (int32_t i = 0; i < r2; ++i) {
    kernel.d[i] = strides.d[i] = dilations.d[i] = 1;
    pre.d[i] = post.d[i] = 0;
  }
  for (size_t i = 0; i < n; ++i) {
    if (k[i] <= 0 || st[i] <= 0 || dil[i] <= 0 || pads[i] < 0 || pads[i + n] < 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "invalid kernel, stride, dilation or pad");
    }
    int64_t const size = in.d[2 + i];
    if (size < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node, "spatial axis ", i,
                                      " has a dynamic extent");
    }
    int64_t const span = dil[i] * (k[i] - 1) + 1;
    int64_t b = pads[i], e = pads[i + n];
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t const out = (size + st[i] - 1) / st[i];
      int64_t const total = std::max<int64_t>(0, (out - 1) * st[i] + span - size);
      b = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      e = total - b;
    } else if (autoPad == "VALID") {
      b = e = 0;
    } else if (autoPad != "NOTSET") {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "auto_pad '", autoPad, "' is invalid");
    }
    int64_t const padded = size + b + e;
    if (padded < span) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the window is larger than the input");
    }
    if (ceilMode != 0 && autoPad == "NOTSET") {
      int64_t out = (padded - span + st[i] - 1) / st[i] + 1;
      // As ONNX and ONNX Runtime: a last window that would start in the end padding is dropped.
      if ((out - 1) * st[i] >= size + b) --out;
      e = std::max(e, (out - 1) * st[i] + span - size - b);
    }
    kernel.d[i] = k[i];
    strides.d[i] = st[i];
    dilations.d[i] = dil[i];
    pre.d[i] = b;
    post.d[i] = e;
  }
  bool const oneD = n == 1;
  if (oneD) {
    KO_ASSIGN_OR_RETURN(x, reshape(ctx, node, x, Dims{4, {0, 0, 0, 1}}));
  }
  // |x|^p (x * x for p = 2: exact rounding, no pow).
  KO_ASSIGN_OR_RETURN(ITensor * a, unary(ctx, node, x, UnaryOperation::kABS));
  ITensor* powered = nullptr;
  if (p == 2.0) {
    KO_ASSIGN_OR_RETURN(powered, elementwise(ctx, node, a, a, ElementWiseOperation::kPROD));
  } else if (p == 1.0) {
    powered = a;
  } else {
    KO_ASSIGN_OR_RETURN(ITensor * pt, scalar(ctx, node, t, p));
    KO_ASSIGN_OR_RETURN(powered, elementwise(ctx, node, a, pt, ElementWiseOperation::kPOW));
  }
  int64_t const c = in.d[1];
  int64_t kvol = 1;
  for (int32_t i = 0; i < kernel.nbDims; ++i) kvol *= kernel.d[i];
  Dims wdims{kernel.nbDims + 2, {c, 1}};
  for (int32_t i = 0; i < kernel.nbDims; ++i) wdims.d[i + 2] = kernel.d[i];
  KO_ASSIGN_OR_RETURN(Constant * ones, ctx.newConstant(DataType::kFLOAT, wdims));
  float const one = 1.0F;
  for (int64_t i = 0; i < c * kvol; ++i) std::memcpy(ones->bytes.data() + i * 4, &one, 4);
  IConvolutionLayer* conv =
      ctx.network().addConvolutionNd(*powered, c, kernel, ones->weights(), Weights{DataType::kFLOAT, nullptr, 0});
  KO_RETURN_IF_ERROR(ctx.check(conv, node, "lp_pool_sum"));
  conv->setNbGroups(c);
  conv->setStrideNd(strides);
  conv->setPrePadding(pre);
  conv->setPostPadding(post);
  conv->setDilationNd(dilations);
  ITensor* y = conv->getOutput(0);
  if (p == 2.0) {
    KO_ASSIGN_OR_RETURN(y, unary(ctx, node, y, UnaryOperation::kSQRT));
  } else if (p != 1.0) {
    KO_ASSIGN_OR_RETURN(ITensor * inv, scalar(ctx, node, t, 1.0 / p));
    KO_ASSIGN_OR_RETURN(y, elementwise(ctx, node, y, inv, ElementWiseOperation::kPOW));
  }
  if (oneD) {
    KO_ASSIGN_OR_RETURN(y, reshape(ctx, node, y, Dims{3, {0, 0, 0}}));
  }
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "LpPool", importLpPool);

}  // namespace
}  // namespace kiln::onnx
