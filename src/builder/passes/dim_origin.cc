// Origins of dims (dim_origin.h): which tensor and axis an unknown dim is copied from, so that passes can prove two
// -1 dims equal.
#include "builder/passes/dim_origin.h"

#include <algorithm>

#include "builder/passes/pass.h"
#include "ir/infer/window_util.h"
#include "kiln/kiln.h"

namespace kiln::builder::passutil {
namespace {

// True when a constant `c` of at most `rank` dims, right-aligned against a rank-`rank` tensor, has 1 at `axis`:
// ElementWise with it leaves that dim to the other operand.
bool constantKeepsDim(ir::Value const* c, int32_t rank, int32_t axis) {
  HostTensor const* t = constantData(c);
  if (!t || t->shape().nbDims > rank) return false;
  int32_t const i = axis - (rank - t->shape().nbDims);
  return i < 0 || t->shape().d[i] == 1;
}

// Ops whose output 0 has the shape of input 0 whatever the attributes.
bool keepsInputShape(ir::OpType op) {
  return op == ir::OpType::kActivation || op == ir::OpType::kUnary || op == ir::OpType::kCast ||
         op == ir::OpType::kIdentity || op == ir::OpType::kSoftMax || op == ir::OpType::kNormalization;
}

// True when a Convolution's output has its input's extent along `axis`: the batch, or a spatial dim that a
// stride-1 window with padding making up for the kernel ("same" convolutions) keeps.
bool convolutionKeepsDim(ir::Node const& n, int32_t axis) {
  ir::Value const* x = n.input(0);
  ir::Value const* w = n.input(1);
  if (!x || !w || x->shape.nbDims != n.outputs[0]->shape.nbDims) return false;
  if (axis == 0) return true;
  int32_t const ns = x->shape.nbDims - 2;
  if (axis < 2 || ns < 1 || w->shape.nbDims != x->shape.nbDims) return false;
  std::vector<int64_t> wKernel(w->shape.d + 2, w->shape.d + 2 + ns);
  if (std::any_of(wKernel.begin(), wKernel.end(), [](int64_t k) { return k < 0; })) wKernel.clear();
  auto p = ir::readWindowParams(n, "kernel_shape", ns, true, wKernel);
  if (!p.isOk()) return false;
  size_t const i = static_cast<size_t>(axis - 2);
  if (p->strides[i] != 1) return false;
  if (p->mode == PaddingMode::kSAME_UPPER || p->mode == PaddingMode::kSAME_LOWER) return true;
  return p->padsBegin[i] + p->padsEnd[i] == p->dilations[i] * (p->kernel[i] - 1);
}

}  // namespace

std::optional<std::vector<int64_t>> permAttr(ir::Node const& n, char const* name, int32_t rank) {
  std::vector<int64_t> p = n.attrs.getInts(name);
  if (p.empty()) {
    p.resize(static_cast<size_t>(std::max(rank, 0)));
    for (int32_t i = 0; i < rank; ++i) p[static_cast<size_t>(i)] = i;
  }
  if (static_cast<int32_t>(p.size()) != rank) return std::nullopt;
  return p;
}

std::optional<ShuffleView> readShuffle(ir::Node const* sh) {
  if (!sh || sh->op != ir::OpType::kShuffle || sh->outputs.size() != 1 || sh->inputs.empty() || !sh->inputs[0] ||
      sh->inputs.size() > 2)
    return std::nullopt;
  ShuffleView v;
  v.reshape = sh->input(1) != nullptr || sh->attrs.has("reshape");
  auto f = permAttr(*sh, "first_perm", sh->inputs[0]->shape.nbDims);
  auto s = permAttr(*sh, "second_perm", sh->outputs[0]->shape.nbDims);
  if (!f || !s) return std::nullopt;
  v.first = *f;
  v.second = *s;
  return v;
}

namespace {

using Origin = std::pair<ir::Value const*, int32_t>;

// Where dim `axis` of `v` comes from, in at most `budget` steps (shared by the walks of both operands of a binary
// layer, so that a graph of many such layers stays cheap). Every (value, axis) on the walk has the same extent at
// run time, so stopping anywhere (the budget spent included) gives a true origin, only a less useful one.
Origin originOf(ir::Value const* v, int32_t axis, int& budget) {
  for (; budget > 0; --budget) {
    ir::Node const* n = v->producer;
    if (!n || n->outputs.size() != 1 || n->outputs[0] != v) break;
    int32_t const rank = v->shape.nbDims;
    // Both operands' dims at `axis` (ranks equal to the output's): of one origin, the result's dim is theirs.
    auto joined = [&](ir::Value const* a, ir::Value const* b) -> std::optional<Origin> {
      if (!a || !b || a->shape.nbDims != rank || b->shape.nbDims != rank) return std::nullopt;
      --budget;
      Origin const oa = originOf(a, axis, budget);
      Origin const ob = originOf(b, axis, budget);
      if (oa != ob) return std::nullopt;
      return oa;
    };
    if (n->op == ir::OpType::kShuffle) {
      auto view = readShuffle(n);
      if (!view || axis >= static_cast<int32_t>(view->second.size())) break;
      int64_t a = view->second[static_cast<size_t>(axis)];
      if (view->reshape) {
        std::vector<int64_t> const r = n->attrs.getInts("reshape");
        if (n->input(1) || n->attrs.getInt("zero_is_placeholder", 1) == 0 || a >= static_cast<int64_t>(r.size()) ||
            r[static_cast<size_t>(a)] != 0)
          break;
      }
      if (a < 0 || a >= static_cast<int64_t>(view->first.size())) break;
      v = n->inputs[0];
      axis = static_cast<int32_t>(view->first[static_cast<size_t>(a)]);
    } else if (keepsInputShape(n->op) && n->input(0) && n->inputs[0]->shape.nbDims == rank) {
      v = n->inputs[0];
    } else if (n->op == ir::OpType::kConvolution && convolutionKeepsDim(*n, axis)) {
      v = n->inputs[0];
    } else if (n->op == ir::OpType::kElementWise && n->inputs.size() == 2 && n->inputs[0] && n->inputs[1]) {
      int side = -1;
      for (int i = 0; i < 2; ++i)
        if (n->inputs[i]->shape.nbDims == rank && constantKeepsDim(n->inputs[1 - i], rank, axis)) side = i;
      if (side >= 0) {
        v = n->inputs[side];
        continue;
      }
      if (passutil::constantData(n->inputs[0]) || passutil::constantData(n->inputs[1])) break;
      auto o = joined(n->inputs[0], n->inputs[1]);
      if (!o) break;
      return *o;
    } else if (n->op == ir::OpType::kMatrixMultiply && n->inputs.size() >= 2 && n->inputs[0] && n->inputs[1] &&
               n->attrs.getInt("op_a", 0) == static_cast<int64_t>(MatrixOperation::kNONE) &&
               n->inputs[0]->shape.nbDims == rank && axis < rank - 1) {
      // A residual (input 3) has y's shape; a bias does not enlarge y: neither changes where the dim comes from.
      if (axis == rank - 2) {
        v = n->inputs[0];  // the rows of the first operand
        continue;
      }
      HostTensor const* w = constantData(n->inputs[1]);
      if (w) {
        bool batchless = w->shape().nbDims >= 2;
        for (int32_t i = 0; batchless && i + 2 < w->shape().nbDims; ++i) batchless = w->shape().d[i] == 1;
        if (!batchless) break;
        v = n->inputs[0];
        continue;
      }
      // A batch dim of two computed operands (attention's q k^T and p v): theirs when they have one origin.
      auto o = joined(n->inputs[0], n->inputs[1]);
      if (!o) break;
      return *o;
    } else {
      break;
    }
  }
  return {v, axis};
}

}  // namespace

std::pair<ir::Value const*, int32_t> dimOrigin(ir::Value const* v, int32_t axis) {
  int budget = 256;
  return originOf(v, axis, budget);
}

bool sameDim(ir::Value const* a, int32_t i, ir::Value const* b, int32_t j) {
  if (i < 0 || j < 0 || i >= a->shape.nbDims || j >= b->shape.nbDims) return false;
  int64_t const da = a->shape.d[i], db = b->shape.d[j];
  if (da >= 0 || db >= 0) return da == db;
  auto const o = dimOrigin(a, i);
  return o.first->shape.nbDims > o.second && dimOrigin(b, j) == o;
}

bool sameShape(ir::Value const* a, ir::Value const* b) {
  if (a->shape.nbDims != b->shape.nbDims) return false;
  for (int32_t i = 0; i < a->shape.nbDims; ++i)
    if (!sameDim(a, i, b, i)) return false;
  return true;
}

}  // namespace kiln::builder::passutil
