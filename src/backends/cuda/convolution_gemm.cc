// Pointwise (1x1, stride 1, no padding, one group) convolutions as GEMMs. Tactics convolution_cublaslt_pointwise_algo
// {0,1,2}: channels-last as one cuBLASLt GEMM, row-major as one strided batch of GEMMs per image, with the bias, ReLU
// and the residual (as C, beta = 1) fused into cuBLASLt's call and any other activation in one vectorized pass after
// it; convolution_cuda_pointwise_wmma: our tensor-core kernel with everything fused; convolution_cuda_pointwise_smallc:
// our one-pass kernel for few input channels (MobileNetV2's expansions). Timed against cuDNN's tactics.
#include <string>
#include <vector>

#include "backends/cuda/conv_kernels.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/matmul.h"
#include "ir/infer/window_util.h"

namespace kiln::cuda {
namespace {

using matmul::LtGemm;

constexpr int64_t kMaxBatchPerCall = 65535;  // cuBLASLt's batch count per call; more images take several calls

struct PointwiseAttrs {
  std::string who;
  bool hwc = false;
  bool tf32 = false;
  int32_t activation = -1;
  float alpha = 0.f, beta = 0.f;
};

// The weights' spatial dims when kernel_shape is absent (as the reference reads them).
std::vector<int64_t> kernelFallback(ir::Node const& node) {
  std::vector<int64_t> k;
  ir::Value const* w = node.input(1);
  if (w && dimsKnown(w->shape))
    for (int32_t i = 2; i < w->shape.nbDims; ++i) k.push_back(w->shape.d[i]);
  return k;
}

// Why the node is not a pointwise convolution this tactic runs (empty: it is). Reads the attributes as the
// reference does: kernel 1, stride 1, dilation 1 everywhere, no explicit padding (the SAME modes pad nothing at
// kernel 1 and stride 1), one group, a known activation.
std::string notPointwise(ir::Node const& node, int32_t nbSpatial) {
  auto p = ir::readWindowParams(node, "kernel_shape", nbSpatial, true, kernelFallback(node));
  if (!p.isOk()) return p.status().message();
  if (node.attrs.getInt("groups", 1) != 1) return "groups != 1";
  for (int32_t i = 0; i < nbSpatial; ++i) {
    if (p->kernel[static_cast<size_t>(i)] != 1) return "a kernel other than 1x1";
    if (p->strides[static_cast<size_t>(i)] != 1) return "a stride other than 1";
    if (p->dilations[static_cast<size_t>(i)] != 1) return "a dilation other than 1";
    bool same = p->mode == PaddingMode::kSAME_UPPER || p->mode == PaddingMode::kSAME_LOWER;
    if (!same && (p->padsBegin[static_cast<size_t>(i)] != 0 || p->padsEnd[static_cast<size_t>(i)] != 0))
      return "padding";
  }
  int64_t act = node.attrs.getInt("activation", -1);
  if (act < -1 || act >= EnumMax<ActivationType>()) return strCat("unknown activation ", act);
  return {};
}

// The node's format: kHWC (2-D only) or kLINEAR; anything else is refused.
bool formatOk(ir::Node const& node, int32_t rank) {
  TensorFormat f = backends::nodeFormat(node);
  return f == TensorFormat::kLINEAR || (f == TensorFormat::kHWC && rank == 4);
}

// One launch's sizes: x [n, c, spatial...], w [k, c, 1...], y [n, k, spatial...] (logical dims in every layout).
struct PointwiseShape {
  int64_t n = 0, c = 0, k = 0, spatial = 1;
};

Result<PointwiseShape> shapeOf(std::string const& who, Dims const& x, Dims const& w, Dims const* bias,
                               Dims const* residual, Dims const& y) {
  PointwiseShape s;
  bool ok = x.nbDims >= 3 && x.nbDims <= 5 && w.nbDims == x.nbDims && y.nbDims == x.nbDims && dimsKnown(x) &&
            dimsKnown(w) && dimsKnown(y);
  if (ok) {
    s.n = x.d[0];
    s.c = x.d[1];
    s.k = w.d[0];
    ok = w.d[1] == s.c && y.d[0] == s.n && y.d[1] == s.k;
    for (int32_t i = 2; ok && i < x.nbDims; ++i) {
      ok = w.d[i] == 1 && y.d[i] == x.d[i];
      s.spatial *= x.d[i];
    }
  }
  if (!ok)
    return invalidArgument(who, ": x ", dimsToString(x), ", w ", dimsToString(w), " and y ", dimsToString(y),
                           " are not a pointwise convolution's");
  if (bias && (bias->nbDims != 1 || bias->d[0] != s.k))
    return invalidArgument(who, ": bias ", dimsToString(*bias), " must be [", s.k, "]");
  if (residual && !dimsEqual(*residual, y))
    return invalidArgument(who, ": residual ", dimsToString(*residual), " must have y's shape ", dimsToString(y));
  return s;
}

// Which kernel a pointwise tactic runs first: cuBLASLt alone, or one of ours, which falls back to cuBLASLt's first
// algorithm where a launch cannot take it.
enum class PointwiseOwn { kNone, kWmma, kSmallC };

class PointwiseKernel final : public backends::Kernel {
 public:
  PointwiseKernel(PointwiseAttrs a, int algoIndex, PointwiseOwn own)
      : a_(std::move(a)), algoIndex_(algoIndex), own_(own) {}

  size_t workspaceSize(std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) const override {
    if (in.size() < 2 || out.size() != 1) return 0;
    auto s = shapeOf(a_.who, in[0].shape, in[1].shape, nullptr, nullptr, out[0].shape);
    if (!s.isOk()) return matmul::LtGemmRunner::maxWorkspaceSize();  // unknown dims: the most a launch may want
    if (s->n * s->k * s->spatial == 0 || s->c == 0) return 0;
    bool hasBias = in.size() > 2 && in[2].shape.nbDims >= 0;
    return gemm_.workspaceSize(gemmOf(*s, out[0].dtype, hasBias, std::min(s->n, kMaxBatchPerCall)), algoIndex_);
  }

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& w = ctx.inputs[1];
    auto const& y = ctx.outputs[0];
    backends::TensorView const* b = ctx.inputs.size() > 2 && ctx.inputs[2].data ? &ctx.inputs[2] : nullptr;
    backends::TensorView const* r = ctx.inputs.size() > 3 && ctx.inputs[3].data ? &ctx.inputs[3] : nullptr;
    KILN_ASSIGN_OR_RETURN(PointwiseShape s,
                          shapeOf(a_.who, x.shape, w.shape, b ? &b->shape : nullptr, r ? &r->shape : nullptr, y.shape));
    for (backends::TensorView const* t : {&x, &w, b, r})
      if (t && t->dtype != y.dtype)
        return invalidArgument(a_.who, ": every input must be ", dataTypeName(y.dtype), ", not ",
                               dataTypeName(t->dtype));
    if (y.count() == 0) return Status::ok();
    void const* bias = b ? b->data : nullptr;
    void const* residual = r ? r->data : nullptr;
    cudaStream_t stream = streamOf(ctx);
    auto dt = static_cast<int32_t>(y.dtype);
    int64_t es = static_cast<int64_t>(dataTypeSize(y.dtype));
    if (own_ != PointwiseOwn::kNone && a_.hwc) {
      // Everything fused, y written once; where the launch cannot take it (alignment), cuBLASLt below.
      Epilogue ep;
      ep.bias = bias;
      ep.residual = residual;
      ep.activation = a_.activation;
      ep.alpha = a_.alpha;
      ep.beta = a_.beta;
      if (own_ == PointwiseOwn::kWmma &&
          launchPointwiseWmma(dt, s.n * s.spatial, s.k, s.c, x.data, w.data, ep, y.data, stream))
        return launchStatus(a_.who + ": tensor-core pointwise convolution");
      if (own_ == PointwiseOwn::kSmallC &&
          launchSmallPointwise(dt, s.n * s.spatial, s.c, s.k, x.data, w.data, ep, y.data, stream))
        return launchStatus(a_.who + ": small-channel pointwise convolution");
    }

    // Channels-last: one GEMM over every pixel; row-major: one per image (a = w shared, b = x[i]), in chunks of
    // cuBLASLt's largest batch. `done`: images (channels-last: all or none) cuBLASLt computed.
    LtGemm g = gemmOf(s, y.dtype, bias != nullptr, 0);
    int64_t done = 0;
    while (s.c > 0 && done < s.n) {
      int64_t count = a_.hwc ? s.n : std::min(kMaxBatchPerCall, s.n - done);
      if (!a_.hwc) g.count = count;
      int64_t offX = done * s.c * s.spatial * es, offY = done * s.k * s.spatial * es;
      void const* xs = static_cast<char const*>(x.data) + offX;
      void const* rs = residual ? static_cast<char const*>(residual) + offY : nullptr;
      void* ys = static_cast<char*>(y.data) + offY;
      bool ran = false;
      KILN_RETURN_IF_ERROR(gemm_.run(g, algoIndex_, a_.hwc ? xs : w.data, a_.hwc ? w.data : xs, rs, bias, ys,
                                     ctx.workspace, ctx.workspaceSize, stream, a_.who, &ran));
      if (!ran) break;
      done += count;
    }
    if (done > 0) {
      // What cuBLASLt's epilogue did not take: the activation unless it was ReLU, the bias of row-major y.
      Epilogue post;
      post.bias = g.bias ? nullptr : bias;
      post.activation = g.relu ? -1 : a_.activation;
      post.alpha = a_.alpha;
      post.beta = a_.beta;
      if (post.bias || post.activation >= 0) {
        int64_t rows = a_.hwc ? s.n * s.spatial : done, planes = a_.hwc ? 1 : s.spatial;
        if (!launchEpilogueVec(dt, rows, s.k, planes, post, y.data, stream) &&
            !launchEpilogue(dt, rows, s.k, planes, post, y.data, stream))
          return invalidArgument(a_.who, ": no convolution epilogue for ", dataTypeName(y.dtype));
        KILN_RETURN_IF_ERROR(launchStatus(a_.who + ": pointwise convolution epilogue"));
      }
    }
    if (done < s.n) return runDirect(s, done, x.data, w.data, bias, residual, y, stream);
    return Status::ok();
  }

 private:
  // The direct kernel (conv.cu, everything fused; it reads each residual element before writing y's, so the
  // residual may share y's memory) for images [first, n): where cuBLASLt has no algorithm for the shape, or
  // there are no input channels. Channels-last pixels are the images of a row-major convolution on 1x1 inputs.
  Status runDirect(PointwiseShape const& s, int64_t first, void const* x, void const* w, void const* bias,
                   void const* residual, backends::TensorView const& y, cudaStream_t stream) const {
    int64_t es = static_cast<int64_t>(dataTypeSize(y.dtype));
    ConvGeom geo;
    geo.n = a_.hwc ? s.n * s.spatial : s.n - first;
    geo.c = s.c;
    geo.k = s.k;
    geo.in[2] = geo.out[2] = a_.hwc ? 1 : s.spatial;
    Epilogue ep;
    int64_t offX = first * s.c * s.spatial * es, offY = first * s.k * s.spatial * es;
    ep.bias = bias;
    ep.residual = residual ? static_cast<char const*>(residual) + offY : nullptr;
    ep.activation = a_.activation;
    ep.alpha = a_.alpha;
    ep.beta = a_.beta;
    if (!launchConvDirect(static_cast<int32_t>(y.dtype), geo, static_cast<char const*>(x) + offX, w, ep,
                          static_cast<char*>(y.data) + offY, stream))
      return invalidArgument(a_.who, ": no direct convolution for ", dataTypeName(y.dtype));
    return launchStatus(a_.who + ": direct pointwise convolution");
  }

  // Channels-last: y [n*hw, k] = x [n*hw, c] * w^T, w stored [k, c] -- both operands contiguous along c, the
  // "TN" form every cuBLASLt kernel has, so the constant weights are used as the builder stored them. The bias
  // runs along y's rows: cuBLASLt's bias epilogue, then ReLU. Row-major: y[i] [k, hw] = w [k, c] * x[i] [c, hw];
  // the bias runs down y's columns there, which cuBLASLt's epilogue cannot add, so it (and then any activation)
  // goes to the pass after the GEMM, and ReLU fuses only without a bias.
  LtGemm gemmOf(PointwiseShape const& s, DataType dtype, bool hasBias, int64_t count) const {
    LtGemm g;
    g.dtype = dtype;
    g.tf32 = a_.tf32;
    g.k = s.c;
    bool relu = a_.activation == static_cast<int32_t>(ActivationType::kRELU);
    if (a_.hwc) {
      g.m = s.n * s.spatial;
      g.n = s.k;
      g.transB = true;
      g.bias = hasBias;
      g.relu = relu;
    } else {
      g.m = s.k;
      g.n = s.spatial;
      g.count = count;
      g.strideA = 0;
      g.strideB = s.c * s.spatial;
      g.strideY = s.k * s.spatial;
      g.relu = relu && !hasBias;
    }
    return g;
  }

  PointwiseAttrs a_;
  int algoIndex_;
  PointwiseOwn own_;  // our kernel first (channels-last)
  matmul::LtGemmRunner gemm_;
};

bool supportsPointwise(ir::Node const& node, std::vector<ir::TensorInfo> const& in,
                       std::vector<ir::TensorInfo> const& out) {
  if (in.size() < 2 || in.size() > 4 || out.size() != 1) return false;
  DataType dt = out[0].dtype;
  if (!isCudaFloat(dt)) return false;
  // fp32 runs exact (CUBLAS_COMPUTE_32F) unless the node allows TF32.
  for (auto const& t : in)
    if (t.shape.nbDims >= 0 && t.dtype != dt) return false;
  int32_t rank = in[0].shape.nbDims;
  if (rank < 3 || rank > 5 || in[1].shape.nbDims != rank || out[0].shape.nbDims != rank) return false;
  if (!formatOk(node, rank) || !notPointwise(node, rank - 2).empty()) return false;
  // Known dims must agree with a pointwise convolution (unknown ones are checked per launch).
  Dims const& x = in[0].shape;
  Dims const& w = in[1].shape;
  for (int32_t i = 2; i < rank; ++i)
    if (w.d[i] >= 0 && w.d[i] != 1) return false;
  if (x.d[1] >= 0 && w.d[1] >= 0 && x.d[1] != w.d[1]) return false;
  if (in.size() > 2 && in[2].shape.nbDims >= 0 && in[2].shape.nbDims != 1) return false;
  return in.size() < 4 || in[3].shape.nbDims < 0 || in[3].shape.nbDims == rank;
}

// The largest input channel count the small-channel tactic is offered for. Written for the expansions (at most 64),
// it also takes the projections (MobileNetV2's 96-384 -> 24-96), where the builder's timing decides; beyond, the
// reduction rather than the bytes bounds the layer, and its weights outgrow the shared memory anyway.
constexpr int64_t kSmallCMaxInputChannels = 384;

// algoIndex >= 0: convolution_cublaslt_pointwise_algo<algoIndex>; -1: convolution_cuda_pointwise_wmma, our
// tensor-core kernel with everything fused (channels-last fp16/bf16, C and K multiples of 8); -2:
// convolution_cuda_pointwise_smallc, our one-pass kernel for at most 384 input channels (channels-last fp32, fp16,
// bf16, any channel counts, weights within its shared memory). Ours fall back to cuBLASLt's first algorithm where
// a launch cannot take them (pointers not 16-byte aligned for wmma).
backends::Tactic makePointwise(int algoIndex) {
  PointwiseOwn const own = algoIndex == -1   ? PointwiseOwn::kWmma
                           : algoIndex == -2 ? PointwiseOwn::kSmallC
                                             : PointwiseOwn::kNone;
  backends::Tactic t;
  switch (own) {
    case PointwiseOwn::kNone:
      t.name = strCat("convolution_cublaslt_pointwise_algo", algoIndex);
      t.source = TacticSource::kCUBLAS_LT;
      t.priority = 28 - algoIndex;
      break;
    case PointwiseOwn::kWmma:
      t.name = "convolution_cuda_pointwise_wmma";
      t.source = TacticSource::kKILN;
      t.priority = 25;
      break;
    case PointwiseOwn::kSmallC:
      t.name = "convolution_cuda_pointwise_smallc";
      t.source = TacticSource::kKILN;
      t.priority = 24;  // below the others at level 0 until measurements say otherwise; timed above it
      break;
  }
  t.op = ir::OpType::kConvolution;
  t.formatAware = true;
  t.supports = [own](ir::Node const& node, std::vector<ir::TensorInfo> const& in,
                     std::vector<ir::TensorInfo> const& out) {
    if (!supportsPointwise(node, in, out)) return false;
    DataType dt = out[0].dtype;
    Dims const& w = in[1].shape;
    bool const hwc = backends::nodeFormat(node) == TensorFormat::kHWC;
    switch (own) {
      case PointwiseOwn::kNone:
        return true;
      case PointwiseOwn::kWmma:
        return hwc && (dt == DataType::kHALF || dt == DataType::kBF16) && w.d[0] > 0 && w.d[0] % 8 == 0 && w.d[1] > 0 &&
               w.d[1] % 8 == 0;
      case PointwiseOwn::kSmallC:
        // fp32 only where exact fp32 is asked for: TF32 GEMMs beat FMA there.
        return hwc && w.d[0] > 0 && w.d[1] > 0 && w.d[1] <= kSmallCMaxInputChannels &&
               (dt != DataType::kFLOAT || !allowTf32(node)) &&
               smallPointwiseFits(static_cast<int32_t>(dt), w.d[1], w.d[0]);
    }
    return false;
  };
  t.create = [algoIndex, own](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    PointwiseAttrs a;
    a.who = node.describe();
    ir::Value const* x = node.input(0);
    int32_t rank = x ? x->shape.nbDims : -1;
    if (rank < 3 || rank > 5) return unsupported(a.who, ": a pointwise convolution needs x of rank 3 to 5");
    if (!formatOk(node, rank))
      return unsupported(a.who, ": the pointwise cuBLASLt convolution takes row-major or (2-D) channels-last data");
    std::string why = notPointwise(node, rank - 2);
    if (!why.empty()) return unsupported(a.who, ": not a pointwise convolution (", why, ")");
    a.hwc = backends::nodeFormat(node) == TensorFormat::kHWC;
    a.tf32 = allowTf32(node);
    a.activation = static_cast<int32_t>(node.attrs.getInt("activation", -1));
    a.alpha = static_cast<float>(node.attrs.getFloat("act_alpha", 0.0));
    a.beta = static_cast<float>(node.attrs.getFloat("act_beta", 0.0));
    return std::unique_ptr<backends::Kernel>(
        new PointwiseKernel(std::move(a), own == PointwiseOwn::kNone ? algoIndex : 0, own));
  };
  return t;
}
backends::Tactic makePointwise0() { return makePointwise(0); }
backends::Tactic makePointwise1() { return makePointwise(1); }
backends::Tactic makePointwise2() { return makePointwise(2); }
backends::Tactic makePointwiseWmma() { return makePointwise(-1); }
backends::Tactic makePointwiseSmallC() { return makePointwise(-2); }
KILN_REGISTER_CUDA_TACTIC(makePointwise0);
KILN_REGISTER_CUDA_TACTIC(makePointwise1);
KILN_REGISTER_CUDA_TACTIC(makePointwise2);
KILN_REGISTER_CUDA_TACTIC(makePointwiseWmma);
KILN_REGISTER_CUDA_TACTIC(makePointwiseSmallC);

}  // namespace
}  // namespace kiln::cuda
