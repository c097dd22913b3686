// oneDNN Deconvolution tactic (deconvolution_onednn_direct): 2-D and 3-D fp32 transposed convolutions, grouped,
// strided, dilated, with TensorRT's padding modes and a fused bias. Activations plain NC(D)HW; the constant
// weights ([C, K/groups, k...], oneDNN's (g)iohw) are reordered once into the primitive's format.
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/cpu/onednn_util.h"
#include "ir/infer/deconvolution_infer.h"
#include "ir/infer/window_util.h"

namespace kiln::backends::cpu {
namespace {

using dnnl::memory;
using ir::OpType;

struct DeconvConfig {
  std::string who;
  ir::WindowParams window;
  int64_t groups = 1;
  bool hasBias = false;
  HostTensor weights;  // [C, K/groups, k...] float32
};

struct DeconvPrimitive {
  dnnl::deconvolution_forward::primitive_desc pd;
  dnnl::deconvolution_forward prim;
  memory weights;
};

class OnednnDeconvKernel final : public Kernel {
 public:
  explicit OnednnDeconvKernel(DeconvConfig cfg) : cfg_(std::move(cfg)) {}

  Result<std::shared_ptr<DeconvPrimitive const>> primitive(Dims const& x, Dims const& y, int threads) const {
    std::vector<int64_t> key = dimsToVector(x);
    for (int64_t v : dimsToVector(y))
      key.push_back(v);
    key.push_back(threads);
    return cache_.get(std::move(key), [&] { return build(x, y); });
  }

  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& x = ctx.inputs[0];
    TensorView const& y = ctx.outputs[0];
    TensorView const* bias = cfg_.hasBias && ctx.inputs.size() > 2 && ctx.inputs[2].data ? &ctx.inputs[2] : nullptr;
    if (cfg_.hasBias && !bias)
      return invalidArgument(cfg_.who, ": the bias input the kernel was built for is missing");
    if (y.count() == 0)
      return Status::ok();
    if (x.count() == 0)
      return unsupported(cfg_.who, ": the oneDNN deconvolution needs a non-empty input");
    int64_t k = cfg_.weights.shape().d[1] * cfg_.groups;
    if (bias && bias->count() != k)
      return invalidArgument(cfg_.who, ": bias must hold ", k, " values");
    OmpThreads threads(ctx);
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<DeconvPrimitive const> p, primitive(x.shape, y.shape, threads.count()));
    try {
      dnnl::engine& eng = engine();
      dnnl::stream stream(eng);
      memory::desc spDesc = p->pd.scratchpad_desc();
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(p->pd.src_desc(), eng, x.data)},
                                           {DNNL_ARG_WEIGHTS, p->weights},
                                           {DNNL_ARG_DST, memory(p->pd.dst_desc(), eng, y.data)},
                                           {DNNL_ARG_SCRATCHPAD, memory(spDesc, eng, threadScratch(spDesc.get_size()))}};
      if (bias)
        args.emplace(DNNL_ARG_BIAS, memory(p->pd.bias_desc(), eng, bias->data));
      p->prim.execute(stream, args);
      stream.wait();
    } catch (dnnl::error const& e) {
      return internalError(cfg_.who, ": oneDNN deconvolution failed: ", e.what());
    }
    return Status::ok();
  }

 private:
  Result<std::shared_ptr<DeconvPrimitive const>> build(Dims const& x, Dims const& y) const {
    ir::WindowParams const& wp = cfg_.window;
    int32_t ns = wp.nbSpatial;
    Dims const& w = cfg_.weights.shape();
    int64_t k = w.d[1] * cfg_.groups;
    if (x.nbDims != ns + 2 || y.nbDims != ns + 2 || x.d[0] != y.d[0] || x.d[1] != w.d[0] || y.d[1] != k)
      return invalidArgument(cfg_.who, ": shapes x ", dimsToString(x), ", w ", dimsToString(w), ", y ",
                             dimsToString(y), " do not agree with groups = ", cfg_.groups);
    memory::dims strides, dil, padL, padR;
    for (int32_t i = 0; i < ns; ++i) {
      int64_t in = x.d[2 + i], out = y.d[2 + i], dk = wp.dilations[i] * (wp.kernel[i] - 1) + 1;
      ir::WindowDim g = ir::deconvWindowDim(in, wp.kernel[i], wp.strides[i], wp.dilations[i], wp.padsBegin[i],
                                            wp.padsEnd[i], wp.mode);
      if (g.out != out)
        return invalidArgument(cfg_.who, ": output ", dimsToString(y), " does not match the window geometry");
      // oneDNN: out = (in - 1) * stride + dk - padL - padR.
      int64_t pr = (in - 1) * wp.strides[i] + dk - g.padBegin - out;
      if (g.padBegin < 0 || pr < 0)
        return unsupported(cfg_.who, ": the window geometry needs negative padding");
      strides.push_back(wp.strides[i]);
      dil.push_back(wp.dilations[i] - 1);
      padL.push_back(g.padBegin);
      padR.push_back(pr);
    }
    bool grouped = cfg_.groups > 1;
    memory::dims wd;  // oneDNN's logical (g, oc, ic, k...)
    if (grouped)
      wd.push_back(cfg_.groups);
    wd.push_back(w.d[1]);
    wd.push_back(w.d[0] / cfg_.groups);
    for (int32_t i = 2; i < w.nbDims; ++i)
      wd.push_back(w.d[i]);
    memory::format_tag act = ns == 2 ? memory::format_tag::nchw : memory::format_tag::ncdhw;
    memory::format_tag plainW = ns == 2 ? (grouped ? memory::format_tag::giohw : memory::format_tag::iohw)
                                        : (grouped ? memory::format_tag::giodhw : memory::format_tag::iodhw);
    auto f32 = memory::data_type::f32;
    try {
      dnnl::engine& eng = engine();
      memory::desc srcMd(toDnnl(x), f32, act), dstMd(toDnnl(y), f32, act);
      memory::desc weiMd(wd, f32, memory::format_tag::any);
      memory::desc biasMd = cfg_.hasBias ? memory::desc({k}, f32, memory::format_tag::a) : memory::desc();
      dnnl::deconvolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                          srcMd, weiMd, biasMd, dstMd, strides, dil, padL, padR);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::deconvolution_forward::primitive_desc pd(d, attr, eng);
      auto p = std::make_shared<DeconvPrimitive>(DeconvPrimitive{pd, dnnl::deconvolution_forward(pd), memory()});
      p->weights = packed_.get(pd.weights_desc(), memory::desc(wd, f32, plainW), cfg_.weights.data());
      return std::shared_ptr<DeconvPrimitive const>(std::move(p));
    } catch (dnnl::error const& e) {
      return unsupported(cfg_.who, ": oneDNN has no deconvolution for x ", dimsToString(x), ", y ", dimsToString(y),
                         ": ", e.what());
    }
  }

  DeconvConfig cfg_;
  PrimitiveCache<DeconvPrimitive> cache_;
  mutable PackedWeights packed_;  // used by build(), under cache_'s lock
};

Result<DeconvConfig> readConfig(ir::Node const& node) {
  HostTensor const* w = constantInput(node, 1);
  if (!w || w->dtype() != DataType::kFLOAT)
    return invalidGraph(node.describe(), ": the oneDNN deconvolution needs constant float32 weights");
  int32_t ns = w->shape().nbDims - 2;
  if (ns != 2 && ns != 3)
    return invalidGraph(node.describe(), ": the oneDNN deconvolution runs 2-D and 3-D windows only");
  std::vector<int64_t> fallback;
  for (int32_t i = 2; i < w->shape().nbDims; ++i)
    fallback.push_back(w->shape().d[i]);
  DeconvConfig cfg;
  cfg.who = node.describe();
  KILN_ASSIGN_OR_RETURN(cfg.window, ir::readWindowParams(node, "kernel_shape", ns, true, fallback));
  for (int32_t i = 0; i < ns; ++i)
    if (cfg.window.kernel[i] != w->shape().d[2 + i])
      return invalidGraph(node.describe(), ": weights do not match kernel_shape");
  cfg.groups = node.attrs.getInt("groups", 1);
  if (cfg.groups < 1 || w->shape().d[0] % cfg.groups != 0)
    return invalidGraph(node.describe(), ": groups must be >= 1 and divide the input channels");
  cfg.hasBias = node.input(2) != nullptr;
  cfg.weights = *w;
  return cfg;
}

bool supportsDeconv(ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
  if (in.size() < 2 || in.size() > 3 || out.size() != 1 || out[0].dtype != DataType::kFLOAT)
    return false;
  int32_t rank = in[0].shape.nbDims;
  if (rank != 4 && rank != 5)
    return false;
  for (TensorInfo const& t : in)
    if (t.shape.nbDims >= 0 && t.dtype != DataType::kFLOAT)
      return false;
  HostTensor const* w = constantInput(node, 1);
  if (!w || w->shape().nbDims != rank)
    return false;
  for (int32_t i = 0; i < rank; ++i)
    if (w->shape().d[i] <= 0)
      return false;
  Result<DeconvConfig> cfg = readConfig(node);
  if (!cfg.isOk())
    return false;
  // Output padding beyond what oneDNN's geometry can express (negative right padding) stays with the reference.
  ir::WindowParams const& wp = cfg->window;
  for (int32_t i = 0; i < wp.nbSpatial; ++i) {
    int64_t inDim = in[0].shape.d[2 + i];
    if (inDim <= 0)
      continue;
    ir::WindowDim g = ir::deconvWindowDim(inDim, wp.kernel[i], wp.strides[i], wp.dilations[i], wp.padsBegin[i],
                                          wp.padsEnd[i], wp.mode);
    int64_t dk = wp.dilations[i] * (wp.kernel[i] - 1) + 1;
    if (g.padBegin < 0 || (inDim - 1) * wp.strides[i] + dk - g.padBegin - g.out < 0)
      return false;
  }
  return true;
}

Tactic deconvolutionTactic() {
  Tactic t;
  t.name = "deconvolution_onednn_direct";
  t.op = OpType::kDeconvolution;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;
  t.priority = 10;  // ahead of the reference (0)
  t.supports = supportsDeconv;
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
    KILN_ASSIGN_OR_RETURN(DeconvConfig cfg, readConfig(node));
    auto k = std::make_unique<OnednnDeconvKernel>(std::move(cfg));
    KILN_RETURN_IF_ERROR(buildPrimitiveForKnownShapes(*k, node));
    return std::unique_ptr<Kernel>(std::move(k));
  };
  return t;
}

KILN_REGISTER_TACTIC(deconvolutionTactic);

}  // namespace
}  // namespace kiln::backends::cpu
