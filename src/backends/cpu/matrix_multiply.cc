// oneDNN MatrixMultiply tactic (matrix_multiply_onednn_gemm): fp32 or bf16 batched products with kNONE / kTRANSPOSE
// operands (transposes as strides), numpy batch broadcast, a fused bias broadcast to the output, a fused residual
// (sum post-op) and the fused activation as eltwise post-ops. Vector operands (kVECTOR) are left to the reference. A
// product whose B is shared by every batch runs as one 2-D product over the batch's rows (A and y are row-major), and a
// constant B is reordered once into the primitive's preferred (blocked) format instead of being packed on every call.
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "backends/cpu/onednn_util.h"

namespace kiln::backends::cpu {
namespace {

using dnnl::memory;
using ir::OpType;

struct MatMulConfig {
  std::string who;
  bool transA = false, transB = false;
  int64_t activation = -1;
  float alpha = 0, beta = 0;
  bool hasResidual = false;          // input 3, added before the activation (oneDNN's sum post-op)
  std::optional<HostTensor> constB;  // B when it is a Constant (in `dt`)
  // Element type of A, B, bias, residual and y: f32, or bf16 (oneDNN accumulates in fp32).
  memory::data_type dt = memory::data_type::f32;
};

struct MatMulPrimitive {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  memory packedB;  // the constant B in pd.weights_desc()'s format; empty: B is read as given
};

// `d` as `rank` dims with leading 1s.
memory::dims padded(Dims const& d, int32_t rank) {
  memory::dims r(static_cast<size_t>(rank - d.nbDims), 1);
  for (int32_t i = 0; i < d.nbDims; ++i)
    r.push_back(d.d[i]);
  return r;
}

// Row-major strides of `dims`, then the last two swapped in meaning when the matrix is stored transposed:
// logical (r, c) of a stored [c, r] matrix lies at c * rows + r.
memory::dims matrixStrides(memory::dims const& dims, bool transposed) {
  size_t n = dims.size();
  memory::dims s(n, 1);
  for (size_t i = n - 1; i-- > 0;)
    s[i] = s[i + 1] * dims[i + 1];
  if (transposed) {
    s[n - 1] = dims[n - 2];
    s[n - 2] = 1;
  }
  return s;
}

class OnednnMatMulKernel final : public Kernel {
 public:
  explicit OnednnMatMulKernel(MatMulConfig cfg) : cfg_(std::move(cfg)) {}

  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& a = ctx.inputs[0];
    TensorView const& b = ctx.inputs[1];
    TensorView const* bias = ctx.inputs.size() > 2 && ctx.inputs[2].data ? &ctx.inputs[2] : nullptr;
    TensorView const* res = cfg_.hasResidual && ctx.inputs.size() > 3 && ctx.inputs[3].data ? &ctx.inputs[3] : nullptr;
    TensorView const& y = ctx.outputs[0];
    if (cfg_.hasResidual && !res)
      return invalidArgument(cfg_.who, ": the residual input the kernel was built for is missing");
    if (y.count() == 0)
      return Status::ok();
    if (res && !dimsEqual(res->shape, y.shape))
      return invalidArgument(cfg_.who, ": residual ", dimsToString(res->shape), " must have y's shape ",
                             dimsToString(y.shape));
    int32_t ra = a.shape.nbDims, rb = b.shape.nbDims, ry = y.shape.nbDims;
    if (ra < 2 || rb < 2 || ry < 2 || ra > ry || rb > ry || (bias && bias->shape.nbDims > ry))
      return invalidArgument(cfg_.who, ": operand ranks do not match the output's");
    int64_t kA = cfg_.transA ? a.shape.d[ra - 2] : a.shape.d[ra - 1];
    int64_t kB = cfg_.transB ? b.shape.d[rb - 1] : b.shape.d[rb - 2];
    if (kA != kB)
      return invalidArgument(cfg_.who, ": inner dimensions differ (", kA, " vs ", kB, ")");
    if (kA == 0)
      return unsupported(cfg_.who, ": the oneDNN matrix multiply needs a non-empty inner dimension");
    OmpThreads threads(ctx);
    std::vector<int64_t> key{threads.count(), ra, rb, ry, bias ? bias->shape.nbDims : -1};
    for (Dims const* d : {&a.shape, &b.shape, &y.shape})
      for (int64_t v : dimsToVector(*d))
        key.push_back(v);
    if (bias)
      for (int64_t v : dimsToVector(bias->shape))
        key.push_back(v);
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<MatMulPrimitive const> p, cache_.get(std::move(key), [&] { return build(a.shape, b.shape, y.shape, bias ? &bias->shape : nullptr); }));
    try {
      dnnl::engine& eng = engine();
      dnnl::stream stream(eng);
      memory::desc spDesc = p->pd.scratchpad_desc();
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, memory(p->pd.src_desc(), eng, a.data)},
          {DNNL_ARG_WEIGHTS, p->packedB ? p->packedB : memory(p->pd.weights_desc(), eng, b.data)},
          {DNNL_ARG_DST, memory(p->pd.dst_desc(), eng, y.data)},
          {DNNL_ARG_SCRATCHPAD, memory(spDesc, eng, threadScratch(spDesc.get_size()))}};
      if (bias)
        args.emplace(DNNL_ARG_BIAS, memory(p->pd.bias_desc(), eng, bias->data));
      // The sum post-op adds what dst holds: the residual goes there first. (A binary-add post-op reading the
      // residual in place measured slower on BERT's FFN-out GEMM: 1.027 vs 1.007 of the FFN-in GEMM's time.)
      if (res && res->data != y.data)
        std::memcpy(y.data, res->data, static_cast<size_t>(y.count()) * memory::data_type_size(cfg_.dt));
      p->prim.execute(stream, args);
      stream.wait();
    } catch (dnnl::error const& e) {
      return internalError(cfg_.who, ": oneDNN matrix multiply failed: ", e.what());
    }
    return Status::ok();
  }

 private:
  Result<std::shared_ptr<MatMulPrimitive const>> build(Dims const& a, Dims const& b, Dims const& y,
                                                        Dims const* bias) const {
    int32_t ry = y.nbDims;
    memory::dims ad = padded(a, ry), bd = padded(b, ry), yd = toDnnl(y);
    // Logical [.., M, K] and [.., K, N] views of the stored operands.
    if (cfg_.transA)
      std::swap(ad[ry - 1], ad[ry - 2]);
    if (cfg_.transB)
      std::swap(bd[ry - 1], bd[ry - 2]);
    for (int32_t i = 0; i < ry - 2; ++i)
      if ((ad[i] != 1 && ad[i] != yd[i]) || (bd[i] != 1 && bd[i] != yd[i]))
        return invalidArgument(cfg_.who, ": a ", dimsToString(a), " and b ", dimsToString(b), " do not give y ",
                               dimsToString(y));
    if (ad[ry - 2] != yd[ry - 2] || bd[ry - 1] != yd[ry - 1])
      return invalidArgument(cfg_.who, ": a ", dimsToString(a), " and b ", dimsToString(b), " do not give y ",
                             dimsToString(y));
    // Strides of the stored layout, expressed for the logical dims.
    memory::dims as = matrixStrides(padded(a, ry), false), bs = matrixStrides(padded(b, ry), false);
    if (cfg_.transA)
      std::swap(as[ry - 1], as[ry - 2]);
    if (cfg_.transB)
      std::swap(bs[ry - 1], bs[ry - 2]);
    auto f32 = cfg_.dt;  // (or bf16)
    memory::dims biasDims;
    if (bias) {
      biasDims = padded(*bias, ry);
      for (int32_t i = 0; i < ry; ++i)
        if (biasDims[i] != 1 && biasDims[i] != yd[i])
          return invalidArgument(cfg_.who, ": bias ", dimsToString(*bias), " does not broadcast to y");
    }
    // B shared by every batch (its batch dims all 1), A full and not transposed, a bias without batch dims: one
    // [rows, K] x [K, N] product (A's and y's batches are consecutive rows).
    bool sharedB = true, fullA = true, flatBias = true;
    for (int32_t i = 0; i < ry - 2; ++i) {
      sharedB = sharedB && bd[i] == 1;
      fullA = fullA && ad[i] == yd[i];
      flatBias = flatBias && (!bias || biasDims[i] == 1);
    }
    // (A bias varying along the rows of one batch would not repeat per batch in the collapsed product.)
    flatBias = flatBias && (!bias || biasDims[ry - 2] == 1);
    if (ry > 2 && sharedB && fullA && flatBias && !cfg_.transA) {
      int64_t rows = 1;
      for (int32_t i = 0; i < ry - 1; ++i)
        rows *= yd[i];
      int64_t k = ad[ry - 1], n = yd[ry - 1];
      ad = {rows, k};
      as = {k, 1};
      bd = {k, n};
      bs = {bs[ry - 2], bs[ry - 1]};
      yd = {rows, n};
      if (bias)
        biasDims = {biasDims[ry - 2], biasDims[ry - 1]};
      ry = 2;
    }
    bool packB = cfg_.constB.has_value() && sharedB;
    try {
      dnnl::engine& eng = engine();
      memory::desc aMd(ad, f32, as), bMd(bd, f32, bs), yMd(yd, f32, matrixStrides(yd, false));
      memory::desc biasMd;
      if (bias)
        biasMd = memory::desc(biasDims, f32, matrixStrides(biasDims, false));
      dnnl::matmul::desc d(aMd, packB ? memory::desc(bd, f32, memory::format_tag::any) : bMd, biasMd, yMd);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::post_ops ops;
      if (cfg_.hasResidual) ops.append_sum(1.f);
      if (!appendActivation(ops, cfg_.activation, cfg_.alpha, cfg_.beta))
        return unsupported(cfg_.who, ": activation ", cfg_.activation, " has no oneDNN post-op");
      attr.set_post_ops(ops);
      dnnl::matmul::primitive_desc pd(d, attr, eng);
      auto p = std::make_shared<MatMulPrimitive>();
      p->pd = pd;
      p->prim = dnnl::matmul(pd);
      if (packB)
        p->packedB = packed_.get(pd.weights_desc(), bMd, cfg_.constB->data());
      return std::shared_ptr<MatMulPrimitive const>(std::move(p));
    } catch (dnnl::error const& e) {
      return unsupported(cfg_.who, ": oneDNN has no matrix multiply for a ", dimsToString(a), ", b ",
                         dimsToString(b), ": ", e.what());
    }
  }

  MatMulConfig cfg_;
  PrimitiveCache<MatMulPrimitive> cache_;
  mutable PackedWeights packed_;  // used by build(), under cache_'s lock
};

bool supportsMatMul(ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
  // One element type throughout: float32, or bf16 (a bf16 build's products; fp32 accumulation).
  if (in.size() < 2 || in.size() > 4 || out.size() != 1) return false;
  DataType dt = out[0].dtype;
  if (!dnnlFloatType(dt)) return false;
  for (TensorInfo const& t : in)
    if (t.shape.nbDims >= 0 && t.dtype != dt) return false;
  int64_t opA = node.attrs.getInt("op_a", 0), opB = node.attrs.getInt("op_b", 0);
  auto plainOrT = [](int64_t op) {
    return op == static_cast<int64_t>(MatrixOperation::kNONE) || op == static_cast<int64_t>(MatrixOperation::kTRANSPOSE);
  };
  if (!plainOrT(opA) || !plainOrT(opB))
    return false;
  int32_t ry = out[0].shape.nbDims;
  // oneDNN's matmul takes up to 12 dims; ranks must be known to lay out the batch.
  if (in[0].shape.nbDims < 2 || in[1].shape.nbDims < 2 || ry < 2 || ry > 12 || in[0].shape.nbDims > ry ||
      in[1].shape.nbDims > ry)
    return false;
  if (in.size() > 2 && in[2].shape.nbDims > ry)
    return false;
  // A residual has y's shape (shape inference checks it); unknown ranks cannot be laid out.
  if (in.size() > 3 && in[3].shape.nbDims >= 0 && in[3].shape.nbDims != ry) return false;
  return activationSupported(node);
}

Tactic matrixMultiplyTactic() {
  Tactic t;
  t.name = "matrix_multiply_onednn_gemm";
  t.op = OpType::kMatrixMultiply;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;
  t.priority = 10;  // ahead of the reference (0)
  t.supports = supportsMatMul;
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
    MatMulConfig cfg;
    cfg.who = node.describe();
    cfg.transA = node.attrs.getInt("op_a", 0) == static_cast<int64_t>(MatrixOperation::kTRANSPOSE);
    cfg.transB = node.attrs.getInt("op_b", 0) == static_cast<int64_t>(MatrixOperation::kTRANSPOSE);
    cfg.activation = node.attrs.getInt("activation", -1);
    cfg.alpha = static_cast<float>(node.attrs.getFloat("act_alpha", 0.0));
    cfg.beta = static_cast<float>(node.attrs.getFloat("act_beta", 0.0));
    cfg.hasResidual = node.input(3) != nullptr;
    if (!activationSupported(node))
      return invalidGraph(node.describe(), ": activation ", cfg.activation, " has no oneDNN post-op");
    ir::Value const* y = node.output(0);
    std::optional<memory::data_type> dt = y ? dnnlFloatType(y->dtype) : std::nullopt;
    if (!dt) return invalidGraph(node.describe(), ": the oneDNN matrix multiply runs float32 or bf16 only");
    cfg.dt = *dt;
    if (HostTensor const* b = constantInput(node, 1); b && b->dtype() == y->dtype) cfg.constB = *b;
    return std::unique_ptr<Kernel>(std::make_unique<OnednnMatMulKernel>(std::move(cfg)));
  };
  return t;
}

KILN_REGISTER_TACTIC(matrixMultiplyTactic);

}  // namespace
}  // namespace kiln::backends::cpu
