// Attention on the GPU (the node fuse_attention makes): one flash-attention kernel per launch, fp16/bf16 on
// tensor cores, fp32 with FMA; batch dims broadcast through strides, the additive mask read with broadcast strides;
// layout 1 ([B, S, H, D] operands) as batch dims (B, H) with row strides.
#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/cuda_util.h"

namespace kiln::cuda {

namespace {

// Element strides of the dims of a row-major `shape`, right-aligned to `rank` dims; 0 where `shape` has 1 or
// lacks the dim (broadcast). `count` leading dims of `shape` are taken (its trailing ones still make the strides).
void alignedStrides(Dims const& shape, int32_t count, int32_t rank, int64_t* out) {
  int64_t stride = 1;
  for (int32_t i = shape.nbDims - 1; i >= 0; --i) {
    if (i < count) {
      int32_t const o = rank - count + i;
      if (o >= 0) out[o] = shape.d[i] == 1 ? 0 : stride;
    }
    stride *= shape.d[i];
  }
}

// What layout 1 takes beyond the common checks: q [B, Sq, H, D], k [B, Skv, H, D], v [B, Skv, H, Dv], y
// [B, Sq, H, Dv] (unknown extents pass here and are checked at enqueue), a mask of rank <= 4.
std::string bshdRefusal(std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
  Dims const& q = in[0].shape;
  Dims const& k = in[1].shape;
  Dims const& v = in[2].shape;
  Dims const& y = out[0].shape;
  if (q.nbDims != 4 || k.nbDims != 4 || v.nbDims != 4 || y.nbDims != 4) return "layout 1 needs rank-4 q, k, v and y";
  auto differ = [](int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; };
  if (differ(q.d[0], k.d[0]) || differ(q.d[0], v.d[0]) || differ(q.d[2], k.d[2]) || differ(q.d[2], v.d[2]) ||
      differ(q.d[3], k.d[3]) || differ(k.d[1], v.d[1]))
    return "layout 1: q, k and v are not [B, Sq, H, D], [B, Skv, H, D], [B, Skv, H, Dv]";
  if (!attentionHeadDimsOk(q.d[3], v.d[3]))
    return strCat("head dims ", q.d[3], " and ", v.d[3], " (multiples of 8 up to ", kAttentionMaxHeadDim, " run)");
  if (in.size() == 4 && in[3].shape.nbDims > 4) return "a mask of higher rank than the scores";
  int64_t const sq = q.d[1];
  if (sq >= 0 && (sq + kAttentionRowsPerTile - 1) / kAttentionRowsPerTile > kAttentionMaxRowTiles)
    return strCat(sq, " query rows");
  int64_t const batch = q.d[0] >= 0 && q.d[2] >= 0 ? q.d[0] * q.d[2] : 0;
  if (batch > 0x7fffffff) return strCat(batch, " batch entries");
  // One CTA per (batch entry, query tile), all in one grid dimension.
  if (batch > 0 && sq > 0 && batch * ((sq + kAttentionRowsPerTile - 1) / kAttentionRowsPerTile) > 0x7fffffff)
    return strCat(batch, " batch entries of ", sq, " query rows");
  return {};
}

// What the kernels take, from the layout, input and output shapes and types; the reason otherwise.
std::string refusal(int64_t layout, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
  if (in.size() < 3 || in.size() > 4 || out.size() != 1) return "needs q, k, v, an optional mask and one output";
  DataType const t = out[0].dtype;
  if (!isCudaFloat(t)) return strCat("no kernel for ", dataTypeName(t));
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i].shape.nbDims >= 0 && in[i].dtype != t) return "inputs and output differ in type";
  for (size_t i = 0; i < 3; ++i)
    if (in[i].shape.nbDims < 2) return "q, k and v need rank >= 2";
  if (layout == 1) return bshdRefusal(in, out);
  if (layout != 0) return strCat("layout ", layout, " (0 and 1 exist)");
  Dims const& q = in[0].shape;
  Dims const& v = in[2].shape;
  Dims const& y = out[0].shape;
  if (!attentionHeadDimsOk(q.d[q.nbDims - 1], v.d[v.nbDims - 1]))
    return strCat("head dims ", q.d[q.nbDims - 1], " and ", v.d[v.nbDims - 1], " (multiples of 8 up to ",
                  kAttentionMaxHeadDim, " run)");
  if (y.nbDims < 2 || y.nbDims - 2 > kAttentionMaxBatchDims)
    return strCat("more than ", kAttentionMaxBatchDims, " leading dims");
  if (in.size() == 4 && in[3].shape.nbDims > y.nbDims) return "a mask of higher rank than the scores";
  int64_t const sq = y.d[y.nbDims - 2];
  if (sq >= 0 && (sq + kAttentionRowsPerTile - 1) / kAttentionRowsPerTile > kAttentionMaxRowTiles)
    return strCat(sq, " query rows");
  int64_t const batch = volume(y) >= 0 && sq > 0 && y.d[y.nbDims - 1] > 0 ? volume(y) / (sq * y.d[y.nbDims - 1]) : 0;
  if (batch > 0x7fffffff) return strCat(batch, " batch entries");
  // One CTA per (batch entry, query tile), all in one grid dimension.
  if (batch > 0 && sq > 0 && batch * ((sq + kAttentionRowsPerTile - 1) / kAttentionRowsPerTile) > 0x7fffffff)
    return strCat(batch, " batch entries of ", sq, " query rows");
  return {};
}

class AttentionKernel final : public backends::Kernel {
 public:
  AttentionKernel(std::string who, float scale, bool kTransposed, bool nanToZero, int64_t layout)
      : who_(std::move(who)), scale_(scale), kTransposed_(kTransposed), nanToZero_(nanToZero), layout_(layout) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    std::vector<ir::TensorInfo> in, out;
    for (auto const& t : ctx.inputs) in.push_back({t.dtype, t.shape});  // absent: nbDims -1
    for (auto const& t : ctx.outputs) out.push_back({t.dtype, t.shape});
    std::string why = refusal(layout_, in, out);
    if (!why.empty()) return unsupported(who_, ": ", why);
    if (layout_ == 1) return enqueueBshd(ctx);
    auto const& q = ctx.inputs[0];
    auto const& k = ctx.inputs[1];
    auto const& v = ctx.inputs[2];
    auto const* mask = ctx.inputs.size() > 3 && ctx.inputs[3].shape.nbDims >= 0 ? &ctx.inputs[3] : nullptr;
    auto const& y = ctx.outputs[0];
    int32_t const rank = y.shape.nbDims;
    AttentionArgs a;
    a.q = q.data;
    a.k = k.data;
    a.v = v.data;
    a.mask = mask ? mask->data : nullptr;
    a.y = y.data;
    a.sq = q.shape.d[q.shape.nbDims - 2];
    a.d = q.shape.d[q.shape.nbDims - 1];
    a.skv = v.shape.d[v.shape.nbDims - 2];
    a.dv = v.shape.d[v.shape.nbDims - 1];
    int64_t const kd = kTransposed_ ? k.shape.d[k.shape.nbDims - 2] : k.shape.d[k.shape.nbDims - 1];
    int64_t const kn = kTransposed_ ? k.shape.d[k.shape.nbDims - 1] : k.shape.d[k.shape.nbDims - 2];
    if (kd != a.d || kn != a.skv || y.shape.d[rank - 2] != a.sq || y.shape.d[rank - 1] != a.dv)
      return invalidArgument(who_, ": q ", dimsToString(q.shape), ", k ", dimsToString(k.shape), ", v ",
                             dimsToString(v.shape), " do not give y ", dimsToString(y.shape));
    a.batchRank = rank - 2;
    a.batchCount = 1;
    for (int32_t i = 0; i < a.batchRank; ++i) {
      a.batch[i] = y.shape.d[i];
      a.batchCount *= y.shape.d[i];
    }
    alignedStrides(q.shape, q.shape.nbDims - 2, a.batchRank, a.qStride);
    alignedStrides(k.shape, k.shape.nbDims - 2, a.batchRank, a.kStride);
    alignedStrides(v.shape, v.shape.nbDims - 2, a.batchRank, a.vStride);
    if (mask) {
      int64_t ms[kAttentionMaxBatchDims + 2] = {};
      alignedStrides(mask->shape, mask->shape.nbDims, rank, ms);
      for (int32_t i = 0; i < a.batchRank; ++i) a.maskStride[i] = ms[i];
      a.maskRowStride = ms[rank - 2];
      a.maskColStride = ms[rank - 1];
    }
    return launch(a, y, ctx);
  }

 private:
  Status launch(AttentionArgs& a, backends::TensorView const& y, backends::LaunchContext const& ctx) const {
    a.scale = scale_;
    a.kTransposed = kTransposed_;
    a.nanToZero = nanToZero_;
    if (volume(y.shape) == 0) return Status::ok();
    if (!launchAttention(static_cast<int32_t>(y.dtype), a, streamOf(ctx)))
      return unsupported(who_, ": no GPU attention for ", dataTypeName(y.dtype), " with these shapes");
    return launchStatus(who_);
  }

  // Layout 1: batch dims (B, H); each operand's (b, h) entry starts at b * (S * H * D) + h * D and its rows are
  // H * D apart (likewise y with Dv); the mask broadcast to the scores [B, H, Sq, Skv] as in layout 0.
  Status enqueueBshd(backends::LaunchContext const& ctx) const {
    auto const& q = ctx.inputs[0];
    auto const& k = ctx.inputs[1];
    auto const& v = ctx.inputs[2];
    auto const* mask = ctx.inputs.size() > 3 && ctx.inputs[3].shape.nbDims >= 0 ? &ctx.inputs[3] : nullptr;
    auto const& y = ctx.outputs[0];
    int64_t const b = q.shape.d[0], sq = q.shape.d[1], h = q.shape.d[2], d = q.shape.d[3];
    int64_t const skv = k.shape.d[1], dv = v.shape.d[3];
    if (kTransposed_) return invalidArgument(who_, ": layout 1 (BSHD) takes k untransposed");
    if (k.shape.d[0] != b || k.shape.d[2] != h || k.shape.d[3] != d || v.shape.d[0] != b || v.shape.d[1] != skv ||
        v.shape.d[2] != h || !dimsEqual(y.shape, makeDims({b, sq, h, dv})))
      return invalidArgument(who_, ": layout 1 (BSHD): q ", dimsToString(q.shape), ", k ", dimsToString(k.shape),
                             ", v ", dimsToString(v.shape),
                             " are not [B, Sq, H, D], [B, Skv, H, D], [B, Skv, H, Dv] "
                             "giving y ",
                             dimsToString(y.shape));
    AttentionArgs a;
    a.q = q.data;
    a.k = k.data;
    a.v = v.data;
    a.mask = mask ? mask->data : nullptr;
    a.y = y.data;
    a.sq = sq;
    a.skv = skv;
    a.d = d;
    a.dv = dv;
    a.batchRank = 2;
    a.batch[0] = b;
    a.batch[1] = h;
    a.batchCount = b * h;
    a.qStride[0] = sq * h * d;
    a.qStride[1] = d;
    a.kStride[0] = skv * h * d;
    a.kStride[1] = d;
    a.vStride[0] = skv * h * dv;
    a.vStride[1] = dv;
    a.yStride[0] = sq * h * dv;
    a.yStride[1] = dv;
    a.yStrided = true;
    a.qRowStride = h * d;
    a.kRowStride = h * d;
    a.vRowStride = h * dv;
    a.yRowStride = h * dv;
    if (mask) {
      Dims const scores = makeDims({b, h, sq, skv});
      bool ok = mask->shape.nbDims <= 4;
      for (int32_t i = 0; ok && i < mask->shape.nbDims; ++i) {
        int64_t const m = mask->shape.d[i], s = scores.d[4 - mask->shape.nbDims + i];
        ok = m == 1 || m == s;
      }
      if (!ok)
        return invalidArgument(who_, ": mask ", dimsToString(mask->shape), " does not broadcast to the scores ",
                               dimsToString(scores));
      int64_t ms[4] = {};
      alignedStrides(mask->shape, mask->shape.nbDims, 4, ms);
      a.maskStride[0] = ms[0];
      a.maskStride[1] = ms[1];
      a.maskRowStride = ms[2];
      a.maskColStride = ms[3];
    }
    return launch(a, y, ctx);
  }

  std::string who_;
  float scale_;
  bool kTransposed_;
  bool nanToZero_;
  int64_t layout_;
};

backends::Tactic makeAttention() {
  backends::Tactic t;
  t.name = "attention_cuda_flash";
  t.op = ir::OpType::kAttention;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    return refusal(node.attrs.getInt("layout", 0), in, out).empty();
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    int64_t const layout = node.attrs.getInt("layout", 0);
    if (layout != 0 && layout != 1) return invalidArgument(node.describe(), ": layout ", layout, " (0 and 1 exist)");
    return std::unique_ptr<backends::Kernel>(new AttentionKernel(
        node.describe(), static_cast<float>(node.attrs.getFloat("scale", 1.0)),
        node.attrs.getInt("k_transposed", 0) != 0, node.attrs.getInt("nan_to_zero", 0) != 0, layout));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeAttention);

}  // namespace
}  // namespace kiln::cuda
