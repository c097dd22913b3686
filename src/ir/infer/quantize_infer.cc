// Shape inference of Quantize, Dequantize and DynamicQuantize. Quantize: float x -> int8/uint8/fp8 (ONNX
// QuantizeLinear); Dequantize: int8/uint8/fp8/int32 x -> float32/float16/bfloat16 (ONNX DequantizeLinear); the
// scale is per-tensor, per-axis or per-block (quantize_util.h) and the zero point has the scale's shape.
// DynamicQuantize: outputs y (x's shape) and the block scales (x's extents divided by the block shape).
// int4/fp4 outputs and e8m0 scales are not supported yet.
#include "ir/infer/quantize_util.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

bool isScaleFloat(DataType t) {
  return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16 || t == DataType::kFLOAT64;
}

Status checkSubByte(InferContext& ctx, DataType t) {
  if (t == DataType::kINT4 || t == DataType::kFP4 || t == DataType::kE8M0)
    return unsupported(ctx.node.describe(), ": type ", dataTypeName(t), " is not supported yet");
  return Status::ok();
}

Status checkScales(InferContext& ctx, DataType zpType) {
  if (ctx.numInputs() < 2 || ctx.numInputs() > 3 || !ctx.present(0) || !ctx.present(1))
    return ctx.error("needs inputs x, scale and an optional zero point");
  if (!isScaleFloat(ctx.in[1].dtype))
    return ctx.error("scale must be float32, float16, bfloat16 or float64, not ", dataTypeName(ctx.in[1].dtype));
  Attributes const& a = ctx.node.attrs;
  Result<QuantLayout> layout = resolveQuantLayout(ctx.in[0].shape, ctx.in[1].shape, a.getInt("axis", 0),
                                                  a.has("block_shape"), a.getInts("block_shape"));
  if (!layout.isOk()) return ctx.error(layout.status().message());
  if (ctx.present(2)) {
    if (ctx.in[2].dtype != zpType)
      return ctx.error("zero point must be ", dataTypeName(zpType), ", not ", dataTypeName(ctx.in[2].dtype));
    if (dimsToString(ctx.in[2].shape) != dimsToString(ctx.in[1].shape))
      return ctx.error("zero point ", dimsToString(ctx.in[2].shape), " must have the scale's shape ",
                       dimsToString(ctx.in[1].shape));
  }
  return Status::ok();
}

Status inferQuantize(InferContext& ctx) {
  if (ctx.numInputs() < 1 || !ctx.present(0)) return ctx.error("needs an input");
  auto to = static_cast<DataType>(ctx.node.attrs.getInt("to", static_cast<int64_t>(DataType::kINT8)));
  KILN_RETURN_IF_ERROR(checkSubByte(ctx, to));
  if (to != DataType::kINT8 && to != DataType::kUINT8 && to != DataType::kFP8)
    return ctx.error("output type must be int8, uint8 or fp8, not ", dataTypeName(to));
  if (!isScaleFloat(ctx.in[0].dtype))
    return ctx.error("input must be float32, float16, bfloat16 or float64, not ", dataTypeName(ctx.in[0].dtype));
  KILN_RETURN_IF_ERROR(checkScales(ctx, to));
  ctx.out[0] = {to, ctx.in[0].shape};
  return Status::ok();
}

Status inferDequantize(InferContext& ctx) {
  if (ctx.numInputs() < 1 || !ctx.present(0)) return ctx.error("needs an input");
  auto to = static_cast<DataType>(ctx.node.attrs.getInt("to", static_cast<int64_t>(DataType::kFLOAT)));
  DataType xt = ctx.in[0].dtype;
  KILN_RETURN_IF_ERROR(checkSubByte(ctx, xt));
  if (!isScaleFloat(to))
    return ctx.error("output type must be float32, float16, bfloat16 or float64, not ", dataTypeName(to));
  if (xt != DataType::kINT8 && xt != DataType::kUINT8 && xt != DataType::kFP8 && xt != DataType::kINT32)
    return ctx.error("input must be int8, uint8, fp8 or int32, not ", dataTypeName(xt));
  KILN_RETURN_IF_ERROR(checkScales(ctx, xt));
  ctx.out[0] = {to, ctx.in[0].shape};
  return Status::ok();
}

}  // namespace

/// The block shape of a DynamicQuantize node for input dims `x` (from block_shape, or axis and block_size).
Result<std::vector<int64_t>> dynamicQuantizeBlocks(Attributes const& a, Dims const& x) {
  std::vector<int64_t> block;
  if (a.has("block_shape")) {
    block = a.getInts("block_shape");
    if (static_cast<int32_t>(block.size()) != x.nbDims)
      return invalidArgument("block shape has ", block.size(), " dims for an input of rank ", x.nbDims);
  } else {
    KILN_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(a.getInt("axis", -1), x.nbDims));
    block.assign(static_cast<size_t>(x.nbDims), 1);
    block[static_cast<size_t>(axis)] = a.getInt("block_size", 1);
  }
  for (int32_t i = 0; i < x.nbDims; ++i) {
    int64_t& b = block[static_cast<size_t>(i)];
    if (b == -1)
      b = x.d[i];
    else if (b < 1)
      return invalidArgument("block extent ", b, " on axis ", i, " must be >= 1 or -1");
    if (b > 0 && x.d[i] >= 0 && x.d[i] % b != 0)
      return invalidArgument("input extent ", x.d[i], " on axis ", i, " is not a multiple of the block extent ", b);
  }
  return block;
}

namespace {

Status inferDynamicQuantize(InferContext& ctx) {
  if (ctx.numInputs() < 1 || ctx.numInputs() > 2 || !ctx.present(0))
    return ctx.error("needs input x and an optional double-quantization scale");
  if (ctx.node.outputs.size() != 2) return ctx.error("needs two outputs (y, scales)");
  Attributes const& a = ctx.node.attrs;
  auto to = static_cast<DataType>(a.getInt("to", static_cast<int64_t>(DataType::kFP8)));
  auto st = static_cast<DataType>(a.getInt("scale_type", static_cast<int64_t>(DataType::kFP8)));
  KILN_RETURN_IF_ERROR(checkSubByte(ctx, to));
  KILN_RETURN_IF_ERROR(checkSubByte(ctx, st));
  if (to != DataType::kFP8 && to != DataType::kINT8)
    return ctx.error("output type must be fp8 or int8, not ", dataTypeName(to));
  if (st != DataType::kFP8 && !isScaleFloat(st))
    return ctx.error("scale type must be fp8 or a float type, not ", dataTypeName(st));
  DataType xt = ctx.in[0].dtype;
  if (xt != DataType::kFLOAT && xt != DataType::kHALF && xt != DataType::kBF16)
    return ctx.error("input must be float32, float16 or bfloat16, not ", dataTypeName(xt));
  if (ctx.present(1) && (!isScaleFloat(ctx.in[1].dtype) || ctx.in[1].shape.nbDims != 0))
    return ctx.error("the double-quantization scale must be a 0-D float");
  Dims const& x = ctx.in[0].shape;
  Result<std::vector<int64_t>> block = dynamicQuantizeBlocks(ctx.node.attrs, x);
  if (!block.isOk()) return ctx.error(block.status().message());
  Dims s = x;
  for (int32_t i = 0; i < x.nbDims; ++i)
    if (x.d[i] >= 0 && (*block)[static_cast<size_t>(i)] > 0) s.d[i] = x.d[i] / (*block)[static_cast<size_t>(i)];
  ctx.out[0] = {to, x};
  ctx.out[1] = {st, s};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kQuantize, inferQuantize);
KILN_REGISTER_INFER(kDequantize, inferDequantize);
KILN_REGISTER_INFER(kDynamicQuantize, inferDynamicQuantize);

}  // namespace kiln::ir
