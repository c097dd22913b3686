// Reference kernel of Attention: softmax(scale * q k^T + mask) v in fp64, the unfused layers' math (softmax with
// max subtraction, NaN/Inf as SoftMax gives them, NaN probabilities replaced by 0 with nan_to_zero); operands
// [.., S, D] (layout 0), [B, S, H, D] (layout 1) or [S, B, H, D] (layout 2), layouts 1 and 2 also with q, k, v
// packed in one tensor.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/reference/reference_util.h"
#include "core/broadcast.h"
#include "ir/attention_layout.h"

namespace kiln::backends::reference {
namespace {

using ir::OpType;

struct AttentionParams {
  std::string who;
  double scale = 1.0;
  bool kTransposed = false;
  bool nanToZero = false;
  int64_t layout = 0;
  bool packed = false;  // packed_qkv 1: q, k, v in input 0
};

// One batch entry (one (batch, head) pair): where its q, k, v, mask and y elements are. Row r, column c of q is
// q[qBase + r * qRow + c]; likewise k (k[kBase + c * kRow + r] when transposed), v and y; the mask's (r, c) is
// mask[maskBase + r * maskRow + c * maskCol].
struct Entry {
  int64_t qBase = 0, qRow = 0, kBase = 0, kRow = 0, vBase = 0, vRow = 0, yBase = 0, yRow = 0;
  int64_t maskBase = 0, maskRow = 0, maskCol = 0;
};

// The sq query rows of one batch entry, exactly as the unfused layers compute them (a NaN max stays NaN).
void attendEntry(AttentionParams const& ap, Entry const& e, int64_t sq, int64_t skv, int64_t d, int64_t dv,
                 std::vector<double> const& qd, std::vector<double> const& kd, std::vector<double> const& vd,
                 double const* md, TensorView const& y) {
  std::vector<double> p(static_cast<size_t>(skv));
  std::vector<double> acc(static_cast<size_t>(dv));
  for (int64_t i = 0; i < sq; ++i) {
    double const* pq = qd.data() + e.qBase + i * e.qRow;
    double mx = -INFINITY;
    for (int64_t j = 0; j < skv; ++j) {
      double s = 0.0;
      for (int64_t t = 0; t < d; ++t)
        s += pq[t] * (ap.kTransposed ? kd[static_cast<size_t>(e.kBase + t * e.kRow + j)]
                                     : kd[static_cast<size_t>(e.kBase + j * e.kRow + t)]);
      s *= ap.scale;
      if (md) s += md[e.maskBase + i * e.maskRow + j * e.maskCol];
      p[j] = s;
      if ((s > mx || std::isnan(s)) && !std::isnan(mx)) mx = s;
    }
    double sum = 0.0;
    for (int64_t j = 0; j < skv; ++j) {
      p[j] = std::exp(p[j] - mx);
      sum += p[j];
    }
    for (int64_t j = 0; j < skv; ++j) {
      p[j] /= sum;
      if (ap.nanToZero && std::isnan(p[j])) p[j] = 0.0;
    }
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t j = 0; j < skv; ++j) {
      double const* pv = vd.data() + e.vBase + j * e.vRow;
      for (int64_t c = 0; c < dv; ++c) acc[c] += p[j] * pv[c];
    }
    for (int64_t c = 0; c < dv; ++c) storeFromDouble(y, e.yBase + i * e.yRow + c, acc[c]);
  }
}

std::vector<double> loadAll(TensorView const& v) {
  std::vector<double> r(static_cast<size_t>(std::max<int64_t>(0, v.count())));
  for (size_t i = 0; i < r.size(); ++i) r[i] = loadAsDouble(v, static_cast<int64_t>(i));
  return r;
}

Status runHeadMajor(AttentionParams const& ap, LaunchContext const& ctx);

Status runAttention(AttentionParams const& ap, LaunchContext const& ctx) {
  if (ctx.outputs.size() != 1) return invalidArgument(ap.who, ": needs one output");
  if (ir::isHeadMajorAttentionLayout(ap.layout)) return runHeadMajor(ap, ctx);
  if (ap.layout != 0) return invalidArgument(ap.who, ": layout ", ap.layout, " (0, 1 and 2 exist)");
  if (ap.packed) return invalidArgument(ap.who, ": packed_qkv 1 needs layout 1 or 2, not 0");
  if (ctx.inputs.size() < 3) return invalidArgument(ap.who, ": needs q, k and v");
  TensorView const& q = ctx.inputs[0];
  TensorView const& k = ctx.inputs[1];
  TensorView const& v = ctx.inputs[2];
  TensorView const* mask = ctx.inputs.size() > 3 && ctx.inputs[3].data ? &ctx.inputs[3] : nullptr;
  TensorView const& y = ctx.outputs[0];
  int32_t const rq = q.shape.nbDims, rk = k.shape.nbDims, rv = v.shape.nbDims, ry = y.shape.nbDims;
  if (rq < 2 || rk < 2 || rv < 2 || ry < 2) return invalidArgument(ap.who, ": q, k, v and y need rank >= 2");
  int64_t const sq = q.shape.d[rq - 2], d = q.shape.d[rq - 1];
  int64_t const skv = ap.kTransposed ? k.shape.d[rk - 1] : k.shape.d[rk - 2];
  int64_t const dk = ap.kTransposed ? k.shape.d[rk - 2] : k.shape.d[rk - 1];
  int64_t const dv = v.shape.d[rv - 1];
  Dims const batch = leadingDims(y.shape, ry - 2);
  if (dk != d || v.shape.d[rv - 2] != skv || y.shape.d[ry - 2] != sq || y.shape.d[ry - 1] != dv ||
      !broadcastsTo(leadingDims(q.shape, rq - 2), batch) || !broadcastsTo(leadingDims(k.shape, rk - 2), batch) ||
      !broadcastsTo(leadingDims(v.shape, rv - 2), batch))
    return invalidArgument(ap.who, ": q ", dimsToString(q.shape), ", k ", dimsToString(k.shape), ", v ",
                           dimsToString(v.shape), " do not give y ", dimsToString(y.shape));
  Dims scores = batch;
  scores.d[scores.nbDims++] = sq;
  scores.d[scores.nbDims++] = skv;
  if (mask && !broadcastsTo(mask->shape, scores))
    return invalidArgument(ap.who, ": mask ", dimsToString(mask->shape), " does not broadcast to the scores ",
                           dimsToString(scores));
  std::vector<int64_t> const sqb = broadcastStrides(leadingDims(q.shape, rq - 2), batch);
  std::vector<int64_t> const skb = broadcastStrides(leadingDims(k.shape, rk - 2), batch);
  std::vector<int64_t> const svb = broadcastStrides(leadingDims(v.shape, rv - 2), batch);
  std::vector<int64_t> ms = mask ? broadcastStrides(mask->shape, scores) : std::vector<int64_t>(scores.nbDims, 0);
  int64_t const maskRow = ms[static_cast<size_t>(scores.nbDims - 2)], maskCol = ms.back();
  ms.resize(static_cast<size_t>(batch.nbDims));
  std::vector<double> const qd = loadAll(q), kd = loadAll(k), vd = loadAll(v);
  std::vector<double> const md = mask ? loadAll(*mask) : std::vector<double>{};
  forEachIndex<4>(batch, {sqb, skb, svb, ms}, [&](int64_t bi, std::array<int64_t, 4> const& off) {
    Entry e;
    e.qBase = off[0] * sq * d;
    e.qRow = d;
    e.kBase = off[1] * skv * d;
    e.kRow = ap.kTransposed ? skv : d;
    e.vBase = off[2] * skv * dv;
    e.vRow = dv;
    e.yBase = bi * sq * dv;
    e.yRow = dv;
    e.maskBase = off[3];
    e.maskRow = maskRow;
    e.maskCol = maskCol;
    attendEntry(ap, e, sq, skv, d, dv, qd, kd, vd, mask ? md.data() : nullptr, y);
  });
  return Status::ok();
}

// Layouts 1 and 2: q, k, v [B, S, H, D] or [S, B, H, D], or packed in input 0 ([B, S, 3, H, D] or
// [S, B, 3, H, D]); y likewise; the mask broadcasts to the scores [B, H, Sq, Skv].
Status runHeadMajor(AttentionParams const& ap, LaunchContext const& ctx) {
  std::string const name = ir::attentionLayoutName(ap.layout, ap.packed);
  if (ap.kTransposed) return invalidArgument(ap.who, ": ", name, " takes k untransposed");
  if (ctx.inputs.empty() || !ctx.inputs[0].data || (!ap.packed && ctx.inputs.size() < 3))
    return invalidArgument(ap.who, ": ", name, " needs ", ap.packed ? "the packed q/k/v" : "q, k and v");
  TensorView const& q = ctx.inputs[0];
  TensorView const& k = ap.packed ? q : ctx.inputs[1];
  TensorView const& v = ap.packed ? q : ctx.inputs[2];
  TensorView const* mask = ctx.inputs.size() > 3 && ctx.inputs[3].data ? &ctx.inputs[3] : nullptr;
  TensorView const& y = ctx.outputs[0];
  KILN_ASSIGN_OR_RETURN(ir::AttentionHeadGeometry const g,
                        ir::attentionHeadGeometry(ap.who, ap.layout, ap.packed, q.shape, k.shape, v.shape, y.shape));
  Dims const scores = makeDims({g.batch, g.heads, g.sq, g.skv});
  if (mask && !broadcastsTo(mask->shape, scores))
    return invalidArgument(ap.who, ": mask ", dimsToString(mask->shape), " does not broadcast to the scores ",
                           dimsToString(scores));
  std::vector<int64_t> const ms = mask ? broadcastStrides(mask->shape, scores) : std::vector<int64_t>(4, 0);
  // Packed: one load serves q, k and v.
  std::vector<double> const qd = loadAll(q);
  std::vector<double> const kd = ap.packed ? std::vector<double>{} : loadAll(k);
  std::vector<double> const vd = ap.packed ? std::vector<double>{} : loadAll(v);
  std::vector<double> const md = mask ? loadAll(*mask) : std::vector<double>{};
  auto const at = [](ir::AttentionOperandView const& o, int64_t bi, int64_t hi) {
    return o.offset + bi * o.batchStride + hi * o.headStride;
  };
  for (int64_t bi = 0; bi < g.batch; ++bi)
    for (int64_t hi = 0; hi < g.heads; ++hi) {
      Entry e;
      e.qBase = at(g.q, bi, hi);
      e.qRow = g.q.rowStride;
      e.kBase = at(g.k, bi, hi);
      e.kRow = g.k.rowStride;
      e.vBase = at(g.v, bi, hi);
      e.vRow = g.v.rowStride;
      e.yBase = at(g.y, bi, hi);
      e.yRow = g.y.rowStride;
      e.maskBase = bi * ms[0] + hi * ms[1];
      e.maskRow = ms[2];
      e.maskCol = ms[3];
      attendEntry(ap, e, g.sq, g.skv, g.d, g.dv, qd, ap.packed ? qd : kd, ap.packed ? qd : vd,
                  mask ? md.data() : nullptr, y);
    }
  return Status::ok();
}

Tactic attentionTactic() {
  return makeTactic(
      "attention_reference", OpType::kAttention,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        AttentionParams ap;
        ap.who = node.describe();
        ap.scale = node.attrs.getFloat("scale", 1.0);
        ap.kTransposed = node.attrs.getInt("k_transposed", 0) != 0;
        ap.nanToZero = node.attrs.getInt("nan_to_zero", 0) != 0;
        ap.layout = node.attrs.getInt("layout", 0);
        if (ap.layout != 0 && !ir::isHeadMajorAttentionLayout(ap.layout))
          return invalidArgument(ap.who, ": layout ", ap.layout, " (0, 1 and 2 exist)");
        int64_t const packed = node.attrs.getInt("packed_qkv", 0);
        if (packed != 0 && packed != 1) return invalidArgument(ap.who, ": packed_qkv ", packed, " (0 and 1 exist)");
        ap.packed = packed == 1;
        if (ap.packed && ap.layout == 0) return invalidArgument(ap.who, ": packed_qkv 1 needs layout 1 or 2, not 0");
        return makeKernel([ap](LaunchContext const& ctx) { return runAttention(ap, ctx); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        if (in.empty() || in.size() > 4 || out.size() != 1 || !isComputeFloat(out[0].dtype)) return false;
        for (auto const& t : in)
          if (t.shape.nbDims >= 0 && !isComputeFloat(t.dtype)) return false;
        return true;
      });
}

KILN_REGISTER_TACTIC(attentionTactic);

}  // namespace
}  // namespace kiln::backends::reference
