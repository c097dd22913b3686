// Head-major Attention layouts (1: [B, S, H, D], 2: [S, B, H, D], either with q, k, v packed in one tensor): the
// operands' extents and their memory views, shared by shape inference and the kernels.
#include "ir/attention_layout.h"

namespace kiln::ir {

std::string attentionLayoutName(int64_t layout, bool packed) {
  char const* order = layout == kAttentionLayoutSbhd ? "SBHD" : layout == kAttentionLayoutBshd ? "BSHD" : "?";
  return strCat("layout ", layout, " (", order, packed ? ", packed q/k/v" : "", ")");
}

bool attentionOperandDims(int64_t layout, bool packed, Dims const& t, int64_t out[4]) {
  if (t.nbDims != (packed ? 5 : 4)) return false;
  bool const seqFirst = layout == kAttentionLayoutSbhd;
  out[0] = t.d[seqFirst ? 1 : 0];
  out[1] = t.d[seqFirst ? 0 : 1];
  out[2] = t.d[t.nbDims - 2];
  out[3] = t.d[t.nbDims - 1];
  return true;
}

Dims attentionOutputDims(int64_t layout, int64_t b, int64_t sq, int64_t h, int64_t dv) {
  return layout == kAttentionLayoutSbhd ? makeDims({sq, b, h, dv}) : makeDims({b, sq, h, dv});
}

namespace {

// The view of a row-major tensor `t` (rank 4 [.., .., H, D], or rank 5 [.., .., 3, H, D] when packed, taking
// slot `slot` of the 3) whose batch axis is `batchAxis` and sequence axis the other of the first two.
AttentionOperandView viewOf(Dims const& t, bool packed, int32_t batchAxis, int64_t slot) {
  int64_t strides[5] = {};
  int64_t s = 1;
  for (int32_t i = t.nbDims - 1; i >= 0; --i) {
    strides[i] = s;
    s *= t.d[i];
  }
  AttentionOperandView v;
  v.offset = packed ? slot * strides[2] : 0;
  v.batchStride = strides[batchAxis];
  v.rowStride = strides[1 - batchAxis];
  v.headStride = strides[t.nbDims - 2];
  return v;
}

}  // namespace

Result<AttentionHeadGeometry> attentionHeadGeometry(std::string const& who, int64_t layout, bool packed, Dims const& q,
                                                    Dims const& k, Dims const& v, Dims const& y) {
  std::string const name = attentionLayoutName(layout, packed);
  if (!isHeadMajorAttentionLayout(layout)) return invalidArgument(who, ": ", name, " is not a head-major layout");
  bool const seqFirst = layout == kAttentionLayoutSbhd;
  int64_t qe[4], ke[4], ve[4];
  if (packed) {
    if (!attentionOperandDims(layout, true, q, qe) || y.nbDims != 4)
      return invalidArgument(who, ": ", name, " needs the packed q/k/v of rank 5 and y of rank 4, not qkv ",
                             dimsToString(q), ", y ", dimsToString(y));
    for (int32_t i = 0; i < 4; ++i) ke[i] = ve[i] = qe[i];
  } else if (!attentionOperandDims(layout, false, q, qe) || !attentionOperandDims(layout, false, k, ke) ||
             !attentionOperandDims(layout, false, v, ve) || y.nbDims != 4) {
    return invalidArgument(who, ": ", name, " needs q, k, v and y of rank 4, not q ", dimsToString(q), ", k ",
                           dimsToString(k), ", v ", dimsToString(v), ", y ", dimsToString(y));
  }
  AttentionHeadGeometry g;
  g.batch = qe[0];
  g.sq = qe[1];
  g.heads = qe[2];
  g.d = qe[3];
  g.skv = ke[1];
  g.dv = ve[3];
  Dims const want = attentionOutputDims(layout, g.batch, g.sq, g.heads, g.dv);
  if (packed) {
    if (q.d[2] != 3 || !dimsEqual(y, want))
      return invalidArgument(who, ": ", name, ": qkv ", dimsToString(q), " is not ",
                             seqFirst ? "[S, B, 3, H, D]" : "[B, S, 3, H, D]", " giving y ", dimsToString(y));
  } else if (ke[0] != g.batch || ke[2] != g.heads || ke[3] != g.d || ve[0] != g.batch || ve[1] != g.skv ||
             ve[2] != g.heads || !dimsEqual(y, want)) {
    return invalidArgument(
        who, ": ", name, ": q ", dimsToString(q), ", k ", dimsToString(k), ", v ", dimsToString(v), " are not ",
        seqFirst ? "[Sq, B, H, D], [Skv, B, H, D], [Skv, B, H, Dv]" : "[B, Sq, H, D], [B, Skv, H, D], [B, Skv, H, Dv]",
        " giving y ", dimsToString(y));
  }
  int32_t const batchAxis = seqFirst ? 1 : 0;
  g.q = viewOf(q, packed, batchAxis, 0);
  g.k = viewOf(packed ? q : k, packed, batchAxis, 1);
  g.v = viewOf(packed ? q : v, packed, batchAxis, 2);
  g.y = viewOf(y, false, batchAxis, 0);
  return g;
}

}  // namespace kiln::ir
