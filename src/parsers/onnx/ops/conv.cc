// ONNX importer: Conv.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/spatial_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;
using namespace spatial;  // NOLINT: the shared spatial helpers

// NOLINT: the shared spatial helpers

Status importConv(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t nbSpatial, spatialAxes(node, x));
  bool const oneD = nbSpatial == 1;
  KO_ASSIGN_OR_RETURN(KernelArg k, kernelArg(ctx, node, oneD));
  if (k.dims.nbDims != nbSpatial + 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "weight rank ", k.dims.nbDims,
                                    " does not match the input");
  }
  std::vector<int64_t> kshape(k.dims.d + 2, k.dims.d + k.dims.nbDims);
  KO_ASSIGN_OR_RETURN(Spatial s, readSpatial(node, nbSpatial, kshape));
  KO_ASSIGN_OR_RETURN(int64_t group, attrInt(node, "group", 1));
  KO_ASSIGN_OR_RETURN(Weights bias, biasArg(ctx, node));
  if (oneD) {
    KO_ASSIGN_OR_RETURN(x, to2d(ctx, node, x));
  }
  IConvolutionLayer* l = ctx.network().addConvolutionNd(*x, k.dims.d[0], s.kernel, k.weights, bias);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "conv"));
  if (k.tensor != nullptr) {
    l->setInput(1, *k.tensor);
  }
  l->setNbGroups(group);
  l->setStrideNd(s.strides);
  l->setPrePadding(s.pre);
  l->setPostPadding(s.post);
  l->setDilationNd(s.dilations);
  l->setPaddingMode(s.mode == PaddingMode::kEXPLICIT_ROUND_UP ? PaddingMode::kEXPLICIT_ROUND_DOWN : s.mode);
  ITensor* y = l->getOutput(0);
  if (oneD) {
    KO_ASSIGN_OR_RETURN(y, from2d(ctx, node, y));
  }
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "Conv", importConv);

}  // namespace
}  // namespace kiln::onnx
