// ONNX Det: determinants of the trailing n x n matrices, composed exactly as one Einsum of the n rows with the
// Levi-Civita tensor (det A = eps[i1..in] A[0,i1] ... A[n-1,in]); the reference Einsum accumulates in float64.
// n is limited to kMaxOrder (n^n tensor entries).
#include <cstring>
#include <string>
#include <vector>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

constexpr int64_t kMaxOrder = 6;

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

Status importDet(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  Dims const d = x->getDimensions();
  if (r < 2 || d.d[r - 1] < 0 || d.d[r - 1] != d.d[r - 2]) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node,
                                    "needs square trailing matrices of static order, got ", dimsString(d));
  }
  int64_t const n = d.d[r - 1];
  if (n < 1 || n > kMaxOrder) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node, "matrix order ", n, " is not supported (1 to ",
                                    kMaxOrder, ")");
  }
  DataType const t = x->getType();
  if (t != DataType::kFLOAT && t != DataType::kHALF && t != DataType::kBF16 && t != DataType::kFLOAT64) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "needs a float input");
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
