// GridSample on the GPU: 2-D nearest / bilinear / bicubic and 3-D nearest / trilinear sampling with zeros, border
// or reflection padding, x and grid in float, half or bf16 (fp64 math per output element, as the reference).
#include "backends/cuda/copy_host.h"
#include "backends/cuda/grid_sample_kernels.h"

namespace kiln::cuda {
namespace {

class GridSampleKernel final : public backends::Kernel {
 public:
  GridSamplePlan base;
  std::string what;

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& grid = ctx.inputs[1];
    auto const& y = ctx.outputs[0];
    int32_t r = x.shape.nbDims;
    int32_t spatial = r - 2;
    bool ok = (r == 4 || r == 5) && grid.shape.nbDims == r && y.shape.nbDims == r && y.dtype == x.dtype &&
              grid.shape.d[r - 1] == spatial && grid.shape.d[0] == x.shape.d[0] && y.shape.d[0] == x.shape.d[0] &&
              y.shape.d[1] == x.shape.d[1];
    for (int32_t i = 0; ok && i < spatial; ++i) ok = y.shape.d[2 + i] == grid.shape.d[1 + i];
    if (!ok)
      return invalidArgument(what, ": shapes x ", dimsToString(x.shape), ", grid ", dimsToString(grid.shape), ", y ",
                             dimsToString(y.shape), " do not agree");
    if (spatial == 3 && base.mode == static_cast<int32_t>(InterpolationMode::kCUBIC))
      return unsupported(what, ": cubic sampling of a volume");
    GridSamplePlan p = base;
    p.spatial = spatial;
    p.n = x.shape.d[0];
    p.c = x.shape.d[1];
    bool empty = false;
    for (int32_t i = 0; i < spatial; ++i) {
      p.inDims[i] = x.shape.d[2 + i];
      p.outDims[i] = y.shape.d[2 + i];
      empty = empty || p.inDims[i] == 0;
    }
    if (empty && y.count() > 0) return invalidArgument(what, ": cannot sample an empty input ", dimsToString(x.shape));
    KILN_CUDA_RETURN_IF_ERROR(launchGridSample(x.data, static_cast<int32_t>(x.dtype), grid.data,
                                               static_cast<int32_t>(grid.dtype), y.data, p, streamOf(ctx)),
                              what);
    return Status::ok();
  }
};

bool validSample(int64_t s) {
  return s == static_cast<int64_t>(SampleMode::kFILL) || s == static_cast<int64_t>(SampleMode::kCLAMP) ||
         s == static_cast<int64_t>(SampleMode::kREFLECT);
}

backends::Tactic makeGridSample() {
  backends::Tactic t;
  t.name = "grid_sample_cuda_direct";
  t.op = ir::OpType::kGridSample;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    int64_t mode = node.attrs.getInt("mode", static_cast<int64_t>(InterpolationMode::kLINEAR));
    return in.size() == 2 && out.size() == 1 && isCudaFloat(in[0].dtype) && isCudaFloat(in[1].dtype) &&
           out[0].dtype == in[0].dtype && mode >= 0 && mode < EnumMax<InterpolationMode>() &&
           validSample(node.attrs.getInt("sample_mode", static_cast<int64_t>(SampleMode::kFILL)));
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    auto k = std::make_unique<GridSampleKernel>();
    k->what = node.describe();
    int64_t mode = node.attrs.getInt("mode", static_cast<int64_t>(InterpolationMode::kLINEAR));
    if (mode < 0 || mode >= EnumMax<InterpolationMode>())
      return invalidGraph(k->what, ": unknown interpolation mode ", mode);
    int64_t sample = node.attrs.getInt("sample_mode", static_cast<int64_t>(SampleMode::kFILL));
    if (!validSample(sample)) return invalidGraph(k->what, ": sample_mode must be kFILL, kCLAMP or kREFLECT");
    k->base.mode = static_cast<int32_t>(mode);
    k->base.sample = static_cast<int32_t>(sample);
    k->base.alignCorners = node.attrs.getInt("align_corners", 0) != 0 ? 1 : 0;
    return std::unique_ptr<backends::Kernel>(std::move(k));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeGridSample);

}  // namespace
}  // namespace kiln::cuda
