// Identity on the GPU: a device-to-device copy on the launch's stream (same type in and out).
#include "backends/cuda/cuda_util.h"

namespace kiln::cuda {
namespace {

class IdentityKernel final : public backends::Kernel {
 public:
  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& in = ctx.inputs[0];
    auto const& out = ctx.outputs[0];
    size_t bytes = static_cast<size_t>(out.count()) * dataTypeSize(out.dtype);
    if (bytes == 0 || in.data == out.data) return Status::ok();
    KILN_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out.data, in.data, bytes, cudaMemcpyDeviceToDevice, streamOf(ctx)),
                              "Identity copy");
    return Status::ok();
  }
};

backends::Tactic makeIdentity() {
  backends::Tactic t;
  t.name = "identity_cuda_memcpy";
  t.op = ir::OpType::kIdentity;
  t.source = TacticSource::kKILN;
  t.formatAware = true;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    return backends::elementWiseLayoutOk(node, in, out) && in.size() == 1 && out.size() == 1 && in[0].dtype == out[0].dtype;
  };
  t.create = [](ir::Node const&) -> Result<std::unique_ptr<backends::Kernel>> {
    return std::unique_ptr<backends::Kernel>(new IdentityKernel);
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeIdentity);

}  // namespace
}  // namespace kiln::cuda
