// ONNX DFT importer (opset 17: axis attribute; opset 20: axis input): for a static input and a constant transform
// length, the transform is one MatrixMultiply with a constant cos/sin matrix (dft_util.h) between two shuffles
// that move the transformed axis next to the real/imaginary axis and back.
#include "parsers/onnx/ops/axis_matrix_util.h"
#include "parsers/onnx/ops/dft_util.h"

namespace kiln::onnx {
namespace {

/// A scalar integer input that must be a constant.
Result<int64_t> constantScalar(ImportContext& ctx, ::onnx::NodeProto const& node, int i, char const* what) {
  Constant const* c = ctx.constant(node, i);
  if (c == nullptr) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, what,
                                    " must be a constant (a value known only at run time is not supported)");
  }
  if (c->count() != 1) return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, what, " must be a scalar");
  return c->asInt(0);
}

Status importDft(ImportContext& ctx, ::onnx::NodeProto const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  Dims const d = x->getDimensions();
  if (r < 2 || !allStatic(d)) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "input dims ", dimsString(d),
                                    " must have rank >= 2 and be known at build time");
  }
  if (x->getType() != DataType::kFLOAT && x->getType() != DataType::kFLOAT64) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "input must be float32 or float64");
  }
  int64_t const channels = d.d[r - 1];
  if (channels != 1 && channels != 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node,
                                    "the last axis must be 1 (real) or 2 (complex), not ", channels);
  }
  KO_ASSIGN_OR_RETURN(int64_t onesided, attrInt(node, "onesided", 0));
  KO_ASSIGN_OR_RETURN(int64_t inverse, attrInt(node, "inverse", 0));
  int64_t axis = 1;
  if (ctx.opset() >= 20) {
    axis = -2;
    if (ImportContext::hasInput(node, 2)) {
      KO_ASSIGN_OR_RETURN(axis, constantScalar(ctx, node, 2, "axis"));
    }
  } else {
    KO_ASSIGN_OR_RETURN(axis, attrInt(node, "axis", 1));
  }
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r - 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axis must name an axis other than the last");
  }
  auto const a = static_cast<int32_t>(axis);
  int64_t const n = d.d[a];
  int64_t length = n;
  if (ImportContext::hasInput(node, 1)) {
    KO_ASSIGN_OR_RETURN(length, constantScalar(ctx, node, 1, "dft_length"));
  }
  if (length < 1) return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "dft_length must be positive");
  int64_t const k = onesided != 0 ? length / 2 + 1 : length;
  if (static_cast<double>(n * channels) * static_cast<double>(k * 2) > static_cast<double>(kMaxConstantElements)) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "the transform is too large");
  }
  // [.., n at axis, .., channels] -> [batch, n * channels] (axis moved next to the channels).
  Permutation perm{};
  int32_t j = 0;
  int64_t batch = 1;
  for (int32_t i = 0; i < r - 1; ++i) {
    if (i == a) continue;
    perm.order[j++] = i;
    batch *= d.d[i];
  }
  perm.order[j++] = a;
  perm.order[j] = r - 1;
  IShuffleLayer* in = ctx.network().addShuffle(*x);
  KO_RETURN_IF_ERROR(ctx.check(in, node, "dft_in"));
  in->setFirstTranspose(perm);
  in->setZeroIsPlaceholder(false);
  in->setReshapeDimensions(Dims{2, {batch, n * channels}});
  KO_ASSIGN_OR_RETURN(ITensor * w, doubleConstant(ctx, node, x->getType(), Dims{2, {n * channels, k * 2}},
                                                  dftMatrix(n, channels, length, k, inverse != 0), "dft_matrix"));
  IMatrixMultiplyLayer* mm =
      ctx.network().addMatrixMultiply(*in->getOutput(0), MatrixOperation::kNONE, *w, MatrixOperation::kNONE);
  KO_RETURN_IF_ERROR(ctx.check(mm, node, "dft"));
  // [batch, k * 2] -> the permuted dims with k and 2 -> back to the input's order.
  Dims pd{r, {}};
  Permutation back{};
  for (int32_t i = 0; i < r; ++i) {
    int32_t const src = perm.order[i];
    pd.d[i] = src == a ? k : src == r - 1 ? 2 : d.d[src];
    back.order[src] = i;
  }
  IShuffleLayer* out = ctx.network().addShuffle(*mm->getOutput(0));
  KO_RETURN_IF_ERROR(ctx.check(out, node, "dft_out"));
  out->setZeroIsPlaceholder(false);
  out->setReshapeDimensions(pd);
  out->setSecondTranspose(back);
  return ctx.setOutput(node, 0, out->getOutput(0));
}

KILN_ONNX_REGISTER("", "DFT", importDft);

}  // namespace
}  // namespace kiln::onnx
