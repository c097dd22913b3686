// oneDNN Convolution tactics: convolution_onednn_direct (2-D and 3-D fp32 or bf16 convolutions, grouped, strided,
// dilated, any padding mode) and convolution_onednn_winograd_4x3 / _2x3 (3x3 stride-1 2-D ones through Winograd's
// F(4x4, 3x3) or F(2x2, 3x3) transforms, candidates the builder times against the direct one), all with fused bias,
// residual (a sum post-op) and activation (eltwise post-ops). Activations come and go in the formats the builder
// recorded (cpu_formats_in/out: plain NC(D)HW or a 4-D blocked or channels-last format); the primitive picks its own,
// and activations are reordered only where the two differ. The constant weights are reordered once into the primitive's
// format.
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/onednn_util.h"
#include "backends/cpu/swish.h"
#include "ir/infer/window_util.h"

namespace kiln::backends::cpu {
namespace {

using dnnl::memory;
using ir::OpType;

struct ConvConfig {
  std::string who;
  ir::WindowParams window;
  int64_t groups = 1;
  int64_t activation = -1;
  float alpha = 0, beta = 0;
  bool swish = false;  // cpu_swish: y * sigmoid(y) after the activation
  bool hasBias = false;
  bool hasResidual = false;
  // convolution_direct, or convolution_winograd (the Winograd tactics: activations in the primitive's blocked
  // format, reordered from and to the recorded ones where they differ).
  dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct;
  // Element type of x, w, y, bias and residual: f32, or bf16 (oneDNN accumulates in fp32; Winograd is f32 only).
  memory::data_type dt = memory::data_type::f32;
  // Winograd: the oneDNN implementation to take, by a part of its name ("wino_2x3": F(2x2, 3x3); "wino_4x3":
  // F(4x4, 3x3)); oneDNN lists both where both apply, and which is faster depends on the shape.
  std::string winogradImpl;
  ActFormat srcFormat = ActFormat::kPLAIN, resFormat = ActFormat::kPLAIN, dstFormat = ActFormat::kPLAIN;
  HostTensor weights;  // the Constant's data, [K, C/groups, k...] in `dt` or float32 (converted when reordered)
};

// One primitive for one pair of activation shapes and one OpenMP thread count.
struct ConvPrimitive {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward prim;
  memory weights;  // in pd.weights_desc()'s format
  // The activations as they are in memory (the recorded formats), and reorders to/from the primitive's formats
  // (null where they agree).
  memory::desc src, dst, res;
  std::shared_ptr<dnnl::reorder const> srcIn, resIn, dstOut;
};

class OnednnConvKernel final : public Kernel {
 public:
  explicit OnednnConvKernel(ConvConfig cfg) : cfg_(std::move(cfg)) {}

  // Builds (or finds) the primitive for these shapes; reorders the weights the first time a format is needed.
  Result<std::shared_ptr<ConvPrimitive const>> primitive(Dims const& x, Dims const& y, int threads) const {
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
    TensorView const* res = cfg_.hasResidual && ctx.inputs.size() > 3 && ctx.inputs[3].data ? &ctx.inputs[3] : nullptr;
    if ((cfg_.hasBias && !bias) || (cfg_.hasResidual && !res))
      return invalidArgument(cfg_.who, ": a bias or residual input the kernel was built for is missing");
    if (y.count() == 0)
      return Status::ok();
    if (x.count() == 0)
      return unsupported(cfg_.who, ": the oneDNN convolution needs a non-empty input");
    if (res && !dimsEqual(res->shape, y.shape))
      return invalidArgument(cfg_.who, ": residual must have y's shape");
    if (bias && bias->count() != cfg_.weights.shape().d[0])
      return invalidArgument(cfg_.who, ": bias must hold ", cfg_.weights.shape().d[0], " values");
    OmpThreads threads(ctx);
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<ConvPrimitive const> p, primitive(x.shape, y.shape, threads.count()));
    try {
      dnnl::engine& eng = engine();
      dnnl::stream stream(eng);
      memory::desc srcMd = p->pd.src_desc(), dstMd = p->pd.dst_desc();
      void* src = x.data;
      if (p->srcIn) {
        src = threadScratch(srcMd.get_size(), 1);
        runReorder(p->srcIn.get(), p->src, x.data, srcMd, src, stream);
      }
      void* dst = p->dstOut ? threadScratch(dstMd.get_size(), 2) : y.data;
      // The sum post-op adds what dst holds: the residual goes there first (reordered when its format differs).
      // The builder usually places y in the residual's buffer (outputMayReuseInput below): nothing is copied then.
      if (res) {
        if (p->resIn && res->data == dst) {
          void* tmp = threadScratch(dstMd.get_size(), 3);
          runReorder(p->resIn.get(), p->res, res->data, dstMd, tmp, stream);
          std::memcpy(dst, tmp, dstMd.get_size());
        } else {
          runReorder(p->resIn.get(), p->res, res->data, dstMd, dst, stream);
        }
      }
      memory::desc spDesc = p->pd.scratchpad_desc();
      memory scratch(spDesc, eng, threadScratch(spDesc.get_size()));
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(srcMd, eng, src)},
                                           {DNNL_ARG_WEIGHTS, p->weights},
                                           {DNNL_ARG_DST, memory(dstMd, eng, dst)},
                                           {DNNL_ARG_SCRATCHPAD, scratch}};
      if (bias)
        args.emplace(DNNL_ARG_BIAS, memory(p->pd.bias_desc(), eng, bias->data));
      p->prim.execute(stream, args);
      if (ownSwish(volume(y.shape))) {
        stream.wait();
        swishInPlace(static_cast<float*>(dst), static_cast<int64_t>(dstMd.get_size() / sizeof(float)), threads.count());
      }
      if (p->dstOut)
        runReorder(p->dstOut.get(), dstMd, dst, p->dst, y.data, stream);
      stream.wait();
    } catch (dnnl::error const& e) {
      return internalError(cfg_.who, ": oneDNN convolution failed: ", e.what());
    }
    return Status::ok();
  }

  // The primitive descriptor for these shapes (what build() makes a primitive of; the Winograd tactics'
  // supports() asks for it to learn whether oneDNN has a Winograd kernel for the node).
  // `winograd`: the configured Winograd implementation (else direct).
  Result<dnnl::convolution_forward::primitive_desc> primitiveDesc(Dims const& x, Dims const& y, bool winograd) const {
    ir::WindowParams const& wp = cfg_.window;
    int32_t ns = wp.nbSpatial;
    Dims const& w = cfg_.weights.shape();
    if (x.nbDims != ns + 2 || y.nbDims != ns + 2 || x.d[0] != y.d[0] || x.d[1] != w.d[1] * cfg_.groups ||
        y.d[1] != w.d[0])
      return invalidArgument(cfg_.who, ": shapes x ", dimsToString(x), ", w ", dimsToString(w), ", y ",
                             dimsToString(y), " do not agree with groups = ", cfg_.groups);
    std::vector<int64_t> in(ns);
    for (int32_t i = 0; i < ns; ++i)
      in[i] = x.d[2 + i];
    std::vector<ir::WindowDim> geo = ir::computeWindow(wp, in);
    memory::dims strides, dil, padL, padR;
    for (int32_t i = 0; i < ns; ++i) {
      int64_t dk = wp.dilations[i] * (wp.kernel[i] - 1) + 1, out = y.d[2 + i];
      if (geo[i].out != out)
        return invalidArgument(cfg_.who, ": output ", dimsToString(y), " does not match the window geometry");
      int64_t pl = geo[i].padBegin, pr = rightPadding(in[i], out, dk, wp.strides[i], pl, geo[i].padEnd);
      if (pr < 0)
        return unsupported(cfg_.who, ": the window geometry needs negative padding");
      strides.push_back(wp.strides[i]);
      dil.push_back(wp.dilations[i] - 1);
      padL.push_back(pl);
      padR.push_back(pr);
    }
    auto f32 = cfg_.dt;  // (or bf16)
    try {
      KILN_ASSIGN_OR_RETURN(memory::desc srcIs, activationDesc(x, cfg_.srcFormat, cfg_.dt));
      KILN_ASSIGN_OR_RETURN(memory::desc dstIs, activationDesc(y, cfg_.dstFormat, cfg_.dt));
      // Recorded formats in memory; the primitive chooses its own (format any) for 2-D convolutions where the
      // recorded one is plain. A recorded non-plain format is what the builder chose for this primitive: asked for
      // as it is, except by Winograd, whose kernels take nChw16c only (any lets oneDNN say which).
      memory::desc anyX(toDnnl(x), f32, memory::format_tag::any), anyY(toDnnl(y), f32, memory::format_tag::any);
      // oneDNN 2.6's channels-last (brgemm) convolutions get chains of three eltwise post-ops wrong (softplus,
      // scaled tanh; the tests show it): those run on plain activations, reordered where recorded otherwise.
      dnnl::post_ops probe;
      appendActivation(probe, cfg_.activation, cfg_.alpha, cfg_.beta);
      bool ownSwish = this->ownSwish(volume(y));
      if (cfg_.swish && !ownSwish) probe.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, 1.f, 0.f);
      bool plainOnly = !winograd && probe.len() > 2;
      memory::desc srcPlain(toDnnl(x), f32, ns == 2 ? memory::format_tag::nchw : memory::format_tag::ncdhw);
      memory::desc dstPlain(toDnnl(y), f32, ns == 2 ? memory::format_tag::nchw : memory::format_tag::ncdhw);
      bool srcAny = winograd || (ns == 2 && cfg_.srcFormat == ActFormat::kPLAIN);
      bool dstAny = winograd || (ns == 2 && cfg_.dstFormat == ActFormat::kPLAIN);
      memory::desc srcMd = plainOnly ? srcPlain : srcAny ? anyX : srcIs;
      memory::desc dstMd = plainOnly ? dstPlain : dstAny ? anyY : dstIs;
      memory::desc weiMd(weightDims(), f32, memory::format_tag::any);
      memory::desc biasMd = cfg_.hasBias ? memory::desc({w.d[0]}, f32, memory::format_tag::a) : memory::desc();
      // The direct tactic is what the level-0 heuristic takes: Winograd's transforms round differently (norm-
      // relative errors of 1e-6 against the fp64 reference, where direct gives 1e-7), so it is only a timed
      // candidate.
      dnnl::algorithm algorithm =
          winograd ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct;
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, algorithm, srcMd, weiMd, biasMd, dstMd,
                                        strides, dil, padL, padR);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::post_ops ops;
      if (cfg_.hasResidual)
        ops.append_sum(1.f);
      if (!appendActivation(ops, cfg_.activation, cfg_.alpha, cfg_.beta))
        return unsupported(cfg_.who, ": activation ", cfg_.activation, " has no oneDNN post-op");
      // cpu_swish: Kiln's own loop after the primitive where the CPU has AVX-512 (oneDNN 2.6's swish post-op
      // took 0.135 against 0.049 ms for the depthwise convolution alone over EfficientNet's 32 x 112 x 112).
      if (cfg_.swish && !ownSwish)
        ops.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, 1.f, 0.f);  // x * sigmoid(1 * x)
      attr.set_post_ops(ops);
      dnnl::convolution_forward::primitive_desc pd(d, attr, engine());
      if (!winograd) return pd;
      do {
        if (std::string(pd.impl_info_str()).find(cfg_.winogradImpl) != std::string::npos) return pd;
      } while (pd.next_impl());
      return unsupported(cfg_.who, ": oneDNN has no ", cfg_.winogradImpl, " convolution for x ", dimsToString(x),
                         ", y ", dimsToString(y));
    } catch (dnnl::error const& e) {
      return unsupported(cfg_.who, ": oneDNN has no ", winograd ? "Winograd " : "", "convolution for x ",
                         dimsToString(x), ", y ", dimsToString(y), ": ", e.what());
    }
  }

 private:
  // cpu_swish as Kiln's own fp32 loop after the primitive (else oneDNN's post-op; always for bf16 outputs).
  bool ownSwish(int64_t outputs) const {
    return cfg_.swish && cfg_.dt == memory::data_type::f32 && ownSwishFor(outputs);
  }

  // oneDNN's weight dims: [K, C/groups, k...], with a leading groups dim when grouped.
  memory::dims weightDims() const {
    Dims const& w = cfg_.weights.shape();
    memory::dims wd;
    if (cfg_.groups > 1) wd.push_back(cfg_.groups);
    wd.push_back(w.d[0] / cfg_.groups);
    for (int32_t i = 1; i < w.nbDims; ++i) wd.push_back(w.d[i]);
    return wd;
  }

  Result<std::shared_ptr<ConvPrimitive const>> build(Dims const& x, Dims const& y) const {
    bool winograd = cfg_.algorithm == dnnl::algorithm::convolution_winograd;
    Result<dnnl::convolution_forward::primitive_desc> made = primitiveDesc(x, y, winograd);
    // oneDNN offers its Winograd kernels by thread count too: one the builder found may be missing for the
    // count a context runs with (F(2x2, 3x3) on one thread, e.g.). The direct convolution computes the same then.
    if (!made && winograd)
      made = primitiveDesc(x, y, false);
    KILN_ASSIGN_OR_RETURN(dnnl::convolution_forward::primitive_desc pd, std::move(made));
    int32_t ns = cfg_.window.nbSpatial;
    bool grouped = cfg_.groups > 1;
    memory::format_tag plainW = ns == 2 ? (grouped ? memory::format_tag::goihw : memory::format_tag::oihw)
                                        : (grouped ? memory::format_tag::goidhw : memory::format_tag::oidhw);
    try {
      auto p = std::make_shared<ConvPrimitive>();
      KILN_ASSIGN_OR_RETURN(p->src, activationDesc(x, cfg_.srcFormat, cfg_.dt));
      KILN_ASSIGN_OR_RETURN(p->dst, activationDesc(y, cfg_.dstFormat, cfg_.dt));
      KILN_ASSIGN_OR_RETURN(p->res, activationDesc(y, cfg_.resFormat, cfg_.dt));
      p->pd = pd;
      p->prim = dnnl::convolution_forward(pd);
      p->srcIn = makeReorder(p->src, pd.src_desc());
      p->dstOut = makeReorder(pd.dst_desc(), p->dst);
      if (cfg_.hasResidual) p->resIn = makeReorder(p->res, pd.dst_desc());
      p->weights =
          packed_.get(pd.weights_desc(), memory::desc(weightDims(), *dnnlFloatType(cfg_.weights.dtype()), plainW),
                      cfg_.weights.data());
      return std::shared_ptr<ConvPrimitive const>(std::move(p));
    } catch (dnnl::error const& e) {
      return unsupported(cfg_.who, ": oneDNN could not make the convolution for x ", dimsToString(x), ", y ",
                         dimsToString(y), ": ", e.what());
    }
  }

  ConvConfig cfg_;
  PrimitiveCache<ConvPrimitive> cache_;
  mutable PackedWeights packed_;  // used by build(), under cache_'s lock
};

bool supportsConv(ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
  if (in.size() < 2 || in.size() > 4 || out.size() != 1)
    return false;
  int32_t rank = in[0].shape.nbDims;
  if (rank != 4 && rank != 5)
    return false;
  // One element type throughout: float32, or bf16 (a bf16 build's convolutions; fp32 accumulation).
  DataType dt = out[0].dtype;
  if (!dnnlFloatType(dt)) return false;
  for (TensorInfo const& t : in)
    if (t.shape.nbDims >= 0 && t.dtype != dt) return false;
  // bf16 weights, or float32 ones that the weight reorder converts (the builder asks before it casts them).
  HostTensor const* w = constantInput(node, 1);
  if (!w || (w->dtype() != dt && w->dtype() != DataType::kFLOAT) || w->shape().nbDims != rank) return false;
  int64_t groups = node.attrs.getInt("groups", 1);
  if (groups < 1 || w->shape().d[0] % groups != 0)
    return false;
  for (int32_t i = 0; i < rank; ++i)
    if (w->shape().d[i] <= 0)
      return false;
  if (in.size() > 2 && in[2].shape.nbDims >= 0 && in[2].shape.nbDims != 1)
    return false;  // bias: [K]
  return activationSupported(node);
}

// The kernel's configuration from the node's attributes and constant weights.
Result<ConvConfig> readConfig(ir::Node const& node, dnnl::algorithm algorithm) {
  HostTensor const* w = constantInput(node, 1);
  ir::Value const* x = node.input(0);
  std::optional<memory::data_type> dt = x ? dnnlFloatType(x->dtype) : std::nullopt;
  if (!w || !dt || !dnnlFloatType(w->dtype()))
    return invalidGraph(node.describe(), ": the oneDNN convolution needs float32 or bf16 data and constant weights");
  int32_t ns = w->shape().nbDims - 2;
  if (ns != 2 && ns != 3)
    return invalidGraph(node.describe(), ": the oneDNN convolution runs 2-D and 3-D windows only");
  std::vector<int64_t> fallback;
  for (int32_t i = 2; i < w->shape().nbDims; ++i) fallback.push_back(w->shape().d[i]);
  ConvConfig cfg;
  cfg.who = node.describe();
  cfg.algorithm = algorithm;
  cfg.dt = *dt;
  KILN_ASSIGN_OR_RETURN(cfg.window, ir::readWindowParams(node, "kernel_shape", ns, true, fallback));
  for (int32_t i = 0; i < ns; ++i)
    if (cfg.window.kernel[i] != w->shape().d[2 + i])
      return invalidGraph(node.describe(), ": weights do not match kernel_shape");
  cfg.groups = node.attrs.getInt("groups", 1);
  if (cfg.groups < 1 || w->shape().d[0] % cfg.groups != 0)
    return invalidGraph(node.describe(), ": groups must be >= 1 and divide the output channels");
  cfg.activation = node.attrs.getInt("activation", -1);
  cfg.alpha = static_cast<float>(node.attrs.getFloat("act_alpha", 0.0));
  cfg.beta = static_cast<float>(node.attrs.getFloat("act_beta", 0.0));
  if (!activationSupported(node))
    return invalidGraph(node.describe(), ": activation ", cfg.activation, " has no oneDNN post-op");
  cfg.swish = node.attrs.getInt("cpu_swish", 0) != 0;
  cfg.hasBias = node.input(2) != nullptr;
  cfg.hasResidual = node.input(3) != nullptr;
  cfg.weights = *w;
  cfg.srcFormat = nodeFormat(node, "cpu_formats_in", 0);
  cfg.resFormat = nodeFormat(node, "cpu_formats_in", 3);
  cfg.dstFormat = nodeFormat(node, "cpu_formats_out", 0);
  if (ns != 2 &&
      (cfg.srcFormat != ActFormat::kPLAIN || cfg.resFormat != ActFormat::kPLAIN || cfg.dstFormat != ActFormat::kPLAIN))
    return invalidGraph(node.describe(), ": activation formats other than plain are for 2-D convolutions only");
  return cfg;
}

Result<std::unique_ptr<Kernel>> createConv(ir::Node const& node, dnnl::algorithm algorithm,
                                           std::string winogradImpl = {}) {
  KILN_ASSIGN_OR_RETURN(ConvConfig cfg, readConfig(node, algorithm));
  cfg.winogradImpl = std::move(winogradImpl);
  auto k = std::make_unique<OnednnConvKernel>(std::move(cfg));
  KILN_RETURN_IF_ERROR(buildPrimitiveForKnownShapes(*k, node));
  return std::unique_ptr<Kernel>(std::move(k));
}

Tactic convolutionTactic() {
  Tactic t;
  t.name = "convolution_onednn_direct";
  t.op = OpType::kConvolution;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;
  t.priority = 10;  // ahead of the reference (0) and of Winograd (9, 8)
  t.supports = supportsConv;
  // y may take the residual's memory: the sum post-op reads each y element before it writes it.
  t.outputMayReuseInput = 3;
  t.create = [](ir::Node const& node) { return createConv(node, dnnl::algorithm::convolution_direct); };
  return t;
}

// Winograd: 2-D, ungrouped, 3x3, stride 1, no dilation, known shapes, and the named oneDNN implementation for them
// (oneDNN 2.6 has them for AVX-512 only, channels in and out in multiples of 16, at most a sum and one eltwise
// post-op), so that create() cannot fail on the shapes the builder times. And only where the transformed weights
// (`tile`^2 / 9 times the direct ones: 4x for F(4x4, 3x3), 16/9 for F(2x2, 3x3)) hold at most
// kMaxWinogradWeightRatio times the elements of the activations the layer reads and writes: in a network they come
// from L3 or memory on every run. The builder times candidates with the cores' caches evicted (cpuEvictCaches),
// which sees most of that; the limit keeps out what it still misjudged. Measured on ResNet-50 batch 1 (2 AVX-512
// cores, profile medians): layer1's 3x3 (C = 64, 56x56; 0.4x) 0.66-0.70 -> 0.54-0.63 ms with F(4x4, 3x3); with
// F(2x2, 3x3) layer2's (C = 128, 28x28; 1.3x) 0.70-0.72 -> 0.57-0.64 ms and layer3's (C = 256, 14x14; 10.5x)
// 0.73-0.75 -> 0.56-0.62 ms, but layer3's F(4x4, 3x3) (23.5x) 0.72 -> 0.96 ms and layer4's F(2x2, 3x3) (C = 512,
// 7x7; 84x), which the evicted timing still picked, 1.15 -> 1.17-1.22 ms.
constexpr int64_t kMaxWinogradWeightRatio = 12;

bool supportsWinograd(ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out,
                      char const* impl, int64_t tile) {
  if (!supportsConv(node, in, out) || in[0].dtype != DataType::kFLOAT || in[0].shape.nbDims != 4 ||
      node.attrs.getInt("groups", 1) != 1)
    return false;
  if (!dimsKnown(in[0].shape) || !dimsKnown(out[0].shape) || volume(in[0].shape) == 0 || volume(out[0].shape) == 0)
    return false;
  HostTensor const* w = constantInput(node, 1);
  if (w->shape().d[2] != 3 || w->shape().d[3] != 3)
    return false;
  int64_t activations = volume(in[0].shape) + volume(out[0].shape);
  if (w->shape().d[0] * w->shape().d[1] * tile * tile > kMaxWinogradWeightRatio * activations)
    return false;  // transformed weights too large for the activations (elements, all float32)
  Result<ConvConfig> cfg = readConfig(node, dnnl::algorithm::convolution_winograd);
  if (!cfg)
    return false;
  for (int32_t i = 0; i < 2; ++i)
    if (cfg->window.strides[i] != 1 || cfg->window.dilations[i] != 1)
      return false;
  cfg->winogradImpl = impl;
  return OnednnConvKernel(std::move(*cfg)).primitiveDesc(in[0].shape, out[0].shape, true).isOk();
}

// A Winograd tactic on input tiles of `tile` x `tile`: timed above level 0 against the direct one (the level-0
// heuristic keeps direct, whose priority is higher).
Tactic winogradTactic(char const* name, char const* impl, int64_t tile, int priority) {
  Tactic t;
  t.name = name;
  t.op = OpType::kConvolution;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;
  t.priority = priority;
  t.supports = [impl, tile](ir::Node const& node, std::vector<TensorInfo> const& in,
                            std::vector<TensorInfo> const& out) { return supportsWinograd(node, in, out, impl, tile); };
  t.outputMayReuseInput = 3;  // as for the direct tactic: the sum post-op reads y before writing it
  t.create = [impl](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
    return createConv(node, dnnl::algorithm::convolution_winograd, impl);
  };
  return t;
}

Tactic winograd4x3Tactic() { return winogradTactic("convolution_onednn_winograd_4x3", "wino_4x3", 6, 9); }
Tactic winograd2x3Tactic() { return winogradTactic("convolution_onednn_winograd_2x3", "wino_2x3", 4, 8); }

KILN_REGISTER_TACTIC(convolutionTactic);
KILN_REGISTER_TACTIC(winograd4x3Tactic);
KILN_REGISTER_TACTIC(winograd2x3Tactic);

}  // namespace
}  // namespace kiln::backends::cpu
