// Attention on the GPU (the node fuse_attention makes): one flash-attention kernel per launch, fp16/bf16 on
// tensor cores, fp32 with FMA; batch dims broadcast through strides, the additive mask read with broadcast strides;
// layouts 1 and 2 ([B, S, H, D] / [S, B, H, D] operands, or q, k, v packed in one tensor) as batch dims (B, H)
// with offsets, batch/head strides and row strides (ir::attentionHeadGeometry): no kernel of their own.
#include "backends/attention_head_args.h"
#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/cuda_util.h"
#include "ir/attention_layout.h"

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

// What layouts 1 and 2 take beyond the common checks: q, k, v [B, S, H, D] / [S, B, H, D] or packed in input 0
// ([B, S, 3, H, D] / [S, B, 3, H, D]), y likewise (unknown extents pass here and are checked at enqueue), a mask of
// rank <= 4.
std::string headMajorRefusal(int64_t layout, bool packed, std::vector<ir::TensorInfo> const& in,
                             std::vector<ir::TensorInfo> const& out) {
  std::string const name = ir::attentionLayoutName(layout, packed);
  int64_t e[3][4];
  for (size_t i = 0; i < 3; ++i)
    if (!ir::attentionOperandDims(layout, packed, in[packed ? 0 : i].shape, e[i]) || out[0].shape.nbDims != 4)
      return strCat(name, packed ? " needs a rank-5 packed q/k/v and a rank-4 y" : " needs rank-4 q, k, v and y");
  auto differ = [](int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; };
  if (packed && differ(in[0].shape.d[2], 3)) return strCat(name, ": the packed dim 2 is not 3");
  if (differ(e[0][0], e[1][0]) || differ(e[0][0], e[2][0]) || differ(e[0][2], e[1][2]) || differ(e[0][2], e[2][2]) ||
      differ(e[0][3], e[1][3]) || differ(e[1][1], e[2][1]))
    return strCat(name, ": q, k and v differ in batch, heads, head dim or key count");
  if (!attentionHeadDimsOk(e[0][3], e[2][3]))
    return strCat("head dims ", e[0][3], " and ", e[2][3], " (multiples of 8 up to ", kAttentionMaxHeadDim, " run)");
  if (in.size() == 4 && in[3].shape.nbDims > 4) return "a mask of higher rank than the scores";
  int64_t const sq = e[0][1];
  if (sq >= 0 && (sq + kAttentionRowsPerTile - 1) / kAttentionRowsPerTile > kAttentionMaxRowTiles)
    return strCat(sq, " query rows");
  int64_t const batch = e[0][0] >= 0 && e[0][2] >= 0 ? e[0][0] * e[0][2] : 0;
  if (batch > 0x7fffffff) return strCat(batch, " batch entries");
  // One CTA per (batch entry, query tile), all in one grid dimension.
  if (batch > 0 && sq > 0 && batch * ((sq + kAttentionRowsPerTile - 1) / kAttentionRowsPerTile) > 0x7fffffff)
    return strCat(batch, " batch entries of ", sq, " query rows");
  return {};
}

// What the kernels take, from the layout, input and output shapes and types; the reason otherwise.
std::string refusal(int64_t layout, bool packed, std::vector<ir::TensorInfo> const& in,
                    std::vector<ir::TensorInfo> const& out) {
  if (packed) {
    if (in.empty() || in.size() > 4 || out.size() != 1 || in[0].shape.nbDims < 0 ||
        (in.size() > 1 && in[1].shape.nbDims >= 0) || (in.size() > 2 && in[2].shape.nbDims >= 0))
      return "needs the packed q/k/v, inputs 1 and 2 absent, an optional mask and one output";
    if (!ir::isHeadMajorAttentionLayout(layout)) return strCat("packed_qkv needs layout 1 or 2, not ", layout);
  } else if (in.size() < 3 || in.size() > 4 || out.size() != 1) {
    return "needs q, k, v, an optional mask and one output";
  }
  DataType const t = out[0].dtype;
  if (!isCudaFloat(t)) return strCat("no kernel for ", dataTypeName(t));
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i].shape.nbDims >= 0 && in[i].dtype != t) return "inputs and output differ in type";
  if (ir::isHeadMajorAttentionLayout(layout)) {
    // The padded in[] of a packed node with one or two inputs: indexes 1 and 2 are read as absent.
    std::vector<ir::TensorInfo> full = in;
    while (full.size() < 3) full.push_back({t, Dims{-1, {}}});
    return headMajorRefusal(layout, packed, full, out);
  }
  if (layout != 0) return strCat("layout ", layout, " (0, 1 and 2 exist)");
  for (size_t i = 0; i < 3; ++i)
    if (in[i].shape.nbDims < 2) return "q, k and v need rank >= 2";
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
  AttentionKernel(std::string who, float scale, bool kTransposed, bool nanToZero, int64_t layout, bool packed)
      : who_(std::move(who)),
        scale_(scale),
        kTransposed_(kTransposed),
        nanToZero_(nanToZero),
        layout_(layout),
        packed_(packed) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    std::vector<ir::TensorInfo> in, out;
    for (auto const& t : ctx.inputs) in.push_back({t.dtype, t.shape});  // absent: nbDims -1
    for (auto const& t : ctx.outputs) out.push_back({t.dtype, t.shape});
    std::string why = refusal(layout_, packed_, in, out);
    if (!why.empty()) return unsupported(who_, ": ", why);
    if (ir::isHeadMajorAttentionLayout(layout_)) return enqueueHeadMajor(ctx);
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

  // Layouts 1 and 2: batch dims (B, H); each operand's (b, h) entry starts at its offset (the q/k/v slot of a
  // packed tensor) + b * batch stride + h * head stride and its rows are a row stride apart
  // (ir::attentionHeadGeometry); the mask broadcast to the scores [B, H, Sq, Skv] as in layout 0.
  Status enqueueHeadMajor(backends::LaunchContext const& ctx) const {
    std::string const name = ir::attentionLayoutName(layout_, packed_);
    if (kTransposed_) return invalidArgument(who_, ": ", name, " takes k untransposed");
    auto const& q = ctx.inputs[0];
    auto const& k = packed_ ? q : ctx.inputs[1];
    auto const& v = packed_ ? q : ctx.inputs[2];
    auto const* mask = ctx.inputs.size() > 3 && ctx.inputs[3].shape.nbDims >= 0 ? &ctx.inputs[3] : nullptr;
    auto const& y = ctx.outputs[0];
    KILN_ASSIGN_OR_RETURN(ir::AttentionHeadGeometry const g,
                          ir::attentionHeadGeometry(who_, layout_, packed_, q.shape, k.shape, v.shape, y.shape));
    AttentionArgs a;
    KILN_RETURN_IF_ERROR(backends::fillHeadMajorAttentionArgs<void>(who_, g, dataTypeSize(y.dtype), q.data, k.data,
                                                                    v.data, mask ? mask->data : nullptr,
                                                                    mask ? mask->shape : Dims{}, y.data, a));
    a.batchCount = g.batch * g.heads;
    a.yStrided = true;
    return launch(a, y, ctx);
  }

  std::string who_;
  float scale_;
  bool kTransposed_;
  bool nanToZero_;
  int64_t layout_;
  bool packed_;
};

backends::Tactic makeAttention() {
  backends::Tactic t;
  t.name = "attention_cuda_flash";
  t.op = ir::OpType::kAttention;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    return refusal(node.attrs.getInt("layout", 0), node.attrs.getInt("packed_qkv", 0) == 1, in, out).empty();
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    int64_t const layout = node.attrs.getInt("layout", 0);
    if (layout != 0 && !ir::isHeadMajorAttentionLayout(layout))
      return invalidArgument(node.describe(), ": layout ", layout, " (0, 1 and 2 exist)");
    int64_t const packed = node.attrs.getInt("packed_qkv", 0);
    if (packed != 0 && packed != 1)
      return invalidArgument(node.describe(), ": packed_qkv ", packed, " (0 and 1 exist)");
    if (packed == 1 && layout == 0)
      return invalidArgument(node.describe(), ": packed_qkv 1 needs layout 1 or 2, not 0");
    return std::unique_ptr<backends::Kernel>(new AttentionKernel(
        node.describe(), static_cast<float>(node.attrs.getFloat("scale", 1.0)),
        node.attrs.getInt("k_transposed", 0) != 0, node.attrs.getInt("nan_to_zero", 0) != 0, layout, packed == 1));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeAttention);

}  // namespace
}  // namespace kiln::cuda
