// oneDNN Pooling tactic (pooling_onednn_direct): 2-D and 3-D fp32 max and average pooling (counting or excluding
// padding) with TensorRT's padding modes, on plain NC(D)HW or (2-D) the format the builder recorded for x and y
// (cpu_formats_in/out; the two must agree). Blended max-average pooling, windows holding no input
// element and average-with-padding windows cut by a rounded-up output stay with the reference.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "backends/cpu/onednn_util.h"
#include "ir/infer/window_util.h"

namespace kiln::backends::cpu {
namespace {

using dnnl::memory;
using ir::OpType;

struct PoolConfig {
  std::string who;
  ir::WindowParams window;
  PoolingType type = PoolingType::kMAX;
  bool excludePadding = true;
  ActFormat format = ActFormat::kPLAIN;  // of x and y
  memory::data_type dt = memory::data_type::f32;  // of x and y: f32 or bf16 (averages accumulate in fp32)
};

struct PoolGeometry {
  memory::dims strides, kernel, padL, padR;
};

// oneDNN's geometry for these spatial dims, or why oneDNN cannot match the reference on them.
Result<PoolGeometry> geometry(PoolConfig const& cfg, std::vector<int64_t> const& in) {
  ir::WindowParams const& wp = cfg.window;
  std::vector<ir::WindowDim> geo = ir::computeWindow(wp, in);
  PoolGeometry g;
  for (int32_t i = 0; i < wp.nbSpatial; ++i) {
    int64_t k = wp.kernel[i], s = wp.strides[i], pl = geo[i].padBegin, out = geo[i].out;
    int64_t pr = rightPadding(in[i], out, k, s, pl, geo[i].padEnd);
    if (pr < 0)
      return unsupported(cfg.who, ": the window geometry needs negative padding");
    // A window with no input element gives 0 in the reference; oneDNN would not.
    if (pl >= k || (out - 1) * s - pl >= in[i])
      return unsupported(cfg.who, ": a window holds only padding");
    // Counting padding: the reference counts up to the given padEnd, oneDNN the whole window.
    if (cfg.type == PoolingType::kAVERAGE && !cfg.excludePadding && pr != geo[i].padEnd)
      return unsupported(cfg.who, ": average pooling counting padding with a rounded-up output");
    g.strides.push_back(s);
    g.kernel.push_back(k);
    g.padL.push_back(pl);
    g.padR.push_back(pr);
  }
  return g;
}

struct PoolPrimitive {
  dnnl::pooling_forward::primitive_desc pd;
  dnnl::pooling_forward prim;
};

class OnednnPoolKernel final : public Kernel {
 public:
  explicit OnednnPoolKernel(PoolConfig cfg) : cfg_(std::move(cfg)) {}

  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& x = ctx.inputs[0];
    TensorView const& y = ctx.outputs[0];
    if (y.count() == 0)
      return Status::ok();
    int32_t ns = cfg_.window.nbSpatial;
    if (x.shape.nbDims != ns + 2 || y.shape.nbDims != ns + 2 || x.count() == 0)
      return invalidArgument(cfg_.who, ": x ", dimsToString(x.shape), " and y ", dimsToString(y.shape),
                             " do not fit a ", ns, "-D pooling");
    OmpThreads threads(ctx, x.count());
    std::vector<int64_t> key = dimsToVector(x.shape);
    for (int64_t v : dimsToVector(y.shape))
      key.push_back(v);
    key.push_back(threads.count());
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<PoolPrimitive const> p, cache_.get(std::move(key), [&] { return build(x.shape, y.shape); }));
    try {
      dnnl::engine& eng = engine();
      dnnl::stream stream(eng);
      memory::desc spDesc = p->pd.scratchpad_desc();
      p->prim.execute(stream, {{DNNL_ARG_SRC, memory(p->pd.src_desc(), eng, x.data)},
                               {DNNL_ARG_DST, memory(p->pd.dst_desc(), eng, y.data)},
                               {DNNL_ARG_SCRATCHPAD, memory(spDesc, eng, threadScratch(spDesc.get_size()))}});
      stream.wait();
    } catch (dnnl::error const& e) {
      return internalError(cfg_.who, ": oneDNN pooling failed: ", e.what());
    }
    return Status::ok();
  }

 private:
  Result<std::shared_ptr<PoolPrimitive const>> build(Dims const& x, Dims const& y) const {
    int32_t ns = cfg_.window.nbSpatial;
    std::vector<int64_t> in;
    for (int32_t i = 0; i < ns; ++i)
      in.push_back(x.d[2 + i]);
    KILN_ASSIGN_OR_RETURN(PoolGeometry g, geometry(cfg_, in));
    std::vector<ir::WindowDim> geo = ir::computeWindow(cfg_.window, in);
    if (x.d[0] != y.d[0] || x.d[1] != y.d[1])
      return invalidArgument(cfg_.who, ": x ", dimsToString(x), " and y ", dimsToString(y), " differ in N or C");
    for (int32_t i = 0; i < ns; ++i)
      if (geo[i].out != y.d[2 + i])
        return invalidArgument(cfg_.who, ": output ", dimsToString(y), " does not match the window geometry");
    dnnl::algorithm alg = cfg_.type == PoolingType::kMAX ? dnnl::algorithm::pooling_max
                          : cfg_.excludePadding          ? dnnl::algorithm::pooling_avg_exclude_padding
                                                         : dnnl::algorithm::pooling_avg_include_padding;
    KILN_ASSIGN_OR_RETURN(memory::desc xMd, activationDesc(x, cfg_.format, cfg_.dt));
    KILN_ASSIGN_OR_RETURN(memory::desc yMd, activationDesc(y, cfg_.format, cfg_.dt));
    try {
      dnnl::engine& eng = engine();
      dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, alg, xMd, yMd, g.strides, g.kernel, g.padL,
                                    g.padR);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::pooling_forward::primitive_desc pd(d, attr, eng);
      return std::make_shared<PoolPrimitive const>(PoolPrimitive{pd, dnnl::pooling_forward(pd)});
    } catch (dnnl::error const& e) {
      return unsupported(cfg_.who, ": oneDNN has no pooling for x ", dimsToString(x), ": ", e.what());
    }
  }

  PoolConfig cfg_;
  PrimitiveCache<PoolPrimitive> cache_;
};

Result<PoolConfig> readConfig(ir::Node const& node, int32_t ns) {
  PoolConfig cfg;
  cfg.who = node.describe();
  KILN_ASSIGN_OR_RETURN(cfg.window, ir::readWindowParams(node, "window", ns, false));
  int64_t type = node.attrs.getInt("type", 0);
  if (type != static_cast<int64_t>(PoolingType::kMAX) && type != static_cast<int64_t>(PoolingType::kAVERAGE))
    return unsupported(node.describe(), ": the oneDNN pooling runs max and average pooling only");
  cfg.type = static_cast<PoolingType>(type);
  cfg.excludePadding = node.attrs.getInt("exclude_padding", 1) != 0;
  ir::Value const* x = node.input(0);
  std::optional<memory::data_type> dt = x ? dnnlFloatType(x->dtype) : std::nullopt;
  if (!dt) return unsupported(node.describe(), ": the oneDNN pooling runs float32 and bf16 only");
  cfg.dt = *dt;
  cfg.format = nodeFormat(node, "cpu_formats_in", 0);
  if (cfg.format != nodeFormat(node, "cpu_formats_out", 0))
    return unsupported(node.describe(), ": the oneDNN pooling needs x and y in the same format");
  if (cfg.format != ActFormat::kPLAIN && ns != 2)
    return unsupported(node.describe(), ": activation formats other than plain are for 2-D pooling only");
  return cfg;
}

bool supportsPool(ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
  if (in.size() != 1 || out.size() != 1 || in[0].dtype != out[0].dtype || !dnnlFloatType(in[0].dtype)) return false;
  int32_t rank = in[0].shape.nbDims;
  if (rank != 4 && rank != 5)
    return false;
  Result<PoolConfig> cfg = readConfig(node, rank - 2);
  if (!cfg.isOk())
    return false;
  std::vector<int64_t> spatial;
  for (int32_t i = 2; i < rank; ++i) {
    if (in[0].shape.d[i] <= 0)
      return true;  // checked again when the shape is known
    spatial.push_back(in[0].shape.d[i]);
  }
  return geometry(*cfg, spatial).isOk();
}

Tactic poolingTactic() {
  Tactic t;
  t.name = "pooling_onednn_direct";
  t.op = OpType::kPooling;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;
  t.priority = 10;  // ahead of the reference (0)
  t.supports = supportsPool;
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
    ir::Value const* x = node.input(0);
    int32_t ns = node.attrs.has("window") ? static_cast<int32_t>(node.attrs.getInts("window").size())
                                          : (x ? x->shape.nbDims - 2 : -1);
    if (ns != 2 && ns != 3)
      return invalidGraph(node.describe(), ": the oneDNN pooling runs 2-D and 3-D windows only");
    KILN_ASSIGN_OR_RETURN(PoolConfig cfg, readConfig(node, ns));
    return std::unique_ptr<Kernel>(std::make_unique<OnednnPoolKernel>(std::move(cfg)));
  };
  return t;
}

KILN_REGISTER_TACTIC(poolingTactic);

}  // namespace
}  // namespace kiln::backends::cpu
