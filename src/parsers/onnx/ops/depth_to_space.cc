// ONNX importers: DepthToSpace, SpaceToDepth.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/misc_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace misc_ops_detail;  // NOLINT(google-build-using-namespace)

/// Reshape, then transpose (one shuffle), then reshape again.
Result<ITensor*> reshapeTransposeReshape(ImportContext& ctx, Node const& node, ITensor* x, Dims const& first,
                                         Permutation perm, Dims const& last) {
  IShuffleLayer* a = ctx.network().addShuffle(*x);
  KO_RETURN_IF_ERROR(ctx.check(a, node, "shuffle"));
  a->setReshapeDimensions(first);
  a->setSecondTranspose(perm);
  return reshape(ctx, node, a->getOutput(0), last);
}

template <bool kToSpace>
Status importDepthSpace(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int64_t b, attrInt(node, "blocksize", 0));
  KO_ASSIGN_OR_RETURN(std::string mode, attrString(node, "mode", "DCR"));
  if (r != 4 || b <= 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "needs a 4-D input and blocksize > 0");
  }
  KO_ASSIGN_OR_RETURN(Dims d, staticDims(node, x, 1));
  int64_t const c = d.d[1];
  int64_t const h = d.d[2];
  int64_t const w = d.d[3];
  ITensor* y = nullptr;
  if (kToSpace) {
    if (c % (b * b) != 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "channels ", c, " not divisible by blocksize^2");
    }
    int64_t const co = c / (b * b);
    Dims const last{4, {0, co, h * b, w * b}};
    if (mode == "DCR") {
      KO_ASSIGN_OR_RETURN(y, reshapeTransposeReshape(ctx, node, x, Dims{6, {0, b, b, co, h, w}},
                                                     Permutation{{0, 3, 4, 1, 5, 2}}, last));
    } else if (mode == "CRD") {
      KO_ASSIGN_OR_RETURN(y, reshapeTransposeReshape(ctx, node, x, Dims{6, {0, co, b, b, h, w}},
                                                     Permutation{{0, 1, 4, 2, 5, 3}}, last));
    } else {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "unknown mode '", mode, "'");
    }
  } else {
    if (h % b != 0 || w % b != 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "spatial extents not divisible by blocksize");
    }
    KO_ASSIGN_OR_RETURN(
        y, reshapeTransposeReshape(ctx, node, x, Dims{6, {0, c, h / b, b, w / b, b}}, Permutation{{0, 3, 5, 1, 2, 4}},
                                   Dims{4, {0, c * b * b, h / b, w / b}}));
  }
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "DepthToSpace", importDepthSpace<true>);
KILN_ONNX_REGISTER("", "SpaceToDepth", importDepthSpace<false>);

}  // namespace
}  // namespace kiln::onnx
