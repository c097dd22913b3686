// ONNX importer for Pad: a slice that starts before the input (fill/reflect/clamp/wrap sampling). Constant pads
// (attribute before opset 11) are checked here; pads or axes known only at run time give the slice's start and
// size by shape-tensor arithmetic (start = -begin, size = extent + begin + end), checked when the engine runs.
#include <cstring>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/shape_tensor_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// The optional constant_value input as a 0-D tensor (nullptr when absent or not used by the mode).
Result<ITensor*> padValue(ImportContext& ctx, Node const& node) {
  if (!ImportContext::hasInput(node, 2)) {
    return static_cast<ITensor*>(nullptr);
  }
  KO_ASSIGN_OR_RETURN(ITensor * fill, ctx.tensor(node, 2));
  return toScalar(ctx, node, fill);
}

/// Pads (input 1) or axes (input 3) known only at run time.
Status runtimePad(ImportContext& ctx, Node const& node, ITensor* x, int32_t r, SampleMode sm) {
  KO_ASSIGN_OR_RETURN(ITensor * pads, int64Vector(ctx, node, 1));
  KO_ASSIGN_OR_RETURN(int64_t np, vectorLength(node, pads, "pads"));
  ITensor* axes = nullptr;
  int64_t n = r;
  if (ImportContext::hasInput(node, 3)) {
    KO_ASSIGN_OR_RETURN(axes, int64Vector(ctx, node, 3));
    KO_ASSIGN_OR_RETURN(n, vectorLength(node, axes, "axes"));
    KO_ASSIGN_OR_RETURN(axes, normalizeAxes(ctx, node, axes, r));
  } else {
    std::vector<int64_t> all;
    for (int32_t i = 0; i < r; ++i) {
      all.push_back(i);
    }
    KO_ASSIGN_OR_RETURN(axes, int64Const(ctx, node, all));
  }
  if (np != 2 * n || n > r) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "pads has ", np, " values for ", n, " axes");
  }
  std::vector<int64_t> first, second;
  for (int64_t i = 0; i < n; ++i) {
    first.push_back(i);
    second.push_back(n + i);
  }
  using Op = ElementWiseOperation;
  KO_ASSIGN_OR_RETURN(ITensor * firstIdx, int64Const(ctx, node, first));
  KO_ASSIGN_OR_RETURN(ITensor * secondIdx, int64Const(ctx, node, second));
  KO_ASSIGN_OR_RETURN(ITensor * begin, gather(ctx, node, pads, firstIdx));
  KO_ASSIGN_OR_RETURN(ITensor * end, gather(ctx, node, pads, secondIdx));
  KO_ASSIGN_OR_RETURN(ITensor * shape, shapeOf(ctx, node, x));
  KO_ASSIGN_OR_RETURN(ITensor * dims, gather(ctx, node, shape, axes));
  KO_ASSIGN_OR_RETURN(ITensor * zero, int64Const(ctx, node, {0}));
  KO_ASSIGN_OR_RETURN(ITensor * start, binary(ctx, node, zero, begin, Op::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * grown, binary(ctx, node, dims, begin, Op::kSUM));
  KO_ASSIGN_OR_RETURN(ITensor * size, binary(ctx, node, grown, end, Op::kSUM));
  KO_ASSIGN_OR_RETURN(ITensor * ones, int64Const(ctx, node, std::vector<int64_t>(static_cast<size_t>(n), 1)));
  Dims placeholder{r, {}};
  Dims stride{r, {}};
  for (int32_t k = 0; k < r; ++k) {
    stride.d[k] = 1;
  }
  ISliceLayer* l = ctx.network().addSlice(*x, placeholder, placeholder, stride);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "pad"));
  l->setMode(sm);
  l->setInput(1, *start);
  l->setInput(2, *size);
  l->setInput(3, *ones);
  l->setInput(5, *axes);
  KO_ASSIGN_OR_RETURN(ITensor * fill, padValue(ctx, node));
  if (fill != nullptr && sm == SampleMode::kFILL) {
    l->setInput(4, *fill);
  }
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importPad(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(std::string mode, attrString(node, "mode", "constant"));
  SampleMode sm = SampleMode::kFILL;
  if (mode == "reflect") {
    sm = SampleMode::kREFLECT;
  } else if (mode == "edge") {
    sm = SampleMode::kCLAMP;
  } else if (mode == "wrap") {
    sm = SampleMode::kWRAP;
  } else if (mode != "constant") {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "mode '", mode, "' is not supported");
  }
  std::vector<int64_t> pads;
  ITensor* fill = nullptr;
  std::vector<int64_t> axes;
  if (ctx.opset() < 11) {
    KO_ASSIGN_OR_RETURN(pads, attrInts(node, ctx.opset() < 2 ? "paddings" : "pads"));
    KO_ASSIGN_OR_RETURN(float value, attrFloat(node, "value", 0.0F));
    if (value != 0.0F) {
      KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(DataType::kFLOAT, Dims{0, {}}));
      std::memcpy(c->bytes.data(), &value, 4);
      KO_ASSIGN_OR_RETURN(fill, ctx.constantTensor(c, node.name() + "_value"));
    }
  } else {
    if (ctx.constant(node, 1) == nullptr || (ImportContext::hasInput(node, 3) && ctx.constant(node, 3) == nullptr)) {
      return runtimePad(ctx, node, x, r, sm);
    }
    KO_ASSIGN_OR_RETURN(pads, constantInts(ctx, node, 1));
    KO_ASSIGN_OR_RETURN(fill, padValue(ctx, node));
    if (ImportContext::hasInput(node, 3)) {
      KO_ASSIGN_OR_RETURN(axes, constantInts(ctx, node, 3));
    }
  }
  if (axes.empty()) {
    for (int32_t i = 0; i < r; ++i) {
      axes.push_back(i);
    }
  }
  if (pads.size() != 2 * axes.size()) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "pads has ", pads.size(), " values for ",
                                    axes.size(), " axes");
  }
  Dims const in = x->getDimensions();
  Dims st{r, {}};
  Dims sz = in;
  Dims stride{r, {}};
  for (int32_t k = 0; k < r; ++k) {
    stride.d[k] = 1;
  }
  size_t const n = axes.size();
  for (size_t i = 0; i < n; ++i) {
    KO_ASSIGN_OR_RETURN(int32_t a, normalizeAxis(node, axes[i], r));
    if (in.d[a] < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                      "padding a dynamic axis is not supported yet");
    }
    if (pads[i] < -in.d[a] || pads[i + n] < -in.d[a]) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "pads (", pads[i], ", ", pads[i + n],
                                      ") crop more than axis ", a, " holds (", in.d[a], ")");
    }
    int64_t grown = 0;
    if (__builtin_add_overflow(in.d[a], pads[i], &grown) || __builtin_add_overflow(grown, pads[i + n], &sz.d[a])) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "pads (", pads[i], ", ", pads[i + n],
                                      ") of axis ", a, " overflow its extent");
    }
    if (sz.d[a] < 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "pads make axis ", a, " negative");
    }
    st.d[a] = -pads[i];  // pads[i] >= -in.d[a]: the negation cannot overflow
  }
  for (int32_t k = 0; k < r; ++k) {
    if (sz.d[k] < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                      "padding a tensor with dynamic extents is not supported yet");
    }
  }
  ISliceLayer* l = ctx.network().addSlice(*x, st, sz, stride);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "pad"));
  l->setMode(sm);
  if (fill != nullptr && sm == SampleMode::kFILL) {
    l->setInput(4, *fill);
  }
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "Pad", importPad);

}  // namespace
}  // namespace kiln::onnx
