// Reference kernels of Quantize, Dequantize (ONNX QuantizeLinear/DequantizeLinear: round half to even,
// saturate) and DynamicQuantize (TensorRT's block quantization with scales from each block's absolute maximum).
// Per-tensor, per-axis and per-block scales; optional zero point.
#include <cmath>
#include <limits>

#include "backends/reference/reference_util.h"
#include "ir/infer/quantize_util.h"

namespace kiln::backends::reference {
namespace {

// Largest finite value of a quantized type.
double quantMax(DataType t) {
  switch (t) {
    case DataType::kINT8:
      return 127.0;
    case DataType::kUINT8:
      return 255.0;
    case DataType::kFP8:
      return 448.0;
    default:
      return 0.0;
  }
}

// Quantizes v (x / scale, before the zero point) to type `to` with zero point zp: integers round half to even
// and saturate; fp8 adds the zero point then rounds to nearest even, saturating.
void storeQuantized(TensorView const& y, int64_t i, double v, double zp) {
  if (y.dtype == DataType::kFP8) {
    storeFromDouble(y, i, static_cast<double>(static_cast<float>(v + zp)));
    return;
  }
  double lo = y.dtype == DataType::kINT8 ? -128.0 : 0.0;
  double hi = quantMax(y.dtype);
  double r = std::isnan(v) ? 0.0 : std::nearbyint(v) + zp;  // default rounding mode: half to even
  storeFromInt(y, i, static_cast<int64_t>(std::fmin(std::fmax(r, lo), hi)));
}

// x / scale as the float types compute it: in float32 for float32/16/bf16 operands, double for float64.
double divide(double x, double s, bool wide) {
  double q = x / s;
  return wide ? q : static_cast<double>(static_cast<float>(q));
}

// What a kernel keeps of its node.
struct NodeInfo {
  std::string what;
  ir::Attributes attrs;
  std::string describe() const { return what; }
};

Status checkCommon(LaunchContext const& ctx, NodeInfo const& node, ir::QuantLayout& layout) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& s = ctx.inputs[1];
  if (dimsToVector(ctx.outputs[0].shape) != dimsToVector(x.shape))
    return invalidArgument(node.describe(), ": output ", dimsToString(ctx.outputs[0].shape), " differs from input ",
                           dimsToString(x.shape));
  Result<ir::QuantLayout> l = ir::resolveQuantLayout(x.shape, s.shape, node.attrs.getInt("axis", 0),
                                                     node.attrs.has("block_shape"), node.attrs.getInts("block_shape"));
  if (!l.isOk()) return l.status().withContext(node.describe());
  if (ctx.inputs.size() > 2 && ctx.inputs[2].data != nullptr &&
      dimsToVector(ctx.inputs[2].shape) != dimsToVector(s.shape))
    return invalidArgument(node.describe(), ": zero point must have the scale's shape");
  layout = *l;
  return Status::ok();
}

Tactic quantizeTactic() {
  return makeTactic(
      "quantize_reference", ir::OpType::kQuantize,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        NodeInfo copy{node.describe(), node.attrs};
        return makeKernel([copy](LaunchContext const& ctx) -> Status {
          ir::QuantLayout layout;
          KILN_RETURN_IF_ERROR(checkCommon(ctx, copy, layout));
          TensorView const& x = ctx.inputs[0];
          TensorView const& s = ctx.inputs[1];
          bool hasZp = ctx.inputs.size() > 2 && ctx.inputs[2].data != nullptr;
          bool wide = x.dtype == DataType::kFLOAT64 || s.dtype == DataType::kFLOAT64;
          std::vector<int64_t> map = ir::scaleIndexMap(layout, x.shape, s.shape);
          for (int64_t i = 0; i < x.count(); ++i) {
            int64_t si = map[static_cast<size_t>(i)];
            double zp = hasZp ? loadAsDouble(ctx.inputs[2], si) : 0.0;
            storeQuantized(ctx.outputs[0], i, divide(loadAsDouble(x, i), loadAsDouble(s, si), wide), zp);
          }
          return Status::ok();
        });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return in.size() >= 2 && out.size() == 1 &&
               typeIn(out[0].dtype, {DataType::kINT8, DataType::kUINT8, DataType::kFP8}) &&
               typeIn(in[0].dtype, {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kFLOAT64});
      });
}

Tactic dequantizeTactic() {
  return makeTactic(
      "dequantize_reference", ir::OpType::kDequantize,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        NodeInfo copy{node.describe(), node.attrs};
        return makeKernel([copy](LaunchContext const& ctx) -> Status {
          ir::QuantLayout layout;
          KILN_RETURN_IF_ERROR(checkCommon(ctx, copy, layout));
          TensorView const& x = ctx.inputs[0];
          TensorView const& s = ctx.inputs[1];
          bool hasZp = ctx.inputs.size() > 2 && ctx.inputs[2].data != nullptr;
          bool wide = s.dtype == DataType::kFLOAT64 || ctx.outputs[0].dtype == DataType::kFLOAT64;
          std::vector<int64_t> map = ir::scaleIndexMap(layout, x.shape, s.shape);
          for (int64_t i = 0; i < x.count(); ++i) {
            int64_t si = map[static_cast<size_t>(i)];
            double zp = hasZp ? loadAsDouble(ctx.inputs[2], si) : 0.0;
            double v = (loadAsDouble(x, i) - zp) * loadAsDouble(s, si);
            if (!wide) v = static_cast<double>(static_cast<float>(v));  // ONNX computes in float32, then casts
            storeFromDouble(ctx.outputs[0], i, v);
          }
          return Status::ok();
        });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return in.size() >= 2 && out.size() == 1 &&
               typeIn(in[0].dtype, {DataType::kINT8, DataType::kUINT8, DataType::kFP8, DataType::kINT32}) &&
               typeIn(out[0].dtype, {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kFLOAT64});
      });
}

// DynamicQuantize: per block, scale = absmax / max(to); the stored scale is scale / dq (dq: the optional
// double-quantization scale, else 1) rounded to the scale type; y = quantize(x / (stored * dq)), 0 where the
// effective scale is 0.
Tactic dynamicQuantizeTactic() {
  return makeTactic(
      "dynamic_quantize_reference", ir::OpType::kDynamicQuantize,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        NodeInfo copy{node.describe(), node.attrs};
        return makeKernel([copy](LaunchContext const& ctx) -> Status {
          TensorView const& x = ctx.inputs[0];
          TensorView const& y = ctx.outputs[0];
          TensorView const& sc = ctx.outputs[1];
          Result<std::vector<int64_t>> block = ir::dynamicQuantizeBlocks(copy.attrs, x.shape);
          if (!block.isOk()) return block.status().withContext(copy.describe());
          ir::QuantLayout layout;
          layout.kind = ir::QuantLayout::Kind::kBLOCK;
          layout.block = *block;
          Dims expect = x.shape;
          for (int32_t i = 0; i < x.shape.nbDims; ++i)
            expect.d[i] = layout.block[i] > 0 ? x.shape.d[i] / layout.block[i] : 0;
          if (dimsToVector(y.shape) != dimsToVector(x.shape) || dimsToVector(sc.shape) != dimsToVector(expect))
            return invalidArgument(copy.describe(), ": outputs ", dimsToString(y.shape), " and ",
                                   dimsToString(sc.shape), " do not fit input ", dimsToString(x.shape));
          double dq = ctx.inputs.size() > 1 && ctx.inputs[1].data != nullptr ? loadAsDouble(ctx.inputs[1], 0) : 1.0;
          std::vector<int64_t> map = ir::scaleIndexMap(layout, x.shape, sc.shape);
          std::vector<double> amax(static_cast<size_t>(std::max<int64_t>(sc.count(), 0)), 0.0);
          for (int64_t i = 0; i < x.count(); ++i) {
            double& m = amax[static_cast<size_t>(map[static_cast<size_t>(i)])];
            m = std::fmax(m, std::fabs(loadAsDouble(x, i)));
          }
          double qmax = quantMax(y.dtype);
          std::vector<double> eff(amax.size());
          for (size_t b = 0; b < amax.size(); ++b) {
            double s = static_cast<double>(static_cast<float>(amax[b] / qmax));
            storeFromDouble(sc, static_cast<int64_t>(b), dq != 0.0 ? s / dq : 0.0);
            eff[b] = loadAsDouble(sc, static_cast<int64_t>(b)) * dq;
          }
          for (int64_t i = 0; i < x.count(); ++i) {
            double e = eff[static_cast<size_t>(map[static_cast<size_t>(i)])];
            storeQuantized(y, i, e != 0.0 ? divide(loadAsDouble(x, i), e, false) : 0.0, 0.0);
          }
          return Status::ok();
        });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return !in.empty() && out.size() == 2 && typeIn(out[0].dtype, {DataType::kFP8, DataType::kINT8}) &&
               typeIn(in[0].dtype, {DataType::kFLOAT, DataType::kHALF, DataType::kBF16});
      });
}

KILN_REGISTER_TACTIC(quantizeTactic);
KILN_REGISTER_TACTIC(dequantizeTactic);
KILN_REGISTER_TACTIC(dynamicQuantizeTactic);

}  // namespace
}  // namespace kiln::backends::reference
