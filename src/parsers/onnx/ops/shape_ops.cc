// ONNX shape and data-movement importers: Identity, Reshape, Flatten, Transpose, Squeeze, Unsqueeze,
// Concat, Split, Slice, Gather, Shape, Expand, Where.
#include <algorithm>
#include <cstring>
#include <limits>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importIdentity(ImportContext& ctx, Node const& node) {
  if (Constant const* c = ctx.constant(node, 0)) {
    return ctx.setOutputConstant(node, 0, c);
  }
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  IIdentityLayer* l = ctx.network().addIdentity(*x);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "identity"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importReshape(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  bool allowZero = false;
  if (ctx.opset() >= 14) {
    KO_ASSIGN_OR_RETURN(int64_t az, attrInt(node, "allowzero", 0));
    allowZero = az != 0;
  }
  std::vector<int64_t> shape;
  ITensor* shapeTensor = nullptr;
  if (ctx.opset() < 5) {
    KO_ASSIGN_OR_RETURN(shape, attrInts(node, "shape"));
  } else if (ctx.constant(node, 1) != nullptr) {
    KO_ASSIGN_OR_RETURN(shape, constantInts(ctx, node, 1));
  } else {
    KO_ASSIGN_OR_RETURN(shapeTensor, ctx.tensor(node, 1));
  }
  IShuffleLayer* l = ctx.network().addShuffle(*x);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "reshape"));
  l->setZeroIsPlaceholder(!allowZero);
  if (shapeTensor != nullptr) {
    l->setInput(1, *shapeTensor);
  } else {
    if (shape.size() > static_cast<size_t>(Dims::MAX_DIMS)) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node, "target rank ", shape.size(),
                                      " exceeds ", Dims::MAX_DIMS);
    }
    int minusOnes = 0;
    Dims d{static_cast<int32_t>(shape.size()), {}};
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] < -1) {
        return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "shape entry ", shape[i], " is invalid");
      }
      minusOnes += shape[i] == -1 ? 1 : 0;
      d.d[i] = shape[i];
    }
    if (minusOnes > 1) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "shape has more than one -1");
    }
    l->setReshapeDimensions(d);
  }
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importFlatten(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", 1));
  if (axisAttr < -r || axisAttr > r) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axis ", axisAttr, " is out of range");
  }
  int32_t const axis = static_cast<int32_t>(axisAttr < 0 ? axisAttr + r : axisAttr);
  Dims const in = x->getDimensions();
  // Static extents where known; otherwise 0 (copy) for a single leading axis or -1 for the rest.
  int64_t outer = 1;
  int64_t inner = 1;
  bool outerKnown = true;
  bool innerKnown = true;
  for (int32_t i = 0; i < r; ++i) {
    bool known = in.d[i] >= 0;
    (i < axis ? outerKnown : innerKnown) &= known;
    (i < axis ? outer : inner) *= known ? in.d[i] : 1;
  }
  Dims d{2, {outerKnown ? outer : (axis == 1 ? 0 : -1), innerKnown ? inner : -1}};
  if (!outerKnown && !innerKnown && axis != 1) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                    "dynamic extents on both sides of the axis are not supported yet");
  }
  KO_ASSIGN_OR_RETURN(ITensor * y, reshape(ctx, node, x, d));
  return ctx.setOutput(node, 0, y);
}

Status importTranspose(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  std::vector<int64_t> def;
  for (int32_t i = r - 1; i >= 0; --i) {
    def.push_back(i);
  }
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> perm, attrInts(node, "perm", def));
  if (perm.size() != static_cast<size_t>(r)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "perm has ", perm.size(), " entries for rank ",
                                    r);
  }
  Permutation p{};
  std::vector<bool> seen(static_cast<size_t>(r), false);
  for (int32_t i = 0; i < r; ++i) {
    if (perm[static_cast<size_t>(i)] < 0 || perm[static_cast<size_t>(i)] >= r ||
        seen[static_cast<size_t>(perm[static_cast<size_t>(i)])]) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "perm is not a permutation");
    }
    seen[static_cast<size_t>(perm[static_cast<size_t>(i)])] = true;
    p.order[i] = static_cast<int32_t>(perm[static_cast<size_t>(i)]);
  }
  IShuffleLayer* l = ctx.network().addShuffle(*x);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "transpose"));
  l->setFirstTranspose(p);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

/// Axes of Squeeze/Unsqueeze: attribute before opset 13, input 1 from 13.
Result<std::vector<int64_t>> axesArg(ImportContext& ctx, Node const& node, bool* given) {
  *given = true;
  if (ctx.opset() < 13) {
    auto const* a = findAttr(node, "axes");
    *given = a != nullptr;
    return attrInts(node, "axes");
  }
  if (!ImportContext::hasInput(node, 1)) {
    *given = false;
    return std::vector<int64_t>{};
  }
  return constantInts(ctx, node, 1);
}

Status importSqueeze(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  bool given = false;
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> axes, axesArg(ctx, node, &given));
  Dims const in = x->getDimensions();
  if (!given) {
    for (int32_t i = 0; i < r; ++i) {
      if (in.d[i] == 1) {
        axes.push_back(i);
      } else if (in.d[i] < 0) {
        return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                        "squeeze without axes needs static extents");
      }
    }
  }
  for (auto& a : axes) {
    KO_ASSIGN_OR_RETURN(int32_t n, normalizeAxis(node, a, r));
    if (in.d[n] > 1) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axis ", a, " has extent ", in.d[n], ", not 1");
    }
    a = n;
  }
  KO_ASSIGN_OR_RETURN(ITensor * axesT, ctx.int64Tensor(axes, node.name() + "_axes"));
  ISqueezeLayer* l = ctx.network().addSqueeze(*x, *axesT);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "squeeze"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importUnsqueeze(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  bool given = false;
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> axes, axesArg(ctx, node, &given));
  if (!given) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axes are required");
  }
  int32_t const outRank = r + static_cast<int32_t>(axes.size());
  for (auto& a : axes) {
    KO_ASSIGN_OR_RETURN(int32_t n, normalizeAxis(node, a, outRank));
    a = n;
  }
  KO_ASSIGN_OR_RETURN(ITensor * axesT, ctx.int64Tensor(axes, node.name() + "_axes"));
  IUnsqueezeLayer* l = ctx.network().addUnsqueeze(*x, *axesT);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "unsqueeze"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importConcat(ImportContext& ctx, Node const& node) {
  auto const* a = findAttr(node, "axis");
  if (a == nullptr) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "attribute 'axis' is required");
  }
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", 0));
  std::vector<ITensor*> ins;
  for (int i = 0; i < node.input_size(); ++i) {
    KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, i));
    ins.push_back(t);
  }
  if (ins.empty()) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "needs at least one input");
  }
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, ins[0]));
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
  IConcatenationLayer* l = ctx.network().addConcatenation(ins.data(), static_cast<int32_t>(ins.size()));
  KO_RETURN_IF_ERROR(ctx.check(l, node, "concat"));
  l->setAxis(axis);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importSplit(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", 0));
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
  Dims const in = x->getDimensions();
  if (in.d[axis] < 0) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                    "splitting a dynamic axis is not supported yet");
  }
  int const n = node.output_size();
  std::vector<int64_t> split;
  if (ctx.opset() < 13) {
    KO_ASSIGN_OR_RETURN(split, attrInts(node, "split"));
  } else if (ImportContext::hasInput(node, 1)) {
    KO_ASSIGN_OR_RETURN(split, constantInts(ctx, node, 1));
  }
  if (split.empty()) {
    int64_t const total = in.d[axis];
    int64_t const chunk = (total + n - 1) / n;  // opset 18 num_outputs semantics: last chunk may be smaller
    for (int i = 0; i < n; ++i) {
      split.push_back(std::max<int64_t>(0, std::min(chunk, total - chunk * i)));
    }
  }
  int64_t sum = 0;
  for (int64_t s : split) {
    if (s < 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "negative split size");
    }
    sum += s;
  }
  if (static_cast<int>(split.size()) != n || sum != in.d[axis]) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "split sizes do not cover axis ", axis, " (",
                                    in.d[axis], ") over ", n, " outputs");
  }
  int64_t start = 0;
  for (int i = 0; i < n; ++i) {
    Dims st{r, {}};
    Dims sz = in;
    Dims stride{r, {}};
    for (int32_t k = 0; k < r; ++k) {
      stride.d[k] = 1;
    }
    st.d[axis] = start;
    sz.d[axis] = split[static_cast<size_t>(i)];
    ISliceLayer* l = ctx.network().addSlice(*x, st, sz, stride);
    KO_RETURN_IF_ERROR(ctx.check(l, node, "split"));
    for (int32_t k = 0; k < r; ++k) {
      if (sz.d[k] < 0) {
        return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                        "split of a tensor with dynamic extents is not supported yet");
      }
    }
    KO_RETURN_IF_ERROR(ctx.setOutput(node, i, l->getOutput(0)));
    start += split[static_cast<size_t>(i)];
  }
  return Status::success();
}

/// Slice with constant starts/ends/axes/steps (attributes before opset 10, inputs from 10) on static extents.
Status importSlice(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    KO_ASSIGN_OR_RETURN(starts, attrInts(node, "starts"));
    KO_ASSIGN_OR_RETURN(ends, attrInts(node, "ends"));
    KO_ASSIGN_OR_RETURN(axes, attrInts(node, "axes"));
  } else {
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

Status importGather(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * data, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * idx, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, data));
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", 0));
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
  IGatherLayer* l = ctx.network().addGather(*data, *idx, axis);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "gather"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importShape(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int64_t startAttr, attrInt(node, "start", 0));
  KO_ASSIGN_OR_RETURN(int64_t endAttr, attrInt(node, "end", r));
  IShapeLayer* l = ctx.network().addShape(*x);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "shape"));
  ITensor* y = l->getOutput(0);
  int64_t s = std::clamp<int64_t>(startAttr < 0 ? startAttr + r : startAttr, 0, r);
  int64_t e = std::clamp<int64_t>(endAttr < 0 ? endAttr + r : endAttr, 0, r);
  if (s != 0 || e != r) {
    ISliceLayer* sl = ctx.network().addSlice(*y, Dims{1, {s}}, Dims{1, {std::max<int64_t>(0, e - s)}}, Dims{1, {1}});
    KO_RETURN_IF_ERROR(ctx.check(sl, node, "shape_slice"));
    y = sl->getOutput(0);
  }
  return ctx.setOutput(node, 0, y);
}

/// Expand: numpy broadcast to a constant shape, as a wrapping slice.
Status importExpand(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> shape, constantInts(ctx, node, 1));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  int32_t const outRank = std::max<int32_t>(r, static_cast<int32_t>(shape.size()));
  if (outRank > Dims::MAX_DIMS) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node, "rank too large");
  }
  KO_ASSIGN_OR_RETURN(x, broadcastToRank(ctx, node, x, outRank));
  Dims const in = x->getDimensions();
  Dims st{outRank, {}};
  Dims sz{outRank, {}};
  Dims stride{outRank, {}};
  size_t const off = static_cast<size_t>(outRank) - shape.size();
  for (int32_t k = 0; k < outRank; ++k) {
    int64_t want = static_cast<size_t>(k) >= off ? shape[static_cast<size_t>(k) - off] : 1;
    if (in.d[k] < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                      "expanding a dynamic extent is not supported yet");
    }
    if (in.d[k] != 1 && want != 1 && want != in.d[k]) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "cannot broadcast extent ", in.d[k], " to ",
                                      want);
    }
    sz.d[k] = in.d[k] == 1 ? want : in.d[k];
    stride.d[k] = 1;
  }
  // Wrapping coordinates repeat extent-1 axes: a broadcast copy.
  ISliceLayer* l = ctx.network().addSlice(*x, st, sz, stride);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "expand"));
  l->setMode(SampleMode::kWRAP);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importWhere(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * c, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * a, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 2));
  KO_ASSIGN_OR_RETURN(int32_t rc, rankOf(node, c));
  KO_ASSIGN_OR_RETURN(int32_t ra, rankOf(node, a));
  KO_ASSIGN_OR_RETURN(int32_t rb, rankOf(node, b));
  int32_t const r = std::max({rc, ra, rb});
  KO_ASSIGN_OR_RETURN(c, broadcastToRank(ctx, node, c, r));
  KO_ASSIGN_OR_RETURN(a, broadcastToRank(ctx, node, a, r));
  KO_ASSIGN_OR_RETURN(b, broadcastToRank(ctx, node, b, r));
  ISelectLayer* l = ctx.network().addSelect(*c, *a, *b);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "where"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "Identity", importIdentity);
KILN_ONNX_REGISTER("", "Reshape", importReshape);
KILN_ONNX_REGISTER("", "Flatten", importFlatten);
KILN_ONNX_REGISTER("", "Transpose", importTranspose);
KILN_ONNX_REGISTER("", "Squeeze", importSqueeze);
KILN_ONNX_REGISTER("", "Unsqueeze", importUnsqueeze);
KILN_ONNX_REGISTER("", "Concat", importConcat);
KILN_ONNX_REGISTER("", "Split", importSplit);
KILN_ONNX_REGISTER("", "Slice", importSlice);
KILN_ONNX_REGISTER("", "Gather", importGather);
KILN_ONNX_REGISTER("", "Shape", importShape);
KILN_ONNX_REGISTER("", "Expand", importExpand);
KILN_ONNX_REGISTER("", "Where", importWhere);

}  // namespace
}  // namespace kiln::onnx
