// Squeeze and Unsqueeze on the GPU: the elements keep their row-major order, so the kernel is one
// device-to-device copy (any storable type); the axes input is only read by shape inference.
#include "backends/cuda/copy_host.h"

namespace kiln::cuda {
namespace {

class ReshapeCopyKernel final : public backends::Kernel {
 public:
  explicit ReshapeCopyKernel(std::string what) : what_(std::move(what)) {}
  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& y = ctx.outputs[0];
    if (x.dtype != y.dtype || x.count() != y.count())
      return invalidArgument(what_, ": output ", dimsToString(y.shape), " does not hold the elements of ",
                             dimsToString(x.shape));
    size_t bytes = static_cast<size_t>(x.count()) * dataTypeSize(x.dtype);
    if (bytes == 0 || x.data == y.data) return Status::ok();
    KILN_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(y.data, x.data, bytes, cudaMemcpyDeviceToDevice, streamOf(ctx)), what_);
    return Status::ok();
  }

 private:
  std::string what_;
};

backends::Tactic makeReshapeCopy(char const* name, ir::OpType op) {
  backends::Tactic t;
  t.name = name;
  t.op = op;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const&, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    return in.size() == 2 && out.size() == 1 && in[0].dtype == out[0].dtype && dataTypeSize(in[0].dtype) > 0 &&
           (in[1].dtype == DataType::kINT32 || in[1].dtype == DataType::kINT64);
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    return std::unique_ptr<backends::Kernel>(new ReshapeCopyKernel(node.describe()));
  };
  return t;
}
backends::Tactic makeSqueeze() { return makeReshapeCopy("squeeze_cuda_memcpy", ir::OpType::kSqueeze); }
backends::Tactic makeUnsqueeze() { return makeReshapeCopy("unsqueeze_cuda_memcpy", ir::OpType::kUnsqueeze); }
KILN_REGISTER_CUDA_TACTIC(makeSqueeze);
KILN_REGISTER_CUDA_TACTIC(makeUnsqueeze);

}  // namespace
}  // namespace kiln::cuda
