// ONNX importer: Tile.
#include <algorithm>
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/index_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace index_ops_detail;  // NOLINT(google-build-using-namespace)

/// Tile: a wrapping slice from 0 with size shape(x) * repeats.
Status importTile(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  Dims const in = x->getDimensions();
  Dims start{r, {}};
  Dims stride{r, {}};
  for (int32_t i = 0; i < r; ++i) {
    stride.d[i] = 1;
  }
  Constant const* rc = ctx.constant(node, 1);
  bool staticSize = rc != nullptr;
  Dims size{r, {}};
  if (rc != nullptr) {
    if (rc->count() != r) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "repeats has ", rc->count(),
                                      " elements for rank ", r);
    }
    for (int32_t i = 0; i < r; ++i) {
      int64_t rep = rc->asInt(i);
      if (rep < 0) {
        return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "negative repeat ", rep);
      }
      staticSize &= in.d[i] >= 0;
      if (in.d[i] >= 0 && rep > 0 && in.d[i] > kMaxConstantElements / rep) {
        return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "tiled extent is too large");
      }
      size.d[i] = in.d[i] * rep;
    }
    int64_t total = 1;
    for (int32_t i = 0; staticSize && i < r; ++i) {
      if (size.d[i] != 0 && total > (int64_t{1} << 40) / size.d[i]) {
        return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "tiled output is too large");
      }
      total *= size.d[i];
    }
  }
  // A run-time size (input 2) replaces the placeholder ones.
  ISliceLayer* l = ctx.network().addSlice(*x, start, staticSize ? size : stride, stride);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "tile"));
  l->setMode(SampleMode::kWRAP);
  if (!staticSize) {
    IShapeLayer* shape = ctx.network().addShape(*x);
    KO_RETURN_IF_ERROR(ctx.check(shape, node, "shape"));
    KO_ASSIGN_OR_RETURN(ITensor * reps, ctx.tensor(node, 1));
    if (reps->getType() != DataType::kINT64) {
      ICastLayer* c = ctx.network().addCast(*reps, DataType::kINT64);
      KO_RETURN_IF_ERROR(ctx.check(c, node, "cast"));
      reps = c->getOutput(0);
    }
    IElementWiseLayer* mul = ctx.network().addElementWise(*shape->getOutput(0), *reps, ElementWiseOperation::kPROD);
    KO_RETURN_IF_ERROR(ctx.check(mul, node, "tile_size"));
    l->setInput(2, *mul->getOutput(0));
  }
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "Tile", importTile);

}  // namespace
}  // namespace kiln::onnx
