// MatrixMultiply on the GPU: the shape analysis shared by the tactics (operand layouts, broadcast batch, bias
// map, the residual, as the reference kernel defines them) and the tactic of the own tiled kernel,
// matrixmultiply_cuda_simt. The cuBLASLt tactics are in matmul_cublaslt.cc.
#include "backends/cuda/matmul.h"

#include "backends/cuda/cuda_util.h"
#include "core/broadcast.h"

namespace kiln::cuda::matmul {
namespace {

// Element strides of `in` (row-major, right-aligned to `out`'s first `outRank` dims, times `unit`), 0 where it
// broadcasts.
std::vector<int64_t> stridesOver(Dims const& in, int32_t inRank, int32_t outRank, int64_t unit) {
  std::vector<int64_t> s(static_cast<size_t>(outRank), 0);
  int64_t run = unit;
  for (int32_t i = inRank - 1; i >= 0; --i) {
    int32_t o = outRank - inRank + i;
    s[static_cast<size_t>(o)] = in.d[i] == 1 ? 0 : run;
    run *= in.d[i];
  }
  return s;
}

}  // namespace

Result<Attrs> readAttrs(ir::Node const& node) {
  Attrs at;
  at.who = node.describe();
  int64_t opA = node.attrs.getInt("op_a", 0), opB = node.attrs.getInt("op_b", 0);
  if (opA < 0 || opA >= EnumMax<MatrixOperation>() || opB < 0 || opB >= EnumMax<MatrixOperation>())
    return invalidGraph(at.who, ": unknown matrix operation");
  at.opA = static_cast<MatrixOperation>(opA);
  at.opB = static_cast<MatrixOperation>(opB);
  int64_t act = node.attrs.getInt("activation", -1);
  if (act < -1 || act >= EnumMax<ActivationType>()) return invalidGraph(at.who, ": unknown activation ", act);
  at.activation = static_cast<int32_t>(act);
  at.alpha = node.attrs.getFloat("act_alpha", 0.0);
  at.beta = node.attrs.getFloat("act_beta", 0.0);
  at.tf32 = allowTf32(node);
  return at;
}

bool supportsNode(ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out,
                  bool withFloat64) {
  if (in.size() < 2 || in.size() > 4 || out.size() != 1) return false;
  if (!readAttrs(node).isOk()) return false;
  DataType t = out[0].dtype;
  bool typeOk = isCudaFloat(t) || (withFloat64 && t == DataType::kFLOAT64);
  if (!typeOk || in[0].dtype != t || in[1].dtype != t) return false;
  if (in[0].shape.nbDims < 0 || in[1].shape.nbDims < 0) return false;
  // The bias and the residual are read as the output's type (mixed types go to the host).
  if (in.size() > 2 && in[2].shape.nbDims >= 0 && in[2].dtype != t) return false;
  return in.size() < 4 || in[3].shape.nbDims < 0 || in[3].dtype == t;
}

Result<Shape> analyze(Attrs const& at, Dims const& a, Dims const& b, Dims const* bias, Dims const& y) {
  bool vecA = at.opA == MatrixOperation::kVECTOR, vecB = at.opB == MatrixOperation::kVECTOR;
  bool trA = at.opA == MatrixOperation::kTRANSPOSE, trB = at.opB == MatrixOperation::kTRANSPOSE;
  int32_t matA = vecA ? 1 : 2, matB = vecB ? 1 : 2;
  int32_t ra = a.nbDims, rb = b.nbDims;
  if (ra < matA || rb < matB) return invalidArgument(at.who, ": operand rank too small");
  int64_t m = vecA ? 1 : (trA ? a.d[ra - 1] : a.d[ra - 2]);
  int64_t kA = vecA ? a.d[ra - 1] : (trA ? a.d[ra - 2] : a.d[ra - 1]);
  int64_t kB = vecB ? b.d[rb - 1] : (trB ? b.d[rb - 1] : b.d[rb - 2]);
  int64_t n = vecB ? 1 : (trB ? b.d[rb - 2] : b.d[rb - 1]);
  if (kA != kB) return invalidArgument(at.who, ": inner dimensions differ (", kA, " vs ", kB, ")");
  int64_t k = kA;
  int32_t nbBatch = y.nbDims - (vecA ? 0 : 1) - (vecB ? 0 : 1);
  if (nbBatch < 0 || nbBatch < ra - matA || nbBatch < rb - matB)
    return invalidArgument(at.who, ": output rank does not match");
  Dims batch{};
  batch.nbDims = nbBatch;
  for (int32_t i = 0; i < nbBatch; ++i) batch.d[i] = y.d[i];
  Dims aBatch = a, bBatch = b;
  aBatch.nbDims = ra - matA;
  bBatch.nbDims = rb - matB;
  if (!broadcastsTo(aBatch, batch) || !broadcastsTo(bBatch, batch) || (!vecA && y.d[nbBatch] != m) ||
      (!vecB && y.d[y.nbDims - 1] != n))
    return invalidArgument(at.who, ": a ", dimsToString(a), " and b ", dimsToString(b), " do not give y ",
                           dimsToString(y));

  Shape s;
  s.p.m = m;
  s.p.n = n;
  s.p.k = k;
  // Element (i, t) of a: [M, K] row-major, [K, M] when transposed; a vector is one row.
  s.p.aRow = trA ? 1 : k;
  s.p.aCol = trA ? m : 1;
  // Element (t, j) of b: [K, N] row-major, [N, K] when transposed; a vector is one column of K.
  s.transA = trA;
  s.transB = trB || vecB;
  s.p.bRow = s.transB ? 1 : n;
  s.p.bCol = s.transB ? k : 1;
  s.vecB = vecB;

  // Batch dims: size-1 dims dropped, neighbours merged where both operands step evenly across them.
  std::vector<int64_t> sa = stridesOver(aBatch, aBatch.nbDims, nbBatch, m * k);
  std::vector<int64_t> sb = stridesOver(bBatch, bBatch.nbDims, nbBatch, k * n);
  s.batchCount = 1;
  for (int32_t i = 0; i < nbBatch; ++i) {
    int64_t d = batch.d[i];
    s.batchCount *= d;
    if (d == 1) continue;
    MatmulBatch& mb = s.batch;
    if (mb.rank > 0 && mb.strideA[mb.rank - 1] == sa[i] * d && mb.strideB[mb.rank - 1] == sb[i] * d) {
      mb.dims[mb.rank - 1] *= d;
      mb.strideA[mb.rank - 1] = sa[i];
      mb.strideB[mb.rank - 1] = sb[i];
      continue;
    }
    mb.dims[mb.rank] = d;
    mb.strideA[mb.rank] = sa[i];
    mb.strideB[mb.rank] = sb[i];
    ++mb.rank;
  }

  if (bias && bias->nbDims >= 0) {
    if (!broadcastsTo(*bias, y)) return invalidArgument(at.who, ": bias does not broadcast to y");
    std::vector<int64_t> sbias = stridesOver(*bias, bias->nbDims, y.nbDims, 1);
    MatmulEpilogue& ep = s.biasMap;
    for (int32_t i = 0; i < y.nbDims; ++i) {
      int64_t d = y.d[i];
      if (d == 1) continue;
      if (ep.rank > 0 && ep.biasStrides[ep.rank - 1] == sbias[i] * d) {
        ep.dims[ep.rank - 1] *= d;
        ep.biasStrides[ep.rank - 1] = sbias[i];
        continue;
      }
      ep.dims[ep.rank] = d;
      ep.biasStrides[ep.rank] = sbias[i];
      ++ep.rank;
    }
    // cuBLASLt's bias epilogue adds one vector along the output's rows of n (its last dim, or one element).
    int64_t vol = volume(*bias);
    s.biasAlongN = vol == n && (n == 1 || (!vecB && bias->d[bias->nbDims - 1] == n));
  }
  return s;
}

void const* residualOf(backends::LaunchContext const& ctx) {
  return ctx.inputs.size() > 3 ? ctx.inputs[3].data : nullptr;
}

MatmulEpilogue epilogueFor(Shape const& s, Attrs const& at, void const* bias, bool addBias, bool applyActivation) {
  MatmulEpilogue ep = s.biasMap;
  ep.bias = addBias ? bias : nullptr;
  ep.activation = applyActivation ? at.activation : -1;
  ep.alpha = at.alpha;
  ep.beta = at.beta;
  return ep;
}

Status runSimt(Shape const& s, Attrs const& at, backends::LaunchContext const& ctx) {
  TensorView const& y = ctx.outputs[0];
  void const* bias = ctx.inputs.size() > 2 ? ctx.inputs[2].data : nullptr;
  MatmulProblem p = s.p;
  p.dtype = static_cast<int32_t>(y.dtype);
  MatmulEpilogue ep = epilogueFor(s, at, bias, bias != nullptr, true);
  ep.residual = residualOf(ctx);
  if (!launchMatmulSimt(ctx.inputs[0].data, ctx.inputs[1].data, y.data, p, s.batch, s.batchCount, ep, streamOf(ctx)))
    return unsupported(at.who, ": no tiled matmul kernel for ", dataTypeName(y.dtype));
  return launchStatus(at.who + ": tiled matmul kernel");
}

Result<Shape> analyzeLaunch(Attrs const& at, backends::LaunchContext const& ctx) {
  if (ctx.inputs.size() < 2 || ctx.outputs.size() != 1) return invalidArgument(at.who, ": needs a, b and y");
  TensorView const* bias = ctx.inputs.size() > 2 && ctx.inputs[2].data ? &ctx.inputs[2] : nullptr;
  if (void const* r = residualOf(ctx); r && !dimsEqual(ctx.inputs[3].shape, ctx.outputs[0].shape))
    return invalidArgument(at.who, ": residual ", dimsToString(ctx.inputs[3].shape), " must have y's shape ",
                           dimsToString(ctx.outputs[0].shape));
  return analyze(at, ctx.inputs[0].shape, ctx.inputs[1].shape, bias ? &bias->shape : nullptr, ctx.outputs[0].shape);
}

namespace {

class SimtKernel final : public backends::Kernel {
 public:
  explicit SimtKernel(Attrs at) : at_(std::move(at)) {}
  Status enqueue(backends::LaunchContext const& ctx) const override {
    KILN_ASSIGN_OR_RETURN(Shape s, analyzeLaunch(at_, ctx));
    if (ctx.outputs[0].count() == 0) return Status::ok();
    return runSimt(s, at_, ctx);
  }

 private:
  Attrs at_;
};

backends::Tactic makeSimt() {
  backends::Tactic t;
  t.name = "matrixmultiply_cuda_simt";
  t.op = ir::OpType::kMatrixMultiply;
  t.source = TacticSource::kKILN;
  t.priority = 10;
  t.supports = [](ir::Node const& n, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    return supportsNode(n, in, out, /*withFloat64=*/true);
  };
  t.create = [](ir::Node const& n) -> Result<std::unique_ptr<backends::Kernel>> {
    KILN_ASSIGN_OR_RETURN(Attrs at, readAttrs(n));
    return std::unique_ptr<backends::Kernel>(new SimtKernel(std::move(at)));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeSimt);

}  // namespace
}  // namespace kiln::cuda::matmul
