// Convolution on the GPU: cuDNN forward algorithms (one tactic each; asymmetric or round-up padding zero-pads the
// input into the workspace first) followed by our bias/residual/activation epilogue, and a direct kernel of our
// own that runs every geometry (and is the cuDNN tactics' safe path where cuDNN refuses a shape).
#include <algorithm>
#include <string>
#include <vector>

#include "backends/cuda/conv_cudnn.h"
#include "ir/infer/window_util.h"

namespace kiln::cuda {
namespace {

using namespace convfamily;  // NOLINT: family helpers

struct ConvAttrs {
  std::string who;
  ir::WindowParams window;
  int64_t groups = 1;
  int32_t activation = -1;
  float alpha = 0.f, beta = 0.f;
  bool tf32 = false;
  bool hwc = false;  // x, w, residual and y channels-last (node attribute `format`)
};

int32_t spatialDimsOf(ir::Node const& node) {
  ir::Value const* w = node.input(1);
  if (node.attrs.has("kernel_shape")) return static_cast<int32_t>(node.attrs.getInts("kernel_shape").size());
  return w ? w->shape.nbDims - 2 : -1;
}

// The attributes as the reference kernel reads them.
Result<ConvAttrs> readAttrs(ir::Node const& node) {
  ConvAttrs a;
  a.who = node.describe();
  int32_t ns = spatialDimsOf(node);
  if (ns < 1 || ns > 3) return invalidGraph(a.who, ": needs 1, 2 or 3 spatial dims");
  std::vector<int64_t> fallback;
  ir::Value const* w = node.input(1);
  if (w && dimsKnown(w->shape))
    for (int32_t i = 2; i < w->shape.nbDims; ++i) fallback.push_back(w->shape.d[i]);
  KILN_ASSIGN_OR_RETURN(a.window, ir::readWindowParams(node, "kernel_shape", ns, true, fallback));
  a.groups = node.attrs.getInt("groups", 1);
  if (a.groups < 1) return invalidGraph(a.who, ": groups must be >= 1");
  int64_t act = node.attrs.getInt("activation", -1);
  if (act < -1 || act >= EnumMax<ActivationType>()) return invalidGraph(a.who, ": unknown activation ", act);
  a.activation = static_cast<int32_t>(act);
  a.alpha = static_cast<float>(node.attrs.getFloat("act_alpha", 0.0));
  a.beta = static_cast<float>(node.attrs.getFloat("act_beta", 0.0));
  a.tf32 = allowTf32(node);
  a.hwc = backends::nodeFormat(node) == TensorFormat::kHWC;
  return a;
}

// One call's geometry, checked as the reference checks it.
struct ConvCall {
  ConvGeom g;
  std::vector<int64_t> in, out, kernel, stride, dil, padBegin, padEnd;
  int64_t outCount = 0;
};

Result<ConvCall> geometry(ConvAttrs const& a, Dims const& x, Dims const& w, Dims const& y) {
  ir::WindowParams const& p = a.window;
  int32_t ns = p.nbSpatial;
  if (x.nbDims != ns + 2 || w.nbDims != ns + 2 || y.nbDims != ns + 2)
    return invalidArgument(a.who, ": x, w and y must have rank ", ns + 2);
  ConvCall c;
  c.g.n = x.d[0];
  c.g.c = x.d[1];
  c.g.k = w.d[0];
  c.g.groups = a.groups;
  if (w.d[1] * a.groups != c.g.c || c.g.k % a.groups != 0 || y.d[1] != c.g.k || y.d[0] != c.g.n)
    return invalidArgument(a.who, ": shapes x ", dimsToString(x), ", w ", dimsToString(w), ", y ", dimsToString(y),
                           " do not agree with groups = ", a.groups);
  for (int32_t i = 0; i < ns; ++i) {
    c.in.push_back(x.d[2 + i]);
    c.out.push_back(y.d[2 + i]);
    if (w.d[2 + i] != p.kernel[i]) return invalidArgument(a.who, ": weights do not match kernel_shape");
  }
  std::vector<ir::WindowDim> geo = ir::computeWindow(p, c.in);
  for (int32_t i = 0; i < ns; ++i) {
    if (c.in[i] > 0 && geo[i].out != c.out[i])
      return invalidArgument(a.who, ": output ", dimsToString(y), " does not match the window geometry");
    c.padBegin.push_back(geo[i].padBegin);
    c.padEnd.push_back(geo[i].padEnd);
  }
  c.kernel = p.kernel;
  c.stride = p.strides;
  c.dil = p.dilations;
  to3(c.in, c.g.in, 1);
  to3(c.out, c.g.out, 1);
  to3(c.kernel, c.g.kernel, 1);
  to3(c.stride, c.g.stride, 1);
  to3(c.dil, c.g.dil, 1);
  to3(c.padBegin, c.g.padBegin, 0);
  c.outCount = volume(y);
  return c;
}

Epilogue epilogueOf(ConvAttrs const& a, backends::LaunchContext const& ctx) {
  Epilogue ep;
  if (ctx.inputs.size() > 2 && ctx.inputs[2].data) ep.bias = ctx.inputs[2].data;
  if (ctx.inputs.size() > 3 && ctx.inputs[3].data) ep.residual = ctx.inputs[3].data;
  ep.activation = a.activation;
  ep.alpha = a.alpha;
  ep.beta = a.beta;
  return ep;
}

Status runDirect(ConvAttrs const& a, ConvCall const& c, backends::LaunchContext const& ctx) {
  auto const& y = ctx.outputs[0];
  if (!launchConvDirect(static_cast<int32_t>(y.dtype), c.g, ctx.inputs[0].data, ctx.inputs[1].data, epilogueOf(a, ctx),
                        y.data, streamOf(ctx)))
    return invalidArgument(a.who, ": no direct convolution for ", dataTypeName(y.dtype));
  return launchStatus(a.who + ": direct convolution");
}

// cuDNN pads symmetrically and rounds the output size down; other geometries need a zero-padded input copy.
bool cudnnGeometry(ConvAttrs const& a, ConvCall const& c) {
  for (int32_t i = 0; i < a.window.nbSpatial; ++i) {
    int64_t dk = c.dil[i] * (c.kernel[i] - 1) + 1, span = c.in[i] + 2 * c.padBegin[i] - dk;
    if (c.padBegin[i] != c.padEnd[i] || span < 0 || span / c.stride[i] + 1 != c.out[i]) return false;
  }
  return true;
}

// Channels-last runs only in cuDNN (no padding copy, no direct kernel): 2-D, with cuDNN's own geometry at
// these (known) shapes.
bool supportsHwc(ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
  auto a = readAttrs(node);
  if (!a.isOk() || a->window.nbSpatial != 2 || in[0].shape.nbDims != 4 || out[0].shape.nbDims != 4) return false;
  if (!dimsKnown(in[0].shape) || !dimsKnown(in[1].shape) || !dimsKnown(out[0].shape)) return false;
  auto c = geometry(*a, in[0].shape, in[1].shape, out[0].shape);
  return c.isOk() && cudnnGeometry(*a, *c);
}

// The dtypes and attributes both tactics take: float x, w, y (and b, residual) of one type, 1..3 spatial dims.
bool supportsConv(ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
  return sameFloatTypeWindowOp(in, out, 4) && readAttrs(node).isOk();
}

class ConvDirectKernel final : public backends::Kernel {
 public:
  explicit ConvDirectKernel(ConvAttrs a) : a_(std::move(a)) {}
  Status enqueue(backends::LaunchContext const& ctx) const override {
    KILN_ASSIGN_OR_RETURN(ConvCall c, geometry(a_, ctx.inputs[0].shape, ctx.inputs[1].shape, ctx.outputs[0].shape));
    if (c.outCount == 0) return Status::ok();
    return runDirect(a_, c, ctx);
  }

 private:
  ConvAttrs a_;
};

// --- cuDNN ---

struct ConvPlan : ConvDescriptors {
  bool cudnn = false;  // false: the direct kernel runs this shape
  bool padded = false;
  int64_t planes = 0, srcExt[3] = {1, 1, 1}, dstExt[3] = {1, 1, 1}, offset[3] = {0, 0, 0};
  size_t padBytes = 0;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t algoWs = 0;
  bool safeOk = false;  // IMPLICIT_GEMM as the second choice when the workspace is short
  size_t safeWs = 0;
  bool fusedOk = false;  // bias and activation descriptors for cudnnConvolutionBiasActivationForward
  TensorDesc bias;
  ActDesc act;
};

// Descriptors of the fused call: bias [1, K, 1...] in y's type, ReLU or identity (NaN propagates, as ours).
Status configureFused(ConvPlan& p, ConvAttrs const& a, DataType dt, size_t yRank, int64_t k) {
  std::vector<int64_t> bd(yRank, 1);
  bd[1] = k;
  KILN_RETURN_IF_ERROR(setPackedTensor(p.bias, dt, bd));
  KILN_RETURN_IF_ERROR(p.act.create("creating a cuDNN activation descriptor"));
  cudnnActivationMode_t mode = a.activation < 0 ? CUDNN_ACTIVATION_IDENTITY : CUDNN_ACTIVATION_RELU;
  KILN_CUDNN_RETURN_IF_ERROR(cudnnSetActivationDescriptor(p.act.get(), mode, CUDNN_PROPAGATE_NAN, 0.0),
                             "cudnnSetActivationDescriptor");
  p.fusedOk = true;
  return Status::ok();
}

// Configures cuDNN for this shape; an error means cuDNN refuses it (the plan then stays on the direct kernel).
Status configure(ConvPlan& p, ConvAttrs const& a, ConvCall const& c, DataType dt, cudnnConvolutionFwdAlgo_t algo,
                 bool fused) {
  int32_t ns = a.window.nbSpatial;
  bool sym = cudnnGeometry(a, c);
  if (!sym && a.hwc) return invalidArgument(a.who, ": channels-last needs cuDNN's own padding geometry");
  std::vector<int64_t> xin = c.in, pads = c.padBegin;
  if (!sym) {
    p.padded = true;
    for (int32_t i = 0; i < ns; ++i) {
      xin[i] = (c.out[i] - 1) * c.stride[i] + c.dil[i] * (c.kernel[i] - 1) + 1;
      pads[i] = 0;
    }
    p.planes = c.g.n * c.g.c;
    to3(c.in, p.srcExt, 1);
    to3(xin, p.dstExt, 1);
    to3(c.padBegin, p.offset, 0);
    int64_t vol = p.planes;
    for (int64_t e : xin) vol *= e;
    p.padBytes = alignUp(static_cast<size_t>(vol) * dataTypeSize(dt));
  }
  std::vector<int64_t> xd{c.g.n, c.g.c}, wd{c.g.k, c.g.c / c.g.groups}, yd{c.g.n, c.g.k};
  for (int64_t v : cudnnSpatial(xin, 1)) xd.push_back(v);
  for (int64_t v : cudnnSpatial(c.kernel, 1)) wd.push_back(v);
  for (int64_t v : cudnnSpatial(c.out, 1)) yd.push_back(v);
  KILN_RETURN_IF_ERROR(setConvDescriptors(p, dt, xd, wd, yd, cudnnSpatial(pads, 0), cudnnSpatial(c.stride, 1),
                                          cudnnSpatial(c.dil, 1), a.groups, a.tf32, false, a.who, a.hwc));
  KILN_ASSIGN_OR_RETURN(cudnnHandle_t h, cudnn());
  p.algo = algo;
  cudnnStatus_t s = cudnnGetConvolutionForwardWorkspaceSize(h, p.x.get(), p.w.get(), p.conv.get(), p.y.get(),
                                                            CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, &p.safeWs);
  p.safeOk = s == CUDNN_STATUS_SUCCESS;
  s = cudnnGetConvolutionForwardWorkspaceSize(h, p.x.get(), p.w.get(), p.conv.get(), p.y.get(), algo, &p.algoWs);
  if (s != CUDNN_STATUS_SUCCESS) {
    if (!p.safeOk) return cudnnStatusOf(s, a.who + ": cuDNN forward algorithm");
    p.algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    p.algoWs = p.safeWs;
  }
  p.cudnn = true;
  if (fused) (void)configureFused(p, a, dt, yd.size(), c.g.k);  // not configured: the unfused calls run
  return Status::ok();
}

class ConvCudnnKernel final : public backends::Kernel {
 public:
  ConvCudnnKernel(ConvAttrs a, cudnnConvolutionFwdAlgo_t algo, bool fused)
      : a_(std::move(a)), algo_(algo), fused_(fused) {}

  size_t workspaceSize(std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) const override {
    if (in.size() < 2 || out.empty() || !dimsKnown(in[0].shape) || !dimsKnown(in[1].shape) || !dimsKnown(out[0].shape))
      return 0;
    auto c = geometry(a_, in[0].shape, in[1].shape, out[0].shape);
    if (!c.isOk() || c->outCount == 0) return 0;
    auto p = plan(*c, out[0].dtype, in[0].shape, in[1].shape, out[0].shape);
    if (!p.isOk() || !(*p)->cudnn) return 0;
    return (*p)->padBytes + std::max((*p)->algoWs, (*p)->safeOk ? (*p)->safeWs : 0);
  }

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& w = ctx.inputs[1];
    auto const& y = ctx.outputs[0];
    KILN_ASSIGN_OR_RETURN(ConvCall c, geometry(a_, x.shape, w.shape, y.shape));
    if (c.outCount == 0) return Status::ok();
    KILN_ASSIGN_OR_RETURN(auto p, plan(c, y.dtype, x.shape, w.shape, y.shape));
    // cuDNN writes y before the epilogue reads the residual: a residual sharing y's memory needs the direct kernel.
    bool residualInY = ctx.inputs.size() > 3 && ctx.inputs[3].data == y.data;
    if (!p->cudnn || residualInY)
      return fallback(c, ctx, residualInY ? "the residual shares y's memory" : "cuDNN refused the shape");
    cudnnConvolutionFwdAlgo_t algo = p->algo;
    size_t ws = p->algoWs;
    if (p->padBytes + ws > ctx.workspaceSize) {
      if (!p->safeOk || p->padBytes + p->safeWs > ctx.workspaceSize)
        return fallback(c, ctx, "the workspace is too small");
      algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
      ws = p->safeWs;
    }
    cudaStream_t stream = streamOf(ctx);
    KILN_ASSIGN_OR_RETURN(cudnnHandle_t h, cudnn());
    KILN_CUDNN_RETURN_IF_ERROR(cudnnSetStream(h, stream), "cudnnSetStream");
    void const* xp = x.data;
    char* scratch = static_cast<char*>(ctx.workspace);
    if (p->padded) {
      if (!launchShiftCopy(static_cast<int32_t>(x.dtype), p->planes, p->srcExt, p->dstExt, p->offset, x.data, scratch,
                           nullptr, 1, stream))
        return invalidArgument(a_.who, ": no padding copy for ", dataTypeName(x.dtype));
      KILN_RETURN_IF_ERROR(launchStatus(a_.who + ": zero-padding the input"));
      xp = scratch;
      scratch += p->padBytes;
    }
    float one = 1.f, zero = 0.f;
    Epilogue ep = epilogueOf(a_, ctx);
    // Fused: y = act(conv(x) + alpha2 * z + bias), the reference's order; the identity activation needs
    // IMPLICIT_PRECOMP_GEMM, so the short-workspace substitute runs unfused.
    if (fused_ && p->fusedOk && ep.bias && algo == p->algo &&
        (a_.activation == static_cast<int32_t>(ActivationType::kRELU) ||
         (a_.activation < 0 && algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM))) {
      float alpha2 = ep.residual ? 1.f : 0.f;
      void const* z = ep.residual ? ep.residual : y.data;
      // Without a residual z is y scaled by 0; whether cuDNN still reads it is not documented, and 0 * NaN of a
      // stale y would poison the sum, so y is zeroed first.
      if (!ep.residual)
        KILN_CUDA_RETURN_IF_ERROR(
            cudaMemsetAsync(y.data, 0, static_cast<size_t>(c.outCount) * dataTypeSize(y.dtype), stream),
            "zeroing y for the fused convolution");
      cudnnStatus_t fs = cudnnConvolutionBiasActivationForward(
          h, &one, p->x.get(), xp, p->w.get(), w.data, p->conv.get(), algo, ws ? scratch : nullptr, ws, &alpha2,
          p->y.get(), z, p->bias.get(), ep.bias, p->act.get(), p->y.get(), y.data);
      if (fs == CUDNN_STATUS_SUCCESS) return Status::ok();
      if (fs != CUDNN_STATUS_NOT_SUPPORTED && fs != CUDNN_STATUS_BAD_PARAM)
        return cudnnStatusOf(fs, a_.who + ": cudnnConvolutionBiasActivationForward");
      // Refused for this configuration: the unfused calls below compute the same.
    }
    cudnnStatus_t s = cudnnConvolutionForward(h, &one, p->x.get(), xp, p->w.get(), w.data, p->conv.get(), algo,
                                              ws ? scratch : nullptr, ws, &zero, p->y.get(), y.data);
    // A refusal found only at launch time (nothing was queued): the direct kernel computes the whole output.
    if (s == CUDNN_STATUS_NOT_SUPPORTED || s == CUDNN_STATUS_BAD_PARAM)
      return fallback(c, ctx, "cuDNN refused the call");
    if (s != CUDNN_STATUS_SUCCESS) return cudnnStatusOf(s, a_.who + ": cudnnConvolutionForward");
    if (!ep.bias && !ep.residual && ep.activation < 0) return Status::ok();
    int64_t spatial = c.g.out[0] * c.g.out[1] * c.g.out[2];
    // Channels-last: the channel is the fastest index, so the epilogue sees [n * spatial, k, 1].
    bool ok = a_.hwc ? launchEpilogue(static_cast<int32_t>(y.dtype), c.g.n * spatial, c.g.k, 1, ep, y.data, stream)
                     : launchEpilogue(static_cast<int32_t>(y.dtype), c.g.n, c.g.k, spatial, ep, y.data, stream);
    if (!ok) return invalidArgument(a_.who, ": no epilogue for ", dataTypeName(y.dtype));
    return launchStatus(a_.who + ": convolution epilogue");
  }

 private:
  // Where cuDNN cannot run the call: the direct kernel (row-major only), or an error for channels-last data.
  Status fallback(ConvCall const& c, backends::LaunchContext const& ctx, char const* why) const {
    if (a_.hwc) return unsupported(a_.who, ": channels-last convolution cannot run: ", why);
    return runDirect(a_, c, ctx);
  }

  Result<std::shared_ptr<ConvPlan const>> plan(ConvCall const& c, DataType dt, Dims const& x, Dims const& w,
                                               Dims const& y) const {
    std::vector<int64_t> key{static_cast<int64_t>(dt)};
    for (Dims const* d : {&x, &w, &y})
      for (int32_t i = 0; i < d->nbDims; ++i) key.push_back(d->d[i]);
    return plans_.get(key, [&]() -> Result<std::shared_ptr<ConvPlan const>> {
      auto p = std::make_shared<ConvPlan>();
      bool empty = c.g.n == 0 || c.g.c == 0 || c.g.k == 0;
      for (int64_t v : c.in) empty = empty || v == 0;
      Status cs = empty ? Status::ok() : configure(*p, a_, c, dt, algo_, fused_);
      // Out of memory (the cuDNN handle) is no refusal: not cached, so that a later run may succeed.
      if (!cs.isOk() && (a_.hwc || cs.code() == StatusCode::kOutOfMemory)) return cs;
      if (!cs.isOk()) {
        auto direct = std::make_shared<ConvPlan>();  // cuDNN refused: descriptors of the attempt are dropped
        return std::shared_ptr<ConvPlan const>(direct);
      }
      if (empty) p->cudnn = false;
      return std::shared_ptr<ConvPlan const>(p);
    });
  }

  ConvAttrs a_;
  cudnnConvolutionFwdAlgo_t algo_;
  bool fused_;  // bias (+ residual as z) + ReLU / identity inside cuDNN's call
  PlanCache<ConvPlan> plans_;
};

backends::Tactic makeDirect() {
  backends::Tactic t;
  t.name = "convolution_cuda_direct";
  t.op = ir::OpType::kConvolution;
  t.source = TacticSource::kKILN;
  t.priority = 10;
  t.supports = supportsConv;
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    KILN_ASSIGN_OR_RETURN(ConvAttrs a, readAttrs(node));
    return std::unique_ptr<backends::Kernel>(new ConvDirectKernel(std::move(a)));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeDirect);

// Channels-last depthwise convolution (one input channel per group, one output channel per group): our own
// kernels, any 2-D geometry and padding, every activation fused. Four tactics: the scalar kernel (one thread per
// output element, any channel count), the vectorized one (16-byte channel vectors, several pixels per thread;
// C a multiple of 8 for fp16/bf16, 4 for fp32), which falls back to the scalar kernel where a launch's pointers
// are not 16-byte aligned, the tiled one (the vectorized kernel's vectors, 8x8 output pixels per block from an
// input window staged in shared memory) and the pipelined one (3x3 at stride 1 or 2: persistent blocks, the next
// tile's window copied by cp.async while the current one is computed), which fall back to the vectorized kernel.
// The builder times all four.
bool supportsDepthwiseHwc(ir::Node const& node, std::vector<ir::TensorInfo> const& in,
                          std::vector<ir::TensorInfo> const& out) {
  if (backends::nodeFormat(node) != TensorFormat::kHWC || !supportsConv(node, in, out)) return false;
  auto a = readAttrs(node);
  if (!a.isOk() || a->window.nbSpatial != 2) return false;
  Dims const& x = in[0].shape;
  Dims const& w = in[1].shape;
  Dims const& y = out[0].shape;
  if (!dimsKnown(x) || !dimsKnown(w) || !dimsKnown(y) || x.nbDims != 4 || w.nbDims != 4 || y.nbDims != 4) return false;
  int64_t two31 = int64_t{1} << 31;
  return a->groups == x.d[1] && y.d[1] == x.d[1] && w.d[1] == 1 && volume(x) < two31 && volume(y) < two31 &&
         geometry(*a, x, w, y).isOk();
}

enum class DwVariant { kScalar, kVec, kTiled, kPipe };

class ConvDepthwiseHwcKernel final : public backends::Kernel {
 public:
  ConvDepthwiseHwcKernel(ConvAttrs a, DwVariant variant) : a_(std::move(a)), variant_(variant) {}
  Status enqueue(backends::LaunchContext const& ctx) const override {
    KILN_ASSIGN_OR_RETURN(ConvCall c, geometry(a_, ctx.inputs[0].shape, ctx.inputs[1].shape, ctx.outputs[0].shape));
    if (c.outCount == 0) return Status::ok();
    auto const& y = ctx.outputs[0];
    auto dt = static_cast<int32_t>(y.dtype);
    Epilogue ep = epilogueOf(a_, ctx);
    cudaStream_t stream = streamOf(ctx);
    // Each variant falls back to the next simpler one where a launch cannot take it (alignment, sizes).
    if (variant_ == DwVariant::kPipe &&
        launchDepthwiseHwcPipe(dt, c.g, ctx.inputs[0].data, ctx.inputs[1].data, ep, y.data, stream))
      return launchStatus(a_.who + ": pipelined channels-last depthwise convolution");
    if (variant_ == DwVariant::kTiled &&
        launchDepthwiseHwcTiled(dt, c.g, ctx.inputs[0].data, ctx.inputs[1].data, ep, y.data, stream))
      return launchStatus(a_.who + ": tiled channels-last depthwise convolution");
    if (variant_ != DwVariant::kScalar &&
        launchDepthwiseHwcVec(dt, c.g, ctx.inputs[0].data, ctx.inputs[1].data, ep, y.data, stream))
      return launchStatus(a_.who + ": vectorized channels-last depthwise convolution");
    if (!launchDepthwiseHwc(dt, c.g, ctx.inputs[0].data, ctx.inputs[1].data, ep, y.data, stream))
      return invalidArgument(a_.who, ": no channels-last depthwise convolution for ", dataTypeName(y.dtype), " at ",
                             dimsToString(y.shape));
    return launchStatus(a_.who + ": channels-last depthwise convolution");
  }

 private:
  ConvAttrs a_;
  DwVariant variant_;
};

backends::Tactic makeDepthwiseHwc(DwVariant variant) {
  backends::Tactic t;
  switch (variant) {
    case DwVariant::kScalar:
      t.name = "convolution_cuda_depthwise_hwc";
      t.priority = 32;
      break;
    case DwVariant::kVec:
      t.name = "convolution_cuda_depthwise_hwc_vec";
      t.priority = 33;
      break;
    case DwVariant::kTiled:
      t.name = "convolution_cuda_depthwise_hwc_tiled";
      t.priority = 31;  // below the others at level 0 until measurements say otherwise; timed above it
      break;
    case DwVariant::kPipe:
      t.name = "convolution_cuda_depthwise_hwc_pipe";
      t.priority = 30;  // likewise
      break;
  }
  t.op = ir::OpType::kConvolution;
  t.source = TacticSource::kKILN;
  t.formatAware = true;
  t.supports = [variant](ir::Node const& node, std::vector<ir::TensorInfo> const& in,
                         std::vector<ir::TensorInfo> const& out) {
    if (!supportsDepthwiseHwc(node, in, out)) return false;
    if (variant == DwVariant::kScalar) return true;
    // Whole 16-byte channel vectors, and one kernel's fp32 weights for one vector within a block's shared memory
    // (the tiled kernel: also one vector's input window).
    auto dt = static_cast<int32_t>(out[0].dtype);
    int width = depthwiseHwcVecWidth(dt);
    Dims const& w = in[1].shape;
    if (width == 0 || in[0].shape.d[1] % width != 0 || w.d[2] * w.d[3] * width * 4 > 48 * 1024) return false;
    if (variant == DwVariant::kVec) return true;
    auto a = readAttrs(node);
    if (!a.isOk()) return false;
    auto c = geometry(*a, in[0].shape, in[1].shape, out[0].shape);
    if (!c.isOk()) return false;
    return variant == DwVariant::kPipe ? depthwiseHwcPipeFits(dt, c->g) : depthwiseHwcTiledFits(dt, c->g);
  };
  t.create = [variant](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    KILN_ASSIGN_OR_RETURN(ConvAttrs a, readAttrs(node));
    return std::unique_ptr<backends::Kernel>(new ConvDepthwiseHwcKernel(std::move(a), variant));
  };
  return t;
}
backends::Tactic makeDepthwiseHwcScalar() { return makeDepthwiseHwc(DwVariant::kScalar); }
backends::Tactic makeDepthwiseHwcVec() { return makeDepthwiseHwc(DwVariant::kVec); }
backends::Tactic makeDepthwiseHwcTiled() { return makeDepthwiseHwc(DwVariant::kTiled); }
backends::Tactic makeDepthwiseHwcPipe() { return makeDepthwiseHwc(DwVariant::kPipe); }
KILN_REGISTER_CUDA_TACTIC(makeDepthwiseHwcVec);
KILN_REGISTER_CUDA_TACTIC(makeDepthwiseHwcScalar);
KILN_REGISTER_CUDA_TACTIC(makeDepthwiseHwcTiled);
KILN_REGISTER_CUDA_TACTIC(makeDepthwiseHwcPipe);

// Channels-last fp16/bf16 convolutions whose window holds at most 32 values (one group; a network's first layer: 3
// channels, 3x3, stride 2): launchSmallWindowConv, the small-channel pointwise kernel's tensor-core GEMM with each
// output pixel's window gathered from x as its row, everything fused and y written once with 16-byte stores.
class ConvSmallWindowKernel final : public backends::Kernel {
 public:
  explicit ConvSmallWindowKernel(ConvAttrs a) : a_(std::move(a)) {}
  Status enqueue(backends::LaunchContext const& ctx) const override {
    KILN_ASSIGN_OR_RETURN(ConvCall c, geometry(a_, ctx.inputs[0].shape, ctx.inputs[1].shape, ctx.outputs[0].shape));
    if (c.outCount == 0) return Status::ok();
    auto const& y = ctx.outputs[0];
    if (!launchSmallWindowConv(static_cast<int32_t>(y.dtype), c.g, ctx.inputs[0].data, ctx.inputs[1].data,
                               epilogueOf(a_, ctx), y.data, streamOf(ctx)))
      return invalidArgument(a_.who, ": no small-window convolution for ", dataTypeName(y.dtype), " x ",
                             dimsToString(ctx.inputs[0].shape), " w ", dimsToString(ctx.inputs[1].shape));
    return launchStatus(a_.who + ": small-window convolution");
  }

 private:
  ConvAttrs a_;
};

backends::Tactic makeSmallWindow() {
  backends::Tactic t;
  t.name = "convolution_cuda_smallwindow_hwc";
  t.op = ir::OpType::kConvolution;
  t.source = TacticSource::kKILN;
  t.priority = 29;  // below cuDNN's at level 0 until measurements say otherwise; timed above it
  t.formatAware = true;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    if (backends::nodeFormat(node) != TensorFormat::kHWC || !supportsConv(node, in, out)) return false;
    auto a = readAttrs(node);
    if (!a.isOk() || a->window.nbSpatial != 2) return false;
    Dims const& x = in[0].shape;
    Dims const& w = in[1].shape;
    Dims const& y = out[0].shape;
    if (!dimsKnown(x) || !dimsKnown(w) || !dimsKnown(y) || x.nbDims != 4 || w.nbDims != 4 || y.nbDims != 4)
      return false;
    if (w.d[2] * w.d[3] < 2) return false;  // 1x1: the pointwise tactics'
    auto c = geometry(*a, x, w, y);
    return c.isOk() && smallWindowConvFits(static_cast<int32_t>(out[0].dtype), c->g);
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    KILN_ASSIGN_OR_RETURN(ConvAttrs a, readAttrs(node));
    return std::unique_ptr<backends::Kernel>(new ConvSmallWindowKernel(std::move(a)));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeSmallWindow);

// `exactFp32`: the algorithm keeps fp32 accuracy (FFT and Winograd transforms do not reach 1e-5, so those claim
// fp32 only where TF32 is allowed anyway).
backends::Tactic makeCudnn(char const* name, cudnnConvolutionFwdAlgo_t algo, int priority, bool exactFp32,
                           bool fused = false) {
  backends::Tactic t;
  t.name = name;
  t.op = ir::OpType::kConvolution;
  t.source = TacticSource::kCUDNN;
  t.priority = priority;
  t.formatAware = true;
  // Channels-last through the implicit-GEMM algorithms (the transform-based ones want NCHW).
  bool hwcAlgo =
      algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  t.supports = [exactFp32, fused, hwcAlgo](ir::Node const& node, std::vector<ir::TensorInfo> const& in,
                                           std::vector<ir::TensorInfo> const& out) {
    if (!supportsConv(node, in, out)) return false;
    if (backends::nodeFormat(node) != TensorFormat::kLINEAR &&
        (backends::nodeFormat(node) != TensorFormat::kHWC || !hwcAlgo || !supportsHwc(node, in, out)))
      return false;
    // The fused tactic claims what it fuses: a bias, then ReLU or no activation.
    int64_t act = node.attrs.getInt("activation", -1);
    if (fused && (in.size() < 3 || in[2].shape.nbDims < 0 || (act != -1 && act != 0))) return false;
    return exactFp32 || out[0].dtype != DataType::kFLOAT || allowTf32(node);
  };
  t.create = [algo, fused](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    KILN_ASSIGN_OR_RETURN(ConvAttrs a, readAttrs(node));
    return std::unique_ptr<backends::Kernel>(new ConvCudnnKernel(std::move(a), algo, fused));
  };
  return t;
}

backends::Tactic makeImplicitPrecomp() {
  return makeCudnn("convolution_cudnn_precompgemm", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 30, true);
}
backends::Tactic makeImplicit() {
  return makeCudnn("convolution_cudnn_implicitgemm", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, 25, true);
}
backends::Tactic makeGemm() { return makeCudnn("convolution_cudnn_gemm", CUDNN_CONVOLUTION_FWD_ALGO_GEMM, 20, true); }
backends::Tactic makeFft() { return makeCudnn("convolution_cudnn_fft", CUDNN_CONVOLUTION_FWD_ALGO_FFT, 5, false); }
backends::Tactic makeFftTiling() {
  return makeCudnn("convolution_cudnn_ffttiling", CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING, 5, false);
}
backends::Tactic makeWinograd() {
  return makeCudnn("convolution_cudnn_winograd", CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, 6, false);
}
backends::Tactic makeWinogradNonfused() {
  return makeCudnn("convolution_cudnn_winogradnonfused", CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, 6, false);
}
backends::Tactic makeFusedPrecomp() {
  return makeCudnn("convolution_cudnn_fused_precompgemm", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 35, true,
                   true);
}
KILN_REGISTER_CUDA_TACTIC(makeFusedPrecomp);
KILN_REGISTER_CUDA_TACTIC(makeImplicitPrecomp);
KILN_REGISTER_CUDA_TACTIC(makeImplicit);
KILN_REGISTER_CUDA_TACTIC(makeGemm);
KILN_REGISTER_CUDA_TACTIC(makeFft);
KILN_REGISTER_CUDA_TACTIC(makeFftTiling);
KILN_REGISTER_CUDA_TACTIC(makeWinograd);
KILN_REGISTER_CUDA_TACTIC(makeWinogradNonfused);

}  // namespace
}  // namespace kiln::cuda
