// ONNX AffineGrid (opset 20): the sampling grid of an affine transform, for GridSample. 2-D: theta [N, 2, 3],
// size (N, C, H, W) -> grid [N, H, W, 2]; 3-D: theta [N, 3, 4], size (N, C, D, H, W) -> grid [N, D, H, W, 3].
// Composed as a constant base grid of homogeneous coordinates [1, points, r + 1] (x fastest, as ONNX orders
// them) times theta^T in one batched matrix multiply; the size input must be a constant.
#include <cstring>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// Normalized coordinate of pixel i of an axis of `n` pixels in [-1, 1] (pixel centers unless align_corners).
double coord(int64_t i, int64_t n, bool alignCorners) {
  if (alignCorners) {
    return n == 1 ? 0.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1);
  }
  return (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(n) - 1.0;
}

Status importAffineGrid(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * theta, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> size, constantInts(ctx, node, 1));
  KO_ASSIGN_OR_RETURN(int64_t align, attrInt(node, "align_corners", 0));
  if (size.size() != 4 && size.size() != 5) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "size must have 4 or 5 entries, got ", size.size());
  }
  auto const r = static_cast<int32_t>(size.size()) - 2;  // spatial rank
  Dims const td = theta->getDimensions();
  if (td.nbDims != 3 || td.d[1] != r || td.d[2] != r + 1) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "theta ", dimsString(td), " does not fit a ", r,
                                    "-D grid");
  }
  int64_t points = 1;
  for (int32_t i = 0; i < r; ++i) {
    int64_t const e = size[static_cast<size_t>(2 + i)];
    if (e <= 0 || points > kMaxConstantElements / e) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "invalid size entry ", e);
    }
    points *= e;
  }
  KO_ASSIGN_OR_RETURN(Constant * base, ctx.newConstant(DataType::kFLOAT64, Dims{3, {1, points, r + 1}}));
  // Spatial extents in x, y(, z) order: the last size entry is the fastest axis.
  std::vector<int64_t> ext(static_cast<size_t>(r));
  for (int32_t i = 0; i < r; ++i) ext[static_cast<size_t>(i)] = size[size.size() - 1 - static_cast<size_t>(i)];
  for (int64_t pt = 0; pt < points; ++pt) {
    int64_t rest = pt;
    double row[4] = {0, 0, 0, 1};
    for (int32_t i = 0; i < r; ++i) {
      int64_t const e = ext[static_cast<size_t>(i)];
      row[i] = coord(rest % e, e, align != 0);
      rest /= e;
    }
    row[r] = 1.0;
    std::memcpy(base->bytes.data() + pt * (r + 1) * 8, row, static_cast<size_t>(r + 1) * 8);
  }
  KO_ASSIGN_OR_RETURN(ITensor * b, ctx.constantTensor(base, node.name() + "_base_grid"));
  KO_ASSIGN_OR_RETURN(b, cast(ctx, node, b, theta->getType()));
  IMatrixMultiplyLayer* mm =
      ctx.network().addMatrixMultiply(*b, MatrixOperation::kNONE, *theta, MatrixOperation::kTRANSPOSE);
  KO_RETURN_IF_ERROR(ctx.check(mm, node, "affine_grid"));
  Dims out{r + 2, {}};
  out.d[0] = size[0];
  for (int32_t i = 0; i < r; ++i) out.d[1 + i] = size[static_cast<size_t>(2 + i)];
  out.d[r + 1] = r;
  KO_ASSIGN_OR_RETURN(ITensor * y, reshape(ctx, node, mm->getOutput(0), out, false));
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "AffineGrid", importAffineGrid);

}  // namespace
}  // namespace kiln::onnx
