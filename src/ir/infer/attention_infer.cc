// Shape inference of Attention (fused by builder/passes/fuse_attention.cc): softmax(scale * q k^T + mask) v with
// MatrixMultiply's batch broadcasting (layout 0), or on [B, S, H, D] operands (layout 1); the mask broadcasts to
// the scores ([.., Sq, Skv], or [B, H, Sq, Skv]) without enlarging them.
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Dims leadingDims(Dims const& d, int32_t n) {
  Dims r{};
  r.nbDims = n;
  for (int32_t i = 0; i < n; ++i) r.d[i] = d.d[i];
  return r;
}

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

// Layout 1 (BSHD): q [B, Sq, H, D], k [B, Skv, H, D], v [B, Skv, H, Dv] -> y [B, Sq, H, Dv]; no batch broadcast.
Status inferBshd(InferContext& ctx, DataType t) {
  if (ctx.node.attrs.getInt("k_transposed", 0) != 0) return ctx.error("layout 1 (BSHD) takes k untransposed");
  Dims const& q = ctx.in[0].shape;
  Dims const& k = ctx.in[1].shape;
  Dims const& v = ctx.in[2].shape;
  for (size_t i = 0; i < 3; ++i)
    if (ctx.in[i].shape.nbDims != 4)
      return ctx.error("layout 1 (BSHD): input ", i, " ", dimsToString(ctx.in[i].shape),
                       " needs rank 4 ([B, S, H, D])");
  auto const shapes = [&] {
    return strCat("q ", dimsToString(q), ", k ", dimsToString(k), " and v ", dimsToString(v));
  };
  if (differ(q.d[0], k.d[0]) || differ(q.d[0], v.d[0]) || differ(k.d[0], v.d[0]))
    return ctx.error("layout 1 (BSHD): ", shapes(), " differ in the batch dim (dim 0)");
  if (differ(q.d[2], k.d[2]) || differ(q.d[2], v.d[2]) || differ(k.d[2], v.d[2]))
    return ctx.error("layout 1 (BSHD): ", shapes(), " differ in the head count (dim 2)");
  if (differ(q.d[3], k.d[3])) return ctx.error("layout 1 (BSHD): ", shapes(), " differ in the head dim (dim 3)");
  if (differ(k.d[1], v.d[1]))
    return ctx.error("layout 1 (BSHD): k ", dimsToString(k), " and v ", dimsToString(v),
                     " differ in the key count (dim 1)");
  int64_t const b = known(q.d[0], k.d[0], v.d[0]), h = known(q.d[2], k.d[2], v.d[2]);
  KILN_RETURN_IF_ERROR(checkMask(ctx, makeDims({b, h, q.d[1], known(k.d[1], v.d[1], -1)})));
  ctx.out[0] = {t, makeDims({b, q.d[1], h, v.d[3]})};
  return Status::ok();
}

Status inferAttention(InferContext& ctx) {
  if (ctx.numInputs() < 3 || ctx.numInputs() > 4 || !ctx.present(0) || !ctx.present(1) || !ctx.present(2))
    return ctx.error("needs inputs q, k and v, then an optional mask");
  DataType const t = ctx.in[0].dtype;
  if (!isFloatType(t) || t == DataType::kFP8) return ctx.error("q must be a float tensor, not ", dataTypeName(t));
  for (size_t i = 1; i < ctx.numInputs(); ++i)
    if (ctx.present(i) && ctx.in[i].dtype != t)
      return ctx.error("input ", i, " is ", dataTypeName(ctx.in[i].dtype), ", q is ", dataTypeName(t),
                       ": all inputs have one type");
  int64_t const layout = ctx.node.attrs.getInt("layout", 0);
  if (layout == 1) return inferBshd(ctx, t);
  if (layout != 0) return ctx.error("layout is ", layout, "; 0 ([.., S, D]) and 1 ([B, S, H, D]) exist");
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
