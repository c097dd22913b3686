// ONNX importer for Split: constant split sizes (attribute before opset 13, input 1 from 13; equal chunks when
// absent) become static slices; sizes known only at run time become slices whose start (the exclusive running sum
// of the sizes) and size are shape tensors.
#include <algorithm>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/shape_tensor_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// Split sizes known only at run time; sizes that do not cover the axis fail when the engine runs.
Status runtimeSplit(ImportContext& ctx, Node const& node, ITensor* x, int32_t r, int32_t axis) {
  KO_ASSIGN_OR_RETURN(ITensor * split, int64Vector(ctx, node, 1));
  KO_ASSIGN_OR_RETURN(int64_t n, vectorLength(node, split, "split"));
  if (n != node.output_size()) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "split has ", n, " sizes for ", node.output_size(),
                                    " outputs");
  }
  KO_ASSIGN_OR_RETURN(Constant * zero, ctx.newConstant(DataType::kINT64, Dims{0, {}}));
  KO_ASSIGN_OR_RETURN(ITensor * axis0, ctx.constantTensor(zero, node.name() + "_axis"));
  ICumulativeLayer* cum = ctx.network().addCumulative(*split, *axis0, CumulativeOperation::kSUM, true, false);
  KO_RETURN_IF_ERROR(ctx.check(cum, node, "split_starts"));
  ITensor* starts = cum->getOutput(0);
  // The sizes must cover the axis exactly (a negative size fails in the slice).
  IReduceLayer* total = ctx.network().addReduce(*split, ReduceOperation::kSUM, 1U, true);
  KO_RETURN_IF_ERROR(ctx.check(total, node, "split_total"));
  KO_ASSIGN_OR_RETURN(ITensor * shape, shapeOf(ctx, node, x));
  KO_ASSIGN_OR_RETURN(ITensor * axisIndex, int64Const(ctx, node, {axis}));
  KO_ASSIGN_OR_RETURN(ITensor * extent, gather(ctx, node, shape, axisIndex));
  KO_ASSIGN_OR_RETURN(ITensor * covers, binary(ctx, node, total->getOutput(0), extent, ElementWiseOperation::kEQUAL));
  KO_RETURN_IF_ERROR(assertAll(ctx, node, covers, "the split sizes do not add up to the extent of the axis"));
  KO_ASSIGN_OR_RETURN(ITensor * stride, int64Const(ctx, node, {1}));
  Dims placeholder{r, {}};
  Dims ones{r, {}};
  for (int32_t k = 0; k < r; ++k) {
    ones.d[k] = 1;
  }
  for (int i = 0; i < node.output_size(); ++i) {
    KO_ASSIGN_OR_RETURN(ITensor * index, int64Const(ctx, node, {i}));
    KO_ASSIGN_OR_RETURN(ITensor * start, gather(ctx, node, starts, index));
    KO_ASSIGN_OR_RETURN(ITensor * size, gather(ctx, node, split, index));
    ISliceLayer* l = ctx.network().addSlice(*x, placeholder, placeholder, ones);
    KO_RETURN_IF_ERROR(ctx.check(l, node, "split"));
    l->setInput(1, *start);
    l->setInput(2, *size);
    l->setInput(3, *stride);
    l->setInput(5, *axisIndex);
    KO_RETURN_IF_ERROR(ctx.setOutput(node, i, l->getOutput(0)));
  }
  return Status::success();
}

Status importSplit(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", 0));
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
  if (ctx.opset() >= 13 && ImportContext::hasInput(node, 1) && ctx.constant(node, 1) == nullptr) {
    return runtimeSplit(ctx, node, x, r, axis);
  }
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

KILN_ONNX_REGISTER("", "Split", importSplit);

}  // namespace
}  // namespace kiln::onnx
