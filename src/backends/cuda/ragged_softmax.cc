// RaggedSoftMax on the GPU: softmax over the first bounds[z] elements of each row z (the rest 0), float types
// with fp32 math, through the SoftMax row kernels. A bound outside [0, S] (an error on the host) gives a NaN row.
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/softmax_kernels.h"

namespace kiln::cuda {
namespace {

class RaggedSoftMaxKernel final : public backends::Kernel {
 public:
  explicit RaggedSoftMaxKernel(std::string who) : who_(std::move(who)) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& bounds = ctx.inputs[1];
    auto const& y = ctx.outputs[0];
    int32_t rank = x.shape.nbDims;
    if (!dimsEqual(x.shape, y.shape) || rank < 1) return invalidArgument(who_, ": y must have x's shape");
    int64_t s = x.shape.d[rank - 1];
    int64_t rows = s == 0 ? 0 : x.count() / s;
    if (rows == 0) return Status::ok();
    if (bounds.count() != rows)
      return invalidArgument(who_, ": bounds ", dimsToString(bounds.shape), " must hold one value per row of ",
                             dimsToString(x.shape));
    if (!launchSoftmax(static_cast<int32_t>(x.dtype), x.data, y.data, rows, s, 1,
                       static_cast<int32_t const*>(bounds.data), streamOf(ctx)))
      return unsupported(who_, ": no GPU softmax for ", dataTypeName(x.dtype));
    return launchStatus(who_);
  }

 private:
  std::string who_;
};

backends::Tactic makeRaggedSoftMax() {
  backends::Tactic t;
  t.name = "ragged_softmax_cuda_rows";
  t.op = ir::OpType::kRaggedSoftMax;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const&, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    return in.size() == 2 && out.size() == 1 && isCudaFloat(in[0].dtype) && out[0].dtype == in[0].dtype &&
           in[1].dtype == DataType::kINT32;
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    return std::unique_ptr<backends::Kernel>(new RaggedSoftMaxKernel(node.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeRaggedSoftMax);

}  // namespace
}  // namespace kiln::cuda
