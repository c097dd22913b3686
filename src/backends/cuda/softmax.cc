// SoftMax on the GPU over one axis (the attribute; without one, TensorRT's default of rank-3 or 0), float types
// with fp32 math.
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/softmax_kernels.h"

namespace kiln::cuda {
namespace {

class SoftMaxKernel final : public backends::Kernel {
 public:
  SoftMaxKernel(std::string who, bool hasAxis, int64_t axis) : who_(std::move(who)), hasAxis_(hasAxis), axis_(axis) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& y = ctx.outputs[0];
    int32_t rank = x.shape.nbDims;
    if (!dimsEqual(x.shape, y.shape)) return invalidArgument(who_, ": y must have x's shape");
    int64_t a = hasAxis_ ? axis_ : (rank >= 3 ? rank - 3 : 0);
    KILN_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(a, rank));
    int64_t outer = 1, inner = 1, len = x.shape.d[axis];
    for (int32_t d = 0; d < axis; ++d) outer *= x.shape.d[d];
    for (int32_t d = axis + 1; d < rank; ++d) inner *= x.shape.d[d];
    if (outer * len * inner == 0) return Status::ok();
    if (!launchSoftmax(static_cast<int32_t>(x.dtype), x.data, y.data, outer, len, inner, nullptr, streamOf(ctx)))
      return unsupported(who_, ": no GPU softmax for ", dataTypeName(x.dtype));
    return launchStatus(who_);
  }

 private:
  std::string who_;
  bool hasAxis_;
  int64_t axis_;
};

backends::Tactic makeSoftMax() {
  backends::Tactic t;
  t.name = "softmax_cuda_rows";
  t.op = ir::OpType::kSoftMax;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const&, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    return in.size() == 1 && out.size() == 1 && isCudaFloat(in[0].dtype) && out[0].dtype == in[0].dtype;
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    return std::unique_ptr<backends::Kernel>(
        new SoftMaxKernel(node.describe(), node.attrs.has("axis"), node.attrs.getInt("axis", 0)));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeSoftMax);

}  // namespace
}  // namespace kiln::cuda
