// oneDNN pointwise tactics on fp32 or bf16 (bf16: single-step eltwise only): Activation and Unary as eltwise primitives
// (activation_onednn_eltwise, unary_onednn_eltwise; chains such as SELU run as several in place), ElementWise
// arithmetic with numpy broadcasting as a binary primitive (elementwise_onednn_binary; the full-shape operand goes
// first, a broadcast first operand of a non-commutative op is expanded into y first). Activation and ElementWise take
// the 4-D activation formats the builder recorded (cpu_formats_in/out).
#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "backends/cpu/onednn_util.h"
#include "ir/extension_enums.h"

namespace kiln::backends::cpu {
namespace {

using dnnl::memory;
using ir::OpType;

struct EltwiseStep {
  dnnl::algorithm alg;
  float alpha, beta;
};

struct EltwisePrimitives {
  std::vector<dnnl::eltwise_forward::primitive_desc> pds;
  std::vector<dnnl::eltwise_forward> prims;
};

// Runs a chain of eltwise steps (x -> y, then in place on y) over `count` elements.
class EltwiseKernel final : public Kernel {
 public:
  EltwiseKernel(std::string who, std::vector<EltwiseStep> steps, memory::data_type dt)
      : who_(std::move(who)), steps_(std::move(steps)), dt_(dt) {}

  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& x = ctx.inputs[0];
    TensorView const& y = ctx.outputs[0];
    if (x.count() != y.count())
      return invalidArgument(who_, ": x ", dimsToString(x.shape), " and y ", dimsToString(y.shape), " differ in size");
    if (y.count() == 0)
      return Status::ok();
    OmpThreads threads(ctx, y.count());
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<EltwisePrimitives const> p,
                          cache_.get({y.count(), threads.count()}, [&] { return build(y.count()); }));
    try {
      dnnl::engine& eng = engine();
      dnnl::stream stream(eng);
      for (size_t i = 0; i < p->prims.size(); ++i) {
        memory::desc md = p->pds[i].src_desc();
        memory::desc sp = p->pds[i].scratchpad_desc();
        p->prims[i].execute(stream, {{DNNL_ARG_SRC, memory(md, eng, i == 0 ? x.data : y.data)},
                                     {DNNL_ARG_DST, memory(md, eng, y.data)},
                                     {DNNL_ARG_SCRATCHPAD, memory(sp, eng, threadScratch(sp.get_size()))}});
      }
      stream.wait();
    } catch (dnnl::error const& e) {
      return internalError(who_, ": oneDNN eltwise failed: ", e.what());
    }
    return Status::ok();
  }

 private:
  Result<std::shared_ptr<EltwisePrimitives const>> build(int64_t count) const {
    try {
      auto p = std::make_shared<EltwisePrimitives>();
      memory::desc md({count}, dt_, memory::format_tag::a);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      for (EltwiseStep const& s : steps_) {
        dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, s.alg, md, s.alpha, s.beta);
        p->pds.emplace_back(d, attr, engine());
        p->prims.emplace_back(p->pds.back());
      }
      return std::shared_ptr<EltwisePrimitives const>(std::move(p));
    } catch (dnnl::error const& e) {
      return unsupported(who_, ": oneDNN has no eltwise for it: ", e.what());
    }
  }

  std::string who_;
  std::vector<EltwiseStep> steps_;
  memory::data_type dt_;  // of x and y: f32, or bf16 (one step; computed in fp32, rounded once)
  PrimitiveCache<EltwisePrimitives> cache_;
};

// Inputs and output all float32, or all bf16.
bool floatIo(std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out, size_t nIn) {
  if (in.size() != nIn || out.size() != 1 || !dnnlFloatType(out[0].dtype)) return false;
  for (TensorInfo const& t : in)
    if (t.dtype != out[0].dtype) return false;
  return true;
}

// An eltwise chain runs in bf16 only as one step: oneDNN rounds each step's output to bf16, where the reference
// (and the float32 chain) rounds once.
bool eltwiseTypeOk(std::vector<TensorInfo> const& out, std::vector<EltwiseStep> const& steps) {
  return out[0].dtype == DataType::kFLOAT || steps.size() == 1;
}

// The node's element type for oneDNN (its output's), or an error naming the node.
Result<memory::data_type> nodeType(ir::Node const& node) {
  ir::Value const* y = node.output(0);
  std::optional<memory::data_type> dt = y ? dnnlFloatType(y->dtype) : std::nullopt;
  if (!dt) return invalidGraph(node.describe(), ": the oneDNN kernel runs float32 or bf16 only");
  return *dt;
}

// An Activation's formula as eltwise steps (the post-op list of appendActivation), or nullopt.
std::optional<std::vector<EltwiseStep>> activationSteps(ir::Node const& node) {
  dnnl::post_ops ops;
  if (!node.attrs.has("type") ||
      !appendActivation(ops, node.attrs.getInt("type", -1), static_cast<float>(node.attrs.getFloat("alpha", 0.0)),
                        static_cast<float>(node.attrs.getFloat("beta", 0.0))))
    return std::nullopt;
  std::vector<EltwiseStep> steps;
  for (int i = 0; i < ops.len(); ++i) {
    float scale = 1.f;
    EltwiseStep s{};
    ops.get_params_eltwise(i, scale, s.alg, s.alpha, s.beta);
    steps.push_back(s);
  }
  if (steps.empty())
    return std::nullopt;
  return steps;
}

// A Unary op as eltwise steps, or nullopt where oneDNN 2.6 has nothing exact (trigonometry, erf, rounding, ...).
std::optional<std::vector<EltwiseStep>> unarySteps(ir::Node const& node) {
  using A = dnnl::algorithm;
  int64_t op = node.attrs.getInt("op", -1);
  if (op < 0 || op > static_cast<int64_t>(UnaryOperation::kISNAN))  // past it: Kiln's integer extensions
    return std::nullopt;
  switch (static_cast<UnaryOperation>(op)) {
    case UnaryOperation::kEXP:
      return std::vector<EltwiseStep>{{A::eltwise_exp, 0.f, 0.f}};
    case UnaryOperation::kLOG:
      return std::vector<EltwiseStep>{{A::eltwise_log, 0.f, 0.f}};
    case UnaryOperation::kSQRT:
      return std::vector<EltwiseStep>{{A::eltwise_sqrt, 0.f, 0.f}};
    case UnaryOperation::kRECIP:  // alpha * x^beta
      return std::vector<EltwiseStep>{{A::eltwise_pow, 1.f, -1.f}};
    case UnaryOperation::kABS:
      return std::vector<EltwiseStep>{{A::eltwise_abs, 0.f, 0.f}};
    case UnaryOperation::kNEG:
      return std::vector<EltwiseStep>{{A::eltwise_linear, -1.f, 0.f}};
    case UnaryOperation::kSIN:
    case UnaryOperation::kCOS:
    case UnaryOperation::kTAN:
    case UnaryOperation::kSINH:
    case UnaryOperation::kCOSH:
    case UnaryOperation::kASIN:
    case UnaryOperation::kACOS:
    case UnaryOperation::kATAN:
    case UnaryOperation::kASINH:
    case UnaryOperation::kACOSH:
    case UnaryOperation::kATANH:
    case UnaryOperation::kCEIL:
    case UnaryOperation::kFLOOR:
    case UnaryOperation::kERF:
    case UnaryOperation::kNOT:
    case UnaryOperation::kSIGN:
    case UnaryOperation::kROUND:
    case UnaryOperation::kISINF:
    case UnaryOperation::kISNAN:
    case UnaryOperation::kBITWISE_NOT:
      return std::nullopt;
  }
  return std::nullopt;
}

Tactic activationTactic() {
  Tactic t;
  t.name = "activation_onednn_eltwise";
  // y may take x's memory: oneDNN's eltwise runs in place (dst == src), as the chains' later steps already do.
  t.outputMayReuseInput = 0;
  t.op = OpType::kActivation;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;
  t.priority = 10;
  t.supports = [](ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
    if (!floatIo(in, out, 1)) return false;
    auto steps = activationSteps(node);
    return steps && eltwiseTypeOk(out, *steps);
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
    auto steps = activationSteps(node);
    if (!steps)
      return invalidGraph(node.describe(), ": activation ", node.attrs.getInt("type", -1), " has no oneDNN eltwise");
    // Element by element: any recorded format works when x and y share it.
    if (nodeFormat(node, "cpu_formats_in", 0) != nodeFormat(node, "cpu_formats_out", 0))
      return invalidGraph(node.describe(), ": x and y must be in one format");
    KILN_ASSIGN_OR_RETURN(memory::data_type dt, nodeType(node));
    return std::unique_ptr<Kernel>(std::make_unique<EltwiseKernel>(node.describe(), std::move(*steps), dt));
  };
  return t;
}

Tactic unaryTactic() {
  Tactic t;
  t.name = "unary_onednn_eltwise";
  // y may take x's memory: oneDNN's eltwise runs in place (dst == src).
  t.outputMayReuseInput = 0;
  t.op = OpType::kUnary;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;
  t.priority = 10;
  t.supports = [](ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
    if (!floatIo(in, out, 1)) return false;
    auto steps = unarySteps(node);
    return steps && eltwiseTypeOk(out, *steps);
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
    auto steps = unarySteps(node);
    if (!steps)
      return invalidGraph(node.describe(), ": unary op ", node.attrs.getInt("op", -1), " has no oneDNN eltwise");
    KILN_ASSIGN_OR_RETURN(memory::data_type dt, nodeType(node));
    return std::unique_ptr<Kernel>(std::make_unique<EltwiseKernel>(node.describe(), std::move(*steps), dt));
  };
  return t;
}

KILN_REGISTER_TACTIC(activationTactic);
KILN_REGISTER_TACTIC(unaryTactic);

// ---- ElementWise ----

using Op = ElementWiseOperation;

std::optional<dnnl::algorithm> binaryAlgorithm(int64_t op) {
  using A = dnnl::algorithm;
  if (!ir::isValidElementWiseOperation(op))
    return std::nullopt;
  switch (static_cast<Op>(op)) {
    case Op::kSUM:
      return A::binary_add;
    case Op::kPROD:
      return A::binary_mul;
    case Op::kSUB:
      return A::binary_sub;
    case Op::kDIV:
      return A::binary_div;
    case Op::kMAX:
    case Op::kMIN:  // NaN handling differs from the reference's
    case Op::kPOW:
    case Op::kFLOOR_DIV:
    case Op::kAND:
    case Op::kOR:
    case Op::kXOR:
    case Op::kEQUAL:
    case Op::kGREATER:
    case Op::kLESS:
    case Op::kBITWISE_AND:
    case Op::kBITWISE_OR:
    case Op::kBITWISE_XOR:
      return std::nullopt;
  }
  return std::nullopt;
}

bool commutative(int64_t op) { return op == static_cast<int64_t>(Op::kSUM) || op == static_cast<int64_t>(Op::kPROD); }

// `d` right-aligned to `rank` dims (leading 1s).
memory::dims padTo(Dims const& d, int32_t rank) {
  memory::dims r(static_cast<size_t>(rank), 1);
  for (int32_t i = 0; i < d.nbDims; ++i)
    r[static_cast<size_t>(rank - d.nbDims + i)] = d.d[i];
  return r;
}

memory::desc plainDesc(memory::dims const& d, memory::data_type dt) {
  memory::dims strides(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;)
    strides[i - 1] = strides[i] * d[i];
  return memory::desc(d, dt, strides);
}

struct BinaryPrimitive {
  bool swap = false;    // b is src0 (a broadcasts and the op commutes)
  bool expand = false;  // a broadcasts and the op does not commute: y = a first (an add onto zeros), then y op b
  dnnl::binary::primitive_desc pd, expandPd;
  dnnl::binary prim, expandPrim;
};

// y[r, i] = a[r, i] * s[i] over `rows` rows of `inner` values (y may be a): one channel scale per column. Built
// for AVX-512, AVX2 and baseline x86-64, picked when the library loads.
KILN_CPU_CLONES void scaleColumns(float const* a, float const* s, float* y, int64_t rows, int64_t inner) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < inner; ++i) y[r * inner + i] = a[r * inner + i] * s[i];
}

// y[i] = a[i] * s over n values (y may be a).
KILN_CPU_CLONES void scaleRun(float const* a, float s, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] * s;
}

class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(std::string who, int64_t op, dnnl::algorithm alg, std::array<ActFormat, 3> formats, memory::data_type dt)
      : who_(std::move(who)), op_(op), alg_(alg), formats_(formats), dt_(dt) {}

  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& a = ctx.inputs[0];
    TensorView const& b = ctx.inputs[1];
    TensorView const& y = ctx.outputs[0];
    if (y.count() == 0)
      return Status::ok();
    int32_t rank = y.shape.nbDims;
    if (a.shape.nbDims > rank || b.shape.nbDims > rank || rank > 12 || rank < 1)
      return invalidArgument(who_, ": a ", dimsToString(a.shape), " and b ", dimsToString(b.shape),
                             " do not broadcast to y ", dimsToString(y.shape));
    if (op_ == static_cast<int64_t>(ElementWiseOperation::kPROD) && dt_ == memory::data_type::f32 &&
        scalePerChannel(ctx))
      return Status::ok();
    OmpThreads threads(ctx, y.count());
    std::vector<int64_t> key = dimsToVector(a.shape);
    key.push_back(-1);
    for (int64_t v : dimsToVector(b.shape))
      key.push_back(v);
    key.push_back(-1);
    for (int64_t v : dimsToVector(y.shape))
      key.push_back(v);
    key.push_back(threads.count());
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<BinaryPrimitive const> p,
                          cache_.get(std::move(key), [&] { return build(a.shape, b.shape, y.shape); }));
    try {
      dnnl::engine& eng = engine();
      dnnl::stream stream(eng);
      void* src0 = p->swap ? b.data : a.data;
      void* src1 = p->swap ? a.data : b.data;
      if (p->expand) {
        std::memset(y.data, 0, static_cast<size_t>(y.count()) * memory::data_type_size(dt_));
        memory::desc sp = p->expandPd.scratchpad_desc();
        p->expandPrim.execute(stream, {{DNNL_ARG_SRC_0, memory(p->expandPd.src0_desc(), eng, y.data)},
                                       {DNNL_ARG_SRC_1, memory(p->expandPd.src1_desc(), eng, a.data)},
                                       {DNNL_ARG_DST, memory(p->expandPd.dst_desc(), eng, y.data)},
                                       {DNNL_ARG_SCRATCHPAD, memory(sp, eng, threadScratch(sp.get_size()))}});
        src0 = y.data;
      }
      memory::desc sp = p->pd.scratchpad_desc();
      p->prim.execute(stream, {{DNNL_ARG_SRC_0, memory(p->pd.src0_desc(), eng, src0)},
                               {DNNL_ARG_SRC_1, memory(p->pd.src1_desc(), eng, src1)},
                               {DNNL_ARG_DST, memory(p->pd.dst_desc(), eng, y.data)},
                               {DNNL_ARG_SCRATCHPAD, memory(sp, eng, threadScratch(sp.get_size()))}});
      stream.wait();
    } catch (dnnl::error const& e) {
      return internalError(who_, ": oneDNN binary failed: ", e.what());
    }
    return Status::ok();
  }

 private:
  Result<std::shared_ptr<BinaryPrimitive const>> build(Dims const& a, Dims const& b, Dims const& y) const {
    int32_t rank = y.nbDims;
    memory::dims ad = padTo(a, rank), bd = padTo(b, rank), yd = padTo(y, rank);
    for (int32_t i = 0; i < rank; ++i)
      if ((ad[i] != yd[i] && ad[i] != 1) || (bd[i] != yd[i] && bd[i] != 1))
        return invalidArgument(who_, ": a ", dimsToString(a), " and b ", dimsToString(b), " do not broadcast to y ",
                               dimsToString(y));
    auto p = std::make_shared<BinaryPrimitive>();
    if (ad != yd) {
      if (bd == yd && commutative(op_)) {
        p->swap = true;
        std::swap(ad, bd);
      } else {
        p->expand = true;
      }
    }
    // Recorded formats (a, b, y; the builder gives non-plain ones to full-shape 4-D tensors only).
    ActFormat fa = formats_[0], fb = formats_[1];
    if (p->swap)
      std::swap(fa, fb);
    auto desc = [&](memory::dims const& d, ActFormat f) -> Result<memory::desc> {
      if (f == ActFormat::kPLAIN) return plainDesc(d, dt_);
      return activationDesc(makeDims(std::vector<int64_t>(d.begin(), d.end())), f, dt_);
    };
    try {
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      KILN_ASSIGN_OR_RETURN(memory::desc ym, desc(yd, formats_[2]));
      if (p->expand) {
        p->expandPd = dnnl::binary::primitive_desc(
            dnnl::binary::desc(dnnl::algorithm::binary_add, ym, plainDesc(ad, dt_), ym), attr, engine());
        p->expandPrim = dnnl::binary(p->expandPd);
        ad = yd;
      }
      KILN_ASSIGN_OR_RETURN(memory::desc am, p->expand ? Result<memory::desc>(ym) : desc(ad, fa));
      KILN_ASSIGN_OR_RETURN(memory::desc bm, desc(bd, fb));
      p->pd = dnnl::binary::primitive_desc(dnnl::binary::desc(alg_, am, bm, ym), attr, engine());
      p->prim = dnnl::binary(p->pd);
      return std::shared_ptr<BinaryPrimitive const>(std::move(p));
    } catch (dnnl::error const& e) {
      return unsupported(who_, ": oneDNN has no binary for a ", dimsToString(a), ", b ", dimsToString(b), ": ",
                         e.what());
    }
  }

  // The squeeze-excitation scale, x * s with x [N, C, H, W] (y's shape, in y's recorded format) and s [N or 1, C,
  // 1, 1] plain, on either side: Kiln's own loop, as [outer, H*W, inner] rows times one scale per column
  // (channels-last: inner = C; nChw8c/16c: inner = the block) or runs of H*W times one scale (plain). oneDNN's
  // binary takes as long per element and adds its per-call setup (EfficientNet-B0 runs 16 of these). Returns
  // false, having done nothing, for any other shape or format.
  bool scalePerChannel(LaunchContext const& ctx) const {
    TensorView const* x = &ctx.inputs[0];
    TensorView const* sc = &ctx.inputs[1];
    ActFormat fx = formats_[0], fs = formats_[1];
    TensorView const& y = ctx.outputs[0];
    if (y.shape.nbDims != 4 || x->shape.nbDims != 4 || sc->shape.nbDims != 4) return false;
    if (!dimsEqual(x->shape, y.shape)) {
      std::swap(x, sc);
      std::swap(fx, fs);
    }
    int64_t const n = y.shape.d[0], c = y.shape.d[1], hw = y.shape.d[2] * y.shape.d[3];
    if (!dimsEqual(x->shape, y.shape) || fx != formats_[2] || fs != ActFormat::kPLAIN ||
        (sc->shape.d[0] != n && sc->shape.d[0] != 1) || sc->shape.d[1] != c || sc->shape.d[2] != 1 ||
        sc->shape.d[3] != 1)
      return false;
    int64_t inner = 1;
    switch (fx) {
      case ActFormat::kPLAIN:
        inner = 1;
        break;
      case ActFormat::kNHWC:
        inner = c;
        break;
      case ActFormat::kNCHW8C:
      case ActFormat::kNCHW16C:
        inner = static_cast<int64_t>(fx);
        if (c % inner != 0) return false;
        break;
    }
    auto const* xp = static_cast<float const*>(x->data);
    auto const* sp = static_cast<float const*>(sc->data);
    auto* yp = static_cast<float*>(y.data);
    int64_t const outer = n * c / inner, perImage = c / inner;
    bool const sharedScale = sc->shape.d[0] == 1;
    OmpThreads threads(ctx, y.count());
    int const nt = threads.count();
    // Items: (o, a range of rows), enough of them for the threads to split a batch-1 tensor evenly.
    int64_t const rowsPer = inner == 1 ? 1 : hw;
    int64_t const splits = nt <= 1 || outer >= 4 * nt ? 1 : std::min<int64_t>(rowsPer, (4 * nt + outer - 1) / outer);
    int64_t const items = outer * splits;
#ifdef _OPENMP  // -fopenmp (GCC builds); elsewhere the loop runs on the calling thread
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1 && items > 1)
#endif
    for (int64_t it = 0; it < items; ++it) {
      int64_t const o = it / splits, part = it % splits;
      // o is image o / perImage, channel block o % perImage: its scales start at that image's row of s.
      float const* s = sp + (sharedScale ? o % perImage : o) * inner;
      if (inner == 1) {
        scaleRun(xp + o * hw, *s, yp + o * hw, hw);
      } else {
        int64_t const r0 = hw * part / splits, r1 = hw * (part + 1) / splits;
        scaleColumns(xp + (o * hw + r0) * inner, s, yp + (o * hw + r0) * inner, r1 - r0, inner);
      }
    }
    return true;
  }

  std::string who_;
  int64_t op_;
  dnnl::algorithm alg_;
  std::array<ActFormat, 3> formats_;
  memory::data_type dt_;  // of a, b and y: f32 or bf16 (computed in fp32, rounded once)
  PrimitiveCache<BinaryPrimitive> cache_;
};

Tactic elementWiseTactic() {
  Tactic t;
  t.name = "elementwise_onednn_binary";
  // y may take x's memory: oneDNN's binary runs in place over src0 (dst == src0); only a full-shape a has y's size, so
  // neither the swap nor the expansion (both for a broadcast a) meets it.
  t.outputMayReuseInput = 0;
  t.op = OpType::kElementWise;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;
  t.priority = 10;
  t.supports = [](ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
    if (!floatIo(in, out, 2) || !binaryAlgorithm(node.attrs.getInt("op", -1)))
      return false;
    int32_t rank = out[0].shape.nbDims;
    return rank >= 1 && rank <= 12 && in[0].shape.nbDims <= rank && in[1].shape.nbDims <= rank;
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
    int64_t op = node.attrs.getInt("op", -1);
    auto alg = binaryAlgorithm(op);
    if (!alg)
      return invalidGraph(node.describe(), ": elementwise op ", op, " has no oneDNN binary");
    std::array<ActFormat, 3> formats{nodeFormat(node, "cpu_formats_in", 0), nodeFormat(node, "cpu_formats_in", 1),
                                     nodeFormat(node, "cpu_formats_out", 0)};
    KILN_ASSIGN_OR_RETURN(memory::data_type dt, nodeType(node));
    return std::unique_ptr<Kernel>(std::make_unique<BinaryKernel>(node.describe(), op, *alg, formats, dt));
  };
  return t;
}

KILN_REGISTER_TACTIC(elementWiseTactic);

}  // namespace
}  // namespace kiln::backends::cpu
