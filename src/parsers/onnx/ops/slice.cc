// ONNX Slice: constant parameters on static extents become a static ISliceLayer; run-time starts/ends/axes/steps
// (or dynamic extents) are clamped as ONNX says with shape-tensor arithmetic and fed to the slice's inputs.
#include <algorithm>
#include <cstring>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// Slice with constant starts/ends/axes/steps on static extents: a static ISliceLayer.
Status constantSlice(ImportContext& ctx, Node const& node, ITensor* x, int32_t r, std::vector<int64_t> const& starts,
                     std::vector<int64_t> const& ends, std::vector<int64_t> const& axes,
                     std::vector<int64_t> const& steps) {
  Dims const in = x->getDimensions();
  Dims st{r, {}};
  Dims sz = in;
  Dims stride{r, {}};
  for (int32_t k = 0; k < r; ++k) {
    stride.d[k] = 1;
  }
  std::vector<bool> seen(static_cast<size_t>(r), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    KO_ASSIGN_OR_RETURN(int32_t a, normalizeAxis(node, axes[i], r));
    if (seen[static_cast<size_t>(a)]) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axis ", axes[i], " is repeated");
    }
    seen[static_cast<size_t>(a)] = true;
    int64_t const dim = in.d[a];
    if (dim < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                      "slicing a dynamic axis is not supported yet");
    }
    int64_t const step = steps[i];
    if (step == 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "step is 0");
    }
    int64_t s = starts[i];
    int64_t e = ends[i];
    s = s < 0 ? s + dim : s;
    e = e < 0 ? (e < -dim - 1 ? -1 : e + dim) : e;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      sz.d[a] = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, -1, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      sz.d[a] = s > e ? (s - e + (-step) - 1) / (-step) : 0;
    }
    st.d[a] = sz.d[a] == 0 ? 0 : s;
    stride.d[a] = step;
  }
  for (int32_t k = 0; k < r; ++k) {
    if (sz.d[k] < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                      "slice of a tensor with dynamic extents is not supported yet");
    }
  }
  ISliceLayer* l = ctx.network().addSlice(*x, st, sz, stride);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "slice"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

/// Run-time starts/ends/axes/steps (any of them): start = clamp(start < 0 ? start + dim : start, lo, hi), the
/// same for end, with [lo, hi] = [0, dim] for positive steps and [-1, dim - 1] for negative ones; size =
/// max(0, floor((end - start + step - sign(step)) / step)). `n` is the number of sliced axes.
Status dynamicSlice(ImportContext& ctx, Node const& node, ITensor* x, int32_t r, size_t n) {
  auto ew = [&](ITensor* a, ITensor* b, ElementWiseOperation op) -> Result<ITensor*> {
    IElementWiseLayer* l = ctx.network().addElementWise(*a, *b, op);
    KO_RETURN_IF_ERROR(ctx.check(l, node, "slice_bounds"));
    return l->getOutput(0);
  };
  auto select = [&](ITensor* c, ITensor* a, ITensor* b) -> Result<ITensor*> {
    ISelectLayer* l = ctx.network().addSelect(*c, *a, *b);
    KO_RETURN_IF_ERROR(ctx.check(l, node, "slice_select"));
    return l->getOutput(0);
  };
  auto vec = [&](std::vector<int64_t> const& v) { return ctx.int64Tensor(v, node.name() + "_slice"); };
  // Input i as an int64 vector of n entries.
  auto param = [&](int i, char const* what) -> Result<ITensor*> {
    KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, i));
    Dims d = t->getDimensions();
    if (d.nbDims != 1 || d.d[0] != static_cast<int64_t>(n)) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, what, " needs ", n,
                                      " entries (one per sliced axis), got shape ", dimsString(d));
    }
    if (t->getType() != DataType::kINT64) {
      ICastLayer* l = ctx.network().addCast(*t, DataType::kINT64);
      KO_RETURN_IF_ERROR(ctx.check(l, node, "cast"));
      t = l->getOutput(0);
    }
    return t;
  };
  KO_ASSIGN_OR_RETURN(ITensor * starts, param(1, "starts"));
  KO_ASSIGN_OR_RETURN(ITensor * ends, param(2, "ends"));
  KO_ASSIGN_OR_RETURN(ITensor * zero, vec(std::vector<int64_t>(n, 0)));
  KO_ASSIGN_OR_RETURN(ITensor * one, vec(std::vector<int64_t>(n, 1)));
  ITensor* axes = nullptr;
  if (ImportContext::hasInput(node, 3)) {
    KO_ASSIGN_OR_RETURN(axes, param(3, "axes"));
    if (Constant const* c = ctx.constant(node, 3)) {
      std::vector<bool> seen(static_cast<size_t>(r), false);
      for (int64_t i = 0; i < c->count(); ++i) {
        KO_ASSIGN_OR_RETURN(int32_t a, normalizeAxis(node, c->asInt(i), r));
        if (seen[static_cast<size_t>(a)]) {
          return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axis ", c->asInt(i), " is repeated");
        }
        seen[static_cast<size_t>(a)] = true;
      }
    }
    KO_ASSIGN_OR_RETURN(ITensor * rank, vec(std::vector<int64_t>(n, r)));
    KO_ASSIGN_OR_RETURN(ITensor * neg, ew(axes, zero, ElementWiseOperation::kLESS));
    KO_ASSIGN_OR_RETURN(ITensor * wrapped, ew(axes, rank, ElementWiseOperation::kSUM));
    KO_ASSIGN_OR_RETURN(axes, select(neg, wrapped, axes));
  } else {
    if (static_cast<int64_t>(n) > r) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, n, " starts for an input of rank ", r);
    }
    std::vector<int64_t> v(n);
    for (size_t i = 0; i < n; ++i) {
      v[i] = static_cast<int64_t>(i);
    }
    KO_ASSIGN_OR_RETURN(axes, vec(v));
  }
  ITensor* steps = one;
  if (ImportContext::hasInput(node, 4)) {
    KO_ASSIGN_OR_RETURN(steps, param(4, "steps"));
    if (Constant const* c = ctx.constant(node, 4)) {
      for (int64_t i = 0; i < c->count(); ++i) {
        if (c->asInt(i) == 0) {
          return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "step is 0");
        }
      }
    }
  }
  IShapeLayer* shape = ctx.network().addShape(*x);
  KO_RETURN_IF_ERROR(ctx.check(shape, node, "shape"));
  ITensor* shape64 = shape->getOutput(0);
  if (shape64->getType() != DataType::kINT64) {
    ICastLayer* l = ctx.network().addCast(*shape64, DataType::kINT64);
    KO_RETURN_IF_ERROR(ctx.check(l, node, "cast"));
    shape64 = l->getOutput(0);
  }
  IGatherLayer* g = ctx.network().addGather(*shape64, *axes, 0);
  KO_RETURN_IF_ERROR(ctx.check(g, node, "dims"));
  ITensor* dims = g->getOutput(0);
  // sign = step > 0 ? 1 : -1; lo = (sign - 1) / 2 (0 or -1); hi = dim + lo.
  KO_ASSIGN_OR_RETURN(ITensor * positive, ew(steps, zero, ElementWiseOperation::kGREATER));
  KO_ASSIGN_OR_RETURN(ITensor * minusOne, vec(std::vector<int64_t>(n, -1)));
  KO_ASSIGN_OR_RETURN(ITensor * sign, select(positive, one, minusOne));
  KO_ASSIGN_OR_RETURN(ITensor * lo, select(positive, zero, minusOne));
  KO_ASSIGN_OR_RETURN(ITensor * hi, ew(dims, lo, ElementWiseOperation::kSUM));
  auto bound = [&](ITensor* v) -> Result<ITensor*> {
    KO_ASSIGN_OR_RETURN(ITensor * neg, ew(v, zero, ElementWiseOperation::kLESS));
    KO_ASSIGN_OR_RETURN(ITensor * wrapped, ew(v, dims, ElementWiseOperation::kSUM));
    KO_ASSIGN_OR_RETURN(ITensor * w, select(neg, wrapped, v));
    KO_ASSIGN_OR_RETURN(ITensor * c, ew(w, lo, ElementWiseOperation::kMAX));
    return ew(c, hi, ElementWiseOperation::kMIN);
  };
  KO_ASSIGN_OR_RETURN(ITensor * s, bound(starts));
  KO_ASSIGN_OR_RETURN(ITensor * e, bound(ends));
  KO_ASSIGN_OR_RETURN(ITensor * span, ew(e, s, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(span, ew(span, steps, ElementWiseOperation::kSUM));
  KO_ASSIGN_OR_RETURN(span, ew(span, sign, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * size, ew(span, steps, ElementWiseOperation::kFLOOR_DIV));
  KO_ASSIGN_OR_RETURN(size, ew(size, zero, ElementWiseOperation::kMAX));
  // An empty slice starts at 0 (its clamped start may be -1 or the extent).
  KO_ASSIGN_OR_RETURN(ITensor * nonEmpty, ew(size, zero, ElementWiseOperation::kGREATER));
  KO_ASSIGN_OR_RETURN(ITensor * start, select(nonEmpty, s, zero));
  Dims full{r, {}};
  Dims ones{r, {}};
  for (int32_t k = 0; k < r; ++k) {
    ones.d[k] = 1;
  }
  ISliceLayer* l = ctx.network().addSlice(*x, full, full, ones);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "slice"));
  l->setInput(5, *axes);
  l->setInput(3, *steps);
  l->setInput(1, *start);
  l->setInput(2, *size);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importSlice(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  std::vector<int64_t> starts, ends, axes, steps;
  bool runTime = false;
  if (ctx.opset() < 10) {
    KO_ASSIGN_OR_RETURN(starts, attrInts(node, "starts"));
    KO_ASSIGN_OR_RETURN(ends, attrInts(node, "ends"));
    KO_ASSIGN_OR_RETURN(axes, attrInts(node, "axes"));
  } else {
    runTime = ctx.constant(node, 1) == nullptr || ctx.constant(node, 2) == nullptr ||
              (ImportContext::hasInput(node, 3) && ctx.constant(node, 3) == nullptr) ||
              (ImportContext::hasInput(node, 4) && ctx.constant(node, 4) == nullptr);
    if (runTime) {
      KO_ASSIGN_OR_RETURN(ITensor * st, ctx.tensor(node, 1));
      Dims d = st->getDimensions();
      if (d.nbDims != 1 || d.d[0] < 0) {
        return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                        "run-time starts need a static 1-D shape, not ", dimsString(d));
      }
      return dynamicSlice(ctx, node, x, r, static_cast<size_t>(d.d[0]));
    }
    KO_ASSIGN_OR_RETURN(starts, constantInts(ctx, node, 1));
    KO_ASSIGN_OR_RETURN(ends, constantInts(ctx, node, 2));
    if (ImportContext::hasInput(node, 3)) {
      KO_ASSIGN_OR_RETURN(axes, constantInts(ctx, node, 3));
    }
    if (ImportContext::hasInput(node, 4)) {
      KO_ASSIGN_OR_RETURN(steps, constantInts(ctx, node, 4));
    }
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) {
      axes.push_back(static_cast<int64_t>(i));
    }
  }
  if (steps.empty()) {
    steps.assign(starts.size(), 1);
  }
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "starts/ends/axes/steps differ in length");
  }
  Dims const in = x->getDimensions();
  for (int64_t a : axes) {
    int64_t k = a < 0 ? a + r : a;
    runTime = runTime || (k >= 0 && k < r && in.d[k] < 0);
  }
  if (runTime && ctx.opset() >= 10) {
    return dynamicSlice(ctx, node, x, r, starts.size());
  }
  return constantSlice(ctx, node, x, r, starts, ends, axes, steps);
}

}  // namespace

KILN_ONNX_REGISTER("", "Slice", importSlice);

}  // namespace kiln::onnx
