// Resize on the GPU: nearest (any 1/2/4/8-byte type, exact copies), N-D linear and cubic (float, half, bf16), with
// every coordinate transformation, selector and nearest rounding mode of the reference. Scales come from the
// attribute, a constant scales input, or out / in; a scales input known only at run time falls back to the host.
#include <vector>

#include "backends/cuda/copy_host.h"
#include "backends/cuda/resize_kernels.h"

namespace kiln::cuda {
namespace {

class ResizeKernel final : public backends::Kernel {
 public:
  ResizePlan base;                  // attributes; shapes and scales are filled per launch
  std::vector<double> attrScales;   // the scales attribute (when no output_dims)
  std::vector<double> inputScales;  // a constant float input 1
  std::string what;

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& y = ctx.outputs[0];
    int32_t rank = x.shape.nbDims;
    if (y.shape.nbDims != rank || x.dtype != y.dtype)
      return invalidArgument(what, ": y ", dimsToString(y.shape), " must have x's rank and type");
    if (rank > kCopyMaxRank) return unsupported(what, ": rank ", rank, " is above 8");
    bool in1 = ctx.inputs.size() > 1 && ctx.inputs[1].data;
    bool in1Scales = in1 && isFloatType(ctx.inputs[1].dtype);
    if (in1 && ctx.inputs[1].count() != rank) return invalidArgument(what, ": input 1 must hold ", rank, " values");
    if (in1Scales && static_cast<int32_t>(inputScales.size()) != rank)
      return invalidArgument(what, ": input 1 must hold ", rank, " values");
    if (!in1 && !attrScales.empty() && static_cast<int32_t>(attrScales.size()) != rank)
      return invalidArgument(what, ": scales must hold ", rank, " values");
    ResizePlan p = base;
    p.rank = rank;
    p.scaleGiven = in1Scales || (!in1 && !attrScales.empty()) ? 1 : 0;
    for (int32_t i = 0; i < rank; ++i) {
      int64_t in = x.shape.d[i], out = y.shape.d[i];
      if (in == 0 && out > 0) return invalidArgument(what, ": axis ", i, " of extent 0 cannot be resized to ", out);
      double s;
      if (in1Scales)
        s = inputScales[i];
      else if (!in1 && !attrScales.empty())
        s = attrScales[i];
      else
        s = in > 0 ? static_cast<double>(out) / static_cast<double>(in) : 1.0;
      if (!(s > 0.0)) return invalidArgument(what, ": scale ", s, " of axis ", i, " must be positive");
      p.inDims[i] = in;
      p.outDims[i] = out;
      p.scales[i] = s;
      // Cubic interpolates the two innermost axes; an outer axis keeps its extent, and maps index to index unless
      // a given scale other than 1 moves its sample points (then the reference interpolates it too).
      p.cubicAxis[i] = i + 2 >= rank || (p.scaleGiven && s != 1.0) ? 1 : 0;
    }
    if (p.mode == static_cast<int32_t>(InterpolationMode::kCUBIC))
      for (int32_t i = 0; i + 2 < rank; ++i)
        if (x.shape.d[i] != y.shape.d[i])
          return unsupported(what, ": kCUBIC resizes only the two innermost axes, not axis ", i);
    if (y.count() == 0) return Status::ok();
    cudaStream_t stream = streamOf(ctx);
    if (p.mode == static_cast<int32_t>(InterpolationMode::kNEAREST))
      KILN_CUDA_RETURN_IF_ERROR(
          launchResizeNearest(x.data, y.data, static_cast<int32_t>(dataTypeSize(x.dtype)), p, stream), what);
    else
      KILN_CUDA_RETURN_IF_ERROR(launchResizeInterpolate(x.data, y.data, static_cast<int32_t>(x.dtype), p, stream),
                                what);
    return Status::ok();
  }
};

bool validAttrs(ir::Node const& node) {
  int64_t mode = node.attrs.getInt("mode", 0), ct = node.attrs.getInt("coordinate_transformation", 1);
  int64_t sel = node.attrs.getInt("selector", 0), rnd = node.attrs.getInt("nearest_rounding", 2);
  return mode >= 0 && mode < EnumMax<InterpolationMode>() && ct >= 0 &&
         ct < EnumMax<ResizeCoordinateTransformation>() && sel >= 0 && sel < EnumMax<ResizeSelector>() && rnd >= 0 &&
         rnd < EnumMax<ResizeRoundMode>();
}

backends::Tactic makeResize() {
  backends::Tactic t;
  t.name = "resize_cuda_direct";
  t.op = ir::OpType::kResize;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    if (in.empty() || in.size() > 2 || out.size() != 1 || in[0].dtype != out[0].dtype || !validAttrs(node))
      return false;
    if (in[0].shape.nbDims > kCopyMaxRank) return false;
    // Scales given as a tensor are needed on the host: only constant ones (sizes are only read by shape inference).
    if (hasInput(node, 1) && in.size() > 1 && isFloatType(in[1].dtype) && !constantInput(node, 1)) return false;
    if (node.attrs.getInt("mode", 0) == static_cast<int64_t>(InterpolationMode::kNEAREST))
      return isByteCopyable(in[0].dtype);
    return isCudaFloat(in[0].dtype);
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    auto k = std::make_unique<ResizeKernel>();
    k->what = node.describe();
    if (!validAttrs(node))
      return invalidGraph(k->what, ": unknown mode, coordinate_transformation, selector or nearest_rounding");
    k->base.mode = static_cast<int32_t>(node.attrs.getInt("mode", 0));
    k->base.transform = static_cast<int32_t>(node.attrs.getInt("coordinate_transformation", 1));
    k->base.selector = static_cast<int32_t>(node.attrs.getInt("selector", 0));
    k->base.rounding = static_cast<int32_t>(node.attrs.getInt("nearest_rounding", 2));
    k->base.cubicA = node.attrs.getFloat("cubic_coeff", -0.75);
    k->base.excludeOutside = node.attrs.getInt("exclude_outside", 0) != 0 ? 1 : 0;
    if (!node.attrs.has("output_dims")) k->attrScales = node.attrs.getFloats("scales");
    if (hasInput(node, 1)) {
      HostTensor const* c = constantInput(node, 1);
      if (c && isFloatType(c->dtype()))
        for (int64_t i = 0; i < c->count(); ++i) k->inputScales.push_back(c->doubleAt(i));
      else if (!c && isFloatType(node.inputs[1]->dtype))
        return unsupported(k->what, ": run-time scales are not supported on the GPU");
    }
    return std::unique_ptr<backends::Kernel>(std::move(k));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeResize);

}  // namespace
}  // namespace kiln::cuda
