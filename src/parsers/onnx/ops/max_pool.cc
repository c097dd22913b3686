// ONNX MaxPool: the IPoolingLayer where it applies (float inputs, no dilation, no Indices output); dilated windows,
// integer inputs and the Indices output are composed exactly instead: one strided kFILL slice per window offset
// (out-of-bounds elements take the type's lowest value) and an element-wise max over the slices; the Indices are
// the same slices of a flat-index grid (storage_order 0: row-major, 1: spatial axes column-major), taken where a
// later window element is strictly greater (the first maximum wins).
#include <cmath>
#include <limits>
#include <vector>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"
#include "parsers/onnx/ops/spatial_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// Window offsets beyond this many are refused (each is one slice layer).
constexpr int64_t kMaxWindowElements = 1024;

bool isFloatType(DataType t) {
  return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16 || t == DataType::kFLOAT64;
}

/// The lowest value of `t`: what padding reads as, so it never wins the max.
double lowest(DataType t) {
  switch (t) {
    case DataType::kINT8:
      return std::numeric_limits<int8_t>::lowest();
    case DataType::kINT16:
      return std::numeric_limits<int16_t>::lowest();
    case DataType::kINT32:
      return std::numeric_limits<int32_t>::lowest();
    case DataType::kINT64:
      return static_cast<double>(std::numeric_limits<int64_t>::lowest());
    case DataType::kUINT8:
    case DataType::kUINT16:
    case DataType::kUINT32:
    case DataType::kUINT64:
    case DataType::kBOOL:
      return 0;
    case DataType::kFLOAT:
    case DataType::kHALF:
    case DataType::kBF16:
    case DataType::kFLOAT64:
    case DataType::kFP8:
    case DataType::kINT4:
    case DataType::kFP4:
    case DataType::kE8M0:
      return -std::numeric_limits<double>::infinity();
  }
  return 0;
}

/// Max pooling as slices + element-wise max (see the file comment). Needs static spatial extents.
Status composedMaxPool(ImportContext& ctx, Node const& node, ITensor* x) {
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  int32_t const nb = r - 2;
  Dims const in = x->getDimensions();
  KO_ASSIGN_OR_RETURN(spatial::WindowGeometry g, spatial::windowGeometry(node, in, kMaxWindowElements));
  KO_ASSIGN_OR_RETURN(int64_t storageOrder, attrInt(node, "storage_order", 0));
  bool const wantIndices = node.output_size() > 1 && !node.output(1).empty();
  DataType const t = x->getType();
  KO_ASSIGN_OR_RETURN(ITensor * fill, compose::scalar(ctx, node, t, lowest(t), "_pad_value"));
  ITensor* grid = nullptr;  // flat index of every input element
  ITensor* noIndex = nullptr;
  if (wantIndices) {
    // Steps per axis: n and c row-major over the whole tensor; the spatial axes row- or column-major.
    std::vector<int64_t> steps(static_cast<size_t>(r), 1);
    int64_t spatialCount = 1;
    for (int32_t i = 2; i < r; ++i) {
      spatialCount *= in.d[i];
    }
    steps[1] = spatialCount;
    steps[0] = spatialCount * in.d[1];
    int64_t acc = 1;
    for (int32_t i = 0; i < nb; ++i) {
      int32_t const axis = storageOrder != 0 ? 2 + i : r - 1 - i;
      steps[static_cast<size_t>(axis)] = acc;
      acc *= in.d[axis];
    }
    IFillLayer* f = ctx.network().addFill(in, FillOperation::kLINSPACE, DataType::kINT64);
    KO_RETURN_IF_ERROR(ctx.check(f, node, "index_grid"));
    KO_ASSIGN_OR_RETURN(ITensor * start, compose::scalar(ctx, node, DataType::kINT64, 0, "_index_start"));
    KO_ASSIGN_OR_RETURN(ITensor * stepT, ctx.int64Tensor(steps, node.name() + "_index_steps"));
    f->setInput(1, *start);
    f->setInput(2, *stepT);
    grid = f->getOutput(0);
    KO_ASSIGN_OR_RETURN(noIndex, compose::scalar(ctx, node, DataType::kINT64, -1, "_no_index"));
  }
  ITensor* y = nullptr;
  ITensor* yIndex = nullptr;
  std::vector<int64_t> offset(static_cast<size_t>(nb), 0);
  do {
    KO_ASSIGN_OR_RETURN(ITensor * taps, spatial::windowTaps(ctx, node, x, g, offset, fill));
    ITensor* sIndex = nullptr;
    if (wantIndices) {
      KO_ASSIGN_OR_RETURN(sIndex, spatial::windowTaps(ctx, node, grid, g, offset, noIndex));
    }
    if (y == nullptr) {
      y = taps;
      yIndex = sIndex;
    } else {
      if (wantIndices) {
        KO_ASSIGN_OR_RETURN(ITensor * later, compose::binary(ctx, node, taps, y, ElementWiseOperation::kGREATER));
        KO_ASSIGN_OR_RETURN(yIndex, compose::select(ctx, node, later, sIndex, yIndex));
      }
      KO_ASSIGN_OR_RETURN(y, compose::binary(ctx, node, y, taps, ElementWiseOperation::kMAX));
    }
  } while (spatial::nextWindowOffset(g, offset));
  KO_RETURN_IF_ERROR(ctx.setOutput(node, 0, y));
  if (wantIndices) {
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 1, yIndex));
  }
  return Status::success();
}

Status importMaxPool(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t nbSpatial, spatial::spatialAxes(node, x));
  bool const wantIndices = node.output_size() > 1 && !node.output(1).empty();
  KO_ASSIGN_OR_RETURN(spatial::Spatial s, spatial::readSpatial(node, nbSpatial, {}));
  bool dilated = false;
  for (int32_t i = 0; i < s.dilations.nbDims; ++i) {
    dilated = dilated || s.dilations.d[i] != 1;
  }
  if (dilated || wantIndices || !isFloatType(x->getType())) {
    return composedMaxPool(ctx, node, x);
  }
  return spatial::pool(ctx, node, PoolingType::kMAX);
}

KILN_ONNX_REGISTER("", "MaxPool", importMaxPool);

}  // namespace
}  // namespace kiln::onnx
