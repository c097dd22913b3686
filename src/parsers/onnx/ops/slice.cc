// ONNX importer for Slice: constant starts/ends/axes/steps (attributes before opset 10) are normalized here into a
// slice layer on static extents; any of them known only at run time is normalized by shape-tensor arithmetic
// (negative indices, clamping to the extent, empty results) whose result feeds the slice layer's inputs.
#include <algorithm>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/shape_tensor_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// Input `i` as a 1-D INT64 tensor of length `n` (a constant of `fill` when absent).
Result<ITensor*> sliceParam(ImportContext& ctx, Node const& node, int i, int64_t n, int64_t fill) {
  if (!ImportContext::hasInput(node, i)) {
    return int64Const(ctx, node, std::vector<int64_t>(static_cast<size_t>(n), fill));
  }
  KO_ASSIGN_OR_RETURN(ITensor * t, int64Vector(ctx, node, i));
  KO_ASSIGN_OR_RETURN(int64_t len, vectorLength(node, t, "starts, ends, axes and steps"));
  if (len != n) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "starts/ends/axes/steps differ in length");
  }
  return t;
}

/// Slice whose parameters are known only at run time. For each sliced axis with extent d and step k:
///   s = start (+ d if negative), e = end (+ d if negative);
///   k > 0: s, e clamped to [0, d], size = max(0, ceil((e - s) / k));
///   k < 0: s, e clamped to [-1, d - 1], size = max(0, ceil((s - e) / -k)).
/// A zero step fails an assertion when the engine runs.
Status runtimeSlice(ImportContext& ctx, Node const& node, ITensor* x, int32_t r) {
  KO_ASSIGN_OR_RETURN(ITensor * starts, int64Vector(ctx, node, 1));
  KO_ASSIGN_OR_RETURN(int64_t n, vectorLength(node, starts, "starts"));
  if (n > r) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, n, " starts for rank ", r);
  }
  KO_ASSIGN_OR_RETURN(ITensor * ends, sliceParam(ctx, node, 2, n, 0));
  ITensor* axes = nullptr;
  if (ImportContext::hasInput(node, 3)) {
    KO_ASSIGN_OR_RETURN(axes, sliceParam(ctx, node, 3, n, 0));
    KO_ASSIGN_OR_RETURN(axes, normalizeAxes(ctx, node, axes, r));
  } else {
    std::vector<int64_t> all;
    for (int64_t i = 0; i < n; ++i) {
      all.push_back(i);
    }
    KO_ASSIGN_OR_RETURN(axes, int64Const(ctx, node, all));
  }
  KO_ASSIGN_OR_RETURN(ITensor * steps, sliceParam(ctx, node, 4, n, 1));
  using Op = ElementWiseOperation;
  KO_ASSIGN_OR_RETURN(ITensor * shape, shapeOf(ctx, node, x));
  KO_ASSIGN_OR_RETURN(ITensor * dims, gather(ctx, node, shape, axes));
  KO_ASSIGN_OR_RETURN(ITensor * zero, int64Const(ctx, node, {0}));
  KO_ASSIGN_OR_RETURN(ITensor * one, int64Const(ctx, node, {1}));
  KO_ASSIGN_OR_RETURN(ITensor * minusOne, int64Const(ctx, node, {-1}));
  // Negative indices count from the end.
  auto wrap = [&](ITensor* t) -> Result<ITensor*> {
    KO_ASSIGN_OR_RETURN(ITensor * negative, binary(ctx, node, t, zero, Op::kLESS));
    KO_ASSIGN_OR_RETURN(ITensor * shifted, binary(ctx, node, t, dims, Op::kSUM));
    return choose(ctx, node, negative, shifted, t);
  };
  KO_ASSIGN_OR_RETURN(ITensor * s, wrap(starts));
  KO_ASSIGN_OR_RETURN(ITensor * e, wrap(ends));
  KO_ASSIGN_OR_RETURN(ITensor * zeroStep, binary(ctx, node, steps, zero, Op::kEQUAL));
  IUnaryLayer* nonZero = ctx.network().addUnary(*zeroStep, UnaryOperation::kNOT);
  KO_RETURN_IF_ERROR(ctx.check(nonZero, node, "step_check"));
  KO_RETURN_IF_ERROR(assertAll(ctx, node, nonZero->getOutput(0), "a step is 0"));
  KO_ASSIGN_OR_RETURN(ITensor * forward, binary(ctx, node, steps, zero, Op::kGREATER));
  KO_ASSIGN_OR_RETURN(ITensor * dimsMinusOne, binary(ctx, node, dims, one, Op::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * zeros, binary(ctx, node, dims, zero, Op::kPROD));
  KO_ASSIGN_OR_RETURN(ITensor * minusOnes, binary(ctx, node, zeros, minusOne, Op::kSUM));
  KO_ASSIGN_OR_RETURN(ITensor * lo, choose(ctx, node, forward, zeros, minusOnes));
  KO_ASSIGN_OR_RETURN(ITensor * hi, choose(ctx, node, forward, dims, dimsMinusOne));
  KO_ASSIGN_OR_RETURN(s, clamp(ctx, node, s, lo, hi));
  KO_ASSIGN_OR_RETURN(e, clamp(ctx, node, e, lo, hi));
  KO_ASSIGN_OR_RETURN(ITensor * eMinusS, binary(ctx, node, e, s, Op::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * sMinusE, binary(ctx, node, s, e, Op::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * span, choose(ctx, node, forward, eMinusS, sMinusE));
  KO_ASSIGN_OR_RETURN(ITensor * negSteps, binary(ctx, node, zero, steps, Op::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * absSteps, choose(ctx, node, forward, steps, negSteps));
  // ceil(span / |k|) = -floor(-span / |k|); negative spans give <= 0 and are clamped to an empty slice.
  KO_ASSIGN_OR_RETURN(ITensor * negSpan, binary(ctx, node, zero, span, Op::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * negCount, binary(ctx, node, negSpan, absSteps, Op::kFLOOR_DIV));
  KO_ASSIGN_OR_RETURN(ITensor * count, binary(ctx, node, zero, negCount, Op::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * size, binary(ctx, node, count, zero, Op::kMAX));
  // An empty slice may start anywhere; 0 keeps the start in bounds.
  KO_ASSIGN_OR_RETURN(ITensor * empty, binary(ctx, node, size, zero, Op::kEQUAL));
  KO_ASSIGN_OR_RETURN(ITensor * start, choose(ctx, node, empty, zeros, s));
  Dims placeholder{r, {}};
  Dims ones{r, {}};
  for (int32_t k = 0; k < r; ++k) {
    ones.d[k] = 1;
  }
  ISliceLayer* l = ctx.network().addSlice(*x, placeholder, placeholder, ones);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "slice"));
  l->setInput(1, *start);
  l->setInput(2, *size);
  l->setInput(3, *steps);
  l->setInput(5, *axes);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

/// Slice: constant starts/ends/axes/steps (attributes before opset 10, inputs from 10) on static extents, else
/// runtimeSlice.
Status importSlice(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    KO_ASSIGN_OR_RETURN(starts, attrInts(node, "starts"));
    KO_ASSIGN_OR_RETURN(ends, attrInts(node, "ends"));
    KO_ASSIGN_OR_RETURN(axes, attrInts(node, "axes"));
  } else {
    for (int i = 1; i <= 4; ++i) {
      if (ImportContext::hasInput(node, i) && ctx.constant(node, i) == nullptr) {
        return runtimeSlice(ctx, node, x, r);
      }
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

KILN_ONNX_REGISTER("", "Slice", importSlice);

}  // namespace
}  // namespace kiln::onnx
