// ONNX STFT importer (opset 17): with a static signal and constant frame_step / frame_length, the frames are one
// Gather of constant sample indices, optionally multiplied by the window, and the transform of every frame is one
// MatrixMultiply with a constant cos/sin matrix (dft_util.h).
#include "parsers/onnx/ops/axis_matrix_util.h"
#include "parsers/onnx/ops/dft_util.h"

namespace kiln::onnx {
namespace {

/// A scalar integer input that must be a constant (the frame count, an output extent, depends on it).
Result<int64_t> constantScalar(ImportContext& ctx, ::onnx::NodeProto const& node, int i, char const* what) {
  Constant const* c = ctx.constant(node, i);
  if (c == nullptr) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, what,
                                    " must be a constant: a value known only at run time is not supported");
  }
  if (c->count() != 1) return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, what, " must be a scalar");
  return c->asInt(0);
}

Status importStft(ImportContext& ctx, ::onnx::NodeProto const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  Dims const d = x->getDimensions();
  if (d.nbDims != 3 || !allStatic(d) || (d.d[2] != 1 && d.d[2] != 2)) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "signal ", dimsString(d),
                                    " must be [batch, length, 1 or 2] and known at build time");
  }
  if (x->getType() != DataType::kFLOAT && x->getType() != DataType::kFLOAT64) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "signal must be float32 or float64");
  }
  KO_ASSIGN_OR_RETURN(int64_t onesided, attrInt(node, "onesided", 1));
  KO_ASSIGN_OR_RETURN(int64_t step, constantScalar(ctx, node, 1, "frame_step"));
  ITensor* window = nullptr;
  int64_t frameLength = -1;
  if (ImportContext::hasInput(node, 2)) {
    KO_ASSIGN_OR_RETURN(window, ctx.tensor(node, 2));
    Dims const wd = window->getDimensions();
    if (wd.nbDims != 1 || wd.d[0] < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "window ", dimsString(wd),
                                      " must be 1-D of a length known at build time");
    }
    frameLength = wd.d[0];
  }
  if (ImportContext::hasInput(node, 3)) {
    KO_ASSIGN_OR_RETURN(int64_t fl, constantScalar(ctx, node, 3, "frame_length"));
    if (frameLength >= 0 && fl != frameLength) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "frame_length ", fl,
                                      " differs from the window length ", frameLength);
    }
    frameLength = fl;
  }
  if (frameLength < 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "needs a window or a frame_length");
  }
  int64_t const batch = d.d[0], length = d.d[1], channels = d.d[2];
  if (step < 1 || frameLength < 1 || frameLength > length) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "frame_step ", step, " and frame_length ",
                                    frameLength, " must be positive, the frame no longer than the signal (", length,
                                    ")");
  }
  int64_t const frames = (length - frameLength) / step + 1;
  int64_t const k = onesided != 0 ? frameLength / 2 + 1 : frameLength;
  if (static_cast<double>(frameLength * channels) * static_cast<double>(k * 2) >
      static_cast<double>(kMaxConstantElements)) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "the transform is too large");
  }
  // Frames: gather sample f * step + i along the signal axis -> [batch, frames, frameLength, channels].
  KO_ASSIGN_OR_RETURN(Constant * idx, ctx.newConstant(DataType::kINT64, Dims{2, {frames, frameLength}}));
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t i = 0; i < frameLength; ++i) {
      int64_t const v = f * step + i;
      std::memcpy(idx->bytes.data() + (f * frameLength + i) * 8, &v, 8);
    }
  KO_ASSIGN_OR_RETURN(ITensor * idxT, ctx.constantTensor(idx, node.name() + "_frame_indices"));
  IGatherLayer* g = ctx.network().addGather(*x, *idxT, 1);
  KO_RETURN_IF_ERROR(ctx.check(g, node, "frames"));
  ITensor* framesT = g->getOutput(0);
  if (window != nullptr) {
    if (window->getType() != x->getType()) {
      ICastLayer* c = ctx.network().addCast(*window, x->getType());
      KO_RETURN_IF_ERROR(ctx.check(c, node, "window_cast"));
      window = c->getOutput(0);
    }
    KO_ASSIGN_OR_RETURN(ITensor * w4, reshape(ctx, node, window, Dims{4, {1, 1, frameLength, 1}}, false));
    IElementWiseLayer* mul = ctx.network().addElementWise(*framesT, *w4, ElementWiseOperation::kPROD);
    KO_RETURN_IF_ERROR(ctx.check(mul, node, "window"));
    framesT = mul->getOutput(0);
  }
  KO_ASSIGN_OR_RETURN(ITensor * flat,
                      reshape(ctx, node, framesT, Dims{2, {batch * frames, frameLength * channels}}, false));
  KO_ASSIGN_OR_RETURN(ITensor * w,
                      doubleConstant(ctx, node, x->getType(), Dims{2, {frameLength * channels, k * 2}},
                                     dftMatrix(frameLength, channels, frameLength, k, false), "stft_matrix"));
  IMatrixMultiplyLayer* mm = ctx.network().addMatrixMultiply(*flat, MatrixOperation::kNONE, *w, MatrixOperation::kNONE);
  KO_RETURN_IF_ERROR(ctx.check(mm, node, "stft"));
  KO_ASSIGN_OR_RETURN(ITensor * y, reshape(ctx, node, mm->getOutput(0), Dims{4, {batch, frames, k, 2}}, false));
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "STFT", importStft);

}  // namespace
}  // namespace kiln::onnx
