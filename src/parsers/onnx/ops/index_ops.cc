// ONNX indexing importers: ArgMax/ArgMin and TopK (ITopKLayer), Tile (wrapping slice), GatherElements/GatherND,
// ScatterElements/ScatterND/Scatter (with reduction), OneHot, NonZero, NonMaxSuppression, Einsum.
#include <algorithm>
#include <cstring>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// `t` reshaped to 0-D (a one-element tensor, e.g. ONNX's [1]-shaped K or depth), cast to INT64 if needed.
Result<ITensor*> scalarInt64(ImportContext& ctx, Node const& node, ITensor* t) {
  if (t->getType() != DataType::kINT64) {
    ICastLayer* c = ctx.network().addCast(*t, DataType::kINT64);
    KO_RETURN_IF_ERROR(ctx.check(c, node, "cast_int64"));
    t = c->getOutput(0);
  }
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, t));
  if (r == 0) {
    return t;
  }
  return reshape(ctx, node, t, Dims{0, {}});
}

/// Removes axis `axis` (extent 1) of `t`.
Result<ITensor*> squeezeAxis(ImportContext& ctx, Node const& node, ITensor* t, int32_t axis) {
  KO_ASSIGN_OR_RETURN(ITensor * axes, ctx.int64Tensor({axis}, node.name() + "_squeeze_axes"));
  ISqueezeLayer* l = ctx.network().addSqueeze(*t, *axes);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "squeeze"));
  return l->getOutput(0);
}

/// ArgMax/ArgMin: TopK with k = 1 on INT64 indices; keepdims = 0 squeezes the axis; select_last_index = 1 runs
/// on the reversed axis and maps the index back (needs a static extent).
template <TopKOperation kOp>
Status importArg(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", 0));
  KO_ASSIGN_OR_RETURN(int64_t keep, attrInt(node, "keepdims", 1));
  KO_ASSIGN_OR_RETURN(int64_t last, attrInt(node, "select_last_index", 0));
  if (r == 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input must have rank >= 1");
  }
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
  Dims const in = x->getDimensions();
  int64_t const extent = in.d[axis];
  if (last != 0) {
    if (extent < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                      "select_last_index needs a static extent on the axis (not supported yet)");
    }
    Dims start{r, {}};
    Dims size = in;
    Dims stride{r, {}};
    for (int32_t i = 0; i < r; ++i) {
      start.d[i] = i == axis ? extent - 1 : 0;
      stride.d[i] = i == axis ? -1 : 1;
    }
    bool dynamic = false;
    for (int32_t i = 0; i < r; ++i) {
      dynamic |= in.d[i] < 0;
    }
    ISliceLayer* rev = ctx.network().addSlice(*x, start, dynamic ? Dims{r, {}} : size, stride);
    KO_RETURN_IF_ERROR(ctx.check(rev, node, "reverse"));
    if (dynamic) {
      IShapeLayer* shape = ctx.network().addShape(*x);
      KO_RETURN_IF_ERROR(ctx.check(shape, node, "shape"));
      rev->setInput(2, *shape->getOutput(0));
    }
    x = rev->getOutput(0);
  }
  ITopKLayer* l = ctx.network().addTopK(*x, kOp, 1, 1U << static_cast<uint32_t>(axis));
  KO_RETURN_IF_ERROR(ctx.check(l, node, "topk"));
  l->setIndicesType(DataType::kINT64);
  ITensor* idx = l->getOutput(1);
  if (last != 0) {
    Dims ones{r, {}};
    for (int32_t i = 0; i < r; ++i) {
      ones.d[i] = 1;
    }
    KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(DataType::kINT64, ones));
    int64_t const top = extent - 1;
    std::memcpy(c->bytes.data(), &top, sizeof(top));
    KO_ASSIGN_OR_RETURN(ITensor * ct, ctx.constantTensor(c, node.name() + "_last"));
    IElementWiseLayer* sub = ctx.network().addElementWise(*ct, *idx, ElementWiseOperation::kSUB);
    KO_RETURN_IF_ERROR(ctx.check(sub, node, "last_index"));
    idx = sub->getOutput(0);
  }
  if (keep == 0) {
    KO_ASSIGN_OR_RETURN(idx, squeezeAxis(ctx, node, idx, axis));
  }
  return ctx.setOutput(node, 0, idx);
}

/// TopK: k from the attribute (opset < 10) or input 1 (constant: static k; else a 0-D shape tensor).
Status importTopK(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", -1));
  KO_ASSIGN_OR_RETURN(int64_t largest, attrInt(node, "largest", 1));
  KO_ASSIGN_OR_RETURN(int64_t sorted, attrInt(node, "sorted", 1));
  if (r == 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input must have rank >= 1");
  }
  static_cast<void>(sorted);  // Unsorted order is implementation-defined; the sorted order is a valid answer.
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
  int64_t k = -1;
  ITensor* kTensor = nullptr;
  if (ctx.opset() < 10) {
    KO_ASSIGN_OR_RETURN(k, attrInt(node, "k", -1));
    if (k < 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "needs attribute k");
    }
  } else {
    if (!ImportContext::hasInput(node, 1)) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "needs input K");
    }
    Constant const* kc = ctx.constant(node, 1);
    if (kc != nullptr) {
      if (kc->count() != 1) {
        return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "K must hold one element");
      }
      k = kc->asInt(0);
    } else {
      KO_ASSIGN_OR_RETURN(ITensor * kt, ctx.tensor(node, 1));
      KO_ASSIGN_OR_RETURN(kTensor, scalarInt64(ctx, node, kt));
    }
  }
  if (kTensor == nullptr && (k < 0 || k > INT32_MAX)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "K ", k, " is out of range");
  }
  ITopKLayer* l = ctx.network().addTopK(*x, largest != 0 ? TopKOperation::kMAX : TopKOperation::kMIN,
                                        kTensor == nullptr ? static_cast<int32_t>(k) : 1,
                                        1U << static_cast<uint32_t>(axis));
  KO_RETURN_IF_ERROR(ctx.check(l, node, "topk"));
  l->setIndicesType(DataType::kINT64);
  if (kTensor != nullptr) {
    l->setInput(1, *kTensor);
  }
  KO_RETURN_IF_ERROR(ctx.setOutput(node, 0, l->getOutput(0)));
  if (node.output_size() > 1 && !node.output(1).empty()) {
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 1, l->getOutput(1)));
  }
  return Status::success();
}

/// Tile: a wrapping slice from 0 with size shape(x) * repeats.
Status importTile(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  Dims const in = x->getDimensions();
  Dims start{r, {}};
  Dims stride{r, {}};
  for (int32_t i = 0; i < r; ++i) {
    stride.d[i] = 1;
  }
  Constant const* rc = ctx.constant(node, 1);
  bool staticSize = rc != nullptr;
  Dims size{r, {}};
  if (rc != nullptr) {
    if (rc->count() != r) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "repeats has ", rc->count(),
                                      " elements for rank ", r);
    }
    for (int32_t i = 0; i < r; ++i) {
      int64_t rep = rc->asInt(i);
      if (rep < 0) {
        return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "negative repeat ", rep);
      }
      staticSize &= in.d[i] >= 0;
      if (in.d[i] >= 0 && rep > 0 && in.d[i] > kMaxConstantElements / rep) {
        return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "tiled extent is too large");
      }
      size.d[i] = in.d[i] * rep;
    }
    int64_t total = 1;
    for (int32_t i = 0; staticSize && i < r; ++i) {
      if (size.d[i] != 0 && total > (int64_t{1} << 40) / size.d[i]) {
        return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "tiled output is too large");
      }
      total *= size.d[i];
    }
  }
  // A run-time size (input 2) replaces the placeholder ones.
  ISliceLayer* l = ctx.network().addSlice(*x, start, staticSize ? size : stride, stride);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "tile"));
  l->setMode(SampleMode::kWRAP);
  if (!staticSize) {
    IShapeLayer* shape = ctx.network().addShape(*x);
    KO_RETURN_IF_ERROR(ctx.check(shape, node, "shape"));
    KO_ASSIGN_OR_RETURN(ITensor * reps, ctx.tensor(node, 1));
    if (reps->getType() != DataType::kINT64) {
      ICastLayer* c = ctx.network().addCast(*reps, DataType::kINT64);
      KO_RETURN_IF_ERROR(ctx.check(c, node, "cast"));
      reps = c->getOutput(0);
    }
    IElementWiseLayer* mul = ctx.network().addElementWise(*shape->getOutput(0), *reps, ElementWiseOperation::kPROD);
    KO_RETURN_IF_ERROR(ctx.check(mul, node, "tile_size"));
    l->setInput(2, *mul->getOutput(0));
  }
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importGatherElements(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * data, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * idx, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, data));
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", 0));
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
  IGatherLayer* l = ctx.network().addGatherV2(*data, *idx, GatherMode::kELEMENT);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "gather_elements"));
  l->setGatherAxis(axis);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importGatherND(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * data, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * idx, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int64_t batch, attrInt(node, "batch_dims", 0));
  KO_ASSIGN_OR_RETURN(int32_t ri, rankOf(node, idx));
  if (batch < 0 || batch >= ri) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "batch_dims ", batch, " must be in [0, ", ri,
                                    ")");
  }
  IGatherLayer* l = ctx.network().addGatherV2(*data, *idx, GatherMode::kND);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "gather_nd"));
  l->setNbElementWiseDims(static_cast<int32_t>(batch));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Result<ScatterReduction> scatterReduction(Node const& node) {
  KO_ASSIGN_OR_RETURN(std::string red, attrString(node, "reduction", "none"));
  if (red == "none") {
    return ScatterReduction::kNONE;
  }
  if (red == "add") {
    return ScatterReduction::kADD;
  }
  if (red == "mul") {
    return ScatterReduction::kMUL;
  }
  if (red == "max") {
    return ScatterReduction::kMAX;
  }
  if (red == "min") {
    return ScatterReduction::kMIN;
  }
  return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "unknown reduction '", red, "'");
}

template <ScatterMode kMode>
Status importScatter(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * data, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * idx, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * upd, ctx.tensor(node, 2));
  KO_ASSIGN_OR_RETURN(ScatterReduction red, scatterReduction(node));
  IScatterLayer* l = ctx.network().addScatter(*data, *idx, *upd, kMode);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "scatter"));
  if (kMode == ScatterMode::kELEMENT) {
    KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, data));
    KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", 0));
    KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
    l->setAxis(axis);
  }
  l->setReduction(red);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

/// OneHot(indices, depth, values): float indices are cast to INT64; depth becomes a 0-D INT64 shape tensor.
Status importOneHot(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * idx, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * values, ctx.tensor(node, 2));
  KO_ASSIGN_OR_RETURN(int64_t axis, attrInt(node, "axis", -1));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, idx));
  if (axis < -(r + 1) || axis > r) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axis ", axis, " is out of range for rank ",
                                    r + 1);
  }
  if (idx->getType() != DataType::kINT32 && idx->getType() != DataType::kINT64) {
    ICastLayer* c = ctx.network().addCast(*idx, DataType::kINT64);
    KO_RETURN_IF_ERROR(ctx.check(c, node, "cast_indices"));
    idx = c->getOutput(0);
  }
  ITensor* depth = nullptr;
  if (Constant const* dc = ctx.constant(node, 1); dc != nullptr) {
    if (dc->count() != 1) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "depth must hold one element");
    }
    KO_ASSIGN_OR_RETURN(Constant * d, ctx.newConstant(DataType::kINT64, Dims{0, {}}));
    int64_t const v = static_cast<int64_t>(dc->asDouble(0));
    std::memcpy(d->bytes.data(), &v, sizeof(v));
    KO_ASSIGN_OR_RETURN(depth, ctx.constantTensor(d, node.name() + "_depth"));
  } else {
    KO_ASSIGN_OR_RETURN(ITensor * dt, ctx.tensor(node, 1));
    KO_ASSIGN_OR_RETURN(depth, scalarInt64(ctx, node, dt));
  }
  KO_ASSIGN_OR_RETURN(int32_t vr, rankOf(node, values));
  if (vr != 1) {
    KO_ASSIGN_OR_RETURN(values, reshape(ctx, node, values, Dims{1, {2}}));
  }
  IOneHotLayer* l = ctx.network().addOneHot(*idx, *values, *depth, static_cast<int32_t>(axis));
  KO_RETURN_IF_ERROR(ctx.check(l, node, "onehot"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importNonZero(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  INonZeroLayer* l = ctx.network().addNonZero(*x, DataType::kINT64);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "nonzero"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

/// NonMaxSuppression: ONNX scores [B, C, N] are transposed to Kiln's [B, N, C]; an absent
/// max_output_boxes_per_class is 0 (no boxes); thresholds become 0-D tensors.
Status importNMS(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * boxes, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * scores, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int64_t center, attrInt(node, "center_point_box", 0));
  KO_ASSIGN_OR_RETURN(int32_t rs, rankOf(node, scores));
  if (rs != 3) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "scores must be 3-D, got rank ", rs);
  }
  IShuffleLayer* tr = ctx.network().addShuffle(*scores);
  KO_RETURN_IF_ERROR(ctx.check(tr, node, "scores_transpose"));
  tr->setFirstTranspose(Permutation{{0, 2, 1}});
  ITensor* maxOut = nullptr;
  if (ImportContext::hasInput(node, 2)) {
    KO_ASSIGN_OR_RETURN(ITensor * m, ctx.tensor(node, 2));
    KO_ASSIGN_OR_RETURN(maxOut, scalarInt64(ctx, node, m));
  } else {
    KO_ASSIGN_OR_RETURN(Constant * z, ctx.newConstant(DataType::kINT64, Dims{0, {}}));
    KO_ASSIGN_OR_RETURN(maxOut, ctx.constantTensor(z, node.name() + "_max_boxes"));
  }
  INMSLayer* l = ctx.network().addNMS(*boxes, *tr->getOutput(0), *maxOut, DataType::kINT64);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "nms"));
  l->setBoundingBoxFormat(center != 0 ? BoundingBoxFormat::kCENTER_SIZES : BoundingBoxFormat::kCORNER_PAIRS);
  for (int i = 3; i <= 4; ++i) {
    if (!ImportContext::hasInput(node, i)) {
      continue;
    }
    KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, i));
    KO_ASSIGN_OR_RETURN(int32_t rt, rankOf(node, t));
    if (rt != 0) {
      KO_ASSIGN_OR_RETURN(t, reshape(ctx, node, t, Dims{0, {}}));
    }
    l->setInput(i, *t);
  }
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importEinsum(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(std::string eq, attrString(node, "equation", ""));
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  std::vector<ITensor*> ins;
  for (int i = 0; i < node.input_size(); ++i) {
    KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, i));
    ins.push_back(t);
  }
  if (ins.empty() || eq.empty()) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "needs inputs and an equation");
  }
  IEinsumLayer* l = ctx.network().addEinsum(ins.data(), static_cast<int32_t>(ins.size()), eq.c_str());
  KO_RETURN_IF_ERROR(ctx.check(l, node, "einsum"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "ArgMax", importArg<TopKOperation::kMAX>);
KILN_ONNX_REGISTER("", "ArgMin", importArg<TopKOperation::kMIN>);
KILN_ONNX_REGISTER("", "TopK", importTopK);
KILN_ONNX_REGISTER("", "Tile", importTile);
KILN_ONNX_REGISTER("", "GatherElements", importGatherElements);
KILN_ONNX_REGISTER("", "GatherND", importGatherND);
KILN_ONNX_REGISTER("", "ScatterElements", importScatter<ScatterMode::kELEMENT>);
KILN_ONNX_REGISTER("", "Scatter", importScatter<ScatterMode::kELEMENT>);
KILN_ONNX_REGISTER("", "ScatterND", importScatter<ScatterMode::kND>);
KILN_ONNX_REGISTER("", "OneHot", importOneHot);
KILN_ONNX_REGISTER("", "NonZero", importNonZero);
KILN_ONNX_REGISTER("", "NonMaxSuppression", importNMS);
KILN_ONNX_REGISTER("", "Einsum", importEinsum);

}  // namespace
}  // namespace kiln::onnx
