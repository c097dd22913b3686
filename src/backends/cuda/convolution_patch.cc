// Patch convolutions (stride == kernel, no padding, dilation 1, one group: ViT's 16x16/16 embedding, ConvNeXt's and
// Swin's 4x4/4 stems, ConvNeXt's 2x2/2 downsamplers) as one GEMM: tactics convolution_cublaslt_patch_algo{0,1,2}
// rearrange x into the patch matrix p [n * out pixels, c * kernel volume] in the workspace (conv_patch.cu), then
// multiply it with the weights as stored on cuBLASLt (matmul_cublaslt.cc's LtGemmRunner). Timed against cuDNN.
#include <algorithm>
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
constexpr size_t kPatchAlign = 256;          // the patch matrix's place in the workspace, as cuBLASLt likes it

struct PatchAttrs {
  std::string who;
  int32_t nbSpatial = 0;
  std::vector<int64_t> kernel;
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

// Why the node is not a patch convolution this tactic runs (empty: it is), reading the attributes as the reference
// does. `in` holds x's spatial dims where known for every launch (else -1): the SAME modes pad nothing and
// kEXPLICIT_ROUND_UP adds no window only where the kernel divides the input, which needs the size. A kernel of one
// pixel is refused: the pointwise tactics run those without the copy.
std::string notPatch(ir::Node const& node, int32_t nbSpatial, std::vector<int64_t> const& in,
                     std::vector<int64_t>* kernel) {
  auto p = ir::readWindowParams(node, "kernel_shape", nbSpatial, true, kernelFallback(node));
  if (!p.isOk()) return p.status().message();
  if (node.attrs.getInt("groups", 1) != 1) return "groups != 1";
  bool roundDown = p->mode == PaddingMode::kEXPLICIT_ROUND_DOWN;
  bool explicitPads = roundDown || p->mode == PaddingMode::kEXPLICIT_ROUND_UP;
  int64_t volumeOfKernel = 1;
  for (int32_t i = 0; i < nbSpatial; ++i) {
    auto const u = static_cast<size_t>(i);
    int64_t k = p->kernel[u];
    volumeOfKernel *= k;
    if (p->strides[u] != k) return "a stride other than the kernel";
    if (p->dilations[u] != 1) return "a dilation other than 1";
    if (explicitPads && (p->padsBegin[u] != 0 || p->padsEnd[u] != 0)) return "padding";
    if (!roundDown) {
      int64_t size = u < in.size() ? in[u] : -1;
      if (size < 0) return "a padding mode that pads unless the kernel divides the input, whose size is unknown";
      if (size % k != 0) return "a padding mode that pads where the kernel does not divide the input";
    }
  }
  if (volumeOfKernel == 1) return "a 1x1 kernel (the pointwise tactics run it)";
  int64_t act = node.attrs.getInt("activation", -1);
  if (act < -1 || act >= EnumMax<ActivationType>()) return strCat("unknown activation ", act);
  if (kernel) *kernel = p->kernel;
  return {};
}

// The node's format: kHWC (2-D only) or kLINEAR; anything else is refused.
bool formatOk(ir::Node const& node, int32_t rank) {
  TensorFormat f = backends::nodeFormat(node);
  return f == TensorFormat::kLINEAR || (f == TensorFormat::kHWC && rank == 4);
}

std::vector<int64_t> spatialOf(Dims const& x) {
  std::vector<int64_t> s;
  for (int32_t i = 2; i < x.nbDims; ++i) s.push_back(x.d[i]);
  return s;
}

// One launch's sizes (logical dims in every layout): x [n, c, in...], w [k, c, kernel...], y [n, k, out...] with
// out = in / kernel (rounded down: the rest of the input is outside every window).
struct PatchShape {
  ConvGeom g;
  int64_t pixels = 1;  // output pixels per image
  int64_t cols = 0;    // c * kernel volume: the GEMM's depth
  int64_t rows() const { return g.n * pixels; }
};

Result<PatchShape> shapeOf(PatchAttrs const& a, Dims const& x, Dims const& w, Dims const* bias, Dims const* residual,
                           Dims const& y) {
  int32_t const rank = a.nbSpatial + 2;
  PatchShape s;
  bool ok = x.nbDims == rank && w.nbDims == rank && y.nbDims == rank && dimsKnown(x) && dimsKnown(w) && dimsKnown(y);
  if (ok) {
    s.g.n = x.d[0];
    s.g.c = x.d[1];
    s.g.k = w.d[0];
    s.cols = s.g.c;
    ok = w.d[1] == s.g.c && y.d[0] == s.g.n && y.d[1] == s.g.k;
    // Spatial dims right-aligned into ConvGeom's three (leading ones of extent 1).
    int32_t const lead = 3 - a.nbSpatial;
    for (int32_t i = 0; ok && i < a.nbSpatial; ++i) {
      int64_t k = a.kernel[static_cast<size_t>(i)];
      ok = w.d[2 + i] == k && y.d[2 + i] == x.d[2 + i] / k;
      s.g.in[lead + i] = x.d[2 + i];
      s.g.out[lead + i] = y.d[2 + i];
      s.g.kernel[lead + i] = s.g.stride[lead + i] = k;
      s.pixels *= y.d[2 + i];
      s.cols *= k;
    }
  }
  if (!ok)
    return invalidArgument(a.who, ": x ", dimsToString(x), ", w ", dimsToString(w), " and y ", dimsToString(y),
                           " are not a patch convolution's (stride = kernel ", dimsToString(makeDims(a.kernel)),
                           ", y = x / kernel, no padding)");
  if (bias && (bias->nbDims != 1 || bias->d[0] != s.g.k))
    return invalidArgument(a.who, ": bias ", dimsToString(*bias), " must be [", s.g.k, "]");
  if (residual && !dimsEqual(*residual, y))
    return invalidArgument(a.who, ": residual ", dimsToString(*residual), " must have y's shape ", dimsToString(y));
  return s;
}

uintptr_t roundUp(uintptr_t v, uintptr_t a) { return (v + a - 1) / a * a; }

class PatchKernel final : public backends::Kernel {
 public:
  PatchKernel(PatchAttrs a, int algoIndex) : a_(std::move(a)), algoIndex_(algoIndex) {}

  // The patch matrix, rounded up to 256 bytes, then the GEMM's workspace: exactly what LtGemmRunner::workspaceSize
  // asked for, so that a launch given this (256-byte aligned, as the arena and the pool give it) finds the plan that
  // call made, and the builder's timed warm-up includes no heuristic query.
  size_t workspaceSize(std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) const override {
    if (in.size() < 2 || out.size() != 1) return 0;
    auto s = shapeOf(a_, in[0].shape, in[1].shape, nullptr, nullptr, out[0].shape);
    // Unknown dims: the runtime asks again with the launch's shapes (the patch matrix's size depends on them).
    if (!s.isOk()) return matmul::LtGemmRunner::maxWorkspaceSize();
    if (s->rows() * s->g.k == 0 || s->cols == 0) return 0;
    bool hasBias = in.size() > 2 && in[2].shape.nbDims >= 0;
    size_t gemm =
        gemm_.workspaceSize(gemmOf(*s, out[0].dtype, hasBias, std::min(s->g.n, kMaxBatchPerCall)), algoIndex_);
    return roundUp(patchBytes(*s, out[0].dtype), kPatchAlign) + gemm;
  }

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& w = ctx.inputs[1];
    auto const& y = ctx.outputs[0];
    backends::TensorView const* b = ctx.inputs.size() > 2 && ctx.inputs[2].data ? &ctx.inputs[2] : nullptr;
    backends::TensorView const* r = ctx.inputs.size() > 3 && ctx.inputs[3].data ? &ctx.inputs[3] : nullptr;
    KILN_ASSIGN_OR_RETURN(PatchShape s,
                          shapeOf(a_, x.shape, w.shape, b ? &b->shape : nullptr, r ? &r->shape : nullptr, y.shape));
    for (backends::TensorView const* t : {&x, &w, b, r})
      if (t && t->dtype != y.dtype)
        return invalidArgument(a_.who, ": every input must be ", dataTypeName(y.dtype), ", not ",
                               dataTypeName(t->dtype));
    if (y.count() == 0) return Status::ok();
    void const* bias = b ? b->data : nullptr;
    void const* residual = r ? r->data : nullptr;
    cudaStream_t stream = streamOf(ctx);
    if (s.cols == 0) return runDirect(s, 0, x.data, w.data, bias, residual, y, stream);  // y = act(bias + residual)

    // The patch matrix at the workspace's first 256-byte boundary (or where the workspace starts, when it has no
    // room to align), the GEMM's workspace from the next boundary after it to the end (workspaceSize()).
    size_t const pBytes = patchBytes(s, y.dtype);
    auto const wsBegin = reinterpret_cast<uintptr_t>(ctx.workspace);
    uintptr_t const wsEnd = wsBegin + ctx.workspaceSize;
    uintptr_t pAddr = roundUp(wsBegin, kPatchAlign);
    if (pAddr + pBytes > wsEnd) pAddr = wsBegin;
    if (!ctx.workspace || pAddr + pBytes > wsEnd)
      return invalidArgument(a_.who, ": the patch matrix needs ", pBytes, " workspace bytes, the launch has ",
                             ctx.workspaceSize);
    void* p = reinterpret_cast<void*>(pAddr);
    uintptr_t const gemmWs = std::min<uintptr_t>(roundUp(pAddr + pBytes, kPatchAlign), wsEnd);
    size_t const gemmWsBytes = wsEnd - gemmWs;
    int64_t const es = static_cast<int64_t>(dataTypeSize(y.dtype));
    if (!launchPatchify(es, s.g, a_.hwc, x.data, p, stream))
      return invalidArgument(a_.who, ": the patch rearrangement refused x ", dimsToString(x.shape));
    KILN_RETURN_IF_ERROR(launchStatus(a_.who + ": patch rearrangement"));

    // Channels-last: y [rows, k] = p [rows, cols] * w^T, one GEMM. Row-major: y[i] [k, pixels] = w [k, cols] *
    // p[i]^T per image (w shared), in chunks of cuBLASLt's largest batch. `done`: images cuBLASLt computed.
    LtGemm g = gemmOf(s, y.dtype, bias != nullptr, 0);
    int64_t done = 0;
    while (done < s.g.n) {
      int64_t count = a_.hwc ? s.g.n : std::min(kMaxBatchPerCall, s.g.n - done);
      if (!a_.hwc) g.count = count;
      int64_t offP = done * s.pixels * s.cols * es, offY = done * s.g.k * s.pixels * es;
      void const* ps = static_cast<char const*>(p) + offP;
      void const* rs = residual ? static_cast<char const*>(residual) + offY : nullptr;
      void* ys = static_cast<char*>(y.data) + offY;
      bool ran = false;
      KILN_RETURN_IF_ERROR(gemm_.run(g, algoIndex_, a_.hwc ? ps : w.data, a_.hwc ? w.data : ps, rs, bias, ys,
                                     gemmWsBytes ? reinterpret_cast<void*>(gemmWs) : nullptr, gemmWsBytes, stream,
                                     a_.who, &ran));
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
        int64_t rows = a_.hwc ? s.rows() : done, planes = a_.hwc ? 1 : s.pixels;
        int32_t const dt = static_cast<int32_t>(y.dtype);
        if (!launchEpilogueVec(dt, rows, s.g.k, planes, post, y.data, stream) &&
            !launchEpilogue(dt, rows, s.g.k, planes, post, y.data, stream))
          return invalidArgument(a_.who, ": no convolution epilogue for ", dataTypeName(y.dtype));
        KILN_RETURN_IF_ERROR(launchStatus(a_.who + ": patch convolution epilogue"));
      }
    }
    if (done < s.g.n) return runDirect(s, done, a_.hwc ? p : x.data, w.data, bias, residual, y, stream);
    return Status::ok();
  }

 private:
  static size_t patchBytes(PatchShape const& s, DataType dtype) {
    return static_cast<size_t>(s.rows() * s.cols) * dataTypeSize(dtype);
  }

  // The direct kernel (conv.cu, everything fused; it reads each residual element before writing y's) for images
  // [first, n): where cuBLASLt has no algorithm for the shape, or there are no input channels. Row-major, it runs
  // the convolution itself on x; channels-last, `src` is the patch matrix, whose rows are the images of a 1x1
  // convolution with c * kernel volume channels (the weights' memory [k, kernel..., c] is that convolution's).
  Status runDirect(PatchShape const& s, int64_t first, void const* src, void const* w, void const* bias,
                   void const* residual, backends::TensorView const& y, cudaStream_t stream) const {
    int64_t es = static_cast<int64_t>(dataTypeSize(y.dtype));
    ConvGeom geo;
    int64_t offX = 0, offY = first * s.g.k * s.pixels * es;
    if (a_.hwc) {
      geo.n = s.rows();
      geo.c = s.cols;
      geo.k = s.g.k;
    } else {
      geo = s.g;
      geo.n = s.g.n - first;
      offX = first * s.g.c * s.g.in[0] * s.g.in[1] * s.g.in[2] * es;
    }
    Epilogue ep;
    ep.bias = bias;
    ep.residual = residual ? static_cast<char const*>(residual) + offY : nullptr;
    ep.activation = a_.activation;
    ep.alpha = a_.alpha;
    ep.beta = a_.beta;
    if (!launchConvDirect(static_cast<int32_t>(y.dtype), geo, static_cast<char const*>(src) + offX, w, ep,
                          static_cast<char*>(y.data) + offY, stream))
      return invalidArgument(a_.who, ": no direct convolution for ", dataTypeName(y.dtype));
    return launchStatus(a_.who + ": direct patch convolution");
  }

  // Channels-last: y [rows, k] = p [rows, cols] * w^T with w stored [k, cols] -- both operands contiguous along the
  // depth, cuBLASLt's "TN" form, so the weights are used as the builder stored them ([k, kernel..., c], the order of
  // p's columns). The bias runs along y's rows: cuBLASLt's bias epilogue, then ReLU. Row-major: y[i] [k, pixels] =
  // w [k, cols] * p[i]^T, p[i] stored [pixels, cols] (transposed b, "TN" again); the bias runs down y's columns
  // there, which cuBLASLt's epilogue cannot add, so it (and then any activation) goes to the pass after the GEMM.
  LtGemm gemmOf(PatchShape const& s, DataType dtype, bool hasBias, int64_t count) const {
    LtGemm g;
    g.dtype = dtype;
    g.tf32 = a_.tf32;
    g.k = s.cols;
    g.transB = true;
    bool relu = a_.activation == static_cast<int32_t>(ActivationType::kRELU);
    if (a_.hwc) {
      g.m = s.rows();
      g.n = s.g.k;
      g.bias = hasBias;
      g.relu = relu;
    } else {
      g.m = s.g.k;
      g.n = s.pixels;
      g.count = count;
      g.strideA = 0;
      g.strideB = s.pixels * s.cols;
      g.strideY = s.g.k * s.pixels;
      g.relu = relu && !hasBias;
    }
    return g;
  }

  PatchAttrs a_;
  int algoIndex_;
  matmul::LtGemmRunner gemm_;
};

bool supportsPatch(ir::Node const& node, std::vector<ir::TensorInfo> const& in,
                   std::vector<ir::TensorInfo> const& out) {
  if (in.size() < 2 || in.size() > 4 || out.size() != 1) return false;
  DataType dt = out[0].dtype;
  if (!isCudaFloat(dt)) return false;
  // fp32 runs exact (CUBLAS_COMPUTE_32F) unless the node allows TF32.
  for (auto const& t : in)
    if (t.shape.nbDims >= 0 && t.dtype != dt) return false;
  int32_t rank = in[0].shape.nbDims;
  if (rank < 3 || rank > 5 || in[1].shape.nbDims != rank || out[0].shape.nbDims != rank) return false;
  // The SAME and round-up modes are judged on the node's own x dims, known for every shape the engine will run
  // (not just the profile's min, opt and max, between which a size the kernel does not divide could come).
  ir::Value const* xv = node.input(0);
  if (!xv || xv->shape.nbDims != rank) return false;
  std::vector<int64_t> kernel;
  if (!formatOk(node, rank) || !notPatch(node, rank - 2, spatialOf(xv->shape), &kernel).empty()) return false;
  // Known dims must agree with a patch convolution (unknown ones are checked per launch).
  Dims const& x = in[0].shape;
  Dims const& w = in[1].shape;
  Dims const& y = out[0].shape;
  for (int32_t i = 2; i < rank; ++i) {
    int64_t k = kernel[static_cast<size_t>(i - 2)];
    if (w.d[i] >= 0 && w.d[i] != k) return false;
    if (x.d[i] >= 0 && y.d[i] >= 0 && y.d[i] != x.d[i] / k) return false;
  }
  if (x.d[1] >= 0 && w.d[1] >= 0 && x.d[1] != w.d[1]) return false;
  if (in.size() > 2 && in[2].shape.nbDims >= 0 && in[2].shape.nbDims != 1) return false;
  return in.size() < 4 || in[3].shape.nbDims < 0 || in[3].shape.nbDims == rank;
}

backends::Tactic makePatch(int algoIndex) {
  backends::Tactic t;
  t.name = strCat("convolution_cublaslt_patch_algo", algoIndex);
  t.op = ir::OpType::kConvolution;
  t.source = TacticSource::kCUBLAS_LT;
  // Ahead of cuDNN's (35 and below) at level 0: a GEMM at tensor-core rate against cuDNN's ~25 TFLOP/s on ViT's.
  t.priority = 38 - algoIndex;
  t.formatAware = true;
  t.supports = supportsPatch;
  t.create = [algoIndex](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    PatchAttrs a;
    a.who = node.describe();
    ir::Value const* x = node.input(0);
    int32_t rank = x ? x->shape.nbDims : -1;
    if (rank < 3 || rank > 5) return unsupported(a.who, ": a patch convolution needs x of rank 3 to 5");
    if (!formatOk(node, rank))
      return unsupported(a.who, ": the patch convolution takes row-major or (2-D) channels-last data");
    // The input size decides only for the SAME and round-up modes, on the node's x dims as in supports().
    std::vector<int64_t> in = spatialOf(x->shape);
    std::string why = notPatch(node, rank - 2, in, &a.kernel);
    if (!why.empty()) return unsupported(a.who, ": not a patch convolution (", why, ")");
    a.nbSpatial = rank - 2;
    a.hwc = backends::nodeFormat(node) == TensorFormat::kHWC;
    a.tf32 = allowTf32(node);
    a.activation = static_cast<int32_t>(node.attrs.getInt("activation", -1));
    a.alpha = static_cast<float>(node.attrs.getFloat("act_alpha", 0.0));
    a.beta = static_cast<float>(node.attrs.getFloat("act_beta", 0.0));
    return std::unique_ptr<backends::Kernel>(new PatchKernel(std::move(a), algoIndex));
  };
  return t;
}
backends::Tactic makePatch0() { return makePatch(0); }
backends::Tactic makePatch1() { return makePatch(1); }
backends::Tactic makePatch2() { return makePatch(2); }
KILN_REGISTER_CUDA_TACTIC(makePatch0);
KILN_REGISTER_CUDA_TACTIC(makePatch1);
KILN_REGISTER_CUDA_TACTIC(makePatch2);

}  // namespace
}  // namespace kiln::cuda
