// Shape inference of Attention (fused by builder/passes/fuse_attention.cc): softmax(scale * q k^T + mask) v with
// MatrixMultiply's batch broadcasting (layout 0), or on [B, S, H, D] / [S, B, H, D] operands, maybe packed in one
// tensor (layouts 1, 2); the mask broadcasts to the scores ([.., Sq, Skv], or [B, H, Sq, Skv]) without enlarging
// them.
#include "core/broadcast.h"
#include "ir/attention_layout.h"
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

// Known extents that differ (unknown ones are checked when they are known).
bool differ(int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; }

// The known one of extents that do not differ (-1 when none is known).
int64_t known(int64_t a, int64_t b, int64_t c) { return a >= 0 ? a : b >= 0 ? b : c; }

// The mask broadcasts to `scores` without enlarging them.
Status checkMask(InferContext const& ctx, Dims const& scores) {
  if (!ctx.present(3)) return Status::ok();
  Dims const& m = ctx.in[3].shape;
  bool ok = m.nbDims <= scores.nbDims;
  for (int32_t i = 0; ok && i < m.nbDims; ++i) {
    int64_t md = m.d[i], sd = scores.d[scores.nbDims - m.nbDims + i];
    if (md != 1 && differ(md, sd)) ok = false;
    if (md > 1 && sd == 1) ok = false;
  }
  if (!ok) return ctx.error("mask ", dimsToString(m), " does not broadcast to the scores ", dimsToString(scores));
  return Status::ok();
}

// Layouts 1 (BSHD) and 2 (SBHD): q, k, v [B, S, H, D] or [S, B, H, D] (or packed in input 0, [B, S, 3, H, D] or
// [S, B, 3, H, D]) -> y [B, Sq, H, Dv] or [Sq, B, H, Dv]; no batch broadcast.
Status inferHeadMajor(InferContext& ctx, DataType t, int64_t layout, bool packed) {
  std::string const name = attentionLayoutName(layout, packed);
  if (ctx.node.attrs.getInt("k_transposed", 0) != 0) return ctx.error(name, " takes k untransposed");
  int64_t e[3][4];
  if (packed) {
    Dims const& p = ctx.in[0].shape;
    if (!attentionOperandDims(layout, true, p, e[0]))
      return ctx.error(name, ": input 0 ", dimsToString(p), " needs rank 5 (",
                       layout == kAttentionLayoutSbhd ? "[S, B, 3, H, D]" : "[B, S, 3, H, D]", ")");
    if (p.d[2] >= 0 && p.d[2] != 3)
      return ctx.error(name, ": input 0 ", dimsToString(p), " has ", p.d[2], " in dim 2, not 3 (q, k, v)");
    for (int32_t i = 0; i < 4; ++i) e[1][i] = e[2][i] = e[0][i];
  } else {
    for (size_t i = 0; i < 3; ++i)
      if (!attentionOperandDims(layout, false, ctx.in[i].shape, e[i]))
        return ctx.error(name, ": input ", i, " ", dimsToString(ctx.in[i].shape), " needs rank 4 (",
                         layout == kAttentionLayoutSbhd ? "[S, B, H, D]" : "[B, S, H, D]", ")");
  }
  int32_t const batchDim = layout == kAttentionLayoutSbhd ? 1 : 0, seqDim = 1 - batchDim;
  auto const shapes = [&] {
    return strCat("q ", dimsToString(ctx.in[0].shape), ", k ", dimsToString(ctx.in[1].shape), " and v ",
                  dimsToString(ctx.in[2].shape));
  };
  // e[i] is (B, S, H, D) of q, k, v.
  if (differ(e[0][0], e[1][0]) || differ(e[0][0], e[2][0]) || differ(e[1][0], e[2][0]))
    return ctx.error(name, ": ", shapes(), " differ in the batch dim (dim ", batchDim, ")");
  if (differ(e[0][2], e[1][2]) || differ(e[0][2], e[2][2]) || differ(e[1][2], e[2][2]))
    return ctx.error(name, ": ", shapes(), " differ in the head count (dim 2)");
  if (differ(e[0][3], e[1][3])) return ctx.error(name, ": ", shapes(), " differ in the head dim (dim 3)");
  if (differ(e[1][1], e[2][1]))
    return ctx.error(name, ": k ", dimsToString(ctx.in[1].shape), " and v ", dimsToString(ctx.in[2].shape),
                     " differ in the key count (dim ", seqDim, ")");
  int64_t const b = known(e[0][0], e[1][0], e[2][0]), h = known(e[0][2], e[1][2], e[2][2]);
  KILN_RETURN_IF_ERROR(checkMask(ctx, makeDims({b, h, e[0][1], known(e[1][1], e[2][1], -1)})));
  ctx.out[0] = {t, attentionOutputDims(layout, b, e[0][1], h, e[2][3])};
  return Status::ok();
}

Status inferAttention(InferContext& ctx) {
  int64_t const packedAttr = ctx.node.attrs.getInt("packed_qkv", 0);
  if (packedAttr != 0 && packedAttr != 1) return ctx.error("packed_qkv is ", packedAttr, "; 0 and 1 exist");
  bool const packed = packedAttr == 1;
  if (packed) {
    if (ctx.numInputs() > 4 || !ctx.present(0) || ctx.present(1) || ctx.present(2))
      return ctx.error(
          "packed_qkv 1 takes q, k and v packed in input 0, inputs 1 and 2 absent, then an optional "
          "mask");
  } else if (ctx.numInputs() < 3 || ctx.numInputs() > 4 || !ctx.present(0) || !ctx.present(1) || !ctx.present(2)) {
    return ctx.error("needs inputs q, k and v, then an optional mask");
  }
  DataType const t = ctx.in[0].dtype;
  if (!isFloatType(t) || t == DataType::kFP8) return ctx.error("q must be a float tensor, not ", dataTypeName(t));
  for (size_t i = 1; i < ctx.numInputs(); ++i)
    if (ctx.present(i) && ctx.in[i].dtype != t)
      return ctx.error("input ", i, " is ", dataTypeName(ctx.in[i].dtype), ", q is ", dataTypeName(t),
                       ": all inputs have one type");
  int64_t const layout = ctx.node.attrs.getInt("layout", 0);
  if (isHeadMajorAttentionLayout(layout)) return inferHeadMajor(ctx, t, layout, packed);
  if (layout != 0)
    return ctx.error("layout is ", layout, "; 0 ([.., S, D]), 1 ([B, S, H, D]) and 2 ([S, B, H, D]) exist");
  if (packed) return ctx.error("packed_qkv 1 needs layout 1 or 2, not 0");
  Dims const& q = ctx.in[0].shape;
  Dims const& k = ctx.in[1].shape;
  Dims const& v = ctx.in[2].shape;
  for (size_t i = 0; i < 3; ++i)
    if (ctx.in[i].shape.nbDims < 2)
      return ctx.error("input ", i, " ", dimsToString(ctx.in[i].shape), " needs rank >= 2");
  bool const kT = ctx.node.attrs.getInt("k_transposed", 0) != 0;
  int32_t const rq = q.nbDims, rk = k.nbDims, rv = v.nbDims;
  int64_t const sq = q.d[rq - 2], d = q.d[rq - 1];
  int64_t const skv = kT ? k.d[rk - 1] : k.d[rk - 2];
  int64_t const dk = kT ? k.d[rk - 2] : k.d[rk - 1];
  if (differ(d, dk))
    return ctx.error("q ", dimsToString(q), " and k ", dimsToString(k), (kT ? " (transposed)" : ""),
                     " differ in the head dim");
  if (differ(skv, v.d[rv - 2]))
    return ctx.error("k ", dimsToString(k), (kT ? " (transposed)" : ""), " and v ", dimsToString(v),
                     " differ in the key count");
  Result<Dims> batch = broadcastShapes(leadingDims(q, rq - 2), leadingDims(k, rk - 2));
  if (batch.isOk()) batch = broadcastShapes(*batch, leadingDims(v, rv - 2));
  if (!batch.isOk())
    return ctx.error("leading dims of q ", dimsToString(q), ", k ", dimsToString(k), " and v ", dimsToString(v),
                     " do not broadcast");
  Dims y = *batch;
  if (y.nbDims + 2 > Dims::MAX_DIMS) return ctx.error("output rank exceeds ", Dims::MAX_DIMS);
  Dims scores = y;
  scores.d[scores.nbDims++] = sq;
  scores.d[scores.nbDims++] = skv;
  KILN_RETURN_IF_ERROR(checkMask(ctx, scores));
  y.d[y.nbDims++] = sq;
  y.d[y.nbDims++] = v.d[rv - 1];
  ctx.out[0] = {t, y};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kAttention, inferAttention);

}  // namespace kiln::ir
