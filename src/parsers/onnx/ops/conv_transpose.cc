// ONNX ConvTranspose: an IDeconvolutionLayer with the model's pads; with output_shape, or an output_padding past
// the end pads, the full (unpadded) transposed convolution is computed and an IPaddingLayer cuts (or zero-extends)
// the ONNX output window out of it, the bias added afterwards so that zero-extended cells get it too.
#include <string>
#include <vector>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"
#include "parsers/onnx/ops/spatial_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;
using namespace spatial;  // NOLINT: the shared spatial helpers

/// The general form (see the file comment). `s.post` already has output_padding subtracted (unused here).
Status windowedConvTranspose(ImportContext& ctx, Node const& node, ITensor* x, KernelArg const& k, Spatial const& s,
                             int64_t group, std::vector<int64_t> const& outPad) {
  int32_t const nb = s.nb;
  bool const oneD = nb == 1;
  Dims const in = x->getDimensions();
  for (int32_t i = 0; i < nb; ++i) {
    if (in.d[i + 2] < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                      "output_shape/output_padding need static spatial extents, got ", dimsString(in));
    }
  }
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> outShape, attrInts(node, "output_shape"));
  if (outShape.size() == static_cast<size_t>(nb) + 2) {
    outShape.erase(outShape.begin(), outShape.begin() + 2);  // [N, C, spatial...]
  }
  if (!outShape.empty() && outShape.size() != static_cast<size_t>(nb)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "output_shape has ", outShape.size(),
                                    " entries for ", nb, " spatial axes");
  }
  KO_ASSIGN_OR_RETURN(std::string autoPad, attrString(node, "auto_pad", "NOTSET"));
  // Per axis: begin = first full-output cell in the window, out = window length; the full length is
  // stride * (in - 1) + dilated kernel extent.
  Dims pre{nb == 1 ? 2 : nb, {}}, post{nb == 1 ? 2 : nb, {}};
  for (int32_t i = 0; i < pre.nbDims; ++i) {
    pre.d[i] = 0;
    post.d[i] = 0;
  }
  for (int32_t i = 0; i < nb; ++i) {
    int64_t const op = static_cast<size_t>(i) < outPad.size() ? outPad[static_cast<size_t>(i)] : 0;
    int64_t const span = (s.kernel.d[i] - 1) * s.dilations.d[i] + 1;
    int64_t const full = s.strides.d[i] * (in.d[i + 2] - 1) + span;
    int64_t begin = 0, out = 0;
    if (!outShape.empty() || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      out = outShape.empty() ? in.d[i + 2] * s.strides.d[i] : outShape[static_cast<size_t>(i)];
      int64_t const total = full + op - out;
      // Halves rounded toward -inf, as in ONNX's (Python) reference: a window larger than the full output
      // (negative total) starts at its first cell and is zero-extended at the end.
      int64_t const half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      begin = autoPad == "SAME_UPPER" ? half : total - half;
    } else {
      begin = s.pre.d[i];
      out = full + op - s.pre.d[i] - (s.post.d[i] + op);  // s.post has op subtracted already
    }
    if (out < 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "negative output extent on axis ", i);
    }
    pre.d[i] = -begin;
    post.d[i] = out + begin - full;
  }
  if (oneD) {
    KO_ASSIGN_OR_RETURN(x, to2d(ctx, node, x));
  }
  Dims zeros{s.kernel.nbDims, {}};
  for (int32_t i = 0; i < zeros.nbDims; ++i) {
    zeros.d[i] = 0;
  }
  IDeconvolutionLayer* l = ctx.network().addDeconvolutionNd(*x, k.dims.d[1] * group, s.kernel, k.weights,
                                                            Weights{DataType::kFLOAT, nullptr, 0});
  KO_RETURN_IF_ERROR(ctx.check(l, node, "deconv"));
  if (k.tensor != nullptr) {
    l->setInput(1, *k.tensor);
  }
  l->setNbGroups(group);
  l->setStrideNd(s.strides);
  l->setPrePadding(zeros);
  l->setPostPadding(zeros);
  l->setDilationNd(s.dilations);
  IPaddingLayer* p = ctx.network().addPaddingNd(*l->getOutput(0), pre, post);
  KO_RETURN_IF_ERROR(ctx.check(p, node, "output_window"));
  ITensor* y = p->getOutput(0);
  if (ImportContext::hasInput(node, 2)) {
    KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 2));
    Dims bd{y->getDimensions().nbDims, {}};
    for (int32_t i = 0; i < bd.nbDims; ++i) {
      bd.d[i] = i == 1 ? -1 : 1;
    }
    KO_ASSIGN_OR_RETURN(b, reshape(ctx, node, b, bd));
    KO_ASSIGN_OR_RETURN(y, compose::binary(ctx, node, y, b, ElementWiseOperation::kSUM));
  }
  if (oneD) {
    KO_ASSIGN_OR_RETURN(y, from2d(ctx, node, y));
  }
  return ctx.setOutput(node, 0, y);
}

Status importConvTranspose(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t nbSpatial, spatialAxes(node, x));
  bool const oneD = nbSpatial == 1;
  KO_ASSIGN_OR_RETURN(KernelArg k, kernelArg(ctx, node, oneD));
  if (k.dims.nbDims != nbSpatial + 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "weight rank does not match the input");
  }
  std::vector<int64_t> kshape(k.dims.d + 2, k.dims.d + k.dims.nbDims);
  KO_ASSIGN_OR_RETURN(Spatial s, readSpatial(node, nbSpatial, kshape));
  KO_ASSIGN_OR_RETURN(int64_t group, attrInt(node, "group", 1));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> outPad, attrInts(node, "output_padding"));
  bool const hasOutputShape = findAttr(node, "output_shape") != nullptr;
  bool negativeEnd = false;
  for (size_t i = 0; i < outPad.size() && i < static_cast<size_t>(nbSpatial); ++i) {
    s.post.d[i] -= outPad[i];
    negativeEnd = negativeEnd || s.post.d[i] < 0;
  }
  if (hasOutputShape || negativeEnd) {
    return windowedConvTranspose(ctx, node, x, k, s, group, outPad);
  }
  KO_ASSIGN_OR_RETURN(Weights bias, biasArg(ctx, node));
  if (oneD) {
    KO_ASSIGN_OR_RETURN(x, to2d(ctx, node, x));
  }
  IDeconvolutionLayer* l = ctx.network().addDeconvolutionNd(*x, k.dims.d[1] * group, s.kernel, k.weights, bias);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "deconv"));
  if (k.tensor != nullptr) {
    l->setInput(1, *k.tensor);
  }
  l->setNbGroups(group);
  l->setStrideNd(s.strides);
  l->setPrePadding(s.pre);
  l->setPostPadding(s.post);
  l->setDilationNd(s.dilations);
  if (s.mode == PaddingMode::kSAME_UPPER || s.mode == PaddingMode::kSAME_LOWER) {
    l->setPaddingMode(s.mode);
  }
  ITensor* y = l->getOutput(0);
  if (oneD) {
    KO_ASSIGN_OR_RETURN(y, from2d(ctx, node, y));
  }
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "ConvTranspose", importConvTranspose);

}  // namespace
}  // namespace kiln::onnx
