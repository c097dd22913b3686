// ONNX Det: determinants of the trailing n x n matrices (any leading batch axes), composed from public layers.
// Up to kMaxEinsumOrder: one Einsum of the n rows with the Levi-Civita tensor (det A = eps[i1..in] A[0,i1] ...
// A[n-1,in]; exact products summed in float64). Larger n (up to kMaxLuOrder): Gaussian elimination with partial
// pivoting in float64, unrolled over the n columns (TopK picks the pivot row, swaps and eliminations are
// broadcast element-wise updates), det = sign of the row permutation * product of the pivots.
#include <cstring>
#include <string>
#include <vector>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

constexpr int64_t kMaxEinsumOrder = 6;
constexpr int64_t kMaxLuOrder = 64;
using Op = ElementWiseOperation;

/// Sign of the permutation `p` of 0..n-1 (0 if an index repeats).
int permutationSign(std::vector<int64_t> const& p) {
  int sign = 1;
  for (size_t i = 0; i < p.size(); ++i) {
    for (size_t j = i + 1; j < p.size(); ++j) {
      if (p[i] == p[j]) {
        return 0;
      }
      if (p[i] > p[j]) {
        sign = -sign;
      }
    }
  }
  return sign;
}

/// Gathers index `i` along `axis`, keeping the axis (extent 1).
Result<ITensor*> take(ImportContext& ctx, Node const& node, ITensor* x, int64_t i, int32_t axis) {
  KO_ASSIGN_OR_RETURN(ITensor * idx, ctx.int64Tensor({i}, node.name() + "_take"));
  IGatherLayer* g = ctx.network().addGather(*x, *idx, axis);
  KO_RETURN_IF_ERROR(ctx.check(g, node, "take"));
  return g->getOutput(0);
}

/// A constant [n, 1] (column) or [1, n] (row) float64 or int64 vector.
Result<ITensor*> vectorConstant(ImportContext& ctx, Node const& node, std::vector<double> const& v, bool column,
                                DataType type) {
  auto const n = static_cast<int64_t>(v.size());
  KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(type, column ? Dims{2, {n, 1}} : Dims{2, {1, n}}));
  for (int64_t i = 0; i < n; ++i) {
    if (type == DataType::kINT64) {
      auto const x = static_cast<int64_t>(v[static_cast<size_t>(i)]);
      std::memcpy(c->bytes.data() + i * 8, &x, 8);
    } else {
      std::memcpy(c->bytes.data() + i * 8, &v[static_cast<size_t>(i)], 8);
    }
  }
  return ctx.constantTensor(c, node.name() + "_vector");
}

/// det by Gaussian elimination with partial pivoting (see the file comment); x is [..., n, n] of rank r.
Status luDet(ImportContext& ctx, Node const& node, ITensor* x, int32_t r, int64_t n) {
  int32_t const rowAxis = r - 2, colAxis = r - 1;
  KO_ASSIGN_OR_RETURN(ITensor * m, compose::cast(ctx, node, x, DataType::kFLOAT64));
  std::vector<double> iota(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    iota[static_cast<size_t>(i)] = static_cast<double>(i);
  }
  KO_ASSIGN_OR_RETURN(ITensor * rowIds, vectorConstant(ctx, node, iota, true, DataType::kINT64));
  KO_ASSIGN_OR_RETURN(ITensor * minusOne, compose::scalar(ctx, node, DataType::kFLOAT64, -1, "_minus_one"));
  KO_ASSIGN_OR_RETURN(ITensor * one, compose::scalar(ctx, node, DataType::kFLOAT64, 1, "_one"));
  KO_ASSIGN_OR_RETURN(ITensor * zero, compose::scalar(ctx, node, DataType::kFLOAT64, 0, "_zero"));
  ITensor* sign = one;
  for (int64_t k = 0; k < n; ++k) {
    // Pivot row p: the largest |m[i, k]| over rows i >= k (earlier rows read as -1, never chosen).
    std::vector<double> fromK(static_cast<size_t>(n)), atK(static_cast<size_t>(n)), belowK(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      fromK[static_cast<size_t>(i)] = i >= k ? 1 : 0;
      atK[static_cast<size_t>(i)] = i == k ? 1 : 0;
      belowK[static_cast<size_t>(i)] = i > k ? 1 : 0;
    }
    KO_ASSIGN_OR_RETURN(ITensor * fromKT, vectorConstant(ctx, node, fromK, true, DataType::kFLOAT64));
    KO_ASSIGN_OR_RETURN(ITensor * atKT, vectorConstant(ctx, node, atK, true, DataType::kFLOAT64));
    KO_ASSIGN_OR_RETURN(ITensor * belowKT, vectorConstant(ctx, node, belowK, true, DataType::kFLOAT64));
    KO_ASSIGN_OR_RETURN(ITensor * eligible, compose::binary(ctx, node, fromKT, zero, Op::kGREATER));
    KO_ASSIGN_OR_RETURN(ITensor * below, compose::binary(ctx, node, belowKT, zero, Op::kGREATER));
    KO_ASSIGN_OR_RETURN(ITensor * col, take(ctx, node, m, k, colAxis));  // [..., n, 1]
    KO_ASSIGN_OR_RETURN(ITensor * mag, compose::unary(ctx, node, col, UnaryOperation::kABS));
    KO_ASSIGN_OR_RETURN(mag, compose::select(ctx, node, eligible, mag, minusOne));
    ITopKLayer* top =
        ctx.network().addTopK(*mag, TopKOperation::kMAX, 1, 1U << static_cast<uint32_t>(rowAxis), DataType::kINT64);
    KO_RETURN_IF_ERROR(ctx.check(top, node, "pivot"));
    KO_ASSIGN_OR_RETURN(ITensor * isP, compose::binary(ctx, node, rowIds, top->getOutput(1), Op::kEQUAL));
    KO_ASSIGN_OR_RETURN(ITensor * onehotP, compose::cast(ctx, node, isP, DataType::kFLOAT64));  // [..., n, 1]
    // Swap rows k and p: m += (e_k - e_p) (row_p - row_k).
    KO_ASSIGN_OR_RETURN(ITensor * rowK, take(ctx, node, m, k, rowAxis));  // [..., 1, n]
    KO_ASSIGN_OR_RETURN(ITensor * picked, compose::binary(ctx, node, onehotP, m, Op::kPROD));
    IReduceLayer* sum =
        ctx.network().addReduce(*picked, ReduceOperation::kSUM, 1U << static_cast<uint32_t>(rowAxis), true);
    KO_RETURN_IF_ERROR(ctx.check(sum, node, "pivot_row"));
    ITensor* rowP = sum->getOutput(0);
    KO_ASSIGN_OR_RETURN(ITensor * dRow, compose::binary(ctx, node, rowP, rowK, Op::kSUB));
    KO_ASSIGN_OR_RETURN(ITensor * dSel, compose::binary(ctx, node, atKT, onehotP, Op::kSUB));
    KO_ASSIGN_OR_RETURN(ITensor * swap, compose::binary(ctx, node, dSel, dRow, Op::kPROD));
    KO_ASSIGN_OR_RETURN(m, compose::binary(ctx, node, m, swap, Op::kSUM));
    // A real swap (p != k) flips the sign: onehotP at row k is 1 exactly when p == k.
    KO_ASSIGN_OR_RETURN(ITensor * stay, take(ctx, node, onehotP, k, rowAxis));  // [..., 1, 1]
    KO_ASSIGN_OR_RETURN(ITensor * stayed, compose::binary(ctx, node, stay, zero, Op::kGREATER));
    KO_ASSIGN_OR_RETURN(ITensor * flip, compose::select(ctx, node, stayed, one, minusOne));
    KO_ASSIGN_OR_RETURN(sign, compose::binary(ctx, node, sign, flip, Op::kPROD));
    if (k + 1 == n) {
      break;
    }
    // Eliminate below the pivot (a zero pivot means a zero column: the factors are 0 and det ends up 0).
    KO_ASSIGN_OR_RETURN(ITensor * pivot, take(ctx, node, rowP, k, colAxis));  // [..., 1, 1]
    KO_ASSIGN_OR_RETURN(ITensor * isZero, compose::binary(ctx, node, pivot, zero, Op::kEQUAL));
    KO_ASSIGN_OR_RETURN(ITensor * safe, compose::select(ctx, node, isZero, one, pivot));
    KO_ASSIGN_OR_RETURN(ITensor * colK, take(ctx, node, m, k, colAxis));
    KO_ASSIGN_OR_RETURN(ITensor * factors, compose::binary(ctx, node, colK, safe, Op::kDIV));
    KO_ASSIGN_OR_RETURN(factors, compose::select(ctx, node, below, factors, zero));
    KO_ASSIGN_OR_RETURN(ITensor * update, compose::binary(ctx, node, factors, rowP, Op::kPROD));
    KO_ASSIGN_OR_RETURN(m, compose::binary(ctx, node, m, update, Op::kSUB));
  }
  // det = sign * prod(diag(m))
  std::vector<double> eye(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    eye[static_cast<size_t>(i * n + i)] = 1;
  }
  KO_ASSIGN_OR_RETURN(Constant * ec, ctx.newConstant(DataType::kFLOAT64, Dims{2, {n, n}}));
  std::memcpy(ec->bytes.data(), eye.data(), eye.size() * 8);
  KO_ASSIGN_OR_RETURN(ITensor * eyeT, ctx.constantTensor(ec, node.name() + "_eye"));
  KO_ASSIGN_OR_RETURN(ITensor * diag, compose::binary(ctx, node, m, eyeT, Op::kPROD));
  IReduceLayer* dsum =
      ctx.network().addReduce(*diag, ReduceOperation::kSUM, 1U << static_cast<uint32_t>(colAxis), false);
  KO_RETURN_IF_ERROR(ctx.check(dsum, node, "diagonal"));
  IReduceLayer* prod =
      ctx.network().addReduce(*dsum->getOutput(0), ReduceOperation::kPROD, 1U << static_cast<uint32_t>(r - 2), false);
  KO_RETURN_IF_ERROR(ctx.check(prod, node, "pivot_product"));
  ITensor* s = nullptr;
  if (r == 2) {
    KO_ASSIGN_OR_RETURN(s, reshape(ctx, node, sign, Dims{0, {}}));
  } else {
    // sign is [..., 1, 1]: drop the two unit axes.
    IShuffleLayer* sh = ctx.network().addShuffle(*sign);
    KO_RETURN_IF_ERROR(ctx.check(sh, node, "sign"));
    Dims sd{r - 2, {}};
    for (int32_t i = 0; i < r - 2; ++i) {
      sd.d[i] = 0;
    }
    sh->setReshapeDimensions(sd);
    s = sh->getOutput(0);
  }
  KO_ASSIGN_OR_RETURN(ITensor * det, compose::binary(ctx, node, prod->getOutput(0), s, Op::kPROD));
  KO_ASSIGN_OR_RETURN(det, compose::cast(ctx, node, det, x->getType()));
  return ctx.setOutput(node, 0, det);
}

Status importDet(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  Dims const d = x->getDimensions();
  if (r < 2 || d.d[r - 1] < 0 || d.d[r - 1] != d.d[r - 2]) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node,
                                    "needs square trailing matrices of static order, got ", dimsString(d));
  }
  int64_t const n = d.d[r - 1];
  if (n < 1 || n > kMaxLuOrder) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "matrix order ", n, " is not supported (1 to ",
                                    kMaxLuOrder, ")");
  }
  DataType const t = x->getType();
  if (t != DataType::kFLOAT && t != DataType::kHALF && t != DataType::kBF16 && t != DataType::kFLOAT64) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "needs a float input");
  }
  if (n > kMaxEinsumOrder) {
    return luDet(ctx, node, x, r, n);
  }
  // Levi-Civita tensor eps[i1..in] in x's type (stored as float or float64, exact: entries are -1, 0, 1).
  Dims ed{static_cast<int32_t>(n), {}};
  int64_t count = 1;
  for (int64_t i = 0; i < n; ++i) {
    ed.d[i] = n;
    count *= n;
  }
  DataType const et = t == DataType::kFLOAT64 ? DataType::kFLOAT64 : DataType::kFLOAT;
  KO_ASSIGN_OR_RETURN(Constant * eps, ctx.newConstant(et, ed));
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t lin = 0; lin < count; ++lin) {
    int64_t rest = lin;
    for (int64_t i = n - 1; i >= 0; --i) {
      idx[static_cast<size_t>(i)] = rest % n;
      rest /= n;
    }
    int const s = permutationSign(idx);
    if (et == DataType::kFLOAT64) {
      reinterpret_cast<double*>(eps->bytes.data())[lin] = s;
    } else {
      reinterpret_cast<float*>(eps->bytes.data())[lin] = static_cast<float>(s);
    }
  }
  KO_ASSIGN_OR_RETURN(ITensor * epsT, ctx.constantTensor(eps, node.name() + "_levi_civita"));
  KO_ASSIGN_OR_RETURN(epsT, compose::cast(ctx, node, epsT, t));

  std::vector<ITensor*> operands;
  std::string lhs, letters;
  for (int64_t i = 0; i < n; ++i) {
    KO_ASSIGN_OR_RETURN(Constant * ic, ctx.newConstant(DataType::kINT64, Dims{0, {}}));
    std::memcpy(ic->bytes.data(), &i, sizeof(i));
    KO_ASSIGN_OR_RETURN(ITensor * it, ctx.constantTensor(ic, node.name() + "_row" + std::to_string(i)));
    IGatherLayer* g = ctx.network().addGather(*x, *it, r - 2);
    KO_RETURN_IF_ERROR(ctx.check(g, node, "row"));
    operands.push_back(g->getOutput(0));
    char const c = static_cast<char>('a' + i);
    letters += c;
    lhs += std::string("...") + c + ",";
  }
  operands.push_back(epsT);
  std::string const equation = lhs + letters + "->...";
  IEinsumLayer* e = ctx.network().addEinsum(operands.data(), static_cast<int32_t>(operands.size()), equation.c_str());
  KO_RETURN_IF_ERROR(ctx.check(e, node, "einsum"));
  return ctx.setOutput(node, 0, e->getOutput(0));
}

KILN_ONNX_REGISTER("", "Det", importDet);

}  // namespace
}  // namespace kiln::onnx
