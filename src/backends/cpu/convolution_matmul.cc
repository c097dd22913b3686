// oneDNN Convolution tactic convolution_onednn_matmul_1x1: a 2-D 1x1, stride-1, unpadded, ungrouped convolution run
// as one matrix product of the channels-last activations ([N*H*W, C] x [C, K]) through oneDNN's matmul, with the
// constant weights packed once; a candidate the builder times against the direct convolution.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/onednn_util.h"
#include "backends/cpu/swish.h"
#include "ir/infer/window_util.h"

namespace kiln::backends::cpu {
namespace {

using dnnl::memory;
using ir::OpType;

// Rows (N * H * W) for which the tactic is offered: ResNet-50's layer3 (14 x 14) and layer4 (7 x 7) at batch 1,
// EfficientNet's last stages. Over more rows the builder's timing (plain activations, reordered) was too close to
// call and picked it where it lost in the network; on fewer (the squeeze-excitation blocks' 1x1 maps) its timing
// won by microseconds but the network ran them at 0.019 against 0.009 ms.
constexpr int64_t kMinRows = 49;
constexpr int64_t kMaxRows = 256;

struct PointwiseConfig {
  std::string who;
  int64_t activation = -1;
  float alpha = 0, beta = 0;
  bool swish = false;  // cpu_swish: y * sigmoid(y) after the activation
  bool hasBias = false;
  bool hasResidual = false;
  ActFormat srcFormat = ActFormat::kPLAIN, resFormat = ActFormat::kPLAIN, dstFormat = ActFormat::kPLAIN;
  HostTensor weights;  // the Constant's data, [K, C, 1, 1] float32: row-major [K, C], i.e. B transposed
};

// One matmul for one activation shape and one OpenMP thread count.
struct PointwisePrimitive {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  memory weights;  // B in pd.weights_desc()'s format
  // The activations as recorded, the channels-last layout the product reads and writes, and reorders between
  // them (null where they are the same).
  memory::desc src, dst, res, srcNhwc, dstNhwc;
  std::shared_ptr<dnnl::reorder const> srcIn, resIn, dstOut;
};

// The post-op chain of the node's fusions: the residual (sum), the activation, then swish.
bool appendPostOps(dnnl::post_ops& ops, PointwiseConfig const& cfg, int64_t outputs) {
  if (cfg.hasResidual) ops.append_sum(1.f);
  if (!appendActivation(ops, cfg.activation, cfg.alpha, cfg.beta)) return false;
  // Swish after the primitive, as the direct convolution does it (swish.h), except on CPUs without AVX-512.
  if (cfg.swish && !ownSwishFor(outputs)) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, 1.f, 0.f);
  return true;
}

class OnednnPointwiseConvKernel final : public Kernel {
 public:
  explicit OnednnPointwiseConvKernel(PointwiseConfig cfg) : cfg_(std::move(cfg)) {}

  Result<std::shared_ptr<PointwisePrimitive const>> primitive(Dims const& x, Dims const& y, int threads) const {
    std::vector<int64_t> key = dimsToVector(x);
    key.push_back(y.d[1]);
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
    if (y.count() == 0) return Status::ok();
    if (res && !dimsEqual(res->shape, y.shape)) return invalidArgument(cfg_.who, ": residual must have y's shape");
    if (bias && bias->count() != cfg_.weights.shape().d[0])
      return invalidArgument(cfg_.who, ": bias must hold ", cfg_.weights.shape().d[0], " values");
    OmpThreads threads(ctx);
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<PointwisePrimitive const> p, primitive(x.shape, y.shape, threads.count()));
    try {
      dnnl::engine& eng = engine();
      dnnl::stream stream(eng);
      size_t dstBytes = p->dstNhwc.get_size();
      void* src = x.data;
      if (p->srcIn) {
        src = threadScratch(p->srcNhwc.get_size(), 1);
        runReorder(p->srcIn.get(), p->src, x.data, p->srcNhwc, src, stream);
      }
      void* dst = p->dstOut ? threadScratch(dstBytes, 2) : y.data;
      // The sum post-op adds what dst holds: the residual goes there first (reordered when its format differs).
      if (res) {
        if (p->resIn && res->data == dst) {
          void* tmp = threadScratch(dstBytes, 3);
          runReorder(p->resIn.get(), p->res, res->data, p->dstNhwc, tmp, stream);
          std::memcpy(dst, tmp, dstBytes);
        } else {
          runReorder(p->resIn.get(), p->res, res->data, p->dstNhwc, dst, stream);
        }
      }
      memory::desc spDesc = p->pd.scratchpad_desc();
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, memory(p->pd.src_desc(), eng, src)},
          {DNNL_ARG_WEIGHTS, p->weights},
          {DNNL_ARG_DST, memory(p->pd.dst_desc(), eng, dst)},
          {DNNL_ARG_SCRATCHPAD, memory(spDesc, eng, threadScratch(spDesc.get_size()))}};
      if (bias) args.emplace(DNNL_ARG_BIAS, memory(p->pd.bias_desc(), eng, bias->data));
      p->prim.execute(stream, args);
      if (cfg_.swish && ownSwishFor(volume(y.shape))) {
        stream.wait();
        swishInPlace(static_cast<float*>(dst), static_cast<int64_t>(dstBytes / sizeof(float)), threads.count());
      }
      if (p->dstOut) runReorder(p->dstOut.get(), p->dstNhwc, dst, p->dst, y.data, stream);
      stream.wait();
    } catch (dnnl::error const& e) {
      return internalError(cfg_.who, ": oneDNN matmul (1x1 convolution) failed: ", e.what());
    }
    return Status::ok();
  }

 private:
  Result<std::shared_ptr<PointwisePrimitive const>> build(Dims const& x, Dims const& y) const {
    Dims const& w = cfg_.weights.shape();
    int64_t c = w.d[1], k = w.d[0];
    if (x.nbDims != 4 || y.nbDims != 4 || x.d[1] != c || y.d[0] != x.d[0] || y.d[1] != k || y.d[2] != x.d[2] ||
        y.d[3] != x.d[3])
      return invalidArgument(cfg_.who, ": shapes x ", dimsToString(x), ", w ", dimsToString(w), ", y ", dimsToString(y),
                             " are not those of a 1x1 stride-1 convolution");
    if (volume(x) == 0) return unsupported(cfg_.who, ": the 1x1 convolution as a matmul needs a non-empty input");
    int64_t rows = x.d[0] * x.d[2] * x.d[3];
    auto f32 = memory::data_type::f32;
    try {
      auto p = std::make_shared<PointwisePrimitive>();
      KILN_ASSIGN_OR_RETURN(p->src, activationDesc(x, cfg_.srcFormat));
      KILN_ASSIGN_OR_RETURN(p->dst, activationDesc(y, cfg_.dstFormat));
      KILN_ASSIGN_OR_RETURN(p->res, activationDesc(y, cfg_.resFormat));
      p->srcNhwc = memory::desc(toDnnl(x), f32, memory::format_tag::nhwc);
      p->dstNhwc = memory::desc(toDnnl(y), f32, memory::format_tag::nhwc);
      // Channels-last activations are row-major [N*H*W, channels] matrices.
      memory::desc aMd({rows, c}, f32, memory::format_tag::ab), yMd({rows, k}, f32, memory::format_tag::ab);
      memory::desc bAny({c, k}, f32, memory::format_tag::any);
      memory::desc bPlain({c, k}, f32, memory::dims{1, c});  // W[k][c] at k * C + c
      memory::desc biasMd = cfg_.hasBias ? memory::desc({1, k}, f32, memory::format_tag::ab) : memory::desc();
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::post_ops ops;
      if (!appendPostOps(ops, cfg_, volume(y)))
        return unsupported(cfg_.who, ": activation ", cfg_.activation, " has no oneDNN post-op");
      attr.set_post_ops(ops);
      p->pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(aMd, bAny, biasMd, yMd), attr, engine());
      p->prim = dnnl::matmul(p->pd);
      p->weights = packed_.get(p->pd.weights_desc(), bPlain, cfg_.weights.data());
      p->srcIn = makeReorder(p->src, p->srcNhwc);
      p->dstOut = makeReorder(p->dstNhwc, p->dst);
      if (cfg_.hasResidual) p->resIn = makeReorder(p->res, p->dstNhwc);
      return std::shared_ptr<PointwisePrimitive const>(std::move(p));
    } catch (dnnl::error const& e) {
      return unsupported(cfg_.who, ": oneDNN has no matmul for the 1x1 convolution of x ", dimsToString(x), ": ",
                         e.what());
    }
  }

  PointwiseConfig cfg_;
  PrimitiveCache<PointwisePrimitive> cache_;
  mutable PackedWeights packed_;  // used by build(), under cache_'s lock
};

// A 1x1 window moving by 1 over unpadded input: every padding mode gives zero pads then, except explicit pads.
bool pointwiseWindow(ir::Node const& node) {
  Result<ir::WindowParams> wp = ir::readWindowParams(node, "kernel_shape", 2, true, {1, 1});
  if (!wp) return false;
  for (int32_t i = 0; i < 2; ++i) {
    if (wp->kernel[i] != 1 || wp->strides[i] != 1) return false;
    bool same = wp->mode == PaddingMode::kSAME_UPPER || wp->mode == PaddingMode::kSAME_LOWER;
    if (!same && (wp->padsBegin[i] != 0 || wp->padsEnd[i] != 0)) return false;
  }
  return true;
}

// The weights as a [K, C, 1, 1] float32 Constant, groups 1, a 1x1 stride-1 unpadded window, 4-D float32 tensors, a
// bias of [K], and fusions oneDNN's matmul has post-ops for. oneDNN 2.6's brgemm kernels (its matmul's and its
// channels-last convolutions') get chains of three eltwise post-ops wrong (softplus, scaled tanh): such nodes are
// left to the direct convolution, which runs them on plain activations.
bool supportsPointwise(ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
  if (in.size() < 2 || in.size() > 4 || out.size() != 1 || out[0].dtype != DataType::kFLOAT) return false;
  if (in[0].shape.nbDims != 4 || out[0].shape.nbDims != 4) return false;
  for (TensorInfo const& t : in)
    if (t.shape.nbDims >= 0 && t.dtype != DataType::kFLOAT) return false;
  HostTensor const* w = constantInput(node, 1);
  if (!w || w->dtype() != DataType::kFLOAT || w->shape().nbDims != 4 || w->shape().d[0] <= 0 || w->shape().d[1] <= 0 ||
      w->shape().d[2] != 1 || w->shape().d[3] != 1)
    return false;
  if (node.attrs.getInt("groups", 1) != 1 || !pointwiseWindow(node)) return false;
  // Between kMinRows and kMaxRows rows only (see there why): the shapes where it measured faster in a network;
  // builder's timing (plain activations, reordered) is too close to call and picked it where it lost.
  Dims const& x = in[0].shape;
  if (!dimsKnown(x) || x.d[0] * x.d[2] * x.d[3] < kMinRows || x.d[0] * x.d[2] * x.d[3] > kMaxRows) return false;
  if (in.size() > 2 && in[2].shape.nbDims >= 0 && in[2].shape.nbDims != 1) return false;
  if (!activationSupported(node)) return false;
  dnnl::post_ops probe;
  appendActivation(probe, node.attrs.getInt("activation", -1),
                   static_cast<float>(node.attrs.getFloat("act_alpha", 0.0)),
                   static_cast<float>(node.attrs.getFloat("act_beta", 0.0)));
  if (node.attrs.getInt("cpu_swish", 0) != 0 && !ownSwishFor(volume(out[0].shape)))
    probe.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, 1.f, 0.f);
  return probe.len() <= 2;
}

Result<std::unique_ptr<Kernel>> createPointwise(ir::Node const& node) {
  HostTensor const* w = constantInput(node, 1);
  if (!w || w->dtype() != DataType::kFLOAT || w->shape().nbDims != 4 || w->shape().d[2] != 1 || w->shape().d[3] != 1)
    return invalidGraph(node.describe(), ": the matmul 1x1 convolution needs constant float32 [K, C, 1, 1] weights");
  if (node.attrs.getInt("groups", 1) != 1 || !pointwiseWindow(node))
    return invalidGraph(node.describe(), ": the matmul 1x1 convolution needs groups 1, stride 1 and no padding");
  PointwiseConfig cfg;
  cfg.who = node.describe();
  cfg.activation = node.attrs.getInt("activation", -1);
  cfg.alpha = static_cast<float>(node.attrs.getFloat("act_alpha", 0.0));
  cfg.beta = static_cast<float>(node.attrs.getFloat("act_beta", 0.0));
  cfg.swish = node.attrs.getInt("cpu_swish", 0) != 0;
  dnnl::post_ops probe;
  if (!appendPostOps(probe, cfg, 0))
    return invalidGraph(node.describe(), ": activation ", cfg.activation, " has no oneDNN post-op");
  cfg.hasBias = node.input(2) != nullptr;
  cfg.hasResidual = node.input(3) != nullptr;
  cfg.weights = *w;
  cfg.srcFormat = nodeFormat(node, "cpu_formats_in", 0);
  cfg.resFormat = nodeFormat(node, "cpu_formats_in", 3);
  cfg.dstFormat = nodeFormat(node, "cpu_formats_out", 0);
  auto k = std::make_unique<OnednnPointwiseConvKernel>(std::move(cfg));
  KILN_RETURN_IF_ERROR(buildPrimitiveForKnownShapes(*k, node));
  return std::unique_ptr<Kernel>(std::move(k));
}

// Timed above level 0 against the direct convolution (whose priority, 10, the level-0 heuristic keeps). Where
// H*W is small and the weights large (ResNet-50's layer3/layer4 at batch 1: 196 or 49 rows against 256-2048
// channels) oneDNN's matmul splits the work better over two threads than its 1x1 convolution does.
Tactic pointwiseMatmulTactic() {
  Tactic t;
  t.name = "convolution_onednn_matmul_1x1";
  t.op = OpType::kConvolution;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;
  t.priority = 7;  // behind the direct convolution (10) and the Winograd ones (9, 8)
  t.supports = supportsPointwise;
  // y may take the residual's memory: the sum post-op reads each y element before it writes it.
  t.outputMayReuseInput = 3;
  t.create = createPointwise;
  return t;
}

KILN_REGISTER_TACTIC(pointwiseMatmulTactic);

}  // namespace
}  // namespace kiln::backends::cpu
