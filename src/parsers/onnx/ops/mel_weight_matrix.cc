// ONNX MelWeightMatrix: the [dft_length / 2 + 1, num_mel_bins] matrix of triangular mel filters, all five inputs
// run-time scalars. Composed from public layers in float64: num_mel_bins + 2 band edges equally spaced on the mel
// scale (mel = 2595 log10(1 + hz / 700)), converted to spectrogram bins floor((dft_length + 1) hz / sample_rate);
// filter i rises from edge i to edge i+1 (1 there) and falls to edge i+2, as ONNX's reference computes it.
#include <cmath>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;
using Op = ElementWiseOperation;

/// Input `i` as a 0-D tensor of `type`.
Result<ITensor*> scalarInput(ImportContext& ctx, Node const& node, int i, DataType type) {
  KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, i));
  KO_ASSIGN_OR_RETURN(t, compose::cast(ctx, node, t, type));
  return reshape(ctx, node, t, Dims{0, {}});
}

/// 0, 1, ..., count - 1 as FLOAT64, `count` a 0-D INT64 tensor.
Result<ITensor*> arange(ImportContext& ctx, Node const& node, ITensor* count) {
  KO_ASSIGN_OR_RETURN(ITensor * extent, reshape(ctx, node, count, Dims{1, {1}}));
  IFillLayer* f = ctx.network().addFill(Dims{1, {0}}, FillOperation::kLINSPACE, DataType::kINT64);
  KO_RETURN_IF_ERROR(ctx.check(f, node, "arange"));
  KO_ASSIGN_OR_RETURN(ITensor * start, compose::scalar(ctx, node, DataType::kINT64, 0, "_arange_start"));
  KO_ASSIGN_OR_RETURN(ITensor * step, compose::scalar(ctx, node, DataType::kINT64, 1, "_arange_step"));
  f->setInput(0, *extent);
  f->setInput(1, *start);
  f->setInput(2, *step);
  return compose::cast(ctx, node, f->getOutput(0), DataType::kFLOAT64);
}

/// mel(hz) = 2595 log10(1 + hz / 700).
Result<ITensor*> toMel(ImportContext& ctx, Node const& node, ITensor* hz) {
  KO_ASSIGN_OR_RETURN(ITensor * k700, compose::scalar(ctx, node, DataType::kFLOAT64, 700, "_700"));
  KO_ASSIGN_OR_RETURN(ITensor * one, compose::scalar(ctx, node, DataType::kFLOAT64, 1, "_one"));
  KO_ASSIGN_OR_RETURN(ITensor * f, compose::scalar(ctx, node, DataType::kFLOAT64, 2595 / std::log(10.0), "_mel"));
  KO_ASSIGN_OR_RETURN(ITensor * t, compose::binary(ctx, node, hz, k700, Op::kDIV));
  KO_ASSIGN_OR_RETURN(t, compose::binary(ctx, node, t, one, Op::kSUM));
  KO_ASSIGN_OR_RETURN(t, compose::unary(ctx, node, t, UnaryOperation::kLOG));
  return compose::binary(ctx, node, t, f, Op::kPROD);
}

/// Edges [start, start + nb) of the [nb + 2] edge vector, as a [1, nb] row.
Result<ITensor*> edges(ImportContext& ctx, Node const& node, ITensor* all, ITensor* nb1, int64_t start) {
  ISliceLayer* s = ctx.network().addSlice(*all, Dims{1, {start}}, Dims{1, {0}}, Dims{1, {1}});
  KO_RETURN_IF_ERROR(ctx.check(s, node, "edges"));
  s->setInput(2, *nb1);
  return reshape(ctx, node, s->getOutput(0), Dims{2, {1, -1}});
}

Status importMelWeightMatrix(ImportContext& ctx, Node const& node) {
  if (node.input_size() < 5) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects 5 inputs, got ", node.input_size());
  }
  KO_ASSIGN_OR_RETURN(int64_t onnxType, attrInt(node, "output_datatype", 1));
  KO_ASSIGN_OR_RETURN(DataType outType, fromOnnxType(static_cast<int32_t>(onnxType)));
  KO_ASSIGN_OR_RETURN(ITensor * nb, scalarInput(ctx, node, 0, DataType::kINT64));
  KO_ASSIGN_OR_RETURN(ITensor * len, scalarInput(ctx, node, 1, DataType::kINT64));
  KO_ASSIGN_OR_RETURN(ITensor * rate, scalarInput(ctx, node, 2, DataType::kFLOAT64));
  KO_ASSIGN_OR_RETURN(ITensor * lo, scalarInput(ctx, node, 3, DataType::kFLOAT64));
  KO_ASSIGN_OR_RETURN(ITensor * hi, scalarInput(ctx, node, 4, DataType::kFLOAT64));
  KO_ASSIGN_OR_RETURN(ITensor * oneI, compose::scalar(ctx, node, DataType::kINT64, 1, "_one_i"));
  KO_ASSIGN_OR_RETURN(ITensor * twoI, compose::scalar(ctx, node, DataType::kINT64, 2, "_two_i"));
  // Band edges in spectrogram bins.
  KO_ASSIGN_OR_RETURN(ITensor * nEdges, compose::binary(ctx, node, nb, twoI, Op::kSUM));
  KO_ASSIGN_OR_RETURN(ITensor * k, arange(ctx, node, nEdges));
  KO_ASSIGN_OR_RETURN(ITensor * loMel, toMel(ctx, node, lo));
  KO_ASSIGN_OR_RETURN(ITensor * hiMel, toMel(ctx, node, hi));
  KO_ASSIGN_OR_RETURN(ITensor * nEdgesF, compose::cast(ctx, node, nEdges, DataType::kFLOAT64));
  KO_ASSIGN_OR_RETURN(ITensor * step, compose::binary(ctx, node, hiMel, loMel, Op::kSUB));
  KO_ASSIGN_OR_RETURN(step, compose::binary(ctx, node, step, nEdgesF, Op::kDIV));
  KO_ASSIGN_OR_RETURN(ITensor * mel, compose::binary(ctx, node, k, step, Op::kPROD));
  KO_ASSIGN_OR_RETURN(mel, compose::binary(ctx, node, mel, loMel, Op::kSUM));
  // hz = 700 (10^(mel / 2595) - 1)
  KO_ASSIGN_OR_RETURN(ITensor * invMel, compose::scalar(ctx, node, DataType::kFLOAT64, 1.0 / 2595, "_inv_mel"));
  KO_ASSIGN_OR_RETURN(ITensor * ten, compose::scalar(ctx, node, DataType::kFLOAT64, 10, "_ten"));
  KO_ASSIGN_OR_RETURN(ITensor * one, compose::scalar(ctx, node, DataType::kFLOAT64, 1, "_one_f"));
  KO_ASSIGN_OR_RETURN(ITensor * k700, compose::scalar(ctx, node, DataType::kFLOAT64, 700, "_700_f"));
  KO_ASSIGN_OR_RETURN(ITensor * e, compose::binary(ctx, node, mel, invMel, Op::kPROD));
  KO_ASSIGN_OR_RETURN(e, compose::binary(ctx, node, ten, e, Op::kPOW));
  KO_ASSIGN_OR_RETURN(e, compose::binary(ctx, node, e, one, Op::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * hz, compose::binary(ctx, node, e, k700, Op::kPROD));
  KO_ASSIGN_OR_RETURN(ITensor * len1, compose::binary(ctx, node, len, oneI, Op::kSUM));
  KO_ASSIGN_OR_RETURN(ITensor * len1F, compose::cast(ctx, node, len1, DataType::kFLOAT64));
  KO_ASSIGN_OR_RETURN(ITensor * bins, compose::binary(ctx, node, hz, len1F, Op::kPROD));
  KO_ASSIGN_OR_RETURN(bins, compose::binary(ctx, node, bins, rate, Op::kFLOOR_DIV));
  KO_ASSIGN_OR_RETURN(ITensor * nb1, reshape(ctx, node, nb, Dims{1, {1}}));
  KO_ASSIGN_OR_RETURN(ITensor * left, edges(ctx, node, bins, nb1, 0));
  KO_ASSIGN_OR_RETURN(ITensor * center, edges(ctx, node, bins, nb1, 1));
  KO_ASSIGN_OR_RETURN(ITensor * right, edges(ctx, node, bins, nb1, 2));
  // Spectrogram bins j = 0 .. dft_length / 2 as a column.
  KO_ASSIGN_OR_RETURN(ITensor * rows, compose::binary(ctx, node, len, twoI, Op::kFLOOR_DIV));
  KO_ASSIGN_OR_RETURN(rows, compose::binary(ctx, node, rows, oneI, Op::kSUM));
  KO_ASSIGN_OR_RETURN(ITensor * j, arange(ctx, node, rows));
  KO_ASSIGN_OR_RETURN(j, reshape(ctx, node, j, Dims{2, {-1, 1}}));
  // 1 at the center; (j - left) / (center - left) rising; (right - j) / (right - center) falling; else 0.
  KO_ASSIGN_OR_RETURN(ITensor * atCenter, compose::binary(ctx, node, j, center, Op::kEQUAL));
  KO_ASSIGN_OR_RETURN(ITensor * beforeLeft, compose::binary(ctx, node, j, left, Op::kLESS));
  KO_ASSIGN_OR_RETURN(ITensor * fromLeft, compose::unary(ctx, node, beforeLeft, UnaryOperation::kNOT));
  KO_ASSIGN_OR_RETURN(ITensor * beforeCenter, compose::binary(ctx, node, j, center, Op::kLESS));
  KO_ASSIGN_OR_RETURN(ITensor * rising, compose::binary(ctx, node, fromLeft, beforeCenter, Op::kAND));
  KO_ASSIGN_OR_RETURN(ITensor * afterCenter, compose::binary(ctx, node, j, center, Op::kGREATER));
  KO_ASSIGN_OR_RETURN(ITensor * beforeRight, compose::binary(ctx, node, j, right, Op::kLESS));
  KO_ASSIGN_OR_RETURN(ITensor * falling, compose::binary(ctx, node, afterCenter, beforeRight, Op::kAND));
  KO_ASSIGN_OR_RETURN(ITensor * upNum, compose::binary(ctx, node, j, left, Op::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * upDen, compose::binary(ctx, node, center, left, Op::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * up, compose::binary(ctx, node, upNum, upDen, Op::kDIV));
  KO_ASSIGN_OR_RETURN(ITensor * downNum, compose::binary(ctx, node, right, j, Op::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * downDen, compose::binary(ctx, node, right, center, Op::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * down, compose::binary(ctx, node, downNum, downDen, Op::kDIV));
  KO_ASSIGN_OR_RETURN(ITensor * zero, compose::scalar(ctx, node, DataType::kFLOAT64, 0, "_zero"));
  KO_ASSIGN_OR_RETURN(ITensor * w, compose::select(ctx, node, falling, down, zero));
  KO_ASSIGN_OR_RETURN(w, compose::select(ctx, node, rising, up, w));
  KO_ASSIGN_OR_RETURN(w, compose::select(ctx, node, atCenter, one, w));
  KO_ASSIGN_OR_RETURN(w, compose::cast(ctx, node, w, outType));
  return ctx.setOutput(node, 0, w);
}

KILN_ONNX_REGISTER("", "MelWeightMatrix", importMelWeightMatrix);

}  // namespace
}  // namespace kiln::onnx
