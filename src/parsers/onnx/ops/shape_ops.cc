// ONNX shape and data-movement importers: Identity, Reshape, Flatten, Transpose, Concat, Gather, Shape, Where
// (Cast, Dropout, Squeeze, Unsqueeze, Split, Slice and Expand have their own files).
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
KILN_ONNX_REGISTER("", "Concat", importConcat);
KILN_ONNX_REGISTER("", "Gather", importGather);
KILN_ONNX_REGISTER("", "Shape", importShape);
KILN_ONNX_REGISTER("", "Where", importWhere);

}  // namespace
}  // namespace kiln::onnx
