// Reference kernel of MatrixMultiply: batched (broadcast) matrix/vector products with kNONE / kTRANSPOSE /
// kVECTOR operands, optional bias broadcast to the output, optional residual of the output's shape (added with
// the bias, before the activation) and fused activation; fp64 accumulation, one rounding on store.
#include <vector>

#include "backends/reference/activation_math.h"
#include "backends/reference/reference_util.h"
#include "core/broadcast.h"

namespace kiln::backends::reference {
namespace {

using ir::OpType;

struct MatMulParams {
  std::string who;
  MatrixOperation opA = MatrixOperation::kNONE;
  MatrixOperation opB = MatrixOperation::kNONE;
  int64_t activation = -1;
  double alpha = 0, beta = 0;
};

std::vector<double> loadAll(TensorView const& v) {
  std::vector<double> r(static_cast<size_t>(std::max<int64_t>(0, v.count())));
  for (int64_t i = 0; i < static_cast<int64_t>(r.size()); ++i)
    r[i] = loadAsDouble(v, i);
  return r;
}

Status runMatMul(MatMulParams const& mp, LaunchContext const& ctx) {
  TensorView const& a = ctx.inputs[0];
  TensorView const& b = ctx.inputs[1];
  TensorView const* bias = ctx.inputs.size() > 2 && ctx.inputs[2].data ? &ctx.inputs[2] : nullptr;
  TensorView const* residual = ctx.inputs.size() > 3 && ctx.inputs[3].data ? &ctx.inputs[3] : nullptr;
  TensorView const& y = ctx.outputs[0];
  bool vecA = mp.opA == MatrixOperation::kVECTOR, vecB = mp.opB == MatrixOperation::kVECTOR;
  bool trA = mp.opA == MatrixOperation::kTRANSPOSE, trB = mp.opB == MatrixOperation::kTRANSPOSE;
  int32_t matA = vecA ? 1 : 2, matB = vecB ? 1 : 2;
  int32_t ra = a.shape.nbDims, rb = b.shape.nbDims;
  if (ra < matA || rb < matB)
    return invalidArgument(mp.who, ": operand rank too small");
  int64_t m = vecA ? 1 : (trA ? a.shape.d[ra - 1] : a.shape.d[ra - 2]);
  int64_t kA = vecA ? a.shape.d[ra - 1] : (trA ? a.shape.d[ra - 2] : a.shape.d[ra - 1]);
  int64_t kB = vecB ? b.shape.d[rb - 1] : (trB ? b.shape.d[rb - 1] : b.shape.d[rb - 2]);
  int64_t n = vecB ? 1 : (trB ? b.shape.d[rb - 2] : b.shape.d[rb - 1]);
  if (kA != kB)
    return invalidArgument(mp.who, ": inner dimensions differ (", kA, " vs ", kB, ")");
  int64_t kk = kA;
  int32_t nbBatch = y.shape.nbDims - (vecA ? 0 : 1) - (vecB ? 0 : 1);
  if (nbBatch < ra - matA || nbBatch < rb - matB)
    return invalidArgument(mp.who, ": output rank does not match");
  Dims batch = leadingDims(y.shape, nbBatch);
  if (!broadcastsTo(leadingDims(a.shape, ra - matA), batch) || !broadcastsTo(leadingDims(b.shape, rb - matB), batch) ||
      (!vecA && y.shape.d[nbBatch] != m) || (!vecB && y.shape.d[y.shape.nbDims - 1] != n))
    return invalidArgument(mp.who, ": a ", dimsToString(a.shape), " and b ", dimsToString(b.shape), " do not give y ",
                           dimsToString(y.shape));
  std::vector<int64_t> sa = broadcastStrides(leadingDims(a.shape, ra - matA), batch);
  std::vector<int64_t> sb = broadcastStrides(leadingDims(b.shape, rb - matB), batch);
  int64_t matSizeA = m * kk, matSizeB = kk * n, matSizeY = m * n;
  std::vector<double> ad = loadAll(a), bd = loadAll(b);
  int64_t total = y.count();
  std::vector<double> acc(static_cast<size_t>(std::max<int64_t>(0, total)), 0.0);
  forEachIndex<2>(batch, {sa, sb}, [&](int64_t bi, std::array<int64_t, 2> const& off) {
    double const* pa = ad.data() + off[0] * matSizeA;
    double const* pb = bd.data() + off[1] * matSizeB;
    double* py = acc.data() + bi * matSizeY;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0.0;
        for (int64_t t = 0; t < kk; ++t) {
          double va = vecA ? pa[t] : (trA ? pa[t * m + i] : pa[i * kk + t]);
          double vb = vecB ? pb[t] : (trB ? pb[j * kk + t] : pb[t * n + j]);
          s += va * vb;
        }
        py[i * n + j] = s;
      }
    }
  });
  if (bias) {
    if (!broadcastsTo(bias->shape, y.shape))
      return invalidArgument(mp.who, ": bias does not broadcast to y");
    std::vector<int64_t> sbias = broadcastStrides(bias->shape, y.shape);
    forEachIndex<1>(y.shape, {sbias},
                    [&](int64_t lin, std::array<int64_t, 1> const& off) { acc[lin] += loadAsDouble(*bias, off[0]); });
  }
  if (residual && !dimsEqual(residual->shape, y.shape))
    return invalidArgument(mp.who, ": residual ", dimsToString(residual->shape), " must have y's shape ",
                           dimsToString(y.shape));
  for (int64_t i = 0; i < total; ++i) {
    double v = acc[i];
    if (residual) v += loadAsDouble(*residual, i);
    if (mp.activation >= 0)
      v = applyActivation(static_cast<ActivationType>(mp.activation), v, mp.alpha, mp.beta);
    storeFromDouble(y, i, v);
  }
  return Status::ok();
}

Tactic matrixMultiplyTactic() {
  return makeTactic(
      "matrix_multiply_reference", OpType::kMatrixMultiply,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        MatMulParams mp;
        mp.who = node.describe();
        int64_t opA = node.attrs.getInt("op_a", 0), opB = node.attrs.getInt("op_b", 0);
        if (opA < 0 || opA >= EnumMax<MatrixOperation>() || opB < 0 || opB >= EnumMax<MatrixOperation>())
          return invalidGraph(node.describe(), ": unknown matrix operation");
        mp.opA = static_cast<MatrixOperation>(opA);
        mp.opB = static_cast<MatrixOperation>(opB);
        mp.activation = node.attrs.getInt("activation", -1);
        if (mp.activation != -1 && !isActivationType(mp.activation))
          return invalidGraph(node.describe(), ": unknown activation ", mp.activation);
        mp.alpha = node.attrs.getFloat("act_alpha", 0.0);
        mp.beta = node.attrs.getFloat("act_beta", 0.0);
        return makeKernel([mp](LaunchContext const& ctx) { return runMatMul(mp, ctx); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        if (in.size() < 2 || out.size() != 1)
          return false;
        for (size_t i = 0; i < in.size(); ++i)
          if (in[i].shape.nbDims >= 0 && !isComputeFloat(in[i].dtype))
            return false;
        return isComputeFloat(out[0].dtype);
      });
}

KILN_REGISTER_TACTIC(matrixMultiplyTactic);

}  // namespace
}  // namespace kiln::backends::reference
