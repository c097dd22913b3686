// TopK on the GPU (largest or smallest k along one axis, values and int32/int64 indices in the reference's stable
// order): float types, int32, int64. k from the attribute or a constant k input; a k known only on the device at
// run time is left to the host fallback.
#include <optional>

#include "backends/cuda/cuda_util.h"
#include "backends/cuda/topk_kernels.h"
#include "kiln/kiln.h"

namespace kiln::cuda {
namespace {

// k: the constant k input when there is one, else the attribute; nullopt when the k input is not a constant.
std::optional<int64_t> topkK(ir::Node const& node) {
  if (node.inputs.size() > 1 && node.inputs[1]) {
    HostTensor const* k = constantInput(node, 1);
    if (!k || k->count() != 1) return std::nullopt;
    return k->toInt64Vector()[0];
  }
  return node.attrs.getInt("k", 1);
}

class TopKKernel final : public backends::Kernel {
 public:
  TopKKernel(std::string who, bool largest, int64_t axis, int64_t k)
      : who_(std::move(who)), largest_(largest), axis_(axis), k_(k) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& vals = ctx.outputs[0];
    auto const& idx = ctx.outputs[1];
    if (axis_ < 0 || axis_ >= x.shape.nbDims) return invalidArgument(who_, ": axis ", axis_, " is out of range");
    int64_t n = x.shape.d[axis_];
    if (k_ < 0 || k_ > n) return invalidArgument(who_, ": k = ", k_, " is out of range for an axis of ", n);
    if (vals.shape.nbDims != x.shape.nbDims || vals.shape.d[axis_] != k_ || idx.shape.nbDims != x.shape.nbDims ||
        idx.shape.d[axis_] != k_)
      return invalidArgument(who_, ": outputs ", dimsToString(vals.shape), " do not fit k = ", k_);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis_; ++d) outer *= x.shape.d[d];
    for (int64_t d = axis_ + 1; d < x.shape.nbDims; ++d) inner *= x.shape.d[d];
    if (outer * inner * k_ == 0) return Status::ok();
    if (!launchTopK(static_cast<int32_t>(x.dtype), x.data, vals.data, idx.data, idx.dtype == DataType::kINT64, outer, n,
                    inner, k_, largest_, streamOf(ctx)))
      return unsupported(who_, ": no GPU TopK for ", dataTypeName(x.dtype));
    return launchStatus(who_);
  }

 private:
  std::string who_;
  bool largest_;
  int64_t axis_, k_;
};

backends::Tactic makeTopK() {
  backends::Tactic t;
  t.name = "topk_cuda_rank";
  t.op = ir::OpType::kTopK;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    if (in.empty() || in.size() > 2 || out.size() != 2 || !topkK(node)) return false;
    DataType dt = in[0].dtype;
    return (isCudaFloat(dt) || dt == DataType::kINT32 || dt == DataType::kINT64) && out[0].dtype == dt &&
           (out[1].dtype == DataType::kINT32 || out[1].dtype == DataType::kINT64);
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    auto k = topkK(node);
    if (!k) return unsupported(node.describe(), ": the k input is not a constant");
    bool largest = node.attrs.getInt("op", 0) == static_cast<int64_t>(TopKOperation::kMAX);
    return std::unique_ptr<backends::Kernel>(
        new TopKKernel(node.describe(), largest, node.attrs.getInt("axis", 0), *k));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeTopK);

}  // namespace
}  // namespace kiln::cuda
