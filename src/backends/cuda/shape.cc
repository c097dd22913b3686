// Shape on the GPU: the input's current dims (known on the host at enqueue) written by a one-block kernel that
// takes them by value, so the launch stays asynchronous and capturable. int64 (or int32) output.
#include "backends/cuda/copy_host.h"
#include "backends/cuda/index_ops_kernels.h"

namespace kiln::cuda {
namespace {

class ShapeKernel final : public backends::Kernel {
 public:
  Status enqueue(backends::LaunchContext const& ctx) const override {
    Dims const& s = ctx.inputs[0].shape;
    auto const& y = ctx.outputs[0];
    if (s.nbDims < 0 || s.nbDims > kCopyMaxRank || y.count() != s.nbDims)
      return invalidArgument("shape of a rank-", s.nbDims, " tensor cannot fill output ", dimsToString(y.shape));
    ShapeValues v;
    v.rank = s.nbDims;
    for (int32_t i = 0; i < s.nbDims; ++i) v.d[i] = s.d[i];
    KILN_CUDA_RETURN_IF_ERROR(launchWriteShape(y.data, y.dtype == DataType::kINT64, v, streamOf(ctx)), "Shape");
    return Status::ok();
  }
};

backends::Tactic makeShape() {
  backends::Tactic t;
  t.name = "shape_cuda_direct";
  t.op = ir::OpType::kShape;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const&, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    return in.size() == 1 && out.size() == 1 && (out[0].dtype == DataType::kINT64 || out[0].dtype == DataType::kINT32);
  };
  t.create = [](ir::Node const&) -> Result<std::unique_ptr<backends::Kernel>> {
    return std::unique_ptr<backends::Kernel>(new ShapeKernel);
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeShape);

}  // namespace
}  // namespace kiln::cuda
