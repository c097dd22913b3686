// OneHot on the GPU: values[1] where the index matches the position on the new axis, values[0] elsewhere (raw
// bytes of 1/2/4/8). int32/int64/float32 indices; the depth is the output's extent on the new axis (shape
// inference reads the depth input), so the depth tensor is not read on the device.
#include "backends/cuda/copy_host.h"
#include "backends/cuda/index_ops_kernels.h"

namespace kiln::cuda {
namespace {

class OneHotKernel final : public backends::Kernel {
 public:
  OneHotKernel(int64_t axis, std::string what) : axis_(axis), what_(std::move(what)) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& idx = ctx.inputs[0];
    auto const& values = ctx.inputs[1];
    auto const& depthT = ctx.inputs[2];
    auto const& y = ctx.outputs[0];
    if (values.count() != 2 || values.dtype != y.dtype) return invalidArgument(what_, ": values must be [2] (off, on)");
    if (depthT.count() != 1) return invalidArgument(what_, ": depth must have one element");
    int32_t rank = idx.shape.nbDims;
    int64_t axis = axis_ < 0 ? axis_ + rank + 1 : axis_;
    if (axis < 0 || axis > rank) return invalidArgument(what_, ": axis ", axis_, " is out of range");
    if (y.shape.nbDims != rank + 1) return invalidArgument(what_, ": output ", dimsToString(y.shape), " does not fit");
    int64_t depth = y.shape.d[axis];
    if (depth < 1) return invalidArgument(what_, ": depth must be >= 1, not ", depth);
    if (y.count() != idx.count() * depth)
      return invalidArgument(what_, ": output ", dimsToString(y.shape), " does not fit depth ", depth);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= idx.shape.d[d];
    for (int64_t d = axis; d < rank; ++d) inner *= idx.shape.d[d];
    int32_t code = idx.dtype == DataType::kINT32   ? kIndexInt32
                   : idx.dtype == DataType::kINT64 ? kIndexInt64
                                                   : kIndexFloat;
    KILN_CUDA_RETURN_IF_ERROR(
        launchOneHot(idx.data, code, values.data, y.data, static_cast<int32_t>(dataTypeSize(y.dtype)), outer, depth,
                     inner, streamOf(ctx)),
        what_);
    return Status::ok();
  }

 private:
  int64_t axis_;
  std::string what_;
};

backends::Tactic makeOneHot() {
  backends::Tactic t;
  t.name = "onehot_cuda_direct";
  t.op = ir::OpType::kOneHot;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const&, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    return in.size() == 3 && out.size() == 1 &&
           (in[0].dtype == DataType::kINT32 || in[0].dtype == DataType::kINT64 || in[0].dtype == DataType::kFLOAT) &&
           in[1].dtype == out[0].dtype && isByteCopyable(in[1].dtype) && in[2].dtype != DataType::kBOOL &&
           isSupportedType(in[2].dtype);
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    return std::unique_ptr<backends::Kernel>(new OneHotKernel(node.attrs.getInt("axis", -1), node.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeOneHot);

}  // namespace
}  // namespace kiln::cuda
