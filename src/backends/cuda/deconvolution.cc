// Deconvolution (transposed convolution) on the GPU: cuDNN backward-data algorithms (one tactic each; asymmetric
// pads compute the uncropped output into the workspace and crop it) with the bias added by our copy/epilogue
// kernels, and a direct gather kernel of our own for every geometry (the cuDNN tactics' safe path too).
#include <algorithm>
#include <string>
#include <vector>

#include "backends/cuda/conv_cudnn.h"
#include "ir/infer/deconvolution_infer.h"

namespace kiln::cuda {
namespace {

using namespace convfamily;  // NOLINT: family helpers

struct DeconvAttrs {
  std::string who;
  ir::WindowParams window;
  int64_t groups = 1;
  bool tf32 = false;
};

Result<DeconvAttrs> readAttrs(ir::Node const& node) {
  DeconvAttrs a;
  a.who = node.describe();
  ir::Value const* w = node.input(1);
  int32_t ns = node.attrs.has("kernel_shape") ? static_cast<int32_t>(node.attrs.getInts("kernel_shape").size())
                                              : (w ? w->shape.nbDims - 2 : -1);
  if (ns < 1 || ns > 3) return invalidGraph(a.who, ": needs 1, 2 or 3 spatial dims");
  std::vector<int64_t> fallback;
  if (w && dimsKnown(w->shape))
    for (int32_t i = 2; i < w->shape.nbDims; ++i) fallback.push_back(w->shape.d[i]);
  KILN_ASSIGN_OR_RETURN(a.window, ir::readWindowParams(node, "kernel_shape", ns, true, fallback));
  a.groups = node.attrs.getInt("groups", 1);
  if (a.groups < 1) return invalidGraph(a.who, ": groups must be >= 1");
  a.tf32 = allowTf32(node);
  return a;
}

struct DeconvCall {
  ConvGeom g;  // c: input channels, k: output channels, padBegin: the effective begin pads
  std::vector<int64_t> in, out, kernel, stride, dil, padBegin, padEnd;
  int64_t outCount = 0;
};

// The geometry, checked as the reference checks it.
Result<DeconvCall> geometry(DeconvAttrs const& a, Dims const& x, Dims const& w, Dims const& y) {
  ir::WindowParams const& p = a.window;
  int32_t ns = p.nbSpatial;
  if (x.nbDims != ns + 2 || w.nbDims != ns + 2 || y.nbDims != ns + 2)
    return invalidArgument(a.who, ": x, w and y must have rank ", ns + 2);
  DeconvCall c;
  c.g.n = x.d[0];
  c.g.c = x.d[1];
  c.g.k = w.d[1] * a.groups;
  c.g.groups = a.groups;
  if (w.d[0] != c.g.c || c.g.c % a.groups != 0 || y.d[0] != c.g.n || y.d[1] != c.g.k)
    return invalidArgument(a.who, ": shapes x ", dimsToString(x), ", w ", dimsToString(w), ", y ", dimsToString(y),
                           " do not agree with groups = ", a.groups);
  for (int32_t i = 0; i < ns; ++i) {
    if (w.d[2 + i] != p.kernel[i]) return invalidArgument(a.who, ": weights do not match kernel_shape");
    ir::WindowDim wd = ir::deconvWindowDim(x.d[2 + i], p.kernel[i], p.strides[i], p.dilations[i], p.padsBegin[i],
                                           p.padsEnd[i], p.mode);
    if (wd.out != y.d[2 + i])
      return invalidArgument(a.who, ": output ", dimsToString(y), " does not match the window geometry");
    c.in.push_back(x.d[2 + i]);
    c.out.push_back(y.d[2 + i]);
    c.padBegin.push_back(wd.padBegin);
    c.padEnd.push_back(wd.padEnd);
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

void const* biasOf(backends::LaunchContext const& ctx) {
  return ctx.inputs.size() > 2 && ctx.inputs[2].data ? ctx.inputs[2].data : nullptr;
}

Status runDirect(DeconvAttrs const& a, DeconvCall const& c, backends::LaunchContext const& ctx) {
  auto const& y = ctx.outputs[0];
  if (!launchDeconvDirect(static_cast<int32_t>(y.dtype), c.g, ctx.inputs[0].data, ctx.inputs[1].data, biasOf(ctx),
                          y.data, streamOf(ctx)))
    return invalidArgument(a.who, ": no direct deconvolution for ", dataTypeName(y.dtype));
  return launchStatus(a.who + ": direct deconvolution");
}

bool supportsDeconv(ir::Node const& node, std::vector<ir::TensorInfo> const& in,
                    std::vector<ir::TensorInfo> const& out) {
  return sameFloatTypeWindowOp(in, out, 3) && readAttrs(node).isOk();
}

class DeconvDirectKernel final : public backends::Kernel {
 public:
  explicit DeconvDirectKernel(DeconvAttrs a) : a_(std::move(a)) {}
  Status enqueue(backends::LaunchContext const& ctx) const override {
    KILN_ASSIGN_OR_RETURN(DeconvCall c, geometry(a_, ctx.inputs[0].shape, ctx.inputs[1].shape, ctx.outputs[0].shape));
    if (c.outCount == 0) return Status::ok();
    return runDirect(a_, c, ctx);
  }

 private:
  DeconvAttrs a_;
};

// --- cuDNN: the deconvolution is the data gradient of the convolution that maps y's shape onto x's ---

struct DeconvPlan : ConvDescriptors {
  bool cudnn = false;
  bool cropped = false;  // cuDNN writes the uncropped output [n, k, full...] into the workspace
  int64_t fullExt[3] = {1, 1, 1}, outExt[3] = {1, 1, 1}, offset[3] = {0, 0, 0};
  size_t fullBytes = 0;
  cudnnConvolutionBwdDataAlgo_t algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
  size_t algoWs = 0;
  bool safeOk = false;  // ALGO_0 as the second choice when the workspace is short
  size_t safeWs = 0;
};

Status configure(DeconvPlan& p, DeconvAttrs const& a, DeconvCall const& c, DataType dt,
                 cudnnConvolutionBwdDataAlgo_t algo) {
  int32_t ns = a.window.nbSpatial;
  bool sym = true;
  for (int32_t i = 0; i < ns; ++i) sym = sym && c.padBegin[i] == c.padEnd[i];
  std::vector<int64_t> yout = c.out, pads = c.padBegin;
  if (!sym) {
    // Uncropped: (in - 1) * stride + DK, then the window [padBegin, padBegin + out) is copied out.
    p.cropped = true;
    for (int32_t i = 0; i < ns; ++i) {
      yout[i] = (c.in[i] - 1) * c.stride[i] + c.dil[i] * (c.kernel[i] - 1) + 1;
      pads[i] = 0;
    }
    to3(yout, p.fullExt, 1);
    to3(c.out, p.outExt, 1);
    std::vector<int64_t> neg;
    for (int64_t v : c.padBegin) neg.push_back(-v);
    to3(neg, p.offset, 0);
    int64_t vol = c.g.n * c.g.k;
    for (int64_t e : yout) vol *= e;
    p.fullBytes = alignUp(static_cast<size_t>(vol) * dataTypeSize(dt));
  }
  std::vector<int64_t> xd{c.g.n, c.g.c}, wd{c.g.c, c.g.k / c.g.groups}, yd{c.g.n, c.g.k};
  for (int64_t v : cudnnSpatial(c.in, 1)) xd.push_back(v);
  for (int64_t v : cudnnSpatial(c.kernel, 1)) wd.push_back(v);
  for (int64_t v : cudnnSpatial(yout, 1)) yd.push_back(v);
  // The forward convolution of the (uncropped) output must land exactly on x's shape.
  KILN_RETURN_IF_ERROR(setConvDescriptors(p, dt, xd, wd, yd, cudnnSpatial(pads, 0), cudnnSpatial(c.stride, 1),
                                          cudnnSpatial(c.dil, 1), a.groups, a.tf32, true, a.who));
  KILN_ASSIGN_OR_RETURN(cudnnHandle_t h, cudnn());
  p.algo = algo;
  cudnnStatus_t s = cudnnGetConvolutionBackwardDataWorkspaceSize(h, p.w.get(), p.x.get(), p.conv.get(), p.y.get(),
                                                                 CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, &p.safeWs);
  p.safeOk = s == CUDNN_STATUS_SUCCESS;
  s = cudnnGetConvolutionBackwardDataWorkspaceSize(h, p.w.get(), p.x.get(), p.conv.get(), p.y.get(), algo, &p.algoWs);
  if (s != CUDNN_STATUS_SUCCESS) {
    if (!p.safeOk) return cudnnStatusOf(s, a.who + ": cuDNN backward-data algorithm");
    p.algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
    p.algoWs = p.safeWs;
  }
  p.cudnn = true;
  return Status::ok();
}

class DeconvCudnnKernel final : public backends::Kernel {
 public:
  DeconvCudnnKernel(DeconvAttrs a, cudnnConvolutionBwdDataAlgo_t algo) : a_(std::move(a)), algo_(algo) {}

  size_t workspaceSize(std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) const override {
    if (in.size() < 2 || out.empty() || !dimsKnown(in[0].shape) || !dimsKnown(in[1].shape) || !dimsKnown(out[0].shape))
      return 0;
    auto c = geometry(a_, in[0].shape, in[1].shape, out[0].shape);
    if (!c.isOk() || c->outCount == 0) return 0;
    auto p = plan(*c, out[0].dtype, in[0].shape, in[1].shape, out[0].shape);
    if (!p.isOk() || !(*p)->cudnn) return 0;
    return (*p)->fullBytes + std::max((*p)->algoWs, (*p)->safeOk ? (*p)->safeWs : 0);
  }

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& w = ctx.inputs[1];
    auto const& y = ctx.outputs[0];
    KILN_ASSIGN_OR_RETURN(DeconvCall c, geometry(a_, x.shape, w.shape, y.shape));
    if (c.outCount == 0) return Status::ok();
    KILN_ASSIGN_OR_RETURN(auto p, plan(c, y.dtype, x.shape, w.shape, y.shape));
    if (!p->cudnn) return runDirect(a_, c, ctx);
    cudnnConvolutionBwdDataAlgo_t algo = p->algo;
    size_t ws = p->algoWs;
    if (p->fullBytes + ws > ctx.workspaceSize) {
      if (!p->safeOk || p->fullBytes + p->safeWs > ctx.workspaceSize) return runDirect(a_, c, ctx);
      algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
      ws = p->safeWs;
    }
    cudaStream_t stream = streamOf(ctx);
    KILN_ASSIGN_OR_RETURN(cudnnHandle_t h, cudnn());
    KILN_CUDNN_RETURN_IF_ERROR(cudnnSetStream(h, stream), "cudnnSetStream");
    char* scratch = static_cast<char*>(ctx.workspace);
    void* dst = y.data;
    if (p->cropped) {
      dst = scratch;
      scratch += p->fullBytes;
    }
    float one = 1.f, zero = 0.f;
    cudnnStatus_t s = cudnnConvolutionBackwardData(h, &one, p->w.get(), w.data, p->x.get(), x.data, p->conv.get(), algo,
                                                   ws ? scratch : nullptr, ws, &zero, p->y.get(), dst);
    if (s == CUDNN_STATUS_NOT_SUPPORTED || s == CUDNN_STATUS_BAD_PARAM) return runDirect(a_, c, ctx);
    if (s != CUDNN_STATUS_SUCCESS) return cudnnStatusOf(s, a_.who + ": cudnnConvolutionBackwardData");
    void const* bias = biasOf(ctx);
    auto dt = static_cast<int32_t>(y.dtype);
    if (p->cropped) {
      if (!launchShiftCopy(dt, c.g.n * c.g.k, p->fullExt, p->outExt, p->offset, dst, y.data, bias, c.g.k, stream))
        return invalidArgument(a_.who, ": no crop copy for ", dataTypeName(y.dtype));
      return launchStatus(a_.who + ": cropping the deconvolution");
    }
    if (!bias) return Status::ok();
    Epilogue ep;
    ep.bias = bias;
    if (!launchEpilogue(dt, c.g.n, c.g.k, c.g.out[0] * c.g.out[1] * c.g.out[2], ep, y.data, stream))
      return invalidArgument(a_.who, ": no bias kernel for ", dataTypeName(y.dtype));
    return launchStatus(a_.who + ": deconvolution bias");
  }

 private:
  Result<std::shared_ptr<DeconvPlan const>> plan(DeconvCall const& c, DataType dt, Dims const& x, Dims const& w,
                                                 Dims const& y) const {
    std::vector<int64_t> key{static_cast<int64_t>(dt)};
    for (Dims const* d : {&x, &w, &y})
      for (int32_t i = 0; i < d->nbDims; ++i) key.push_back(d->d[i]);
    return plans_.get(key, [&]() -> Result<std::shared_ptr<DeconvPlan const>> {
      bool empty = c.g.n == 0 || c.g.c == 0 || c.g.k == 0;
      for (int64_t v : c.in) empty = empty || v == 0;
      auto p = std::make_shared<DeconvPlan>();
      Status cs = empty ? Status::ok() : configure(*p, a_, c, dt, algo_);
      // Out of memory (the cuDNN handle) is no refusal: not cached, so that a later run may succeed.
      if (cs.code() == StatusCode::kOutOfMemory) return cs;
      if (empty || !cs.isOk())
        return std::shared_ptr<DeconvPlan const>(std::make_shared<DeconvPlan>());  // the direct kernel runs this shape
      return std::shared_ptr<DeconvPlan const>(p);
    });
  }

  DeconvAttrs a_;
  cudnnConvolutionBwdDataAlgo_t algo_;
  PlanCache<DeconvPlan> plans_;
};

backends::Tactic makeDirect() {
  backends::Tactic t;
  t.name = "deconvolution_cuda_direct";
  t.op = ir::OpType::kDeconvolution;
  t.source = TacticSource::kKILN;
  t.priority = 10;
  t.supports = supportsDeconv;
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    KILN_ASSIGN_OR_RETURN(DeconvAttrs a, readAttrs(node));
    return std::unique_ptr<backends::Kernel>(new DeconvDirectKernel(std::move(a)));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeDirect);

// `exactFp32`: as for Convolution, FFT / Winograd claim fp32 only where TF32 is allowed.
backends::Tactic makeCudnn(char const* name, cudnnConvolutionBwdDataAlgo_t algo, int priority, bool exactFp32) {
  backends::Tactic t;
  t.name = name;
  t.op = ir::OpType::kDeconvolution;
  t.source = TacticSource::kCUDNN;
  t.priority = priority;
  t.supports = [exactFp32](ir::Node const& node, std::vector<ir::TensorInfo> const& in,
                           std::vector<ir::TensorInfo> const& out) {
    if (!supportsDeconv(node, in, out)) return false;
    return exactFp32 || out[0].dtype != DataType::kFLOAT || allowTf32(node);
  };
  t.create = [algo](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    KILN_ASSIGN_OR_RETURN(DeconvAttrs a, readAttrs(node));
    return std::unique_ptr<backends::Kernel>(new DeconvCudnnKernel(std::move(a), algo));
  };
  return t;
}

backends::Tactic makeAlgo1() {
  return makeCudnn("deconvolution_cudnn_algo1", CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, 30, true);
}
backends::Tactic makeAlgo0() {
  return makeCudnn("deconvolution_cudnn_algo0", CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, 25, true);
}
backends::Tactic makeFftTiling() {
  return makeCudnn("deconvolution_cudnn_ffttiling", CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING, 5, false);
}
backends::Tactic makeWinogradNonfused() {
  return makeCudnn("deconvolution_cudnn_winogradnonfused", CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED, 6, false);
}
KILN_REGISTER_CUDA_TACTIC(makeAlgo1);
KILN_REGISTER_CUDA_TACTIC(makeAlgo0);
KILN_REGISTER_CUDA_TACTIC(makeFftTiling);
KILN_REGISTER_CUDA_TACTIC(makeWinogradNonfused);

}  // namespace
}  // namespace kiln::cuda
