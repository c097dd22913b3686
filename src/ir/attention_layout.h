// Where the operands of a head-major Attention node lie: layout 1 ([B, S, H, D]) or 2 ([S, B, H, D]), with q, k
// and v as three tensors or packed in one ([B, S, 3, H, D] / [S, B, 3, H, D], packed_qkv 1). Shape inference,
// the reference kernel and the CUDA tactic read the layouts through these functions only.
#pragma once

#include <cstdint>
#include <string>

#include "core/dims.h"
#include "core/status.h"

namespace kiln::ir {

/// The layouts' values of Attention's `layout` attribute (0 is `[.., S, D]` with batch broadcasting).
inline constexpr int64_t kAttentionLayoutBshd = 1;
inline constexpr int64_t kAttentionLayoutSbhd = 2;

/// True for layout 1 or 2, whose operands are indexed per (batch entry, head).
inline bool isHeadMajorAttentionLayout(int64_t layout) {
  return layout == kAttentionLayoutBshd || layout == kAttentionLayoutSbhd;
}

/// "layout 1 (BSHD)", "layout 2 (SBHD, packed q/k/v)", ...: how messages name a head-major layout.
std::string attentionLayoutName(int64_t layout, bool packed);

/// The extents (B, S, H, D) of one q/k/v operand of shape `t` in head-major layout `layout`: t is that operand
/// (rank 4) or, when `packed`, the packed tensor (rank 5, whose dim 2 is the q/k/v index). Unknown extents stay
/// -1. Returns false when the rank does not fit.
bool attentionOperandDims(int64_t layout, bool packed, Dims const& t, int64_t out[4]);

/// The shape of y for extents (B, Sq, H, Dv) in head-major layout `layout`.
Dims attentionOutputDims(int64_t layout, int64_t b, int64_t sq, int64_t h, int64_t dv);

/// Element offset and strides of one operand seen as [batch, head, row, column] with unit column stride.
struct AttentionOperandView {
  int64_t offset = 0;
  int64_t batchStride = 0;
  int64_t headStride = 0;
  int64_t rowStride = 0;
};

/// A head-major attention: its extents and where q, k, v and y lie.
struct AttentionHeadGeometry {
  int64_t batch = 0, heads = 0, sq = 0, skv = 0, d = 0, dv = 0;
  AttentionOperandView q, k, v, y;
};

/// The geometry of a head-major attention (layout 1 or 2) from concrete shapes: q, k and v (k and v are not read
/// when `packed`, where q is the packed tensor) and y. Fails with an invalid-argument status starting with `who`
/// and naming the layout and shapes when they do not fit it (wrong ranks, extents that differ, a packed dim that
/// is not 3, a y of another shape).
Result<AttentionHeadGeometry> attentionHeadGeometry(std::string const& who, int64_t layout, bool packed, Dims const& q,
                                                    Dims const& k, Dims const& v, Dims const& y);

}  // namespace kiln::ir
